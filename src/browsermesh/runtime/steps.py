"""What records a session's calls as steps (issue 35): the port the core calls around each
queued call, implemented by runtime.traces and runtime.videos."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol, TypeVar

from browsermesh.errors import BrowserMeshError, ErrorCode
from browsermesh.model.deadline import OperationContext
from browsermesh.runtime.session import SessionRecord

__all__ = ["StepWatch", "watched"]

T = TypeVar("T")


class StepWatch(Protocol):
    """Something recording a session's calls as steps (a trace, a video: issue 35). The core
    asks `watching` before each queued call and pays nothing when none watches."""

    def watching(self, rec: SessionRecord) -> bool: ...

    async def step_began(
        self, rec: SessionRecord, page_id: str | None, tool: str, ctx: OperationContext
    ) -> None: ...

    async def step_ended(
        self, rec: SessionRecord, page_id: str | None, code: str | None, ctx: OperationContext
    ) -> None: ...

    async def session_started(self, rec: SessionRecord, ctx: OperationContext) -> None: ...

    async def session_ending(self, rec: SessionRecord, *, keep: bool) -> None:
        """The session closes, its context still open: save what runs (`keep`), or drop it
        (the server shuts down: no artifact survives a restart)."""
        ...


async def watched(
    watches: Sequence[StepWatch],
    rec: SessionRecord,
    page_id: str | None,
    tool: str,
    ctx: OperationContext,
    work: Callable[[], Awaitable[T]],
) -> T:
    """Run one queued call's `work` as a step of every watch that records `rec` (none: just
    the work). Each step ends with the call's outcome (an error code, None for a success),
    shielded so that a cancelled call's step ends too (a trace's groups stay balanced)."""
    active = [w for w in watches if w.watching(rec)]
    if not active:
        return await work()
    for watch in active:
        await watch.step_began(rec, page_id, tool, ctx)
    code: str | None = ErrorCode.OPERATION_CANCELLED.value
    try:
        result = await work()
        code = None
        return result
    except BrowserMeshError as err:
        code = err.code.value
        raise
    finally:
        for watch in reversed(active):
            await asyncio.shield(watch.step_ended(rec, page_id, code, ctx))
