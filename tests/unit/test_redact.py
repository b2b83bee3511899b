"""Unit tests for the URL sanitizer and the text redactor (reference §17)."""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from browsermesh.redact import (
    ENDPOINT_SCHEMES,
    HTTP_SCHEMES,
    INVALID_URL,
    REDACTED,
    REDACTED_URL,
    SENSITIVE_NAME_PARTS,
    cut_chars,
    sanitize_url,
    sanitize_url_or_none,
)
from browsermesh.text_redact import TEXT_KEYWORDS, redact_text
from tests.support.examples import examples

BIG = 10_000


def s(
    url: str,
    *,
    max_chars: int = BIG,
    allowed_schemes: frozenset[str] = HTTP_SCHEMES,
    origin_and_path: bool = False,
) -> str:
    """Sanitize with a generous bound unless one is given."""
    return sanitize_url(
        url, max_chars=max_chars, allowed_schemes=allowed_schemes, origin_and_path=origin_and_path
    )


def r(text: str, max_chars: int = BIG) -> str:
    return redact_text(text, max_chars=max_chars)


# --------------------------------------------------------------------------- cut_chars


class TestCutChars:
    def test_fits_unchanged(self) -> None:
        assert cut_chars("abc", 3) == "abc"
        assert cut_chars("", 1) == ""

    def test_cut_ends_with_ellipsis_and_exact_length(self) -> None:
        assert cut_chars("abcdef", 4) == "abc…"
        assert len(cut_chars("x" * 100, 10)) == 10

    def test_cut_to_one(self) -> None:
        assert cut_chars("abc", 1) == "…"

    def test_code_points_not_bytes(self) -> None:
        text = "日本語テキスト😀😀😀"  # multi-byte in UTF-8, one code point each
        assert cut_chars(text, len(text)) == text
        out = cut_chars(text, 8)
        assert out == "日本語テキスト…"
        assert len(out) == 8
        assert cut_chars("😀😀😀😀", 3) == "😀😀…"

    def test_invalid_bound(self) -> None:
        with pytest.raises(ValueError):
            cut_chars("abc", 0)


# --------------------------------------------------------------------------- sanitize_url


class TestQueryKeywords:
    @pytest.mark.parametrize("keyword", SENSITIVE_NAME_PARTS)
    def test_every_keyword_redacted(self, keyword: str) -> None:
        assert s(f"https://h.test/p?{keyword}=v4lue&q=1") == (
            f"https://h.test/p?{keyword}={REDACTED}&q=1"
        )

    @pytest.mark.parametrize("keyword", SENSITIVE_NAME_PARTS)
    def test_keyword_case_insensitive_and_contained(self, keyword: str) -> None:
        name = f"X-{keyword.upper()}_id"
        assert s(f"https://h.test/?{name}=v4lue") == f"https://h.test/?{name}={REDACTED}"

    @pytest.mark.parametrize(
        "name",
        ["signature", "X-Amz-Signature", "code", "Session_Id", "access_token", "apiKey"],
    )
    def test_fixture_names(self, name: str) -> None:
        out = s(f"http://h.test/redaction?{name}=s3cr3t&keep=ok")
        assert "s3cr3t" not in out
        assert out == f"http://h.test/redaction?{name}={REDACTED}&keep=ok"

    def test_over_redaction_by_design(self) -> None:
        assert s("http://h.test/?author=ann&zipcode=12345") == (
            f"http://h.test/?author={REDACTED}&zipcode={REDACTED}"
        )

    def test_non_sensitive_untouched(self) -> None:
        url = "http://h.test/search?q=hello+world&page=2&lang=en"
        assert s(url) == url

    def test_name_without_value_kept(self) -> None:
        assert s("http://h.test/?token&a=1") == "http://h.test/?token&a=1"

    def test_empty_value_redacted(self) -> None:
        assert s("http://h.test/?token=") == f"http://h.test/?token={REDACTED}"

    def test_value_split_at_first_equals(self) -> None:
        assert s("http://h.test/?sig=a=b=c&x=y=z") == f"http://h.test/?sig={REDACTED}&x=y=z"

    def test_empty_pairs_preserved(self) -> None:
        assert s("http://h.test/?a=1&&token=2&") == f"http://h.test/?a=1&&token={REDACTED}&"

    def test_order_preserved(self) -> None:
        url = "http://h.test/?z=1&token=t&a=2&key=k&m=3"
        assert s(url) == f"http://h.test/?z=1&token={REDACTED}&a=2&key={REDACTED}&m=3"

    def test_semicolon_subpairs(self) -> None:
        # Extension: legacy ";" separators cannot hide a sensitive name.
        assert s("http://h.test/?a=1;token=t;b=2&c=3") == (
            f"http://h.test/?a=1;token={REDACTED}&c=3"
        )
        assert s("http://h.test/?a=1;b=2") == "http://h.test/?a=1;b=2"

    def test_path_matrix_parameter(self) -> None:
        # Extension: ";jsessionid=" style path parameters are redacted in both modes.
        url = "http://h.test/app;jsessionid=ABC123/page;x=1"
        expected = f"http://h.test/app;jsessionid={REDACTED}/page;x=1"
        assert s(url) == expected
        assert s(url, origin_and_path=True) == expected
        assert s("http://h.test/a;b/c") == "http://h.test/a;b/c"


