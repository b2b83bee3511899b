"""Per-page observability rings, cursors and bounded reads (contract §8, §17).

Each managed page owns one :class:`PageObservations`. The engine's Playwright listeners feed it
plain values (console level and text, page-error message, request method/URL/resource type,
response status, failure text); everything is sanitized and bounded at capture time, so the rings
only ever hold output-safe data:

* URLs pass through :func:`browsermesh.redact.sanitize_url_or_none` (events whose URL is not
  ``http``/``https`` are dropped entirely); console, page-error and failure text pass through
  :func:`browsermesh.redact.redact_text`; both are bounded to the configured string length.
* Two bounded rings per page: the **console ring** (``console``, ``page_error``, ``popup``) and the
  **network ring** (``request``, ``response``, ``request_failed``), so network floods cannot
  evict console evidence. Each ring has its own namespace (a short id such as ``n4k2q``), its
  own sequence starting at 1 and a cumulative counter of evicted (and refused, see below) events;
  event id = ``<namespace>.<base-36 sequence>`` (issue 15: ~12 characters instead of 54).
* Reads (:meth:`PageObservations.read`) never consume events; they page by ``sinceEventId``,
  may filter network events (:class:`browsermesh.model.observe_query.NetworkFilter`) or read the
  newest first, and keep the compact JSON of the returned array within ``responseBytes − 512``.
  ``nextCursor`` names the newest event the read examined, so a client polling with it never
  misses nor repeats a matching event (see :meth:`PageObservations.read`).
* One request's detail (:meth:`PageObservations.request_detail`): allowlisted response headers
  and timing, kept while any of its events is in the ring.
* Events carry no ``sessionId``/``pageId``: the response names the page once (issue 15).
* Ingestion is capped: each ring admits at most :data:`MAX_EVENTS_PER_SECOND` events per page per
  second (:meth:`PageObservations.admit`, asked by the engine before it reads anything from an
  event); refused events count in ``droppedCount``. A page logging 100,000 lines cost the server
  ~8 s of CPU in Playwright's per-event work, and its garbage stalled every session (issue 12).
* Popups nobody asked for are reported in the console ring as ``popup`` events (issue 12).

Pure model: no Playwright, no MCP, no file system. The capture methods never raise.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal, ParamSpec

from browsermesh.errors import Bound, BrowserMeshError, ErrorCode, invalid_argument
from browsermesh.model.clock import Clock, iso_from_epoch
from browsermesh.model.ids import base36, short_id
from browsermesh.model.observe_query import NetworkFilter, ObserveQuery
from browsermesh.model.request_detail import RequestDetail, allowed_headers, rounded_timing
from browsermesh.model.text import well_formed
from browsermesh.redact import (
    ELLIPSIS,
    cut_chars,
    redact_text,
    sanitize_url,
    sanitize_url_or_none,
)

__all__ = [
    "DEFAULT_LIMIT",
    "MAX_DURATION_MS",
    "MAX_EVENTS_PER_SECOND",
    "RESPONSE_OVERHEAD_BYTES",
    "SOURCES",
    "SOURCE_KINDS",
    "ObserveLimits",
    "PageObservations",
    "Ring",
    "Source",
]

Source = Literal["console", "pageError", "network", "requestFailed"]
"""The ``source`` argument of ``browser_observe``."""

Kind = Literal["console", "page_error", "popup", "request", "response", "request_failed"]
"""The ``kind`` of an event."""

Ring = Literal["console", "network"]
"""The console ring (console, page_error, popup) or the network ring."""

SOURCE_KINDS: Final[dict[str, frozenset[str]]] = {
    "console": frozenset({"console", "popup"}),
    "pageError": frozenset({"page_error"}),
    "network": frozenset({"request", "response"}),
    "requestFailed": frozenset({"request_failed"}),
}
"""Source → the event kinds it reads."""

SOURCES: Final[frozenset[str]] = frozenset(SOURCE_KINDS)

_CONSOLE_RING_SOURCES: Final = frozenset({"console", "pageError"})
_TEXT_SOURCES: Final = frozenset({"console", "pageError"})

DEFAULT_LIMIT: Final = 50
"""Default ``limit`` (further capped by the configured page size)."""

RESPONSE_OVERHEAD_BYTES: Final = 512
"""Reserved for the envelope: the events array may use ``responseBytes − 512`` bytes."""

MAX_DURATION_MS: Final = 86_400_000
"""Upper clamp of ``durationMs``."""

MAX_EVENTS_PER_SECOND: Final = 500
"""Events one ring records per page per second; the rest are refused (counted as dropped).
High enough for a page load of a few hundred resources, low enough that a flood costs the
server a few percent of a core."""

_WINDOW_S: Final = 1.0

MAX_LEVEL_CHARS: Final = 64
MAX_METHOD_CHARS: Final = 32
MAX_RESOURCE_TYPE_CHARS: Final = 64
MAX_REQUEST_ID_CHARS: Final = 128
MAX_SINCE_EVENT_ID_CHARS: Final = 128
MIN_INFLIGHT: Final = 32
MAX_STATUS: Final = 999

_SEQ_RE: Final = re.compile(r"[1-9a-z][0-9a-z]{0,12}")  # canonical: no leading zero, >= 1

_P = ParamSpec("_P")


@dataclass(frozen=True, slots=True)
class ObserveLimits:
    """The configured observability bounds (contract §19.1).

    Attributes:
        events_per_ring: ``BROWSERMESH_OBSERVABILITY_EVENTS`` — capacity of each ring.
        string_chars: ``BROWSERMESH_OBSERVABILITY_STRING_CHARS`` — bound of URLs and texts.
        page_size: ``BROWSERMESH_OBSERVABILITY_PAGE_SIZE`` — runtime ceiling of ``limit``.
        response_bytes: ``BROWSERMESH_OBSERVABILITY_RESPONSE_BYTES`` — response byte budget.
    """

    events_per_ring: int
    string_chars: int
    page_size: int
    response_bytes: int

    def __post_init__(self) -> None:
        for name in ("events_per_ring", "string_chars", "page_size", "response_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer")


def _clean(value: object) -> str:
    """Coerce engine data to a well-formed ``str``.

    Non-strings become their ``str()``; surrogate pairs are combined and lone surrogates
    become U+FFFD, so the value always encodes to UTF-8.
    """
    return well_formed(value if isinstance(value, str) else str(value))


def _json_bytes(value: Any) -> int:
    """UTF-8 byte length of the compact JSON of ``value`` (the wire measure of §8.3)."""
    encoded = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return len(encoded.encode("utf-8", "surrogatepass"))


def _never_raise(method: Callable[_P, None]) -> Callable[_P, None]:
    """Decorate a capture method: engine listeners must never see an exception."""

    @functools.wraps(method)
    def guarded(*args: _P.args, **kwargs: _P.kwargs) -> None:
        try:
            method(*args, **kwargs)
        except Exception:  # a listener failure must never break the page
            return

    return guarded


def _invalid(field_name: str, requirement: str, bound: Bound | None = None) -> BrowserMeshError:
    return invalid_argument(field_name, requirement, bound=bound)


@dataclass(slots=True)
class _Ring:
    """One bounded ring: namespace, sequence, retained events and the eviction counter."""

    capacity: int
    on_evict: Callable[[dict[str, Any]], None] | None = None
    namespace: str = field(default_factory=lambda: short_id("n"))
    last_seq: int = 0
    dropped: int = 0
    events: deque[tuple[int, dict[str, Any]]] = field(default_factory=deque)
    window_start: float = -math.inf
    window_count: int = 0

    def admit(self, now: float) -> bool:
        """Count one event against the current one-second window; a refusal counts as dropped."""
        if now - self.window_start >= _WINDOW_S:
            self.window_start, self.window_count = now, 0
        if self.window_count >= MAX_EVENTS_PER_SECOND:
            self.dropped += 1
            return False
        self.window_count += 1
        return True

    def reopens_in(self, now: float) -> float:
        """Seconds until the current window ends (0 when it already has)."""
        return max(0.0, self.window_start + _WINDOW_S - now)

    def event_id(self, seq: int) -> str:
        return f"{self.namespace}.{base36(seq)}"

    def append(self, kind: Kind, common: dict[str, Any], extra: dict[str, Any]) -> None:
        """Issue the next sequence and store the event, evicting the oldest on overflow."""
        self.last_seq += 1
        event: dict[str, Any] = {"eventId": self.event_id(self.last_seq)}
        event.update(common)
        event["kind"] = kind
        event.update(extra)
        self.events.append((self.last_seq, event))
        while len(self.events) > self.capacity:
            _, evicted = self.events.popleft()
            self.dropped += 1
            if self.on_evict is not None:
                self.on_evict(evicted)

    def oldest_seq(self) -> int:
        """Sequence of the oldest retained event (``last_seq + 1`` when the ring is empty)."""
        return self.events[0][0] if self.events else self.last_seq + 1

    def parse(self, event_id: str) -> int | None:
        """The sequence of ``event_id`` if it belongs to this ring's namespace, else ``None``."""
        namespace, sep, digits = event_id.rpartition(".")
        if not sep or namespace != self.namespace or _SEQ_RE.fullmatch(digits) is None:
            return None
        return int(digits, 36)

    def clear(self) -> None:
        self.events.clear()
        self.dropped = 0


