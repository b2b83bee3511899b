"""The redaction canary corpus (issue 31 item 12): prose stays, credentials go.

Two fixed corpora and two properties for ``text_redact.redact_text``, the redactor of console
text, page errors, failure texts, response headers and live-view titles:

- ``PROSE``: error and status messages as real applications, frameworks and browsers print
  them, each naming a credential word ("token", "session", "password", "authorization", …)
  in prose; every one must come back unchanged.
- ``CREDENTIALS``: real credential shapes in headers, URLs, JSON, ``key=value`` pairs and log
  lines; none of the secret parts may survive, and the words around them stay.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from browsermesh.model.clock import Clock
from browsermesh.model.observe import ObserveLimits, PageObservations
from browsermesh.redact import REDACTED
from browsermesh.text_redact import TEXT_KEYWORDS, redact_text
from tests.support.examples import examples

BIG = 100_000

PROSE = (
    # npm, the issue's own example, and other package registries
    "authorization required to access package",
    'npm ERR! Unable to authenticate, need: Basic realm="GitHub Package Registry"',
    "401 Unauthorized: authorization header missing",
    "Authorization header is malformed",
    # sessions
    "session expired",
    "Session expired - please log in again",
    "Your session has expired. Please sign in again.",
    "Your session will expire in 5 minutes",
    "session not created: This version of ChromeDriver only supports Chrome version 114",
    "Session cookie not found, redirecting to /login",
    "The session cookie is missing or invalid",
    "ERR_TOO_MANY_REDIRECTS while checking session",
    "session: active",
    "session 3 of 5 started",
    # tokens
    "token expired",
    "token: expired",
    "The access token expired",
    "Missing bearer token",
    "The bearer token expired",
    "Invalid bearer token: signature verification failed",
    "Failed to refresh token: 401 Unauthorized",
    "Request failed with status code 401 (token expired)",
    "JWT token is expired",
    "Token has expired or has been revoked",
    "invalid_grant: Token has been expired or revoked.",
    "Failed to decode token (not a JWT)",
    "GitHub token is missing the repo scope",
    "Error validating access token: Session has expired on Tuesday, 03-Jan-23 10:00:00 PST.",
    "Uncaught ReferenceError: token is not defined",
    "TypeError: Cannot read properties of undefined (reading 'token')",
    "CSRF token missing or incorrect.",
    "Forbidden (CSRF token missing.): /admin/login/",
    # passwords (Django's own validation messages among them)
    "password required",
    "Password: required",
    "Password: This field is required.",
    "password must be at least 8 characters",
    "Password must contain at least one number",
    "Your password can’t be too similar to your other personal information.",
    "This password is too common.",
    "The two password fields didn’t match.",
    "Please enter the correct username and password for a staff account. "
    "Note that both fields may be case-sensitive.",
    "Login failed: password incorrect",
    "password reset link sent to the user",
    "A passphrase is required to unlock the key",
    # secrets, credentials, signatures, cookies
    "Error: secret not found",
    "Secret key is not configured",
    "Authentication credentials were not provided.",
    "Could not validate credentials",
    "Unable to find credentials in environment",
    "Signature has expired",
    "signature verification failed",
    "The provided authorization grant is invalid, expired, revoked",
    "Set a cookie with the Secure attribute",
    "cookie rejected: SameSite=None requires Secure",
    'Refused to set unsafe header "Cookie"',
    "Cookie “_ga” has been rejected because it is in a cross-site context.",
    "Access to fetch at 'https://api.example.test/v1' from origin 'https://app.example.test' "
    "has been blocked by CORS policy: Request header field authorization is not allowed by "
    "Access-Control-Allow-Headers in preflight response.",
    'WWW-Authenticate: Bearer realm="api", error="invalid_token"',
    "OAuth 2.0 error: invalid_grant",
)

# (text, the secret parts that must not survive, words around them that must stay)
CREDENTIALS: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    # headers
    (
        "Authorization: Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0"
        ".dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9", "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"),
        ("Authorization: Bearer",),
    ),
    ("authorization: Basic YWxhZGRpbjpvcGVuc2VzYW1l", ("YWxhZGRpbjpvcGVuc2VzYW1l",), ("Basic",)),
    ("Proxy-Authorization: Negotiate YIIJvwYGKwYBBQUCoIIJ", ("YIIJvwYGKwYBBQUCoIIJ",), ()),
    ("Authorization: Token abcdefghijklm", ("abcdefghijklm",), ("Token",)),
    (
        "Cookie: sessionid=8f3a9c2e4b; csrftoken=Xy7PqRz9",
        ("8f3a9c2e4b", "Xy7PqRz9"),
        ("csrftoken=",),
    ),
    (
        "Set-Cookie: __Host-session=Qm9vcGxlZ2F0ZQ; Path=/; Secure; HttpOnly",
        ("Qm9vcGxlZ2F0ZQ",),
        ("Path=/; Secure; HttpOnly",),
    ),
    ("X-Api-Key: 3f9c1d2e7a8b4c5d", ("3f9c1d2e7a8b4c5d",), ("X-Api-Key:",)),
    ("x-auth-token: tok_9a8b7c6d", ("tok_9a8b7c6d",), ()),
    # URLs
    (
        "GET https://api.example.test/v1/me?access_token=ya29a0AfH6SMBx&fields=id 200",
        ("ya29a0AfH6SMBx",),
        ("fields=id 200",),
    ),
    (
        "redirect https://example.test/callback?code=4%2F0AX4XfWh&state=xyz",
        ("4%2F0AX4XfWh",),
        ("state=xyz",),
    ),
    (
        "PUT https://bucket.s3.example.test/o?X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F2024"
        "&X-Amz-Signature=9f8e7d6c5b4a3f2e1d",
        ("AKIAIOSFODNN7EXAMPLE", "9f8e7d6c5b4a3f2e1d"),
        ("X-Amz-Signature=",),
    ),
    ("connect postgres://app:Pa55w0rdZ@db.internal.test:5432/app", ("Pa55w0rdZ",), ("app:",)),
    (
        "fetch https://hooks.example.test/services?api_key=abcdef123456 failed",
        ("abcdef123456",),
        ("failed",),
    ),
    ("WebSocket wss://live.example.test/socket?session=s3ss10nV4lue", ("s3ss10nV4lue",), ()),
    (
        "clone https://x-access-token:ghs_abcdefghijklmnopqrstuvwxyz0123456789@git.example.test/r",
        ("ghs_abcdefghijklmnopqrstuvwxyz0123456789",),
        ("git.example.test/r",),
    ),
    (
        "error 403 for https://api.example.test/data?sig=abc123XYZ&expires=1700000000",
        ("abc123XYZ",),
        ("expires=1700000000",),
    ),
    (
        "dsn https://a1b2c3d4e5f6@o1.ingest.example.test/5",
        ("a1b2c3d4e5f6",),
        ("o1.ingest.example.test/5",),
    ),
    # JSON and object literals
    ('{"password": "correct horse battery staple"}', ("correct", "horse", "staple"), ()),
    (
        '{"apiKey":"AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW","region":"eu"}',
        ("AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW",),
        ('"region":"eu"',),
    ),
    ('{"client_secret": "GOCSPX-1a2b3c4d5e6f", "x": 1}', ("GOCSPX-1a2b3c4d5e6f",), ('"x": 1',)),
    ("{'token': 'a1b2c3d4'}", ("a1b2c3d4",), ()),
    ('{"refresh_token":"1//0gAbCdEf","expires_in":3599}', ("1//0gAbCdEf",), ("3599",)),
    ('{"session": {"id": 42}, "token": "letmein"}', ("letmein",), ()),
    # key=value and key: value
    ("password=hunter2", ("hunter2",), ()),
    ("DB_PASSWORD=s3cr3t! ENV=prod", ("s3cr3t",), ("ENV=prod",)),
    ("Server=db;Database=app;User Id=sa;Pwd=Str0ng#Pass;", ("Str0ng#Pass",), ("Database=app",)),
    ("api-key: k3y-9f8e7d", ("k3y-9f8e7d",), ()),
    ("secret = qwerty123", ("qwerty123",), ()),
    ("passwd: letmein99", ("letmein99",), ()),
    ("session=9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d; Path=/", ("9b1deb4d",), ("Path=/",)),
    ("login ok, token ab12cd34ef56 issued", ("ab12cd34ef56",), ("issued",)),
    # bare shapes in log lines
    ("Using key sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56", ("Ab12Cd34Ef56Gh78",), ("Using key",)),
    ("anthropic key sk-ant-api03-AbCdEf123456-GhIjKl789012", ("AbCdEf123456",), ()),
    ("AWS_ACCESS_KEY_ID AKIAIOSFODNN7EXAMPLE loaded", ("AKIAIOSFODNN7EXAMPLE",), ("loaded",)),
    ("slack xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", ("AbCdEfGhIjKl",), ()),
    ("stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc", ("4eC39HqLyjWDarjtT1zdp7dc",), ()),
    ("gitlab glpat-Ab1Cd2Ef3Gh4Ij5Kl6Mn", ("Ab1Cd2Ef3Gh4Ij5Kl6Mn",), ()),
    ("token npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", ("AbCdEfGhIjKlMnOpQrStUvWxYz",), ()),
    ("hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567 rejected", ("AbCdEfGhIjKl",), ("rejected",)),
    ("ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789 used", ("aBcDeFgHiJkL",), ("used",)),
    (
        "mail SG.abcdefghijklmnopqrstuv.ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdefg",
        ("abcdefghijklmnopqrstuv", "ABCDEFGHIJKLMNOP"),
        ("mail",),
    ),
    (
        "loaded -----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7\n"
        "-----END RSA PRIVATE KEY----- ok",
        ("MIIEpAIBAAKCAQEA7",),
        ("loaded", "ok"),
    ),
    ("login ok, Bearer 6f1e2d3c4b5a69788796a5b4c3d2e1f0", ("6f1e2d3c4b5a6978",), ("login ok",)),
    (
        "jwt eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJodHRwczovL2V4YW1wbGUifQ.c2lnbmF0dXJl seen",
        ("eyJpc3MiOiJodHRwczovL2V4YW1wbGUifQ", "c2lnbmF0dXJl"),
        ("seen",),
    ),
)


def r(text: str) -> str:
    return redact_text(text, max_chars=BIG)


def test_corpus_sizes() -> None:
    assert len(PROSE) >= 40
    assert len(CREDENTIALS) >= 30


@pytest.mark.parametrize("text", PROSE)
def test_prose_comes_back_unchanged(text: str) -> None:
    assert r(text) == text


@pytest.mark.parametrize(("text", "secrets", "kept"), CREDENTIALS)
def test_credentials_are_redacted(
    text: str, secrets: tuple[str, ...], kept: tuple[str, ...]
) -> None:
    out = r(text)
    assert REDACTED in out
    for secret in secrets:
        assert secret not in out, out
    for word in kept:
        assert word in out, out


@pytest.mark.parametrize(("text", "secrets", "kept"), CREDENTIALS)
def test_redaction_is_idempotent(text: str, secrets: object, kept: object) -> None:
    once = r(text)
    assert r(once) == once


def test_the_console_keeps_prose_and_drops_credentials() -> None:
    """Through the recorder every console line and page error takes (model.observe)."""
    limits = ObserveLimits(
        events_per_ring=200, string_chars=2048, page_size=100, response_bytes=65_536
    )
    obs = PageObservations("session_1", "page_1", limits, Clock())
    for text in PROSE:
        obs.console("error", text)
    for text, _secrets, _kept in CREDENTIALS:
        obs.page_error(text)
    events = obs.read("console", None, 100, True)["events"]
    assert [e["text"] for e in events] == list(PROSE)
    errors = obs.read("pageError", None, 100, True)["events"]
    for event, (_text, secrets, _kept) in zip(errors, CREDENTIALS, strict=True):
        assert not any(secret in event["text"] for secret in secrets)


# --------------------------------------------------------------------------- properties

# Words of error messages: the credential keys themselves, their states, and filler.
_WORDS = (
    *(k for k in TEXT_KEYWORDS if k.isalpha()),
    "required", "expired", "invalid", "missing", "revoked", "active", "denied", "rejected",
    "not", "found", "is", "has", "been", "the", "your", "please", "sign", "in", "again",
    "access", "package", "header", "bearer", "basic", "refresh", "reset", "link", "user",
    "incorrect", "verification", "failed", "timed", "out", "re-enter", "can't", "invalid_grant",
    "OAuth", "JWT", "CSRF", "HTTP", "GitHub", "JavaScript", "Unauthorized", "Forbidden",
    "401", "403", "2024", "3",
)  # fmt: skip
_GLUE = (" ", " ", " ", ", ", ". ", ": ", " (", ") ", " - ")
_HEADERS = re.compile(r"(?:authorization|cookie|-[a-z_]+)\s*:", re.IGNORECASE)


@st.composite
def _prose(draw: st.DrawFn, min_words: int = 1) -> str:
    words = draw(st.lists(st.sampled_from(_WORDS), min_size=min_words, max_size=12))
    parts: list[str] = []
    for index, word in enumerate(words):
        if draw(st.booleans()):
            word = word.capitalize()
        parts.append(word)
        if index < len(words) - 1:
            parts.append(draw(st.sampled_from(_GLUE)))
    return "".join(parts)


@settings(max_examples=examples(400), deadline=None)
@given(text=_prose())
def test_property_prose_of_dictionary_words_is_unchanged(text: str) -> None:
    # "Authorization: word" and "Cookie: word" are header lines (their value is redacted
    # whatever it is), so the generator's ": " after those keys is not prose.
    if _HEADERS.search(text) is None:
        assert r(text) == text


_B64 = "[A-Za-z0-9_-]"
_SHAPE_REGEXES = (
    rf"eyJ{_B64}{{10,30}}\.eyJ{_B64}{{10,40}}\.{_B64}{{10,43}}",
    r"sk-(?:proj-|ant-api03-)?[A-Za-z0-9]{20,48}[0-9]",
    r"gh[pousr]_[A-Za-z0-9]{36}",
    r"AKIA[A-Z0-9]{16}",
    r"xox[bp]-[0-9]{10,13}-[A-Za-z0-9]{24}",
    r"sk_live_[A-Za-z0-9]{24}",
    r"AIza[A-Za-z0-9_-]{35}",
    r"glpat-[A-Za-z0-9_-]{20}",
)
_SHAPES = st.one_of(*(st.from_regex(regex, fullmatch=True) for regex in _SHAPE_REGEXES))
# A value after a credential key: random, with a digit (what a generated secret has).
_VALUE = st.from_regex(r"[A-Za-z0-9_.~+/-]{5,30}[0-9][A-Za-z0-9]{0,5}", fullmatch=True)
_CONTEXTS = (
    "{} {}",  # a bare shape in a log line
    "{} Authorization: Bearer {}",
    '{} {{"apiKey": "{}"}}',
    "{} https://api.example.test/v1?access_token={}&page=2",
    "{} token={}",
    "{} password: {}",
    "{} session {}",
    "{} Cookie: sid={}; theme=dark",
)


@settings(max_examples=examples(400), deadline=None)
@given(
    before=_prose(),
    after=_prose(),
    secret=st.one_of(_SHAPES, _VALUE),
    context=st.sampled_from(_CONTEXTS),
)
def test_property_a_secret_in_prose_is_always_removed(
    before: str, after: str, secret: str, context: str
) -> None:
    if context == "{} {}" and not re.match(r"(eyJ|sk-|gh|AKIA|xox|sk_|AIza|glpat)", secret):
        return  # a random value with no key and no known shape is not recognisable
    text = context.format(before, secret) + " " + after
    out = r(text)
    assert secret not in out
    if _HEADERS.search(before) is None:
        assert out.startswith(before)  # the prose before it is untouched
