"""Per-page observability rings, cursors and bounded reads (reference §8, §17).

Each managed page owns one :class:`PageObservations`, the recorder. The engine's Playwright
listeners feed it plain values (console level and text, page-error message, request
method/URL/resource type, response status, failure text); everything is sanitized and bounded at
capture time, so the rings only ever hold output-safe data:

* URLs pass through :func:`browsermesh.redact.sanitize_url_or_none` (events whose URL is not
  ``http``/``https`` are dropped entirely); console, page-error and failure text pass through
  :func:`browsermesh.text_redact.redact_text`; both are bounded to the configured string length.
* Two bounded rings per page (:class:`browsermesh.model.observe_ring.EventRing`): the **console
  ring** (``console``, ``page_error``, ``popup``) and the **network ring** (``request``,
  ``response``, ``request_failed``), so network floods cannot evict console evidence. Each ring
  has its own namespace (a short id such as ``n4k2q``), its own sequence starting at 1 and a
  cumulative counter of evicted (and refused, see below) events; event id =
  ``<namespace>.<base-36 sequence>`` (issue 15: ~12 characters instead of 54).
* Reads (:meth:`PageObservations.read`, implemented by
  :func:`browsermesh.model.observe_read.read_events`) never consume events; they page by
  ``sinceEventId``, may filter network events
  (:class:`browsermesh.model.observe_query.NetworkFilter`) or read the newest first, and keep
  the compact JSON of the returned array within ``responseBytes − 512``. ``nextCursor`` names
  the newest event the read examined, so a client polling with it never misses nor repeats a
  matching event.
* One request's detail (:meth:`PageObservations.request_detail`): allowlisted response headers
  and timing, kept while any of its events is in the ring.
* Events carry no ``sessionId``/``pageId``: the response names the page once (issue 15).
* Ingestion is capped: each ring admits at most :data:`MAX_EVENTS_PER_SECOND` events per page per
  second (:meth:`PageObservations.admit`, asked by the engine before it reads anything from an
  event); refused events count in ``droppedCount``. A page logging 100,000 lines cost the server
  ~8 s of CPU in Playwright's per-event work, and its garbage stalled every session (issue 12).
* Popups nobody asked for are reported in the console ring as ``popup`` events (issue 12).

The bounds live in :mod:`browsermesh.model.observe_limits`, one ring in
:mod:`browsermesh.model.observe_ring`, the reads in :mod:`browsermesh.model.observe_read`; their
public names are importable from here too.

Pure model: no Playwright, no MCP, no file system. The capture methods never raise.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ParamSpec

from browsermesh.model.clock import Clock, iso_from_epoch
from browsermesh.model.ids import base36
from browsermesh.model.observe_limits import (
    DEFAULT_LIMIT,
    MAX_DURATION_MS,
    MAX_EVENTS_PER_SECOND,
    MAX_LEVEL_CHARS,
    MAX_METHOD_CHARS,
    MAX_REQUEST_ID_CHARS,
    MAX_RESOURCE_TYPE_CHARS,
    MAX_SINCE_EVENT_ID_CHARS,
    MAX_STATUS,
    MIN_INFLIGHT,
    RESPONSE_OVERHEAD_BYTES,
    ObserveLimits,
)
from browsermesh.model.observe_query import NetworkFilter, ObserveQuery
from browsermesh.model.observe_read import (
    SOURCE_KINDS,
    SOURCES,
    Source,
    read_events,
    request_view,
)
from browsermesh.model.observe_ring import EventRing, Kind, Ring
from browsermesh.model.request_detail import RequestDetail, allowed_headers, rounded_timing
from browsermesh.model.text import well_formed
from browsermesh.redact import SecretValues, cut_chars, sanitize_url, sanitize_url_or_none
from browsermesh.text_redact import redact_text

__all__ = [
    "DEFAULT_LIMIT",
    "MAX_DURATION_MS",
    "MAX_EVENTS_PER_SECOND",
    "MAX_SINCE_EVENT_ID_CHARS",
    "RESPONSE_OVERHEAD_BYTES",
    "SOURCES",
    "SOURCE_KINDS",
    "EventRing",
    "Kind",
    "ObserveLimits",
    "PageObservations",
    "Ring",
    "Source",
]

_P = ParamSpec("_P")


def _clean(value: object) -> str:
    """Coerce engine data to a well-formed ``str``.

    Non-strings become their ``str()``; surrogate pairs are combined and lone surrogates
    become U+FFFD, so the value always encodes to UTF-8.
    """
    return well_formed(value if isinstance(value, str) else str(value))


def _never_raise(method: Callable[_P, None]) -> Callable[_P, None]:
    """Decorate a capture method: engine listeners must never see an exception."""

    @functools.wraps(method)
    def guarded(*args: _P.args, **kwargs: _P.kwargs) -> None:
        try:
            method(*args, **kwargs)
        except Exception:  # a listener failure must never break the page
            return

    return guarded


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

    def __init__(
        self,
        session_id: str,
        page_id: str,
        limits: ObserveLimits,
        clock: Clock,
        secrets: SecretValues | None = None,
    ) -> None:
        self._session_id = session_id
        # The session's named secrets (§36), shared and growing: hidden before any cut.
        self._secrets = secrets if secrets is not None else SecretValues()
        self._page_id = page_id
        self._limits = limits
        self._clock = clock
        self._console_ring = EventRing(limits.events_per_ring)
        self._network_ring = EventRing(limits.events_per_ring, self._evicted)
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

    def _ring(self, ring: Ring) -> EventRing:
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
        return redact_text(self._secrets.text(_clean(value)), max_chars=self._limits.string_chars)

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
            shown = sanitize_url(self._secrets.text(raw), max_chars=self._limits.string_chars)
        self._console_ring.append("popup", self._common(), {"url": shown, "closed": closed})

    @_never_raise
    def human(self, step: Mapping[str, Any]) -> None:
        """Record what a person holding the page did (issue 34): a `HumanStep` view, already
        sanitized and bounded (role, name, counts, a sanitized URL; never text typed)."""
        if self._disposed:
            return
        self._console_ring.append("human", self._common(), dict(step))

    @_never_raise
    def request(self, key: object, method: str, url: str, resource_type: str) -> None:
        """Record and track a request; ``key`` identifies the engine's request object.

        Requests whose URL is not ``http``/``https`` (or unparsable) are dropped and not tracked.
        The in-flight map keeps at most ``max(32, 2 × events_per_ring)`` entries (oldest dropped).
        """
        if self._disposed:
            return
        clean_url = sanitize_url_or_none(
            self._secrets.text(_clean(url)), max_chars=self._limits.string_chars
        )
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
        """Read events of ``source`` newer than ``since_event_id``: the paging, cursor, budget
        and errors are those of :func:`browsermesh.model.observe_read.read_events`.

        Returns:
            ``{"source", "events", "nextCursor", "droppedCount", "gap"}``.
        """
        return read_events(
            self._console_ring,
            self._network_ring,
            self._limits,
            source,
            since_event_id,
            limit,
            include_text,
            match=match,
            newest_first=newest_first,
        )

    def request_detail(self, request_id: str) -> dict[str, Any]:
        """``{"source": "network", "request": {...}}`` for a request with an event in the ring.

        Raises:
            BrowserMeshError: ``INVALID_ARGUMENT`` (field ``requestId``) when no retained network
                event of this page has that ``requestId``; ``LIMIT_EXCEEDED`` when the detail
                cannot fit the response budget even with its failure text shortened.
        """
        detail = self._details.get(request_id) if isinstance(request_id, str) else None
        return request_view(detail, self._limits)
