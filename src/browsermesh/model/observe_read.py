"""Bounded, non-consuming reads of a page's event rings (reference §8.2, §8.3, issue 15).

Serves ``browser_observe``: :func:`read_events` pages a ring by ``sinceEventId`` (oldest first
or newest first, optionally filtered) and keeps the compact JSON of the returned array within
``responseBytes − 512``; :func:`request_view` answers a ``requestId`` with the request's
detail. Called by :meth:`browsermesh.model.observe.PageObservations.read` and
:meth:`~browsermesh.model.observe.PageObservations.request_detail`, which own the rings.

Pure model: no Playwright, no MCP, no file system.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, Final, Literal

from browsermesh.errors import Bound, BrowserMeshError, ErrorCode, invalid_argument
from browsermesh.model.observe_limits import (
    DEFAULT_LIMIT,
    MAX_SINCE_EVENT_ID_CHARS,
    RESPONSE_OVERHEAD_BYTES,
    ObserveLimits,
)
from browsermesh.model.observe_query import NetworkFilter
from browsermesh.model.observe_ring import EventRing
from browsermesh.model.request_detail import RequestDetail
from browsermesh.redact import ELLIPSIS

__all__ = ["SOURCES", "SOURCE_KINDS", "Source", "read_events", "request_view"]

Source = Literal["console", "pageError", "network", "requestFailed"]
"""The ``source`` argument of ``browser_observe``."""

SOURCE_KINDS: Final[dict[str, frozenset[str]]] = {
    "console": frozenset({"console", "popup", "human"}),
    "pageError": frozenset({"page_error"}),
    "network": frozenset({"request", "response"}),
    "requestFailed": frozenset({"request_failed"}),
}
"""Source → the event kinds it reads."""

SOURCES: Final[frozenset[str]] = frozenset(SOURCE_KINDS)

_CONSOLE_RING_SOURCES: Final = frozenset({"console", "pageError"})
_TEXT_SOURCES: Final = frozenset({"console", "pageError"})


def _json_bytes(value: Any) -> int:
    """UTF-8 byte length of the compact JSON of ``value`` (the wire measure of §8.3)."""
    encoded = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return len(encoded.encode("utf-8", "surrogatepass"))


def _invalid(field_name: str, requirement: str, bound: Bound | None = None) -> BrowserMeshError:
    return invalid_argument(field_name, requirement, bound=bound)


def read_events(
    console_ring: EventRing,
    network_ring: EventRing,
    limits: ObserveLimits,
    source: Source,
    since_event_id: str | None,
    limit: int | None,
    include_text: bool,
    *,
    match: NetworkFilter | None = None,
    newest_first: bool = False,
) -> dict[str, Any]:
    """Read events of ``source`` newer than ``since_event_id`` (reference §8.2, §8.3, issue 15).

    The read examines the ring's events after ``since_event_id`` (oldest first, or newest
    first with ``newest_first``) and returns those of ``source``'s kinds that ``match``
    accepts, up to ``limit`` and while the array's JSON fits ``responseBytes − 512``.

    ``nextCursor``: oldest first, when the read stopped at a matching event it could not
    return (``limit`` reached or the byte budget full), the id of the last returned event, so
    the next read starts with the one left over; otherwise (it examined every newer event)
    the id of the ring's newest event, so the events it passed over (other kinds, not
    matching) are not examined again. ``newest_first`` is a tail read: the newest matching
    events, newest first; ``nextCursor`` is always the ring's newest event, so reading on
    forward with it returns only events newer than this read (older matching events that
    did not fit are skipped: page oldest first to read every one). With nothing newer than
    ``since_event_id`` it echoes ``since_event_id`` (``None`` when none given).

    Returns:
        ``{"source", "events", "nextCursor", "droppedCount", "gap"}``.

    Raises:
        BrowserMeshError: ``INVALID_ARGUMENT`` for an unknown source, ``include_text`` with
            ``network``/``requestFailed``, ``limit`` outside 1..page size (bound clause
            naming ``BROWSERMESH_OBSERVABILITY_PAGE_SIZE`` above the ceiling), or a
            ``since_event_id`` that is malformed, from another ring/page/session, or beyond
            the latest issued sequence; ``LIMIT_EXCEEDED`` (bound ``responseBytes``) when
            not even one shortened event fits the response budget.
    """
    if not isinstance(source, str) or source not in SOURCE_KINDS:
        raise _invalid("source", "one of: " + ", ".join(SOURCE_KINDS))
    if not isinstance(include_text, bool):
        raise _invalid("includeText", "boolean")
    if include_text and source not in _TEXT_SOURCES:
        raise _invalid("includeText", "true only with source console or pageError")
    count = _validate_limit(limits, limit)
    ring = console_ring if source in _CONSOLE_RING_SOURCES else network_ring
    since_seq = _validate_since(ring, since_event_id)

    kinds = SOURCE_KINDS[source]
    budget = limits.response_bytes - RESPONSE_OVERHEAD_BYTES
    selected: list[dict[str, Any]] = []
    used = 2  # "[" and "]"
    stopped = False  # at a matching event left for the next read
    for stored in _newer(ring, since_seq, newest_first):
        if stored["kind"] not in kinds or (match is not None and not match.matches(stored)):
            continue
        if len(selected) >= count:
            stopped = True
            break
        event = _public(stored, include_text)
        size = _json_bytes(event)
        if not selected:
            if used + size > budget:
                event = _shorten(limits, event, budget - used)
                size = _json_bytes(event)
            selected.append(event)
            used += size
            continue
        if used + 1 + size > budget:
            stopped = True
            break
        selected.append(event)
        used += 1 + size

    if stopped and not newest_first:
        next_cursor: str | None = selected[-1]["eventId"]
    elif ring.last_seq > since_seq:
        next_cursor = ring.event_id(ring.last_seq)
    else:
        next_cursor = since_event_id
    gap = since_event_id is not None and since_seq < ring.oldest_seq() - 1
    return {
        "source": source,
        "events": selected,
        "nextCursor": next_cursor,
        "droppedCount": ring.dropped,
        "gap": gap,
    }


def _newer(ring: EventRing, since_seq: int, newest_first: bool) -> Iterable[dict[str, Any]]:
    """The ring's events with a sequence above `since_seq`, in reading order."""
    if newest_first:
        for seq, stored in reversed(ring.events):
            if seq <= since_seq:
                return
            yield stored
        return
    for seq, stored in ring.events:
        if seq > since_seq:
            yield stored


