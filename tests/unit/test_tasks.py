"""TaskOwner, cancel_and_await, all_of and all_settled (model/tasks.py, issues 18 and 32): every
task has an owner that awaits it, and a cancelled child is awaited."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import gc
from collections.abc import Iterator
from typing import Any

import pytest

from browsermesh.model.tasks import TaskOwner, all_of, all_settled, cancel_and_await
from tests.support.loop import all_tasks_blocked

pytestmark = pytest.mark.anyio

_VAR: contextvars.ContextVar[str] = contextvars.ContextVar("_VAR", default="unset")


async def _fail(message: str = "boom") -> None:
    await asyncio.sleep(0)
    raise ValueError(message)


async def _slow_cleanup(done: list[str], label: str = "child") -> None:
    """Runs until cancelled, then needs a few loop turns to clean up."""
    try:
        await asyncio.Event().wait()
    finally:
        await asyncio.sleep(0.01)
        done.append(label)


@contextlib.contextmanager
def loop_errors() -> Iterator[list[dict[str, Any]]]:
    """What the loop's exception handler receives ("Task exception was never retrieved")."""
    loop = asyncio.get_running_loop()
    seen: list[dict[str, Any]] = []
    previous = loop.get_exception_handler()
    loop.set_exception_handler(lambda _loop, context: seen.append(context))
    yield seen
    loop.set_exception_handler(previous)


def _unretrieved(seen: list[dict[str, Any]]) -> list[str]:
    gc.collect()
    return [c["message"] for c in seen if "never retrieved" in c.get("message", "")]


async def test_spawn_tracks_live_tasks_until_they_end() -> None:
    owner = TaskOwner()
    gate = asyncio.Event()

    async def job() -> int:
        await gate.wait()
        return 7

    task = owner.spawn(job(), name="job")
    assert task.get_name() == "job"
    assert len(owner) == 1
    assert owner.pending == {task}
    gate.set()
    assert await task == 7
    assert len(owner) == 0
    assert not owner.pending


async def test_spawn_runs_in_the_given_context() -> None:
    owner = TaskOwner()
    _VAR.set("caller")

    async def read() -> str:
        return _VAR.get()

    assert await owner.spawn(read()) == "caller"
    assert await owner.spawn(read(), context=contextvars.Context()) == "unset"


async def test_a_bare_task_failure_is_reported_unobserved() -> None:
    # The control for the next tests: the handler does see a failure nobody retrieved.
    with loop_errors() as seen:
        task = asyncio.get_running_loop().create_task(_fail())
        await asyncio.wait({task})
        del task
        assert _unretrieved(seen)


async def test_spawned_failures_are_retrieved() -> None:
    owner = TaskOwner()
    with loop_errors() as seen:
        task = owner.spawn(_fail())
        await owner.drain()
        assert isinstance(task.exception(), ValueError)  # the outcome stays on the task
        del task
        owner.spawn(_fail("nobody awaits me"))
        await owner.drain()
        assert _unretrieved(seen) == []


async def test_drain_waits_for_every_task_including_new_ones_and_raises_none() -> None:
    owner = TaskOwner()
    finished: list[str] = []

    async def first() -> None:
        await asyncio.sleep(0.01)
        owner.spawn(second())
        finished.append("first")

    async def second() -> None:
        await asyncio.sleep(0.01)
        finished.append("second")

    owner.spawn(first())
    owner.spawn(_fail())
    await owner.drain()
    assert finished == ["first", "second"]
    assert len(owner) == 0


async def test_a_cancelled_drain_leaves_the_tasks_running_and_owned() -> None:
    owner = TaskOwner()
    done: list[str] = []
    owner.spawn(_slow_cleanup(done))
    drain = asyncio.get_running_loop().create_task(owner.drain())
    await all_tasks_blocked()  # the drain waits for the child
    drain.cancel()
    with pytest.raises(asyncio.CancelledError):
        await drain
    assert len(owner) == 1 and not done
    await owner.aclose()
    assert done == ["child"]


async def test_aclose_awaits_the_cleanup_of_every_cancelled_task() -> None:
    owner = TaskOwner()
    done: list[str] = []
    tasks = [owner.spawn(_slow_cleanup(done, str(i))) for i in range(3)]
    await all_tasks_blocked()
    await owner.aclose()  # never raises the children's CancelledError
    assert sorted(done) == ["0", "1", "2"]
    assert all(task.cancelled() for task in tasks)
    assert len(owner) == 0


async def test_aclose_raises_no_failure_of_its_tasks() -> None:
    owner = TaskOwner()

    async def fails_on_cancel() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            raise ValueError("cleanup failed")

    with loop_errors() as seen:
        failed = owner.spawn(fails_on_cancel())
        owner.spawn(_fail())
        await all_tasks_blocked()
        await owner.aclose()
        assert isinstance(failed.exception(), ValueError)
        del failed
        assert _unretrieved(seen) == []


