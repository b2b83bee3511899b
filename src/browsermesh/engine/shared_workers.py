"""Shared workers in a policy session: closed before they run (issue 30 item 4, fail closed).

A shared worker is a target of its own, outside every page: Playwright's route never sees its
requests (Playwright detaches from shared workers), and neither does the redirect guard, which
arms pages and frames. Guarding one would mean driving its target: Chromium auto-attaches to
shared workers only from a browser-level session and only in flat mode, whose child sessions a
Playwright `CDPSession` cannot talk to (the driver drops their messages). Holding it paused does
not work either: Playwright resumes it (checked with Chromium 156: a worker this gate never
resumed still ran). So the gate attaches with `waitForDebuggerOnStart` and closes each worker
of its own context at once (`Target.closeTarget` on the browser session, decided without a
round trip: the context's CDP id is learnt when the guard arms the first page). Its script is
paused at start, so it is closed before it can request anything; the worker's script URL is
reported as a `requestFailed` with `blocked_by_policy` on the session's observed pages of its
origin. A worker of another context is released at once (this client detaches).

One browser-level session per policy session, open while the session has origin lists; each
shared worker the browser starts costs one more message to this process.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from browsermesh.model.tasks import TaskOwner

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext, CDPSession

__all__ = ["SharedWorkerGate"]

_FILTER = [{"type": "shared_worker"}]


class SharedWorkerGate:
    """Closes the shared workers of one context before they run (see the module doc)."""

    def __init__(self, report: Callable[[str], None]) -> None:
        """`report(url)` records a closed worker (its script URL) on the session's pages."""
        self._report = report
        self._context: BrowserContext | None = None
        self._session: CDPSession | None = None
        self._context_id: str | None = None
        self._tasks = TaskOwner()

    @property
    def open(self) -> bool:
        return self._session is not None

    async def start(self, context: BrowserContext) -> None:
        """Attach to every shared worker the browser starts from now on (and the running
        ones). Raises when the browser cannot be asked: the caller fails closed."""
        if self._session is not None:
            return
        browser = context.browser
        if browser is None:
            raise RuntimeError("a context without its browser")
        self._context = context
        session = await browser.new_browser_cdp_session()
        session.on("Target.attachedToTarget", self._attached)
        self._session = session
        try:
            await session.send(
                "Target.setAutoAttach",
                {
                    "autoAttach": True,
                    "waitForDebuggerOnStart": True,
                    "flatten": True,
                    "filter": _FILTER,
                },
            )
        except BaseException:
            self._session = None
            with contextlib.suppress(Exception):
                await session.detach()
            raise

    def learn(self, context_id: str) -> None:
        """This context's CDP id (the guard reads it when it arms the first page)."""
        self._context_id = context_id

    @property
    def knows_context(self) -> bool:
        return self._context_id is not None

    def _attached(self, event: Mapping[str, Any]) -> None:
        """Close a worker of this context at once (before its script can run); release any
        other one. Decided without a round trip: the worker is racing its first request."""
        info = event.get("targetInfo") or {}
        session = self._session
        if session is None:
            return
        if self._context_id is not None and info.get("browserContextId") == self._context_id:
            self._tasks.spawn(
                _quiet(session.send("Target.closeTarget", {"targetId": info.get("targetId")}))
            )
            self._report(str(info.get("url", "")))
            return
        self._tasks.spawn(
            _quiet(session.send("Target.detachFromTarget", {"sessionId": event.get("sessionId")}))
        )

    async def stop(self) -> None:
        """No origin list any more: stop attaching to shared workers."""
        session, self._session = self._session, None
        if session is not None:
            with contextlib.suppress(Exception):
                await session.detach()

    async def close(self) -> None:
        """The context closed: cancel and await what is in flight, then let go."""
        await self._tasks.aclose()
        await self.stop()


async def _quiet(call: Any) -> None:
    with contextlib.suppress(Exception):  # the browser or the worker went away meanwhile
        await call
