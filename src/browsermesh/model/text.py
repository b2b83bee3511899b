"""Bounding text by code points and UTF-8 bytes (cuts always on code-point boundaries)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

CONTROL_RE: Final = re.compile("[\x00-\x1f\x7f-\x9f]")
"""C0 and C1 control characters (and DEL), which caller-given names and settings may not hold."""
SURROGATE_RE: Final = re.compile("[\ud800-\udfff]")
"""A lone UTF-16 surrogate (not encodable as UTF-8)."""


def well_formed(text: str) -> str:
    """``text`` with surrogate pairs combined and lone surrogates replaced by U+FFFD.

    Page content can hold lone UTF-16 surrogates (``'\\ud800'`` in a title, a text node or an
    evaluation result); Playwright hands them over as such, and they cannot be encoded as UTF-8.
    Every string read from a page goes through this before it is measured, parsed or returned.
    """
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def utf8_len(text: str) -> int:
    return len(text.encode("utf-8"))


@dataclass(frozen=True, slots=True)
class BoundedText:
    text: str
    truncated: bool
    original_chars: int
    original_bytes: int
    returned_chars: int
    returned_bytes: int


def fit_prefix(text: str, max_chars: int, max_bytes: int) -> str:
    """The longest prefix with at most `max_chars` code points and `max_bytes` UTF-8 bytes."""
    prefix = text[:max_chars]
    encoded = prefix.encode("utf-8")
    if len(encoded) <= max_bytes:
        return prefix
    # Cut the bytes, then drop a partial trailing code point.
    return encoded[:max_bytes].decode("utf-8", errors="ignore")


def bound_text(text: str, max_chars: int, max_bytes: int) -> BoundedText:
    """Cut first at `max_chars` code points, then before exceeding `max_bytes`."""
    out = fit_prefix(text, max_chars, max_bytes)
    return BoundedText(
        text=out,
        truncated=len(out) < len(text),
        original_chars=len(text),
        original_bytes=utf8_len(text),
        returned_chars=len(out),
        returned_bytes=utf8_len(out),
    )
