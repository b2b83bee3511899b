"""The Selenium Grid backend (issue 22): each slot is one Grid browser session.

A new BrowserMesh session takes a context in a Grid browser that has room (fewer than
`contexts_per_browser` contexts, counting creations still being placed) or, when none has, a
new Grid browser session: `POST /session` with the configured capabilities (the Grid's queue
wait counts against the call's budget), then `connect_over_cdp` to the `se:cdp` URL the Grid
returns. Placement across nodes is the Grid's (its distributor, slot accounting and queue).

Lifecycle:
- the last context of a Grid browser closing ends that Grid session (`DELETE /session/{id}`);
- a budget that runs out while the request waits in the Grid's queue closes the request and
  leaves a reaper (owned by the backend) that deletes a session the Grid still creates for it;
- a Grid browser that disconnects, or that the Grid no longer runs (a watchdog asks every
  `PROBE_S`: the Grid's router keeps the CDP websocket open after a node dies), fails only its
  own sessions (`BROWSER_DISCONNECTED`, through the engine's `browser_gone`); its Grid session
  is deleted and the next session goes to the Grid again;
- `stop` ends every Grid session this backend holds, then every one the Grid still shows with
  this backend's owner marker.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import math
import time
import uuid
from typing import TYPE_CHECKING, Any, Final

from browsermesh.engine.backends import Backend
from browsermesh.engine.bounded import bounded, quietly
from browsermesh.engine.failures import operation_timeout, raw_cause
from browsermesh.engine.grid_client import (
    OWNER_CAPABILITY,
    REQUEST_CAPABILITY,
    GridClient,
    GridError,
)
from browsermesh.engine.slots import (
    BROWSER_CLOSE_MS,
    QUIET_FLAGS,
    BrowserSlot,
    SlotHost,
    with_webmcp,
)
from browsermesh.errors import BrowserMeshError, ErrorCode
from browsermesh.model.tasks import TaskOwner, all_of, all_settled

if TYPE_CHECKING:
    from playwright.async_api import Browser, BrowserContext, Playwright

__all__ = ["GridBackend", "GridSlot", "grid_capabilities", "grid_failure"]

REAP_WINDOW_S: Final = 10.0
"""After giving up on a request: how long the reaper looks for a session the Grid creates for
it anyway (a creation already under way when the request closed takes a browser start)."""
REAP_POLL_S: Final = 0.5
PROBE_S: Final = 3.0
PROBE_MISSES: Final = 2
"""How often each Grid browser is checked (`GridClient.alive`): the Grid's router keeps the CDP
websocket open after a node dies, so a dead node is found by asking, and the same read keeps
the node's idle-session timeout (300 s by default, blind to CDP traffic) from ending it."""
DELETE_S: Final = BROWSER_CLOSE_MS / 1000


def grid_capabilities(configured: str, headless: bool, webmcp: bool = True) -> dict[str, Any]:
    """The alwaysMatch capabilities: the configured object (default `browserName: chrome`),
    its `goog:chromeOptions.args` joined by the quiet flags (no background traffic, as for every
    Chromium we start), `--headless=new` when BrowserMesh runs headless and WebMCP when
    `webmcp` (merged into a configured `--enable-features=`, issue 36 item 1)."""
    caps: dict[str, Any] = json.loads(configured) if configured else {"browserName": "chrome"}
    caps.setdefault("browserName", "chrome")
    if caps["browserName"] in ("chrome", "chromium"):
        options = dict(caps.get("goog:chromeOptions") or {})
        args = list(options.get("args") or [])
        extra = [*QUIET_FLAGS, *(["--headless=new"] if headless else [])]
        args += [flag for flag in extra if flag not in args]
        options["args"] = with_webmcp(args, webmcp)
        caps["goog:chromeOptions"] = options
    return caps


def grid_failure(err: GridError) -> BrowserMeshError:
    """BROWSER_ERROR variant `grid`: the Grid is down, refused the capabilities, or answered
    without a CDP endpoint (the next step points at its /status and the doctor)."""
    return BrowserMeshError(
        ErrorCode.BROWSER_ERROR,
        variant="grid",
        details={"reason": "connection" if err.kind == "unreachable" else "other"},
        cause=str(err),
    )


