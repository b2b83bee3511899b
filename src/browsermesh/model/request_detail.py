"""What ``browser_observe`` with ``requestId`` returns about one request (issue 15).

Captured at response time from values the engine already has (``response.headers`` and
``request.timing`` are synchronous in Playwright, no extra round trip) and kept only while one
of the request's events is in the network ring. Response headers pass an allowlist only:
cookies, ``set-cookie`` and ``authorization`` can never be in it. ``location`` passes the URL
sanitizer (relative values are resolved against the request's sanitized URL), the others the
text redactor; every value is bounded to :data:`MAX_HEADER_CHARS`. Pure model.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import urljoin

from browsermesh.model.text import well_formed
from browsermesh.redact import sanitize_url
from browsermesh.text_redact import redact_text

__all__ = [
    "MAX_HEADER_CHARS",
    "RESPONSE_HEADERS",
    "TIMING_KEYS",
    "RequestDetail",
    "allowed_headers",
    "rounded_timing",
]

RESPONSE_HEADERS: Final = (
    "content-type",
    "content-length",
    "content-disposition",
    "location",
    "cache-control",
    "etag",
    "last-modified",
)
"""The only response headers that ever cross, lower-case, in output order."""

MAX_HEADER_CHARS: Final = 512

TIMING_KEYS: Final = (
    "domainLookupStart",
    "domainLookupEnd",
    "connectStart",
    "secureConnectionStart",
    "connectEnd",
    "requestStart",
    "responseStart",
    "responseEnd",
)
"""Playwright's ``request.timing`` fields relative to the request's start (``startTime``, an
epoch time, is left out: the event's ``timestamp`` says when)."""

_MAX_MS: Final = 86_400_000


def _text(value: object) -> str:
    return well_formed(value if isinstance(value, str) else str(value))


def allowed_headers(raw: Mapping[str, Any], base_url: str) -> dict[str, str]:
    """The allowlisted headers of ``raw`` (any name case), sanitized and bounded."""
    found: dict[str, str] = {}
    for name, value in raw.items():
        key = _text(name).strip().lower()
        if key not in RESPONSE_HEADERS or key in found:
            continue
        text = _text(value)
        if key == "location":
            found[key] = sanitize_url(urljoin(base_url, text.strip()), max_chars=MAX_HEADER_CHARS)
        else:
            found[key] = redact_text(text, max_chars=MAX_HEADER_CHARS)
    return {key: found[key] for key in RESPONSE_HEADERS if key in found}


def rounded_timing(raw: object) -> dict[str, int] | None:
    """The known phases of a Playwright ``request.timing`` in rounded ms (``-1`` = unknown,
    left out); ``None`` when none is known."""
    if not isinstance(raw, Mapping):
        return None
    out: dict[str, int] = {}
    for key in TIMING_KEYS:
        value = raw.get(key)
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue
        if not math.isfinite(value) or value < 0:
            continue
        out[key] = min(round(value), _MAX_MS)
    return out or None


@dataclass(slots=True)
class RequestDetail:
    """One request's detail; ``events`` counts its events still in the ring."""

    fields: dict[str, Any]
    events: int = 1
    status: int | None = None
    duration_ms: int | None = None
    failure: str | None = None
    timing: dict[str, int] | None = None
    headers: dict[str, str] = field(default_factory=dict)

    def view(self) -> dict[str, Any]:
        """``{requestId, method, url, resourceType, status?, durationMs?, failure?, timing?,
        responseHeaders}``."""
        out = dict(self.fields)
        if self.status is not None:
            out["status"] = self.status
        if self.duration_ms is not None:
            out["durationMs"] = self.duration_ms
        if self.failure is not None:
            out["failure"] = self.failure
        if self.timing:
            out["timing"] = dict(self.timing)
        out["responseHeaders"] = dict(self.headers)
        return out