class TestEncodingRounds:
    def test_one_round(self) -> None:
        assert s("http://h.test/?%74oken=x") == f"http://h.test/?%74oken={REDACTED}"

    def test_three_rounds(self) -> None:
        # %252574oken -> %2574oken -> %74oken -> token
        assert s("http://h.test/?%252574oken=x&a=%2541") == (
            f"http://h.test/?%252574oken={REDACTED}&a=%2541"
        )

    def test_four_rounds_not_decoded(self) -> None:
        url = "http://h.test/?%25252574oken=x"
        assert s(url) == url

    def test_plus_is_space(self) -> None:
        # "api+key" decodes to "api key", which contains "key".
        assert s("http://h.test/?api+key=x") == f"http://h.test/?api+key={REDACTED}"

    def test_names_keep_original_encoding(self) -> None:
        url = "http://h.test/?%53ession%5FId=abc&na%6De=v%20al+ue"
        assert s(url) == f"http://h.test/?%53ession%5FId={REDACTED}&na%6De=v%20al+ue"

    def test_values_not_reencoded(self) -> None:
        url = "http://h.test/p%20q/?x=%E2%9C%93&y=a%2Fb&z=é"
        assert s(url) == url


class TestStructure:
    def test_credentials_and_fragment_removed(self) -> None:
        out = s("https://alice:hunter2@h.test:8443/p/q?a=1#frag-secret")
        assert out == "https://h.test:8443/p/q?a=1"

    def test_username_only_removed(self) -> None:
        assert s("http://alice@h.test/") == "http://h.test/"

    def test_at_sign_in_password(self) -> None:
        assert s("http://u:p@ss@h.test/x") == "http://h.test/x"

    def test_ipv6_keeps_brackets_and_port(self) -> None:
        assert s("http://u:p@[::1]:8080/a?token=t#f") == f"http://[::1]:8080/a?token={REDACTED}"
        assert s("http://[2001:db8::1]/") == "http://[2001:db8::1]/"

    def test_scheme_lower_cased_host_kept(self) -> None:
        assert s("HTTPS://Example.COM/Path") == "https://Example.COM/Path"

    def test_no_path(self) -> None:
        assert s("http://h.test") == "http://h.test"
        assert s("http://h.test?token=1") == f"http://h.test?token={REDACTED}"

    def test_empty_query_dropped(self) -> None:
        assert s("http://h.test/?#x") == "http://h.test/"


class TestSchemes:
    @pytest.mark.parametrize(
        "url",
        [
            "javascript:alert(document.cookie)",
            "file:///etc/passwd",
            "data:text/html,<b>token=abc</b>",
            "blob:https://h.test/uuid",
            "ftp://h.test/x",
            "ws://h.test/socket",
            "wss://h.test/socket",
            "mailto:a@h.test",
        ],
    )
    def test_not_allowed(self, url: str) -> None:
        assert s(url) == REDACTED_URL
        assert s(url, origin_and_path=True) == REDACTED_URL
        assert sanitize_url_or_none(url, max_chars=BIG) is None

    def test_ws_allowed_for_endpoints(self) -> None:
        url = "ws://user:pw@127.0.0.1:9222/devtools/browser/abc?token=t#x"
        assert s(url, allowed_schemes=ENDPOINT_SCHEMES) == (
            f"ws://127.0.0.1:9222/devtools/browser/abc?token={REDACTED}"
        )
        assert s("wss://h.test/x", allowed_schemes=ENDPOINT_SCHEMES) == "wss://h.test/x"
        assert s("https://h.test/x", allowed_schemes=ENDPOINT_SCHEMES) == "https://h.test/x"

    @pytest.mark.parametrize(
        "url",
        [
            "http://[::1",
            "http://[::1]x/",
            "http://h.test:99999/",
            "http://h.test:port/",
            "http://",
            "http:///path",
            "http:/h.test",
            "http:h.test",
            "http://user@/",
            "h.test/path",
            "/relative/path?token=x",
            "",
        ],
    )
    def test_unparsable(self, url: str) -> None:
        assert s(url) == INVALID_URL
        assert s(url, origin_and_path=True) == INVALID_URL
        assert sanitize_url_or_none(url, max_chars=BIG) is None

    def test_ws_without_host_invalid(self) -> None:
        assert s("ws:///x", allowed_schemes=ENDPOINT_SCHEMES) == INVALID_URL