class GridSlot(BrowserSlot):
    """One Grid browser session and the contexts BrowserMesh created in it."""

    def __init__(self, backend: GridBackend, key: str) -> None:
        super().__init__(key, backend.client.shown)
        self._backend = backend
        self.session_id: str | None = None
        self.misses = 0  # the watchdog's "no" answers in a row

    @property
    def starting(self) -> str:
        return "waiting for a Selenium Grid browser"

    async def _start(self, pw: Playwright, timeout_ms: float) -> Browser:
        backend = self._backend
        request = uuid.uuid4().hex
        began = time.monotonic()
        try:
            session = await bounded(
                backend.client.new_session(backend.capabilities(request), timeout_ms / 1000),
                timeout_ms,
            )
        except TimeoutError:
            backend.reap(request)
            raise operation_timeout(math.ceil(timeout_ms), "queued at the Selenium Grid") from None
        except GridError as err:
            if err.kind == "timeout":
                backend.reap(request)
                raise operation_timeout(
                    math.ceil(timeout_ms), "queued at the Selenium Grid"
                ) from None
            raise grid_failure(err) from None
        except asyncio.CancelledError:
            backend.reap(request)
            raise
        self.session_id = session.session_id
        left_ms = max(1.0, timeout_ms - (time.monotonic() - began) * 1000)
        try:
            browser = await pw.chromium.connect_over_cdp(
                session.cdp_url, timeout=left_ms, headers=backend.client.headers
            )
        except BaseException as exc:
            await backend.end(self)
            if isinstance(exc, Exception):
                if type(exc).__name__ == "TimeoutError":  # Playwright's: the budget ran out
                    raise operation_timeout(math.ceil(timeout_ms), raw_cause(exc)) from None
                raise grid_failure(GridError("protocol")) from None
            raise
        browser.on("disconnected", lambda _b: backend.gone(self, browser))
        return browser

    async def _close(self, browser: Browser, owned: list[BrowserContext]) -> None:
        # Disconnect first (closing the CDP connection leaves the Grid's browser running), then
        # end the Grid session, which ends the browser and frees the Grid's slot.
        try:
            await super()._close(browser, owned)
        finally:
            await self._backend.end(self)


