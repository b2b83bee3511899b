"""Ordering a unit test's tasks without a clock: `all_tasks_blocked()`.

`anyio.wait_all_tasks_blocked()` does the same check but, while some task can still run, it
sleeps 0.1 s between checks: time passes, so timers (a fake engine's delay, a cleanup that takes
10 ms) fire in between, and what the test meant to catch in progress may have ended. This one
yields one loop turn at a time instead, so no more time passes than the tasks need to run."""

from __future__ import annotations

import asyncio

MAX_TURNS = 10_000
"""Loop turns before giving up: a task that never blocks (a busy loop) fails the test."""


def _blocked(task: asyncio.Task[object]) -> bool:
    """Whether `task` waits on a future that is not done (asyncio keeps it in `_fut_waiter`,
    the attribute anyio's own check reads: there is no public one)."""
    waiter = getattr(task, "_fut_waiter", None)
    return waiter is not None and not waiter.done()


async def all_tasks_blocked() -> None:
    """Return once every other task of the running loop waits on something (an event, a lock,
    a timer, a thread): whatever could run without an event arriving or time passing has run.

    Raises AssertionError when some task is still runnable after MAX_TURNS turns."""
    this = asyncio.current_task()
    for _ in range(MAX_TURNS):
        await asyncio.sleep(0)  # one loop turn: the other tasks' ready steps run
        if all(task is this or _blocked(task) for task in asyncio.all_tasks()):
            return
    raise AssertionError(f"some task was still runnable after {MAX_TURNS} loop turns")
