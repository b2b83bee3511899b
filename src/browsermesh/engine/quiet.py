"""When a page is quiet (issue 31 item 13): the one detector of "the page has stopped changing".

A page is quiet when no navigation is in flight (its document has finished parsing), no request
that may change what it shows is pending, and neither the DOM nor a fetch/XHR answer has changed
it for the settle time (`BROWSERMESH_SETTLE_MS`, 500 ms by default). Two halves:

- in the page, an init script (installed on every context, and lazily on a document that lacks
  it) keeps the time of the last DOM mutation of the main frame after parsing (the parser's own
  insertions are loading, not changes);
- on the engine side, a `Quiet` per page counts its in-flight document, script, stylesheet,
  fetch and XHR requests (Playwright request events, every frame) and the time the last fetch or
  XHR ended. A request pending longer than `LONG_REQUEST_MS` (a long poll, a stream) stops
  counting.

The settle time counts from the last change, not from the call: an already quiet page answers
after one read. Every wait here is bounded by the caller's deadline, and `settle` by
`SETTLE_CAP_MS` too, so a page that never settles (an animation) costs at most that.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from browsermesh.engine.bounded import bounded
from browsermesh.model.deadline import Deadline

if TYPE_CHECKING:
    from playwright.async_api import Page, Request

__all__ = [
    "INIT_SCRIPT",
    "READ_SCRIPT",
    "SETTLE_CAP_MS",
    "SETTLE_MS",
    "Quiet",
    "quiet_for",
    "settle",
    "settled_read",
    "state_from",
    "track",
]

SETTLE_MS = 500
"""Default settle time (configurable: BROWSERMESH_SETTLE_MS; 0 turns the detector off)."""
SETTLE_CAP_MS = 2_000
"""A capture or navigation result waits at most this long for a quiet page, then proceeds."""
LONG_REQUEST_MS = 5_000
"""A request pending this long is a long poll or a stream, not content about to render."""
POLL_MS = 25
READ_MS = 1_000
"""One read of the page's side gets at most this long (a busy page is not quiet)."""
_TRACKED = frozenset({"document", "script", "stylesheet", "fetch", "xhr"})
_RENDERS_AFTER = frozenset({"fetch", "xhr"})
"""Requests whose end is a change: the page renders their answer a moment later. (A document,
script or stylesheet is part of loading, or shows up as DOM changes.)"""

# Kept under a registered symbol, not enumerable, read-only: the page cannot stumble on it.
# While the document is still loading it is not quiet anyway, and the parser's own insertions
# are not changes to wait out: a static page can be captured as soon as it has loaded. The
# load time is kept too: a miss right after load waits for the page's first timers.
_INSTALL = """(from) => {
  const key = Symbol.for('browsermesh.quiet');
  if (window[key]) return window[key];
  const st = {last: from, loaded: document.readyState === 'complete' ? from : null};
  const observer = new MutationObserver(() => {
    if (document.readyState !== 'loading') st.last = performance.now();
  });
  observer.observe(document, {subtree: true, childList: true, characterData: true,
                              attributes: true});
  // The parser's records may still be undelivered when parsing ends (a document parsed in
  // one go): they are loading, not changes, so they are dropped as the document turns
  // interactive.
  if (document.readyState === 'loading') {
    document.addEventListener('readystatechange', () => observer.takeRecords(), {once: true});
  }
  addEventListener('load', () => { st.loaded = performance.now(); }, {once: true});
  Object.defineProperty(window, key, {value: st});
  return st;
}"""
INIT_SCRIPT = f"({_INSTALL})(-1e9);"
"""Every document of a context gets the observer before its own scripts run."""
# A document without the init script (opened before it was added) counts as changed when the
# observer is first installed on it: that is conservative, and happens once per document.
# Another read may carry it (`READ_SCRIPT`, then `state_from`): one evaluation for both.
READ_SCRIPT = f"""() => {{
  const st = ({_INSTALL})(performance.now());
  const now = performance.now();
  return [now - st.last, document.readyState === 'loading',
          st.loaded === null ? 0 : now - st.loaded];
}}"""

_TRACKERS: weakref.WeakKeyDictionary[Any, Quiet] = weakref.WeakKeyDictionary()