@dataclass(slots=True)
class _Tracked:
    """An in-flight request. ``key`` keeps the engine object alive so its ``id()`` stays unique."""

    key: object
    request_id: str
    method: str
    url: str
    resource_type: str
    started: float


class PageObservations:
    """Two bounded rings per page (console ring: console + page_error; network ring: request,
    response, request_failed), each with its own namespace ``short_id("n")`` and sequence from
    1; event id = ``f"{namespace}.{base36(seq)}"``; cumulative dropped counters; request
    tracking and request details.

    Capture methods (:meth:`console`, :meth:`page_error`, :meth:`request`, :meth:`response`,
    :meth:`request_failed`, :meth:`request_finished`) take plain values and never raise.
    :meth:`read` serves ``browser_observe`` (the caller adds ``operationId``, ``sessionId`` and
    ``pageId`` to the result). Listener counting is the engine's business.
    """

    def __init__(self, session_id: str, page_id: str, limits: ObserveLimits, clock: Clock) -> None:
        self._session_id = session_id
        self._page_id = page_id
        self._limits = limits
        self._clock = clock
        self._console_ring = _Ring(limits.events_per_ring)
        self._network_ring = _Ring(limits.events_per_ring, self._evicted)
        self._inflight: dict[int, _Tracked] = {}
        self._details: dict[str, RequestDetail] = {}
        self._inflight_max = max(MIN_INFLIGHT, 2 * limits.events_per_ring)
        self._request_counter = 0
        self._disposed = False

    # ------------------------------------------------------------------ introspection

    @property
    def limits(self) -> ObserveLimits:
        """The bounds this page was created with."""
        return self._limits

    @property
    def inflight_count(self) -> int:
        """Number of tracked (in-flight) requests."""
        return len(self._inflight)

    @property
    def detail_count(self) -> int:
        """Number of requests whose detail is retained (each has an event in the ring)."""
        return len(self._details)

    @property
    def disposed(self) -> bool:
        """Whether :meth:`dispose` was called (captures are then ignored)."""
        return self._disposed

    # ------------------------------------------------------------------ capture side

    def _ring(self, ring: Ring) -> _Ring:
        return self._console_ring if ring == "console" else self._network_ring

    def admit(self, ring: Ring) -> bool:
        """Whether one more event of `ring` may be recorded in this second. Ask before reading
        anything from the event: a refused one costs nothing more and counts in droppedCount."""
        try:
            return self._ring(ring).admit(self._clock.monotonic())
        except Exception:  # a broken clock must not break the page; record as before
            return True

    def reopens_in(self, ring: Ring) -> float:
        """Seconds until `ring` admits events again (0 when it does now)."""
        try:
            return self._ring(ring).reopens_in(self._clock.monotonic())
        except Exception:
            return 0.0

    def _common(self) -> dict[str, Any]:
        return {"timestamp": iso_from_epoch(self._clock.wall())}

    def _text(self, value: object) -> str:
        return redact_text(_clean(value), max_chars=self._limits.string_chars)

    def _duration_ms(self, tracked: _Tracked) -> int:
        elapsed = (self._clock.monotonic() - tracked.started) * 1000.0
        if not math.isfinite(elapsed):
            return MAX_DURATION_MS if elapsed > 0 else 0
        return min(max(round(elapsed), 0), MAX_DURATION_MS)

    @_never_raise
    def console(self, level: str, text: str) -> None:
        """Record a console message (``level`` is the message type: ``log``, ``warning``, …)."""
        if self._disposed:
            return
        extra = {
            "level": cut_chars(_clean(level), MAX_LEVEL_CHARS),
            "text": self._text(text),
        }
        self._console_ring.append("console", self._common(), extra)

    @_never_raise
    def page_error(self, message: str) -> None:
        """Record an uncaught page error (its message only, never the stack)."""
        if self._disposed:
            return
        self._console_ring.append("page_error", self._common(), {"text": self._text(message)})

    @_never_raise
    def popup(self, url: str, *, closed: bool) -> None:
        """Record a popup the page opened that nobody asked for: `closed` when it was closed at
        once (the session had no room for another page), else left open and unmanaged."""
        if self._disposed:
            return
        raw = _clean(url)
        if raw == "about:blank":  # carries nothing; the sanitizer would call it <redacted-url>
            shown = raw
        else:
            shown = sanitize_url(raw, max_chars=self._limits.string_chars)
        self._console_ring.append("popup", self._common(), {"url": shown, "closed": closed})

    @_never_raise
    def request(self, key: object, method: str, url: str, resource_type: str) -> None:
        """Record and track a request; ``key`` identifies the engine's request object.

        Requests whose URL is not ``http``/``https`` (or unparsable) are dropped and not tracked.
        The in-flight map keeps at most ``max(32, 2 × events_per_ring)`` entries (oldest dropped).
        """
        if self._disposed:
            return
        clean_url = sanitize_url_or_none(_clean(url), max_chars=self._limits.string_chars)
        if clean_url is None:
            return
        self._request_counter += 1
        tracked = _Tracked(
            key=key,
            request_id=cut_chars(f"r{base36(self._request_counter)}", MAX_REQUEST_ID_CHARS),
            method=cut_chars(_clean(method).upper(), MAX_METHOD_CHARS),
            url=clean_url,
            resource_type=cut_chars(_clean(resource_type), MAX_RESOURCE_TYPE_CHARS),
            started=self._clock.monotonic(),
        )
        ident = id(key)
        self._inflight.pop(ident, None)  # a re-used key starts a new request
        self._inflight[ident] = tracked
        while len(self._inflight) > self._inflight_max:
            del self._inflight[next(iter(self._inflight))]
        self._detail(tracked)
        self._append_network("request", self._request_fields(tracked))

    @staticmethod
    def _request_fields(tracked: _Tracked) -> dict[str, Any]:
        return {
            "requestId": tracked.request_id,
            "method": tracked.method,
            "url": tracked.url,
            "resourceType": tracked.resource_type,
        }

    def tracks(self, key: object) -> bool:
        """Whether the request `key` is in flight here (recorded, not finished or failed)."""
        return self._lookup(key) is not None

    def _lookup(self, key: object) -> _Tracked | None:
        tracked = self._inflight.get(id(key))
        if tracked is None or tracked.key is not key:
            return None
        return tracked

    def _evicted(self, event: dict[str, Any]) -> None:
        """A network event left the ring: its request's detail goes with its last event."""
        detail = self._details.get(event.get("requestId", ""))
        if detail is not None:
            detail.events -= 1
            if detail.events <= 0:
                del self._details[event["requestId"]]

    def _append_network(self, kind: Kind, extra: dict[str, Any]) -> None:
        detail = self._details.get(extra["requestId"])
        if detail is not None:
            detail.events += 1
        self._network_ring.append(kind, self._common(), extra)

    def _detail(self, tracked: _Tracked) -> RequestDetail:
        """The detail of a tracked request (made again when its earlier events were evicted;
        it lives as long as the event about to be appended)."""
        detail = self._details.get(tracked.request_id)
        if detail is None:
            detail = RequestDetail(self._request_fields(tracked), events=0)
            self._details[tracked.request_id] = detail
        return detail

    @_never_raise
    def response(
        self,
        key: object,
        status: int,
        headers: Mapping[str, str] | None = None,
        timing: object = None,
    ) -> None:
        """Record the response of a tracked request (untracked requests are ignored);
        `headers` (Playwright's synchronous ``response.headers``) and `timing` feed its
        detail (allowlisted headers only)."""
        if self._disposed:
            return
        tracked = self._lookup(key)
        if tracked is None:
            return
        if (
            isinstance(status, bool)
            or not isinstance(status, int | float)
            or (isinstance(status, float) and not math.isfinite(status))
        ):
            code = 0
        else:
            code = min(max(int(status), 0), MAX_STATUS)
        extra = self._request_fields(tracked)
        extra["status"] = code
        extra["durationMs"] = self._duration_ms(tracked)
        detail = self._detail(tracked)
        detail.status, detail.duration_ms = code, extra["durationMs"]
        detail.timing = rounded_timing(timing) or detail.timing
        if headers is not None:
            detail.headers = allowed_headers(headers, tracked.url)
        self._append_network("response", extra)

    @_never_raise
    def request_failed(self, key: object, failure: str, timing: object = None) -> None:
        """Record the failure of a tracked request (redacted text) and stop tracking it."""
        if self._disposed:
            return
        tracked = self._lookup(key)
        if tracked is None:
            return
        del self._inflight[id(key)]
        extra = self._request_fields(tracked)
        extra["durationMs"] = self._duration_ms(tracked)
        extra["failure"] = self._text(failure)
        detail = self._detail(tracked)
        detail.duration_ms, detail.failure = extra["durationMs"], extra["failure"]
        detail.timing = rounded_timing(timing) or detail.timing
        self._append_network("request_failed", extra)

    @_never_raise
    def request_finished(self, key: object, timing: object = None) -> None:
        """Stop tracking a request that finished; its final `timing` (with ``responseEnd``)
        completes its detail."""
        tracked = self._lookup(key)
        if tracked is not None:
            del self._inflight[id(key)]
            detail = self._details.get(tracked.request_id)  # none when its events are gone
            if detail is not None:
                detail.timing = rounded_timing(timing) or detail.timing

    def dispose(self) -> None:
        """Clear every event, counter and tracked request; later captures are ignored."""
        self._disposed = True
        self._console_ring.clear()
        self._network_ring.clear()
        self._inflight.clear()
        self._details.clear()

    # ------------------------------------------------------------------ read side

    def query(self, query: ObserveQuery) -> dict[str, Any]:
        """Answer one ``browser_observe`` call (:func:`~browsermesh.model.observe_query.parse_query`
        checked how its arguments combine)."""
        if query.request_id is not None:
            return self.request_detail(query.request_id)
        return self.read(
            query.source,  # type: ignore[arg-type]  # checked by read
            query.since_event_id,  # type: ignore[arg-type]
            query.limit,  # type: ignore[arg-type]
            query.include_text,  # type: ignore[arg-type]
            match=query.filter,
            newest_first=query.newest_first,
        )

    def read(
        self,
        source: Source,
        since_event_id: str | None,
        limit: int | None,
        include_text: bool,
        *,
        match: NetworkFilter | None = None,
        newest_first: bool = False,
    ) -> dict[str, Any]:
        """Read events of ``source`` newer than ``since_event_id`` (contract §8.2, §8.3, issue 15).

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
        count = self._validate_limit(limit)
        ring = self._console_ring if source in _CONSOLE_RING_SOURCES else self._network_ring
        since_seq = self._validate_since(ring, since_event_id)

        kinds = SOURCE_KINDS[source]
        budget = self._limits.response_bytes - RESPONSE_OVERHEAD_BYTES
        selected: list[dict[str, Any]] = []
        used = 2  # "[" and "]"
        stopped = False  # at a matching event left for the next read
        for stored in self._newer(ring, since_seq, newest_first):
            if stored["kind"] not in kinds or (match is not None and not match.matches(stored)):
                continue
            if len(selected) >= count:
                stopped = True
                break
            event = self._public(stored, include_text)
            size = _json_bytes(event)
            if not selected:
                if used + size > budget:
                    event = self._shorten(event, budget - used)
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

    @staticmethod
    def _newer(ring: _Ring, since_seq: int, newest_first: bool) -> Iterable[dict[str, Any]]:
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

    def request_detail(self, request_id: str) -> dict[str, Any]:
        """``{"source": "network", "request": {...}}`` for a request with an event in the ring.

        Raises:
            BrowserMeshError: ``INVALID_ARGUMENT`` (field ``requestId``) when no retained network
                event of this page has that ``requestId``; ``LIMIT_EXCEEDED`` when the detail
                cannot fit the response budget even with its failure text shortened.
        """
        detail = self._details.get(request_id) if isinstance(request_id, str) else None
        if detail is None:
            raise _invalid("requestId", "a requestId of a retained network event of this page")
        view = detail.view()
        budget = self._limits.response_bytes - RESPONSE_OVERHEAD_BYTES
        if _json_bytes(view) > budget:
            view = self._shorten(view, budget)
        return {"source": "network", "request": view}

    def _validate_limit(self, limit: int | None) -> int:
        page_size = self._limits.page_size
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

    @staticmethod
    def _validate_since(ring: _Ring, since_event_id: str | None) -> int:
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

    @staticmethod
    def _public(stored: dict[str, Any], include_text: bool) -> dict[str, Any]:
        """A copy of a stored event for output (``text`` only with ``include_text``)."""
        event = dict(stored)
        if not include_text:
            event.pop("text", None)
        return event

    def _shorten(self, event: dict[str, Any], budget: int) -> dict[str, Any]:
        """Shorten ``text`` (or ``failure``) of an event so its JSON fits ``budget`` bytes.

        Binary search on code points for the longest prefix that, followed by ``…``, fits.

        Raises:
            BrowserMeshError: ``LIMIT_EXCEEDED`` when no shortening can make it fit.
        """
        name = "text" if "text" in event else "failure" if "failure" in event else None
        value = event.get(name) if name is not None else None
        if name is None or not isinstance(value, str) or not value:
            raise self._too_large()

        def candidate(keep: int) -> dict[str, Any]:
            shorter = dict(event)
            shorter[name] = value[:keep] + ELLIPSIS
            return shorter

        if _json_bytes(candidate(0)) > budget:
            raise self._too_large()
        low, high = 0, len(value) - 1  # invariant: candidate(low) fits
        while low < high:
            mid = (low + high + 1) // 2
            if _json_bytes(candidate(mid)) <= budget:
                low = mid
            else:
                high = mid - 1
        return candidate(low)

    def _too_large(self) -> BrowserMeshError:
        return BrowserMeshError(
            ErrorCode.LIMIT_EXCEEDED,
            bound=Bound(
                "responseBytes",
                "<=",
                self._limits.response_bytes,
                "BROWSERMESH_OBSERVABILITY_RESPONSE_BYTES",
            ),
            internal={"field": "responseBytes", "requirement": "one event fits the response"},
        )
