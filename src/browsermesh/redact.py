"""The URL sanitizer and page secret values (reference §17.1, §6.4).

This module (with :mod:`browsermesh.text_redact` for free text) decides what URL data may leave
the process (observability events, action-and-wait events, error details, endpoint listings and
log fields).  Everything here is a pure function over ``str``; it uses only the standard
library and never raises on hostile input (only a programming error such as a non-positive
bound raises).

URL sanitizer (§17.1), :func:`sanitize_url`:

1. Parse with :func:`urllib.parse.urlsplit`; unparsable input (``ValueError``, an invalid port,
   no scheme, or no host) becomes ``<invalid-url>``.  A scheme outside the caller's allowed set
   becomes ``<redacted-url>``.
2. Username, password and fragment are removed; host (IPv6 hosts keep their brackets) and port
   are kept.
3. Query: the query is split on ``&``; each pair is split at its first ``=``; the name is
   decoded up to three rounds (percent-decoding with ``+`` as space, stopping early when a round
   changes nothing); if the decoded, case-folded name contains any of :data:`SENSITIVE_NAME_PARTS`
   the value becomes ``[REDACTED]``.  Names and all other pairs keep their original encoding and
   order (the query is never re-encoded).  Two extensions that only ever redact more: legacy
   ``;`` sub-pairs inside a query pair (``a=1;token=x``) and ``;name=value`` path parameters
   (``/app;jsessionid=x``) with a sensitive name are redacted too.
4. The result is cut to the caller's bound, ending with ``…`` when cut.
5. Origin-and-path mode drops the query entirely and bounds the result to at most 256 chars.

The text redactor (§17.2) is :func:`browsermesh.text_redact.redact_text`; it shares
:func:`is_sensitive_name` with the query rule above.

All regular expressions are precompiled and linear time, so hostile inputs of any length cannot
trigger catastrophic backtracking.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable
from typing import Final
from urllib.parse import unquote_plus, urlsplit

__all__ = [
    "ELLIPSIS",
    "ENDPOINT_SCHEMES",
    "HTTP_SCHEMES",
    "INVALID_URL",
    "NAME_DECODE_ROUNDS",
    "ORIGIN_AND_PATH_MAX_CHARS",
    "REDACTED",
    "REDACTED_URL",
    "SENSITIVE_NAME_PARTS",
    "SecretValues",
    "cut_chars",
    "is_sensitive_name",
    "sanitize_url",
    "sanitize_url_or_none",
]

REDACTED: Final = "[REDACTED]"
"""Replacement for a redacted value (query value or text run)."""

INVALID_URL: Final = "<invalid-url>"
"""Sanitizer output for input that cannot be parsed as a URL with a scheme and a host."""

REDACTED_URL: Final = "<redacted-url>"
"""Sanitizer output for a URL whose scheme is outside the caller's allowed set."""

ELLIPSIS: Final = "…"
"""Last character of a string that was cut."""

HTTP_SCHEMES: Final[frozenset[str]] = frozenset({"http", "https"})
"""Default allowed schemes (observability, action-and-wait events, error details, logs)."""

ENDPOINT_SCHEMES: Final[frozenset[str]] = frozenset({"http", "https", "ws", "wss"})
"""Allowed schemes for browser endpoint URLs (``browser_runtime_info``, endpoint log fields)."""

ORIGIN_AND_PATH_MAX_CHARS: Final = 256
"""Upper bound of the origin-and-path mode (error-detail ``url``)."""

NAME_DECODE_ROUNDS: Final = 3
"""Maximum number of percent-decoding rounds applied to a query name."""

SENSITIVE_NAME_PARTS: Final[tuple[str, ...]] = (
    "token",
    "secret",
    "password",
    "passwd",
    "auth",
    "key",
    "code",
    "session",
    "cookie",
    "credential",
    "signature",
    "sig",
)
"""A query name whose decoded, case-folded form contains one of these has its value redacted."""

# An IPv6 (or IPvFuture) literal in brackets, optionally followed by ":port" (already validated).
_BRACKETED_HOST_RE: Final = re.compile(r"\[[^\[\]]*\](?::[0-9]*)?")


