"""The text redactor (reference §17.2 as revised by issue 31 item 12): by value, never by word.

Console text, page-error text, request-failure text, response header values and live-view
titles pass :func:`redact_text` before they leave the process.  A secret is recognised by what
it looks like and where it stands, never because a word such as "token", "session" or
"authorization" occurs: "authorization required to access package" and "session expired" come
back unchanged, ``token=abc123`` and ``Authorization: Basic dXNlcjpwYXNz`` do not.

Rules, applied in this order (each replaces only the secret, keeping what names it):

1. **Private keys**: a ``-----BEGIN … PRIVATE KEY-----`` block, to its ``END`` line (or to
   the end of the text), becomes ``[REDACTED]``.
2. **Known token shapes**, wherever they stand (:data:`TOKEN_SHAPES`): JWTs, ``sk-…`` API keys,
   GitHub, GitLab, Slack, Stripe, Google, npm, Hugging Face, PyPI and SendGrid tokens, AWS
   access key ids.
3. **URL userinfo**: in ``scheme://user:password@host`` the password becomes ``[REDACTED]``;
   a user part without a password is redacted when it looks like a value (a Sentry-style DSN).
4. **Query and form pairs**: after ``?``, ``&`` or ``;``, a ``name=value`` whose name is
   sensitive by the URL sanitizer's own rule (:func:`browsermesh.redact.is_sensitive_name`)
   has its value redacted, as :func:`browsermesh.redact.sanitize_url` does.
5. **Authentication schemes** (:data:`AUTH_SCHEMES`): ``Bearer <token68>``,
   ``Basic <token68>`` …: the credential is redacted when it looks like a value.
6. **Credential keys** (:data:`TEXT_KEYWORDS`, case-insensitive; the keyword may end a longer
   key such as ``x-auth-token`` or ``client_secret``), then by the separator:

   * ``=`` (``token=…``, ``password = …``): an assignment; any value is redacted.
   * ``:`` with a quoted value (JSON ``"token": "…"``): the quoted text is redacted.
   * ``:`` after a header key (:data:`HEADER_KEYWORDS`: ``Authorization:``, ``Cookie:``,
     ``Set-Cookie:``, or a hyphenated name ending in a keyword: ``X-Auth-Token:``,
     ``X-Api-Key:``): a header value; it is redacted whatever it looks like, the credential
     after a scheme word (``Basic``, ``Bearer``, …) included; after ``Cookie:`` every cookie's
     value.
   * ``:`` otherwise, or whitespace: the next word is redacted only when it looks like a value
     (:func:`looks_like_value`): "token expired", "password required", "session: active"
     stay; "token abc123", "session: 8f3a9c" do not.

   Whatever the separator, ``null``, ``undefined``, ``true``, ``false``, ``none``, ``nil``,
   ``nan``, masks (``****``) and an earlier ``[REDACTED]`` are never values.

The result is then cut to the bound.  Every regular expression runs in linear time: each
quantified run stops at a character class its successor cannot start with, and the keyword
scan never re-reads more than one short kept word.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from browsermesh.redact import REDACTED, cut_chars, is_sensitive_name

__all__ = [
    "AUTH_SCHEMES",
    "HEADER_KEYWORDS",
    "TEXT_KEYWORDS",
    "TOKEN_SHAPES",
    "looks_like_value",
    "redact_text",
]

TEXT_KEYWORDS: Final[tuple[str, ...]] = (
    "authorization",
    "cookie",
    "password",
    "passwd",
    "passphrase",
    "pwd",
    "token",
    "secret",
    "api_key",
    "api-key",
    "apikey",
    "access_key",
    "access-key",
    "accesskey",
    "private_key",
    "private-key",
    "privatekey",
    "secret_key",
    "secret-key",
    "secretkey",
    "session",
    "session_id",
    "session-id",
    "sessionid",
    "sessid",
    "credential",
    "credentials",
    "signature",
)
"""Keys that name a secret; the value after them is redacted by separator and shape (rule 6)."""

HEADER_KEYWORDS: Final[tuple[str, ...]] = ("authorization", "cookie")
"""Keys (ending a longer one: ``Proxy-Authorization``, ``Set-Cookie``) whose ``:`` value is a
header value, redacted whatever it looks like."""

AUTH_SCHEMES: Final[tuple[str, ...]] = (
    "aws4-hmac-sha256",
    "basic",
    "bearer",
    "digest",
    "dpop",
    "gnap",
    "hoba",
    "mac",
    "mutual",
    "negotiate",
    "ntlm",
    "oauth",
    "privatetoken",
    "scram-sha-1",
    "scram-sha-256",
    "token",
    "vapid",
)
"""HTTP authentication scheme names: after a header key, the credential after one of them is
redacted (``Authorization: Basic abc``)."""

# Scheme words that name a credential on their own, in prose or logs ("sent Bearer eyJ…").
# "mac", "oauth", "token" and the rest are ordinary words ("OAuth 2.0", "MAC address") and
# count only after a header key.
_STANDALONE_SCHEMES: Final[tuple[str, ...]] = ("basic", "bearer", "digest", "negotiate", "ntlm")

TOKEN_SHAPES: Final[tuple[str, ...]] = (
    r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}(?:\.[A-Za-z0-9_-]*)?",  # JWT / JWS
    r"sk-(?=[A-Za-z_-]*[0-9])[A-Za-z0-9_-]{20,}",  # OpenAI, Anthropic (sk-proj-…, sk-ant-…)
    r"sk_(?:live|test)_[A-Za-z0-9]{10,}",  # Stripe
    r"pk_(?:live|test)_[A-Za-z0-9]{10,}",
    r"rk_(?:live|test)_[A-Za-z0-9]{10,}",
    r"gh[pousr]_[A-Za-z0-9]{30,}",  # GitHub
    r"github_pat_[A-Za-z0-9_]{30,}",
    r"glpat-[A-Za-z0-9_-]{20,}",  # GitLab
    r"AKIA[A-Z0-9]{16}(?![A-Za-z0-9])",  # AWS access key ids (long-term, temporary)
    r"ASIA[A-Z0-9]{16}(?![A-Za-z0-9])",
    r"xox[abposr]-[A-Za-z0-9-]{10,}",  # Slack
    r"xapp-[A-Za-z0-9-]{10,}",
    r"AIza[A-Za-z0-9_-]{35}",  # Google API key
    r"npm_[A-Za-z0-9]{36}",
    r"hf_[A-Za-z0-9]{30,}",  # Hugging Face
    r"pypi-[A-Za-z0-9_-]{50,}",
    r"SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}",  # SendGrid
)
"""Credential shapes redacted wherever they stand (rule 2), case-sensitive; never preceded by
a letter, digit, ``_`` or ``-`` (so "task-…" is not an ``sk-`` key)."""

_PRIVATE_KEY_RE: Final = re.compile(
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)",
    re.DOTALL,
)
# Every shape starts with a literal, so the search skips ahead on the shapes' first characters;
# the "not preceded by" rule is checked on each match (a look-behind first would turn that off).
_SHAPES_RE: Final = re.compile("|".join(TOKEN_SHAPES))
_WORD_CHARS: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_USERINFO_RE: Final = re.compile(r"://(?P<user>[^\s/@:?#]*)(?::(?P<pw>[^\s/@?#]*))?@")
_PAIR_RE: Final = re.compile(r"(?P<lead>[?&;])(?P<name>[^\s=&#?;\"'<>]+)=(?P<value>[^\s&#;\"'<>]*)")


def _alternation(words: tuple[str, ...]) -> str:
    return "(?:" + "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)) + ")"


# The scheme and keyword patterns are lower-case: they run on the lower-cased text (a
# case-sensitive search is several times faster than re.IGNORECASE), or with re.IGNORECASE on
# the text itself when lower-casing changes its length (a rare character such as "İ").
_SCHEME_SOURCE: Final = r"(?P<key>" + _alternation(_STANDALONE_SCHEMES) + r")\s+(?P<value>[^\s,;]+)"

# key [closing quote] then either an assignment (":"/"=" among whitespace, optionally a scheme
# word and whitespace) or plain whitespace, then the value: a quoted string (assignments only)
# or a run up to whitespace, "," or ";".  Separators never contain a keyword letter, so each
# separator run belongs to one keyword occurrence.
_KEYWORD_SOURCE: Final = (
    r"(?P<key>"
    + _alternation(TEXT_KEYWORDS)
    + r")[\"']?(?:(?P<assign>\s*[:=][\s:=]*)(?:(?P<scheme>"
    + _alternation(AUTH_SCHEMES)
    + r")\s+)?(?P<value>\"[^\"\\\n]*(?:\\.[^\"\\\n]*)*\"?|'[^'\\\n]*(?:\\.[^'\\\n]*)*'?"
    r"|[^\s,;]+)|\s+(?P<word>[^\s,;]+))"
)

_PATTERNS: Final = {
    source: (re.compile(source), re.compile(source, re.IGNORECASE))
    for source in (_SCHEME_SOURCE, _KEYWORD_SOURCE)
}

# After "Cookie:", the further "; name=value" pairs of the same header.
_COOKIE_PAIR_RE: Final = re.compile(r";[ \t]*(?P<name>[^\s=;,]+)=(?P<value>[^\s;,]*)")

# Characters around a word that are punctuation, not part of the value ("(expired).").
_EDGES: Final = "\"'`([{<>}]).,;:!?…“”‘’«»"
# A prose word: letters, joined by hyphens, apostrophes or underscores ("re-enter", "isn't",
# "invalid_grant", "_ga": an error code or a cookie's name is not its value).
_PROSE_RE: Final = re.compile(r"_*[^\W\d_]+(?:['’_-]+[^\W\d_]+)*_*")
_JOINERS_RE: Final = re.compile(r"['’_-]+")
_NUMBER_RE: Final = re.compile(r"[-+]?[0-9]{1,4}")
_CASE_SWITCH_RE: Final = re.compile(r"[a-z][A-Z]")
_MASK_RE: Final = re.compile(r"[*•·]+")
_LITERALS: Final = frozenset({"null", "undefined", "none", "nil", "true", "false", "nan"})
_PROSE_SEGMENT_MAX: Final = 23  # a letters-only run longer than this is not a prose word
_PROSE_WORD_MAX: Final = 40


def _is_literal(core: str) -> bool:
    """Whether ``core`` is never a secret value (empty, ``null``, a mask, ``[REDACTED]``)."""
    return (
        not core
        or REDACTED in core
        or core.casefold() in _LITERALS
        or _MASK_RE.fullmatch(core) is not None
    )


def looks_like_value(word: str) -> bool:
    """Whether a word in free text (after a credential key or a scheme word) is a value.

    Punctuation around the word is ignored.  A value has a digit (except a plain number of at
    most four digits: a count, a status code, a year), a symbol inside it (``.``, ``/``, ``+``,
    ``=``, ``%``, …), two or more lower-to-upper case changes (``aXbYc``), or a letters-only run
    of 24 characters or more.  Everything else is prose: "expired", "required", "active",
    "re-enter", "invalid_grant", "JavaScript", and so are ``null``, masks and ``[REDACTED]``.
    """
    core = word.strip(_EDGES)
    if _is_literal(core) or not any(ch.isalnum() for ch in core):
        return False  # a dash or a slash is punctuation, never a secret
    if _PROSE_RE.fullmatch(core) is not None:
        if len(core) > _PROSE_WORD_MAX or len(_CASE_SWITCH_RE.findall(core)) >= 2:
            return True
        return any(len(part) > _PROSE_SEGMENT_MAX for part in _JOINERS_RE.split(core))
    return _NUMBER_RE.fullmatch(core) is None


def _core_span(text: str, start: int, end: int) -> tuple[int, int]:
    """``(start, end)`` narrowed past the punctuation around the word ``text[start:end]``."""
    while start < end and text[start] in _EDGES:
        start += 1
    while end > start and text[end - 1] in _EDGES:
        end -= 1
    return start, end


# A decision: None keeps the word (the scan goes on from the word's start, so a keyword
# standing there is read in turn), or (start, end, replacement) replaces text[start:end].
_Decision = tuple[int, int, str] | None
_Decide = Callable[[re.Match[str], str], _Decision]


def _scan(source: str, text: str, decide: _Decide) -> str:
    """Apply ``decide`` to each match of the lower-case pattern ``source``, left to right.

    The pattern runs on ``text`` lower-cased when that keeps its length (the spans then mean
    the same in both), else on ``text`` with re.IGNORECASE; ``decide`` reads the original
    ``text`` at the match's spans.
    """
    plain, folded = _PATTERNS[source]
    lowered = text.lower()
    pattern, haystack = (plain, lowered) if len(lowered) == len(text) else (folded, text)
    out: list[str] = []
    pos = 0
    while (match := pattern.search(haystack, pos)) is not None:
        decision = decide(match, text)
        if decision is None:
            resume = match.start("value") if match.group("value") is not None else -1
            if resume < 0:
                resume = match.start("word")
            out.append(text[pos:resume])
            pos = resume
            continue
        start, end, replacement = decision
        out.append(text[pos:start])
        out.append(replacement)
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _free_word(match: re.Match[str], text: str, group: str) -> _Decision:
    """Redact the word of ``group`` (its punctuation kept) when it looks like a value."""
    start, end = match.span(group)
    if not looks_like_value(text[start:end]):
        return None
    start, end = _core_span(text, start, end)
    return start, end, REDACTED


def _scheme_decision(match: re.Match[str], text: str) -> _Decision:
    core = text[match.start("value") : match.end("value")].strip(_EDGES)
    # A token68 (RFC 9110 §11.2): "Bearer realm=..." is a challenge's parameters, not a token.
    if re.fullmatch(r"[A-Za-z0-9._~+/-]+=*", core) is None:
        return None
    return _free_word(match, text, "value")


def _cookie_pairs(text: str, pos: int) -> tuple[int, str]:
    """The further ``; name=value`` pairs of a Cookie header from ``pos``, values redacted."""
    out: list[str] = []
    while (pair := _COOKIE_PAIR_RE.match(text, pos)) is not None:
        value = pair.group("value")
        kept = value if _is_literal(value) else REDACTED
        out.append(text[pos : pair.start("value")] + kept)
        pos = pair.end()
    return pos, "".join(out)


def _keyword_decision(match: re.Match[str], text: str) -> _Decision:
    if match.group("assign") is None:
        return _free_word(match, text, "word")
    start, end = match.span("value")
    value = text[start:end]
    if value[0] in "\"'":  # a quoted string: its contents are the value
        inner_end = end - 1 if end - start > 1 and text[end - 1] == value[0] else end
        if _is_literal(text[start + 1 : inner_end]):
            return None
        return start + 1, inner_end, REDACTED
    key = match.group("key").casefold()
    header = ":" in match.group("assign") and (
        key in HEADER_KEYWORDS or text[match.start("key") - 1 : match.start("key")] == "-"
    )
    if "=" in match.group("assign") or header:
        if _is_literal(value):
            return None
        if header and key == "cookie" and not _set_cookie(text, match.start("key")):
            tail_end, tail = _cookie_pairs(text, end)
            return start, tail_end, REDACTED + tail
        return start, end, REDACTED
    return _free_word(match, text, "value")


def _set_cookie(text: str, key_start: int) -> bool:
    """Whether the ``cookie`` key at ``key_start`` is the end of ``Set-Cookie``."""
    return text[max(0, key_start - 4) : key_start].casefold() == "set-"


def _shape(match: re.Match[str]) -> str:
    start = match.start()
    if start and match.string[start - 1] in _WORD_CHARS:
        return match.group(0)
    return REDACTED


def _userinfo(match: re.Match[str]) -> str:
    user, password = match.group("user"), match.group("pw")
    if password:
        return f"://{user}:{REDACTED}@"
    if password is None and looks_like_value(user):
        return f"://{REDACTED}@"
    return match.group(0)


def _pair(match: re.Match[str]) -> str:
    value = match.group("value")
    if not value or REDACTED in value or not is_sensitive_name(match.group("name")):
        return match.group(0)
    return f"{match.group('lead')}{match.group('name')}={REDACTED}"


def redact_text(text: str, *, max_chars: int) -> str:
    """Redact the secrets of free text (rules 1-6 of this module), then cut to ``max_chars``.

    Prose comes back unchanged: a credential key followed by an ordinary word ("token
    expired", "authorization required") is not a secret.  The result is at most ``max_chars``
    code points (last char ``…`` when cut).

    Raises:
        ValueError: ``max_chars`` is smaller than 1.
    """
    if max_chars < 1:
        raise ValueError("max_chars must be >= 1")
    if "-----BEGIN " in text:
        text = _PRIVATE_KEY_RE.sub(REDACTED, text)
    text = _SHAPES_RE.sub(_shape, text)
    if "://" in text:
        text = _USERINFO_RE.sub(_userinfo, text)
    if "=" in text:
        text = _PAIR_RE.sub(_pair, text)
    text = _scan(_SCHEME_SOURCE, text, _scheme_decision)
    return cut_chars(_scan(_KEYWORD_SOURCE, text, _keyword_decision), max_chars)