@dataclass(eq=False)
class Quiet:
    """The engine-side half for one Playwright page: pending requests and the last change."""

    settle_ms: float
    _pending: dict[Any, float] = field(default_factory=dict)
    _last: float = -1e9  # no fetch ended yet

    def started(self, request: Request) -> None:
        try:
            tracked = request.resource_type in _TRACKED
        except Exception:  # a request whose frame went away
            return
        if tracked and len(self._pending) < 1_000:
            self._pending[request] = time.monotonic()

    def ended(self, request: Request) -> None:
        if self._pending.pop(request, None) is None:
            return
        try:
            renders = request.resource_type in _RENDERS_AFTER
        except Exception:
            renders = True
        if renders:
            self._last = time.monotonic()

    def pending(self) -> int:
        """Requests in flight that may still change the page (long ones left out)."""
        now = time.monotonic()
        return sum(1 for t in self._pending.values() if now - t < LONG_REQUEST_MS / 1000)

    def since_request_ms(self) -> float:
        return (time.monotonic() - self._last) * 1000


def track(page: Page, settle_ms: float) -> Quiet:
    """Follow `page`'s requests from now on (called once per Playwright page)."""
    quiet = _TRACKERS.get(page)
    if quiet is None:
        quiet = Quiet(settle_ms)
        _TRACKERS[page] = quiet
        page.on("request", quiet.started)
        page.on("requestfinished", quiet.ended)
        page.on("requestfailed", quiet.ended)
    return quiet


async def quiet_for(
    page: Page, deadline: Deadline, *, from_load: bool = False
) -> tuple[float, float] | None:
    """(ms the page has been quiet, its settle time): 0 ms while a request or the document is
    pending; with `from_load`, the load event counts as a change too (a miss: the page's first
    timers may still render). None when the page is not tracked or the detector is off."""
    quiet = _TRACKERS.get(page)
    if quiet is None or quiet.settle_ms <= 0:
        return None
    if quiet.pending():
        return 0.0, quiet.settle_ms
    budget_ms = min(READ_MS, max(deadline.remaining_ms(), 1))
    try:
        raw = await bounded(page.evaluate(READ_SCRIPT), budget_ms)
    except Exception:  # navigating (the context is gone), or too busy to answer: not quiet
        return 0.0, quiet.settle_ms
    return state_from(page, raw, from_load=from_load)


def state_from(page: Page, raw: Any, *, from_load: bool = False) -> tuple[float, float] | None:
    """`quiet_for`'s answer from the page's side as `READ_SCRIPT` read it (perhaps riding along
    with another read); None when the page is not tracked or the detector is off."""
    quiet = _TRACKERS.get(page)
    if quiet is None or quiet.settle_ms <= 0:
        return None
    if quiet.pending() or not isinstance(raw, list) or len(raw) != 3:
        return 0.0, quiet.settle_ms
    since_dom, loading, since_load = raw
    if loading:
        return 0.0, quiet.settle_ms
    since = min(float(since_dom), quiet.since_request_ms())
    if from_load:
        since = min(since, float(since_load))
    return since, quiet.settle_ms


async def settled_read(
    page: Page,
    deadline: Deadline,
    read: Callable[[], Awaitable[dict[str, Any] | None]],
) -> dict[str, Any] | None:
    """`read()` (a page read that carries `READ_SCRIPT` under ``quiet``) once the page is quiet:
    an already quiet page costs that one read; a page that is not, or a read that failed, is
    settled (`settle`) and read again. None when the page still cannot answer."""
    raw = await read()
    state = None if raw is None else state_from(page, raw.get("quiet"))
    if raw is None or (state is not None and state[0] < state[1]):
        await settle(page, deadline)
        raw = await read()
    return raw


async def settle(page: Page, deadline: Deadline, cap_ms: float = SETTLE_CAP_MS) -> bool:
    """Wait until the page is quiet, at most `cap_ms` and never past `deadline`; True when it
    is (or the detector is off), False when the wait gave up."""
    until = time.monotonic() + cap_ms / 1000
    while True:
        state = await quiet_for(page, deadline)
        if state is None:
            return True
        since, settle_ms = state
        if since >= settle_ms:
            return True
        left_ms = min((until - time.monotonic()) * 1000, deadline.remaining_ms())
        if left_ms < POLL_MS:
            return False
        # Quiet so far: sleep out the rest of the settle time; busy: look again soon.
        wait_ms = settle_ms - since if since > 0 else POLL_MS
        await asyncio.sleep(min(max(wait_ms, POLL_MS), left_ms) / 1000)