class _Failure(enum.Enum):
    """Why a URL could not be rebuilt."""

    INVALID = enum.auto()
    NOT_ALLOWED = enum.auto()


def cut_chars(text: str, max_chars: int) -> str:
    """Cut ``text`` to at most ``max_chars`` Unicode code points.

    Text that already fits is returned unchanged.  Longer text is cut on a code-point boundary
    and its last character replaced by ``…``, so the result is exactly ``max_chars`` code points
    long.

    Raises:
        ValueError: ``max_chars`` is smaller than 1 (a programming error: no bound in the
            reference is below 1 and a cut string must be able to hold the ``…``).
    """
    if max_chars < 1:
        raise ValueError("max_chars must be >= 1")
    if len(text) <= max_chars:
        return text
    return text[: max_chars - 1] + ELLIPSIS


def _decode_name(name: str) -> str:
    """Percent-decode ``name`` (``+`` as space) up to :data:`NAME_DECODE_ROUNDS` rounds.

    Decoding stops early when a round changes nothing.
    """
    for _ in range(NAME_DECODE_ROUNDS):
        decoded = unquote_plus(name)
        if decoded == name:
            break
        name = decoded
    return name


def is_sensitive_name(name: str) -> bool:
    """Return whether a raw (still encoded) parameter name designates a secret value.

    The name is decoded up to three rounds and case-folded; it is sensitive when it contains any
    of :data:`SENSITIVE_NAME_PARTS`.  Over-redaction (``author``, ``zipcode``) is by design.
    """
    folded = _decode_name(name).casefold()
    return any(part in folded for part in SENSITIVE_NAME_PARTS)


def _redact_query_pair(pair: str) -> str:
    """Redact one ``&``-separated query pair, keeping its original encoding.

    The pair is split at its first ``=``.  Legacy ``;``-separated sub-pairs (``a=1;token=x``)
    are honoured as well: from the first sub-pair with a sensitive name, everything after its
    ``=`` up to the end of the ``&`` pair is redacted, which covers both the ``&``-only and the
    ``&``/``;`` readings of the query.  A name without ``=`` has no value and stays as is.
    """
    pieces = pair.split(";")
    for index, piece in enumerate(pieces):
        name, eq, _value = piece.partition("=")
        if eq and is_sensitive_name(name):
            return ";".join([*pieces[:index], name + "=" + REDACTED])
    return pair


def _redact_query(query: str) -> str:
    """Redact sensitive values of a raw query; order and encoding are otherwise preserved."""
    return "&".join(_redact_query_pair(pair) for pair in query.split("&"))


def _redact_path_segment(segment: str) -> str:
    """Redact sensitive matrix parameters of one path segment (``/app;jsessionid=ABC``).

    The part before the first ``;`` is the segment itself and is kept.  From the first
    ``;name=value`` parameter with a sensitive name, the rest of the segment is replaced by
    ``[REDACTED]``.
    """
    pieces = segment.split(";")
    for index in range(1, len(pieces)):
        name, eq, _value = pieces[index].partition("=")
        if eq and is_sensitive_name(name):
            return ";".join([*pieces[:index], name + "=" + REDACTED])
    return segment


def _redact_path(path: str) -> str:
    """Redact sensitive matrix parameters in every segment of a raw path."""
    if ";" not in path:
        return path
    return "/".join(_redact_path_segment(segment) for segment in path.split("/"))


def _rebuild(url: str, allowed_schemes: frozenset[str], origin_and_path: bool) -> str | _Failure:
    """Parse ``url`` and rebuild it without credentials, fragment and sensitive values."""
    if not isinstance(url, str):  # defensive: callers may hand through engine data
        return _Failure.INVALID
    try:
        parts = urlsplit(url)
    except ValueError:
        return _Failure.INVALID
    scheme = parts.scheme  # urlsplit lower-cases the scheme
    if not scheme:
        return _Failure.INVALID
    if scheme not in allowed_schemes:
        return _Failure.NOT_ALLOWED
    try:
        _ = parts.port  # validates the port: non-numeric or out of range raises ValueError
    except ValueError:
        return _Failure.INVALID
    if not parts.hostname:
        return _Failure.INVALID
    # Keep the host exactly as written (IPv6 brackets, port); drop "user:password@".
    host_port = parts.netloc.rpartition("@")[2]
    if ("[" in host_port or "]" in host_port) and _BRACKETED_HOST_RE.fullmatch(host_port) is None:
        return _Failure.INVALID  # e.g. "[::1]x": junk around an IPv6 literal
    base = f"{scheme}://{host_port}{_redact_path(parts.path)}"
    if origin_and_path or not parts.query:
        return base
    return f"{base}?{_redact_query(parts.query)}"