def request_view(detail: RequestDetail | None, limits: ObserveLimits) -> dict[str, Any]:
    """``{"source": "network", "request": {...}}`` for the `detail` of a request with an event
    in the ring (``None``: no retained network event has the asked ``requestId``).

    Raises:
        BrowserMeshError: ``INVALID_ARGUMENT`` (field ``requestId``) when `detail` is ``None``;
            ``LIMIT_EXCEEDED`` when the detail cannot fit the response budget even with its
            failure text shortened.
    """
    if detail is None:
        raise _invalid("requestId", "a requestId of a retained network event of this page")
    view = detail.view()
    budget = limits.response_bytes - RESPONSE_OVERHEAD_BYTES
    if _json_bytes(view) > budget:
        view = _shorten(limits, view, budget)
    return {"source": "network", "request": view}


def _validate_limit(limits: ObserveLimits, limit: int | None) -> int:
    page_size = limits.page_size
    if limit is None:
        return min(DEFAULT_LIMIT, page_size)
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise _invalid("limit", "integer")
    if limit < 1:
        raise _invalid("limit", "at least 1", Bound("limit", ">=", 1))
    if limit > page_size:
        raise _invalid(
            "limit",
            f"at most {page_size} (the configured page size)",
            Bound("limit", "<=", page_size, "BROWSERMESH_OBSERVABILITY_PAGE_SIZE"),
        )
    return limit


def _validate_since(ring: EventRing, since_event_id: str | None) -> int:
    """The sequence of ``since_event_id`` in ``ring`` (0 when absent)."""
    if since_event_id is None:
        return 0
    if (
        not isinstance(since_event_id, str)
        or not 1 <= len(since_event_id) <= MAX_SINCE_EVENT_ID_CHARS
    ):
        raise _invalid("sinceEventId", f"string of 1..{MAX_SINCE_EVENT_ID_CHARS} characters")
    seq = ring.parse(since_event_id)
    if seq is None or seq < 1:
        raise _invalid(
            "sinceEventId",
            "an eventId or nextCursor that browser_observe returned for this page and source",
        )
    if seq > ring.last_seq:
        raise _invalid("sinceEventId", "not beyond the latest event browser_observe returned")
    return seq


def _public(stored: dict[str, Any], include_text: bool) -> dict[str, Any]:
    """A copy of a stored event for output (``text`` only with ``include_text``)."""
    event = dict(stored)
    if not include_text:
        event.pop("text", None)
    return event


def _shorten(limits: ObserveLimits, event: dict[str, Any], budget: int) -> dict[str, Any]:
    """Shorten ``text`` (or ``failure``) of an event so its JSON fits ``budget`` bytes.

    Binary search on code points for the longest prefix that, followed by ``…``, fits.

    Raises:
        BrowserMeshError: ``LIMIT_EXCEEDED`` when no shortening can make it fit.
    """
    name = "text" if "text" in event else "failure" if "failure" in event else None
    value = event.get(name) if name is not None else None
    if name is None or not isinstance(value, str) or not value:
        raise _too_large(limits)

    def candidate(keep: int) -> dict[str, Any]:
        shorter = dict(event)
        shorter[name] = value[:keep] + ELLIPSIS
        return shorter

    if _json_bytes(candidate(0)) > budget:
        raise _too_large(limits)
    low, high = 0, len(value) - 1  # invariant: candidate(low) fits
    while low < high:
        mid = (low + high + 1) // 2
        if _json_bytes(candidate(mid)) <= budget:
            low = mid
        else:
            high = mid - 1
    return candidate(low)


def _too_large(limits: ObserveLimits) -> BrowserMeshError:
    return BrowserMeshError(
        ErrorCode.LIMIT_EXCEEDED,
        bound=Bound(
            "responseBytes",
            "<=",
            limits.response_bytes,
            "BROWSERMESH_OBSERVABILITY_RESPONSE_BYTES",
        ),
        internal={"field": "responseBytes", "requirement": "one event fits the response"},
    )