class TestBounds:
    def test_cut_with_ellipsis(self) -> None:
        url = "https://h.test/" + "a" * 100
        out = s(url, max_chars=50)
        assert len(out) == 50
        assert out.endswith("…")
        assert out[:-1] == url[:49]

    def test_exact_fit_not_cut(self) -> None:
        url = "https://h.test/" + "a" * 35
        assert len(url) == 50
        assert s(url, max_chars=50) == url

    def test_bound_applies_after_redaction(self) -> None:
        out = s("https://h.test/?token=" + "x" * 500, max_chars=40)
        assert "x" not in out.split("?", 1)[1]
        assert out == "https://h.test/?token=[REDACTED]"

    def test_code_point_bound(self) -> None:
        url = "https://h.test/" + "é" * 100
        out = s(url, max_chars=30)
        assert len(out) == 30
        assert out == url[:29] + "…"

    def test_placeholders_respect_bound(self) -> None:
        assert s("javascript:x", max_chars=5) == "<red…"
        assert len(s("http://[::1", max_chars=4)) == 4

    def test_invalid_bound(self) -> None:
        with pytest.raises(ValueError):
            s("http://h.test/", max_chars=0)
        with pytest.raises(ValueError):
            sanitize_url_or_none("http://h.test/", max_chars=0)


class TestOriginAndPath:
    def test_query_dropped(self) -> None:
        url = "https://u:p@h.test:8443/a/b?token=t&q=1#frag"
        assert s(url, origin_and_path=True) == "https://h.test:8443/a/b"

    def test_bounded_to_256(self) -> None:
        url = "https://h.test/" + "p" * 1000
        out = s(url, origin_and_path=True)
        assert len(out) == 256
        assert out.endswith("…")

    def test_smaller_bound_wins(self) -> None:
        out = s("https://h.test/" + "p" * 1000, origin_and_path=True, max_chars=40)
        assert len(out) == 40
        assert out.endswith("…")

    def test_short_url_unchanged(self) -> None:
        assert s("http://[::1]:3000/x?y=1", origin_and_path=True) == "http://[::1]:3000/x"


class TestSanitizeUrlOrNone:
    def test_matches_sanitize_url(self) -> None:
        url = "https://u:p@h.test/x?session=s&q=1#f"
        assert sanitize_url_or_none(url, max_chars=BIG) == s(url)
        assert sanitize_url_or_none(url, max_chars=20) == s(url, max_chars=20)


# --------------------------------------------------------------------------- redact_text


