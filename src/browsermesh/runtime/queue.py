"""The per-session FIFO queue: acceptance order is execution order, one job at a time.

Each submitted job becomes a task owned by the queue that first waits for its predecessor to
settle, so a failed, timed-out or cancelled job never blocks or poisons the ones behind it. A job
whose caller cancelled (or whose deadline passed) before it started never runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

from browsermesh.errors import BrowserMeshError, ErrorCode
from browsermesh.model.deadline import OperationCancelled, OperationContext
from browsermesh.model.tasks import TaskOwner

T = TypeVar("T")


class SessionQueue:
    """A serial executor for one session. No queue is ever shared between sessions."""

    def __init__(self) -> None:
        self._tail: asyncio.Task[object] | None = None
        self._tasks: dict[asyncio.Task[object], OperationContext] = {}
        self._aborted: dict[asyncio.Task[object], ErrorCode] = {}
        self.pending = 0
        # Owns the job tasks (and retrieves their outcomes); `drain` and `abort` settle them.
        self._owner = TaskOwner()

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
            except (asyncio.CancelledError, OperationCancelled):
                code = self._aborted.get(task)
                if code is not None:
                    # Aborted by the runtime (shutdown past its grace, or a close whose drain
                    # overran): the caller gets a classified answer, not a cancellation. A job
                    # may notice `ctx.cancelled` (set by `abort`) before the task cancel lands,
                    # and end with OperationCancelled: the same answer (issue 30 #10).
                    raise BrowserMeshError(code) from None
                raise
            finally:
                self.pending -= 1

        task: asyncio.Task[T] = self._owner.spawn(run())
        self._tail = task
        self._tasks[task] = ctx
        task.add_done_callback(self._forget)
        return task

    def _forget(self, task: asyncio.Task[object]) -> None:
        self._tasks.pop(task, None)
        self._aborted.pop(task, None)

    @property
    def busy(self) -> bool:
        return self.pending > 0

    def latest_deadline(self, *, before: asyncio.Task[object] | None = None) -> float:
        """The latest absolute deadline (monotonic seconds) among jobs not yet settled (only
        those accepted before `before`, when given); 0.0 when there are none. Every job is
        bounded by its deadline, so a drain ends by then unless a job overruns it."""
        latest = 0.0
        for task, ctx in self._tasks.items():
            if task is before:
                break
            latest = max(latest, ctx.deadline.expires_at)
        return latest

    def abort(
        self,
        code: ErrorCode = ErrorCode.RUNTIME_SHUTTING_DOWN,
        *,
        keep: asyncio.Task[object] | None = None,
    ) -> int:
        """Cancel every job not yet settled except `keep`; returns how many were aborted.

        Queued jobs are skipped, running ones are interrupted at their current await; each
        caller gets `code` (RUNTIME_SHUTTING_DOWN at shutdown, SESSION_CLOSED when the
        session's close could wait no longer)."""
        aborted = 0
        for task, ctx in list(self._tasks.items()):
            if task is keep or task.done():
                continue
            ctx.cancelled.set()
            self._aborted[task] = code
            task.cancel()
            aborted += 1
        return aborted

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
