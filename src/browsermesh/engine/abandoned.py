"""Creations given up at their deadline, still owned until what they create is closed.

Playwright cannot abort `browser.new_context(storage_state=...)`: Chromium visits every saved
origin to restore its storage, and a state with 200 origins took 16 s on a 10 s budget (issue 12
#5). Cancelling the Python call would not stop Chromium, which would finish the context later
and leave it open with nobody to close it. So the caller stops waiting at its deadline, while
the creation goes on as a task owned here; whatever it creates is closed when it arrives, and
`drain` (called by `PlaywrightEngine.stop`) cancels and awaits the creations still pending.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

from browsermesh.engine.bounded import bounded
from browsermesh.engine.failures import operation_timeout
from browsermesh.errors import BrowserMeshError
from browsermesh.model.deadline import Deadline
from browsermesh.model.tasks import TaskOwner, cancel_and_await

T = TypeVar("T")


class AbandonedCreations:
    """Owns the creations whose callers stopped waiting (deadline or cancellation)."""

    def __init__(self) -> None:
        # Every creation runs as a task here, awaited by its caller within its deadline or,
        # once the caller gave up, by its settle task (which closes what it made). `drain`
        # cancels and awaits the given-up creations and their settles; a creation whose caller
        # still waits is that caller's to await.
        self._creations = TaskOwner()
        self._given_up: set[asyncio.Task[Any]] = set()
        self._settles = TaskOwner()

    def __len__(self) -> int:
        """Abandoned creations still running or being closed."""
        return len(self._settles)

    async def within(
        self,
        creation: Coroutine[Any, Any, T],
        deadline: Deadline,
        close: Callable[[T], Awaitable[object]],
    ) -> T:
        """Await `creation` within the deadline's remaining budget.

        Past it, `OPERATION_TIMEOUT` (`{timeoutMs, reason: "timeout"}`); on the deadline or the
        caller's cancellation the creation goes on here and its result is passed to `close`.
        Any failure of the creation itself propagates for the caller to classify."""
        try:
            budget_ms = deadline.budget_ms()
        except BrowserMeshError:
            creation.close()  # never started
            raise
        task = self._creations.spawn(creation)
        try:
            return await bounded(asyncio.shield(task), budget_ms)
        except TimeoutError:
            self._adopt(task, close)
            raise operation_timeout(deadline.timeout_ms) from None
        except asyncio.CancelledError:
            self._adopt(task, close)
            raise

    def _adopt(self, task: asyncio.Task[T], close: Callable[[T], Awaitable[object]]) -> None:
        async def settle() -> None:
            try:
                result = await task
            except Exception:
                return  # nothing was created
            with contextlib.suppress(Exception):
                await close(result)

        if not task.done():
            self._given_up.add(task)
            task.add_done_callback(self._given_up.discard)
        self._settles.spawn(settle())

    async def drain(self) -> None:
        """Cancel the creations still pending (their browser is going away) and wait for them.

        The creations are cancelled as well as their settles: a settle cancelled before it
        ran never awaited its creation."""
        await cancel_and_await(*self._given_up)
        await self._settles.aclose()