async def test_aclose_still_awaits_its_tasks_when_its_caller_is_cancelled() -> None:
    owner = TaskOwner()
    done: list[str] = []
    owner.spawn(_slow_cleanup(done))
    await all_tasks_blocked()
    closing = asyncio.get_running_loop().create_task(owner.aclose())
    await all_tasks_blocked()  # the child is cancelled and cleaning up
    closing.cancel()
    with pytest.raises(asyncio.CancelledError):
        await closing
    assert done == ["child"]  # the cleanup ended before the caller's cancellation was raised


async def test_the_owner_is_usable_after_aclose() -> None:
    owner = TaskOwner()
    owner.spawn(asyncio.Event().wait())
    await owner.aclose()

    async def answer() -> int:
        return 1

    assert await owner.spawn(answer()) == 1


async def test_cancel_and_await_awaits_the_loser_and_keeps_the_winner() -> None:
    owner = TaskOwner()
    done: list[str] = []

    async def win() -> str:
        return "won"

    winner = owner.spawn(win())
    loser = owner.spawn(_slow_cleanup(done, "loser"))
    finished, _ = await asyncio.wait({winner, loser}, return_when=asyncio.FIRST_COMPLETED)
    assert finished == {winner}
    await cancel_and_await(winner, loser)
    assert done == ["loser"]
    assert loser.cancelled()
    assert winner.result() == "won"


async def test_cancel_and_await_retrieves_and_does_not_raise_failures() -> None:
    with loop_errors() as seen:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        future.set_exception(ValueError("failed first"))
        await cancel_and_await(future)  # not raised
        del future
        assert _unretrieved(seen) == []


async def test_cancel_and_await_raises_the_callers_cancellation_after_the_wait() -> None:
    owner = TaskOwner()
    done: list[str] = []
    child = owner.spawn(_slow_cleanup(done))
    await all_tasks_blocked()
    parent = asyncio.get_running_loop().create_task(cancel_and_await(child))
    await all_tasks_blocked()  # the child is cancelled and cleaning up
    parent.cancel()
    with pytest.raises(asyncio.CancelledError):
        await parent
    assert done == ["child"]
    assert child.cancelled()


# ------------------------------------------------------------------- all_of / all_settled


async def _started_then_cleanup(started: asyncio.Event, done: list[str], label: str) -> None:
    """Says it started, runs until cancelled, then needs a few loop turns to clean up."""
    started.set()
    await _slow_cleanup(done, label)


async def _value(value: int, after: asyncio.Event | None = None) -> int:
    """`value`, once `after` is set (when given)."""
    if after is not None:
        await after.wait()
    return value


async def test_all_of_answers_in_argument_order() -> None:
    last_done = asyncio.Event()

    async def last() -> int:
        last_done.set()
        return 3

    # The first two finish after the third: the answer is still in argument order.
    assert await all_of(_value(1, last_done), _value(2, last_done), last()) == [1, 2, 3]
    assert await all_of() == []


async def test_all_of_cancels_and_awaits_the_others_when_one_fails() -> None:
    done: list[str] = []
    started = asyncio.Event()
    before = set(asyncio.all_tasks())

    async def fail_once_started() -> None:
        await started.wait()
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        await all_of(_started_then_cleanup(started, done, "sibling"), fail_once_started())
    assert done == ["sibling"]  # cleaned up before the failure was raised
    assert set(asyncio.all_tasks()) == before


async def test_all_of_cancelled_by_its_caller_awaits_every_child() -> None:
    done: list[str] = []
    first, second = asyncio.Event(), asyncio.Event()
    parent = asyncio.get_running_loop().create_task(
        all_of(_started_then_cleanup(first, done, "a"), _started_then_cleanup(second, done, "b"))
    )
    await first.wait()
    await second.wait()
    parent.cancel()
    with pytest.raises(asyncio.CancelledError):
        await parent
    assert sorted(done) == ["a", "b"]


async def test_all_settled_answers_each_outcome_in_order() -> None:
    with loop_errors() as seen:
        results = await all_settled(_value(1), _fail("second"), _value(3))
        assert results[0] == 1 and results[2] == 3
        assert isinstance(results[1], ValueError) and str(results[1]) == "second"
        assert _unretrieved(seen) == []


async def test_all_settled_cancelled_by_its_caller_awaits_every_child() -> None:
    done: list[str] = []
    started = asyncio.Event()
    parent = asyncio.get_running_loop().create_task(
        all_settled(_started_then_cleanup(started, done, "child"), _value(2))
    )
    await started.wait()
    parent.cancel()
    with pytest.raises(asyncio.CancelledError):
        await parent
    assert done == ["child"]
