"""Page listeners feeding `PageObservations`, paused while a ring refuses events (§8.4, issue 12).

Playwright turns every console message and network event into Python objects before any listener
sees it (about 80 µs per console line here, plus a handle per argument that lives until the page
navigates): 100,000 lines cost ~8 s of CPU and stalled every other session. Refusing the event in
the listener cannot avoid that cost, but removing the listener does, since Playwright then
unsubscribes and the driver stops sending them. So when a ring's per-second allowance
(`PageObservations.admit`) runs out, that ring's listeners are removed until its window
reopens. Events the page emits meanwhile are never seen, so `droppedCount` is then a lower bound.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from browsermesh.engine.policy import RequestRouter
from browsermesh.model.observe import PageObservations, Ring

if TYPE_CHECKING:
    from playwright.async_api import Page


class _Feed:
    """One ring's listeners on one page: attached, paused until the ring reopens, or closed."""

    def __init__(
        self,
        page: Page,
        sink: PageObservations,
        ring: Ring,
        records: dict[str, Callable[[Any], None]],
        untracked: dict[str, Callable[[Any], None]] | None = None,
    ) -> None:
        """`records`: events that become ring events (each asks the ring first); `untracked`:
        bookkeeping listeners that only come and go with them."""
        self._page = page
        self._sink = sink
        self._ring = ring
        self._handlers = {event: self._gated(fn) for event, fn in records.items()}
        self._handlers.update(untracked or {})
        self._resume: asyncio.TimerHandle | None = None
        self._closed = False
        self._attach()

    def _gated(self, record: Callable[[Any], None]) -> Callable[[Any], None]:
        def listener(event: Any) -> None:
            if self._sink.admit(self._ring):
                record(event)
            else:
                self._pause()

        return listener

    def _attach(self) -> None:
        for event, fn in self._handlers.items():
            self._page.on(event, fn)  # type: ignore[call-overload]

    def _detach(self) -> None:
        for event, fn in self._handlers.items():
            with contextlib.suppress(Exception):
                self._page.remove_listener(event, fn)

    def _pause(self) -> None:
        self._detach()
        delay = max(self._sink.reopens_in(self._ring), 0.01)
        self._resume = asyncio.get_running_loop().call_later(delay, self._reopen)

    def _reopen(self) -> None:
        self._resume = None
        if not self._closed:
            self._attach()

    def close(self) -> None:
        """Detach for good (the page closed); a pending reopen is cancelled."""
        self._closed = True
        if self._resume is not None:
            self._resume.cancel()
            self._resume = None
        self._detach()


def _console_handlers(sink: PageObservations) -> dict[str, Callable[[Any], None]]:
    return {
        "console": lambda msg: sink.console(msg.type, msg.text),
        "pageerror": lambda err: sink.page_error(getattr(err, "message", "") or str(err)),
    }


def _network_handlers(
    sink: PageObservations, router: RequestRouter | None
) -> dict[str, Callable[[Any], None]]:
    # `response.headers` and `request.timing` are synchronous (what the event already carried):
    # the request detail costs no round trip. The sink keeps allowlisted headers only. A request
    # the session's router stopped fails as `blocked` or `blocked_by_policy` (engine/policy.py).
    def failure(req: Any) -> str:
        return router.failure(req, req.failure) if router is not None else req.failure or "failed"

    def request(req: Any) -> None:
        if router is None or not router.orphan(req):  # not an orphan already reported
            sink.request(req, req.method, req.url, req.resource_type)

    def request_failed(req: Any) -> None:
        orphan = None if router is None else router.orphan(req)
        if orphan:
            return  # reported already (engine/policy.py: a popup's first navigation)
        if orphan is False and router is not None:
            report_orphan(sink, router, req)
            return
        sink.request_failed(req, failure(req), req.timing)

    return {
        "request": request,
        "response": lambda resp: sink.response(
            resp.request, resp.status, resp.headers, resp.request.timing
        ),
        "requestfailed": request_failed,
    }


def report_orphan(sink: PageObservations, router: RequestRouter, req: Any) -> None:
    """A popup's policy-blocked first navigation, on the popup's own ring, once: recorded
    first when the page's listeners missed its `request` event."""
    if not sink.tracks(req):
        sink.request(req, req.method, req.url, req.resource_type)
    sink.request_failed(req, router.failure(req, req.failure), req.timing)
    router.reported(req)


def _network_bookkeeping(sink: PageObservations) -> dict[str, Callable[[Any], None]]:
    # `requestfinished` ends tracking (and completes the timing): it pauses with the ring, so a
    # paused ring costs nothing, and a request whose end was missed just ages out of the
    # in-flight map.
    return {"requestfinished": lambda req: sink.request_finished(req, req.timing)}


def observe_page(
    page: Page,
    sink: PageObservations,
    backs_handle: Callable[[], bool],
    router: RequestRouter | None = None,
) -> None:
    """Feed the page's console, error and network events into `sink` (metadata and allowlisted
    response headers only: never bodies, cookies, argument objects or stacks) until the page
    closes. The sink is
    disposed with the page only while `backs_handle()`: a page replaced after a crash hands its
    sink on to the page that replaced it."""
    feeds = [
        _Feed(page, sink, "console", _console_handlers(sink)),
        _Feed(page, sink, "network", _network_handlers(sink, router), _network_bookkeeping(sink)),
    ]

    def on_close(_page: Any) -> None:
        for feed in feeds:
            feed.close()
        if backs_handle():
            sink.dispose()

    page.on("close", on_close)
