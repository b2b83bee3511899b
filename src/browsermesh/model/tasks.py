"""Every task has an owner that awaits it (architecture.md, issue 18).

`TaskOwner.spawn` is the one place that starts an asyncio task (the transports start theirs in
anyio task groups); tests/unit/test_owned_tasks.py holds the code base to that. An owner
belongs to whatever the task works for, and whatever closes that closes the owner:

- a call racing two waits owns them in a local `TaskOwner` closed in its ``finally``;
- a task that outlives the call that started it (a dialog dismissal, a creation whose caller
  gave up, a browser install) is owned by an object whose own close or stop awaits it.

`cancel_and_await` is the other half: a cancelled child is awaited, never left to finish (or
fail) on its own after its parent went on. `all_of` and `all_settled` are the fan-out (what
`asyncio.gather` does, with an owner): their children are the call's own, so when the call
fails or is cancelled every child is cancelled and awaited before it returns.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable, Coroutine
from typing import Any, TypeVar

__all__ = ["TaskOwner", "all_of", "all_settled", "cancel_and_await"]

T = TypeVar("T")


async def cancel_and_await(*futures: asyncio.Future[Any]) -> None:
    """Cancel every future not done yet and wait until each has ended.

    The wait goes on even if the caller is cancelled meanwhile (its `CancelledError` is raised
    once the futures have ended): a cancelled child never outlives the parent that gave it up.
    The futures' own outcomes (their cancellation, a failure, a result that came first) are not
    raised; they stay on the futures for a caller that wants them, and are marked retrieved.
    """
    for future in futures:
        future.cancel()
    interrupted = False
    while pending := [future for future in futures if not future.done()]:
        try:
            await asyncio.wait(pending)
        except asyncio.CancelledError:
            interrupted = True
    for future in futures:
        if not future.cancelled():
            future.exception()  # retrieved: asyncio never reports it as unobserved
    if interrupted:
        raise asyncio.CancelledError


class TaskOwner:
    """The tasks started on behalf of one object or one call, until they end.

    Each task's outcome is retrieved as it ends, so asyncio never logs "Task exception was
    never retrieved"; whoever needs the result or the failure awaits the task `spawn` returned.
    An owner stays usable after `aclose` (a browser slot stopped and started again installs
    anew with the same owner).
    """

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()

    def __len__(self) -> int:
        """How many tasks are still running."""
        return len(self.pending)

    @property
    def pending(self) -> frozenset[asyncio.Task[Any]]:
        """The tasks still running."""
        return frozenset(task for task in self._tasks if not task.done())

    def spawn(
        self,
        coro: Coroutine[Any, Any, T],
        *,
        name: str | None = None,
        context: contextvars.Context | None = None,
    ) -> asyncio.Task[T]:
        """Start `coro` as a task owned here (`context`: the context variables it runs with;
        a copy of the caller's by default)."""
        task = asyncio.get_running_loop().create_task(coro, name=name, context=context)
        self._tasks.add(task)
        task.add_done_callback(self._ended)
        return task

    def _ended(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled():
            task.exception()  # retrieved here; the task keeps its outcome for its awaiters

    async def drain(self) -> None:
        """Wait until every task has ended, including tasks started meanwhile.

        Their outcomes are not raised. Cancelling the caller ends only the wait: the tasks run
        on, still owned (an `aclose` afterwards cancels and awaits them)."""
        while pending := self.pending:
            await asyncio.wait(pending)

    async def aclose(self) -> None:
        """Cancel every task still running and wait until all have ended (`cancel_and_await`),
        including tasks started meanwhile. Their cancellation or failure is never raised; the
        caller's own cancellation is, once they have ended."""
        while pending := self.pending:
            await cancel_and_await(*pending)


async def _awaited(awaitable: Awaitable[T]) -> T:
    """`awaitable` as a coroutine, so that a `TaskOwner` can run any awaitable."""
    return await awaitable


async def all_of(*awaitables: Awaitable[T]) -> list[T]:
    """Await every awaitable concurrently; their results in argument order.

    The first failure (in argument order, among the children failed when it is seen) is
    raised once every other child has been cancelled and awaited, and a cancellation of the
    caller is raised once every child has ended: no child outlives the call (unlike
    `asyncio.gather`, which leaves the others running)."""
    owner = TaskOwner()
    tasks = [owner.spawn(_awaited(awaitable)) for awaitable in awaitables]
    try:
        if tasks:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        for task in tasks:
            if task.done() and not task.cancelled() and (error := task.exception()) is not None:
                raise error
        return [task.result() for task in tasks]  # a child cancelled on its own raises here
    finally:
        await owner.aclose()


async def all_settled(*awaitables: Awaitable[T]) -> list[T | BaseException]:
    """Await every awaitable concurrently; each one's result or failure, in argument order
    (`asyncio.gather(..., return_exceptions=True)`, owned: a cancellation of the caller is
    raised once every child has been cancelled and awaited)."""
    owner = TaskOwner()
    tasks = [owner.spawn(_awaited(awaitable)) for awaitable in awaitables]
    try:
        if tasks:
            await asyncio.wait(tasks)
    finally:
        await owner.aclose()
    return [_outcome(task) for task in tasks]


def _outcome(task: asyncio.Task[T]) -> T | BaseException:
    if task.cancelled():
        return asyncio.CancelledError()
    error = task.exception()
    return task.result() if error is None else error
