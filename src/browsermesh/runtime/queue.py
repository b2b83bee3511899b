"""The per-session FIFO queue: acceptance order is execution order, one job at a time.

Each submitted job becomes a task owned by the queue that first waits for its predecessor to
settle, so a failed, timed-out or cancelled job never blocks or poisons the ones behind it. A job
whose caller cancelled (or whose deadline passed) before it started never runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

from browsermesh.model.deadline import OperationCancelled, OperationContext

T = TypeVar("T")


class SessionQueue:
    """A serial executor for one session. No queue is ever shared between sessions."""

    def __init__(self) -> None:
        self._tail: asyncio.Task[object] | None = None
        self._tasks: set[asyncio.Task[object]] = set()
        self.pending = 0

    def submit(self, ctx: OperationContext, job: Callable[[], Awaitable[T]]) -> asyncio.Task[T]:
        """Append `job`; it starts when every earlier job has settled."""
        previous = self._tail
        self.pending += 1

        async def run() -> T:
            try:
                if previous is not None and not previous.done():
                    await asyncio.wait({previous})
                if ctx.cancelled.is_set():
                    raise OperationCancelled()
                ctx.deadline.budget_ms()  # expired while queued: never touch the browser
                ctx.started = True
                return await job()
            finally:
                self.pending -= 1

        task: asyncio.Task[T] = asyncio.get_running_loop().create_task(run())
        self._tail = task  # type: ignore[assignment]
        self._tasks.add(task)  # type: ignore[arg-type]
        task.add_done_callback(self._tasks.discard)  # type: ignore[arg-type]
        # Retrieve the exception so asyncio never reports it as unobserved.
        task.add_done_callback(lambda t: t.cancelled() or t.exception())
        return task

    @property
    def busy(self) -> bool:
        return self.pending > 0

    async def drain(self) -> None:
        """Wait until every job accepted so far has settled."""
        while self._tasks:
            await asyncio.wait(set(self._tasks))


async def await_job(ctx: OperationContext, task: asyncio.Task[T]) -> T:
    """Wait for a queued job on behalf of its caller.

    The job is shielded from the caller: when the caller is cancelled, the job is only signalled
    (a queued job is skipped; a running one keeps its slot until it settles). When the deadline
    passes while the job is still queued, the caller gets OPERATION_TIMEOUT at once.
    """
    try:
        while True:
            if ctx.started:
                return await asyncio.shield(task)
            remaining = ctx.deadline.remaining_ms() / 1000
            done, _ = await asyncio.wait({task}, timeout=max(remaining, 0.001))
            if done:
                return task.result()
            if not ctx.started and ctx.deadline.expired():
                ctx.cancelled.set()  # it will be skipped when dequeued
                raise ctx.deadline.timeout_error()
    except asyncio.CancelledError:
        ctx.cancelled.set()
        raise