def sanitize_url(
    url: str,
    *,
    max_chars: int,
    allowed_schemes: frozenset[str] = HTTP_SCHEMES,
    origin_and_path: bool = False,
) -> str:
    """Sanitize a URL for output (reference §17.1); the one URL sanitizer of the project.

    Args:
        url: The raw URL.
        max_chars: Bound in code points (observability: the configured string length;
            action-and-wait events: 2,000; logs: 512).  A cut result ends with ``…``.
        allowed_schemes: Lower-case schemes that may pass (default ``http``/``https``; endpoint
            URLs add ``ws``/``wss``, see :data:`ENDPOINT_SCHEMES`).
        origin_and_path: Error-detail mode: drop the query entirely, keep
            ``scheme://host[:port]/path`` and bound to ``min(max_chars, 256)``.

    Returns:
        The sanitized URL, ``<invalid-url>`` when unparsable (no scheme, no host, bad port,
        malformed IPv6 literal), or ``<redacted-url>`` when the scheme is not allowed.

    Raises:
        ValueError: ``max_chars`` is smaller than 1.
    """
    bound = min(max_chars, ORIGIN_AND_PATH_MAX_CHARS) if origin_and_path else max_chars
    if bound < 1:
        raise ValueError("max_chars must be >= 1")
    rebuilt = _rebuild(url, allowed_schemes, origin_and_path)
    if isinstance(rebuilt, _Failure):
        rebuilt = INVALID_URL if rebuilt is _Failure.INVALID else REDACTED_URL
    return cut_chars(rebuilt, bound)


def sanitize_url_or_none(url: str, *, max_chars: int) -> str | None:
    """Sanitize an observability event URL, or return ``None`` when the event must be dropped.

    Observability keeps only ``http``/``https`` URLs (§8.4): a URL with any other scheme
    (``data:``, ``blob:``, ``javascript:``, ...) or an unparsable URL yields ``None``; otherwise
    the result equals ``sanitize_url(url, max_chars=max_chars)``.

    Raises:
        ValueError: ``max_chars`` is smaller than 1.
    """
    if max_chars < 1:
        raise ValueError("max_chars must be >= 1")
    rebuilt = _rebuild(url, HTTP_SCHEMES, False)
    if isinstance(rebuilt, _Failure):
        return None
    return cut_chars(rebuilt, max_chars)


class SecretValues:
    """Exact values that must never leave the process (a page's password-field contents, §6.4).

    Every page-derived string on its way out (snapshot text, ref names, element values, visible
    text) goes through :meth:`text`, which replaces each value wherever it occurs, longest
    first so that a value containing another is replaced whole.
    """

    __slots__ = ("_values",)

    def __init__(self, values: Iterable[str] = ()) -> None:
        self._values: list[str] = []
        self.add(values)

    def add(self, values: Iterable[str]) -> None:
        """Add values (empty strings are ignored)."""
        merged = set(self._values)
        merged.update(v for v in values if isinstance(v, str) and v)
        self._values = sorted(merged, key=len, reverse=True)

    def __bool__(self) -> bool:
        return bool(self._values)

    def __repr__(self) -> str:  # never show the values themselves
        return f"SecretValues(<{len(self._values)} values>)"

    def values(self) -> tuple[str, ...]:
        """The values themselves, for another in-process holder (never for output)."""
        return tuple(self._values)

    def appears_in(self, text: str) -> bool:
        """Whether any secret value occurs in `text`."""
        return any(value in text for value in self._values)

    def text(self, text: str) -> str:
        """`text` with every secret value replaced by ``[REDACTED]``."""
        for value in self._values:
            if value in text:
                text = text.replace(value, REDACTED)
        return text

    def optional(self, text: str | None) -> str | None:
        """:meth:`text` for an optional string."""
        return None if text is None else self.text(text)