class TestRedactText:
    @pytest.mark.parametrize("keyword", TEXT_KEYWORDS)
    @pytest.mark.parametrize("sep", ["=", ": ", ":", " ", "\t=\t", " = "])
    def test_every_keyword(self, keyword: str, sep: str) -> None:
        out = r(f"before {keyword}{sep}s3cr3tV4l after")
        assert out == f"before {keyword}{sep}{REDACTED} after"

    @pytest.mark.parametrize("keyword", TEXT_KEYWORDS)
    def test_keyword_case_insensitive(self, keyword: str) -> None:
        assert r(f"{keyword.upper()}=abc") == f"{keyword.upper()}={REDACTED}"

    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("token=abc123", f"token={REDACTED}"),
            ("password=hunter2", f"password={REDACTED}"),
            ("passwd: hunter2", f"passwd: {REDACTED}"),
            ("api-key: k3y", f"api-key: {REDACTED}"),
            ("api_key=k", f"api_key={REDACTED}"),
            ("apikey k3y", f"apikey {REDACTED}"),
            ("session=1; other=2", f"session={REDACTED}; other=2"),
            ("x-auth-token: abc", f"x-auth-token: {REDACTED}"),
            ("sessiontoken=abc", f"sessiontoken={REDACTED}"),
            ("mysession=abc", f"mysession={REDACTED}"),
            ("Set-Cookie: sid=abc; Path=/", f"Set-Cookie: {REDACTED}; Path=/"),
            ("secret=a,b", f"secret={REDACTED},b"),
            ("Bearer x.y.z", f"Bearer {REDACTED}"),
            ("bearer   x.y.z tail", f"bearer   {REDACTED} tail"),
            ("BEARER abc123", f"BEARER {REDACTED}"),
            ("Authorization: Bearer abc", f"Authorization: Bearer {REDACTED}"),
            ("Authorization: Basic abc", f"Authorization: Basic {REDACTED}"),
            ("authorization=Digest abc", f"authorization=Digest {REDACTED}"),
            ("Authorization: abc", f"Authorization: {REDACTED}"),
            ('{"token":"abc","x":1}', f'{{"token":"{REDACTED}","x":1}}'),
            ("GET /api/result?token=abc 500", f"GET /api/result?token={REDACTED} 500"),
        ],
    )
    def test_cases(self, text: str, expected: str) -> None:
        assert r(text) == expected

    @pytest.mark.parametrize(
        ("text", "secret"),
        [
            ("Authorization: Bearer abc", "abc"),
            ("Authorization: Basic dXNlcjpwYXNz", "dXNlcjpwYXNz"),
            ("authorization:bearer    abc", "abc"),
            ("Proxy-Authorization: Negotiate abc", "abc"),
        ],
    )
    def test_authorization_leaves_no_trace(self, text: str, secret: str) -> None:
        assert secret not in r(text)

    def test_multiple_occurrences(self) -> None:
        text = "token=a1 then password=b2, and session: c3; Bearer d4 and token=e5"
        out = r(text)
        for secret in ("a1", "b2", "c3", "d4", "e5"):
            assert secret not in out
        assert out == (
            f"token={REDACTED} then password={REDACTED}, and session: {REDACTED}; "
            f"Bearer {REDACTED} and token={REDACTED}"
        )

    @pytest.mark.parametrize(
        "text",
        [
            "The tokenizer found 3 tokens in the passwords table.",
            "net::ERR_CONNECTION_REFUSED",
            "Uncaught TypeError: cannot read properties of undefined (reading 'x')",
            "sessions: 3, cookies: 2",
            "keyword tokens,secrets;session",
            "",
        ],
    )
    def test_unrelated_text_untouched(self, text: str) -> None:
        assert r(text) == text

    def test_keyword_at_end_without_value(self) -> None:
        assert r("the token: ") == "the token: "
        assert r("password=") == "password="
        assert r("Bearer ") == "Bearer "

    def test_bound_after_redaction(self) -> None:
        out = r("token=" + "x" * 100 + " tail", max_chars=12)
        assert out == "token=[REDA…"
        assert len(out) == 12

    def test_bound_code_points(self) -> None:
        text = "ошибка " * 20
        out = r(text, max_chars=10)
        assert out == text[:9] + "…"

    def test_invalid_bound(self) -> None:
        with pytest.raises(ValueError):
            r("x", max_chars=0)


# --------------------------------------------------------------------------- hostile inputs