class GridBackend(Backend):
    """Grid browser sessions as slots, created on demand and ended with their last context."""

    kind = "selenium-grid"

    def __init__(
        self, client: GridClient, capabilities: dict[str, Any], contexts_per_browser: int
    ) -> None:
        super().__init__([])
        self.client = client
        self.contexts_per_browser = contexts_per_browser
        # Every request carries this backend's owner marker: the shutdown sweep finds them all.
        self.owner = uuid.uuid4().hex
        self._capabilities = capabilities
        self._keys = itertools.count(1)
        # Reapers of given-up requests, ends of Grid sessions whose browser went away: they
        # outlive the call that caused them; `stop` cancels and awaits them.
        self._tasks = TaskOwner()
        self._failed_at: float | None = None
        self._stopping = False
        self._host: SlotHost | None = None
        self._watching = False
        self.probe_s = PROBE_S

    def capabilities(self, request: str) -> dict[str, Any]:
        """The capabilities of one request, marked with this backend and the request."""
        return {**self._capabilities, OWNER_CAPABILITY: self.owner, REQUEST_CAPABILITY: request}

    # ------------------------------------------------------------------------ inspection

    @property
    def launch_state(self) -> str:
        if any(s.state == "ready" for s in self.slots):
            return "ready"
        return "failed" if self._failed_at is not None else "not_started"

    @property
    def browser_version(self) -> str | None:
        return next((v for s in self.slots if (v := s.live_version) is not None), None)

    def endpoints(self) -> list[dict[str, Any]]:
        """One entry: the Grid (URL without credentials), its live session count, and the
        Grid-specific `contextsPerBrowser` and `gridSessions` (Grid browser sessions held)."""
        live = [s for s in self.slots if s.state == "ready"]
        state = self.launch_state
        return [
            {
                "endpoint": self.client.shown,
                "state": {"ready": "connected", "failed": "failed"}.get(state, "not_connected"),
                "activeSessions": sum(len(s.contexts) for s in self.slots),
                "browserVersion": self.browser_version,
                "contextsPerBrowser": self.contexts_per_browser,
                "gridSessions": sum(1 for s in live if isinstance(s, GridSlot) and s.session_id),
            }
        ]

    # ------------------------------------------------------------------------- placement

    def _with_room(self) -> BrowserSlot | None:
        for slot in self.slots:
            browser = slot.browser
            starting = browser is None and slot.state == "not_started"
            usable = starting or (browser is not None and browser.is_connected())
            if (
                usable
                and not slot.stopping
                and len(slot.contexts) + slot.pending < (self.contexts_per_browser)
            ):
                return slot
        return None

    async def acquire(
        self, host: SlotHost, timeout_ms: float, live_by_placement: dict[str, int]
    ) -> tuple[BrowserSlot, Browser]:
        if self._stopping:
            raise BrowserMeshError(ErrorCode.RUNTIME_SHUTTING_DOWN)
        slot = self._with_room()
        if slot is None:
            slot = GridSlot(self, new_key(self._keys))
            self.slots.append(slot)
        slot.pending += 1
        try:
            try:
                # The start bounds itself; this bounds a wait behind another caller's start.
                browser = await bounded(slot.ensure(host, timeout_ms), timeout_ms + 1_000)
            except TimeoutError:
                raise operation_timeout(
                    math.ceil(timeout_ms), "waiting for a Grid browser"
                ) from None
        except BaseException as exc:
            slot.pending -= 1
            if isinstance(exc, BrowserMeshError) and exc.code is ErrorCode.BROWSER_ERROR:
                self._failed_at = time.monotonic()
            await self.settle(slot)
            raise
        self._failed_at = None
        self._host = host
        if not self._watching:
            self._watching = True
            self._tasks.spawn(self._watch(), name="watch the Grid browsers")
        return slot, browser

    async def settle(self, slot: BrowserSlot) -> None:
        """A context closed or a creation ended: a Grid browser with no context left (and none
        being placed) ends its Grid session now."""
        if slot.contexts or slot.pending or slot not in self.slots:
            return
        self.slots.remove(slot)  # before any await: no placement picks it meanwhile
        with contextlib.suppress(BrowserMeshError):
            await slot.stop()

    # ------------------------------------------------------------------------- lifecycle

    def gone(self, slot: GridSlot, browser: Browser) -> None:
        """A Grid browser disconnected (not by our own stop): the engine fails its sessions
        (`browser_gone`); here its Grid session is ended and the slot dropped, so the next
        session goes to the Grid again."""
        if slot.stopping or slot not in self.slots:
            return
        self.slots.remove(slot)
        self._tasks.spawn(self.end(slot), name="end a lost Grid session")

    async def end(self, slot: GridSlot) -> None:
        """DELETE the slot's Grid session (once)."""
        session_id, slot.session_id = slot.session_id, None
        if session_id is not None:
            await quietly(self.client.delete_session(session_id, DELETE_S), BROWSER_CLOSE_MS)

    async def _watch(self) -> None:
        """Every `probe_s`: ask the Grid about each Grid browser; one it no longer runs
        (`PROBE_MISSES` answers in a row) is lost: its node or browser died."""
        while True:
            await asyncio.sleep(self.probe_s)
            slots = [s for s in self.slots if isinstance(s, GridSlot) and s.browser is not None]
            await all_of(*(self._probe(slot) for slot in slots))

    async def _probe(self, slot: GridSlot) -> None:
        """Two "no" answers in a row lose the slot (one could be a router's passing hiccup)."""
        session_id = slot.session_id
        if session_id is None:
            return
        alive = await self.client.alive(session_id, DELETE_S)
        slot.misses = slot.misses + 1 if alive is False else 0
        if slot.misses >= PROBE_MISSES:
            await self._lost(slot)

    async def _lost(self, slot: GridSlot) -> None:
        """Fail the slot's sessions now (the engine's `browser_gone`, as for a disconnect),
        then drop the connection and end the Grid session."""
        browser = slot.browser
        if browser is None or slot not in self.slots:
            return
        self.slots.remove(slot)
        if self._host is not None:
            self._host.browser_gone(slot, browser)
        await quietly(browser.close(), BROWSER_CLOSE_MS)
        await self.end(slot)

    def reap(self, request: str) -> None:
        """A request given up (budget out, call cancelled): delete what the Grid creates for
        it anyway, for a while."""
        if not self._stopping:
            self._tasks.spawn(self._reap(request), name="reap a Grid request")

    async def _reap(self, request: str) -> None:
        until = time.monotonic() + REAP_WINDOW_S
        while time.monotonic() < until:
            with contextlib.suppress(GridError):
                owned = await self.client.owned_sessions(self.owner, REAP_POLL_S * 4)
                found = [sid for sid, marker in owned.items() if marker == request]
                for sid in found:
                    await quietly(self.client.delete_session(sid, DELETE_S), BROWSER_CLOSE_MS)
                if found:
                    return
            await asyncio.sleep(REAP_POLL_S)

    async def stop(self) -> None:
        """End every Grid session held, then sweep the Grid for any other session this backend
        owns (a failed delete, a reaper cut short), then close the HTTP client."""
        self._stopping = True
        slots, self.slots = list(self.slots), []
        try:
            await all_settled(*(s.stop() for s in slots))
            await self._tasks.aclose()
            await quietly(self._sweep(), BROWSER_CLOSE_MS)
        finally:
            await self.client.aclose()
            self._stopping = False
            self._watching = False

    async def _sweep(self) -> None:
        """Delete every Grid session this backend owns (the caller bounds the whole sweep)."""
        owned = await self.client.owned_sessions(self.owner, DELETE_S)
        await all_of(
            *(quietly(self.client.delete_session(sid, DELETE_S), BROWSER_CLOSE_MS) for sid in owned)
        )


def new_key(counter: itertools.count[int]) -> str:
    """A placement key for a new Grid browser: `grid-<n>`, never the Grid's session id (the
    id lets anyone who reaches the Grid drive that browser)."""
    return f"grid-{next(counter)}"