class TestHostileInputs:
    """Linear-time regexes: results must be correct on 200,000-char inputs."""

    N = 200_000

    def test_keyword_followed_by_spaces(self) -> None:
        text = "token" + " " * self.N + ";"
        assert r(text, max_chars=self.N + 10) == text

    def test_bearer_followed_by_spaces(self) -> None:
        text = "Bearer" + "\t" * self.N
        assert r(text, max_chars=self.N + 10) == text

    def test_scheme_followed_by_spaces(self) -> None:
        text = "Authorization: Basic" + " " * self.N + ","
        out = r(text, max_chars=self.N + 100)
        assert out == "Authorization: " + REDACTED + " " * self.N + ","

    def test_many_keywords(self) -> None:
        text = "token:" * (self.N // 6)
        out = r(text, max_chars=self.N)
        assert out == "token:" + REDACTED + ":"  # the closing ":" is punctuation, not value

    def test_alternating_keywords_and_separators(self) -> None:
        text = "token= ;" * (self.N // 8)
        assert r(text, max_chars=self.N) == text

    def test_many_bearers(self) -> None:
        text = "Bearer , " * (self.N // 9)
        assert r(text, max_chars=3 * self.N) == text  # a comma is not a token
        out = r("Bearer a1, " * (self.N // 11), max_chars=3 * self.N)
        assert out == f"Bearer {REDACTED}, " * (self.N // 11)

    def test_long_separator_run(self) -> None:
        text = "password" + "=: \t" * (self.N // 4) + "hunter2"
        out = r(text, max_chars=2 * self.N)
        assert "hunter2" not in out
        assert out.endswith(REDACTED)

    def test_no_keyword_long_text(self) -> None:
        text = "a" * self.N
        assert r(text, max_chars=100) == "a" * 99 + "…"

    def test_long_url_query(self) -> None:
        url = "http://h.test/?" + "a=%25&" * (self.N // 6) + "%252574oken=s3cr3t"
        out = sanitize_url(url, max_chars=2 * self.N)
        assert "s3cr3t" not in out
        assert out.endswith(f"%252574oken={REDACTED}")

    def test_long_url_name(self) -> None:
        url = "http://h.test/?" + "%25" * self.N + "token=x"
        out = sanitize_url(url, max_chars=4 * self.N)
        assert out.endswith(f"token={REDACTED}")


# --------------------------------------------------------------------------- properties

_SECRET = st.from_regex(re.compile(r"[a-z0-9]{6,12}"), fullmatch=True)
_FILLER = st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=40)


def _encode_rounds(name: str, rounds: int) -> str:
    """Percent-encode the first character of ``name`` ``rounds`` times (0..3)."""
    if rounds == 0 or not name:
        return name
    encoded = f"%{ord(name[0]):02X}" + name[1:]
    for _ in range(rounds - 1):
        encoded = encoded.replace("%", "%25", 1)
    return encoded


@st.composite
def _sensitive_name(draw: st.DrawFn) -> str:
    keyword = draw(st.sampled_from(SENSITIVE_NAME_PARTS))
    upper = draw(st.lists(st.booleans(), min_size=len(keyword), max_size=len(keyword)))
    keyword = "".join(c.upper() if up else c for c, up in zip(keyword, upper, strict=True))
    prefix = draw(st.text(alphabet="ABXYZ_-.", max_size=4))
    suffix = draw(st.text(alphabet="ABXYZ_-.", max_size=4))
    return _encode_rounds(prefix + keyword + suffix, draw(st.integers(0, 3)))


@settings(max_examples=examples(300), deadline=None)
@given(
    secrets=st.lists(_SECRET, min_size=1, max_size=5),
    names=st.lists(_sensitive_name(), min_size=5, max_size=5),
    others=st.lists(
        st.tuples(st.sampled_from(["q", "page", "lang", "x"]), st.text("ABCXYZ%+", max_size=8)),
        max_size=4,
    ),
    order=st.randoms(use_true_random=False),
    max_chars=st.integers(1, 400),
    origin_and_path=st.booleans(),
)
def test_property_sensitive_values_never_leak(
    secrets: list[str],
    names: list[str],
    others: list[tuple[str, str]],
    order: random.Random,
    max_chars: int,
    origin_and_path: bool,
) -> None:
    pairs = [f"{name}={secret}" for name, secret in zip(names, secrets, strict=False)]
    pairs += [f"{name}={value}" for name, value in others]
    order.shuffle(pairs)
    skeleton = "https://h.test/p?" + "&".join(pairs)
    for secret in secrets:
        # The secret must not occur in the non-secret parts by coincidence.
        assume(secret not in skeleton.replace(f"={secret}", "="))
    userinfo_secret = secrets[0]
    url = f"https://user:{userinfo_secret}@h.test/p?" + "&".join(pairs) + f"#{userinfo_secret}"
    out = sanitize_url(url, max_chars=max_chars, origin_and_path=origin_and_path)
    assert len(out) <= max_chars
    for secret in secrets:
        assert secret not in out
    none_out = sanitize_url_or_none(url, max_chars=max_chars)
    assert none_out is not None
    for secret in secrets:
        assert secret not in none_out


@settings(max_examples=examples(300), deadline=None)
@given(prefix=_FILLER, suffix=_FILLER, secret=_SECRET, keyword=st.sampled_from(TEXT_KEYWORDS))
def test_property_text_secret_never_leaks(
    prefix: str, suffix: str, secret: str, keyword: str
) -> None:
    for kw in ("password", keyword):
        skeleton = f"{prefix}{kw}=\x00{suffix}"
        assume(secret not in skeleton)
        out = redact_text(f"{prefix}{kw}={secret}{suffix}", max_chars=BIG)
        assert secret not in out
