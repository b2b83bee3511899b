"""Every wait in the engine is bounded, and bounded here.

A page whose main thread never yields (`while (true) {}`) never answers anything that runs in it
(evaluate, `isConnected`, storage state, handle disposal), and Playwright's own `timeout=` does
not cover every call. So the engine awaits nothing open-ended: a call is bounded by the caller's
deadline with `failures.within` or `failures.timed` (which use `bounded`), a fixed-budget step
(a CDP round trip, a Grid request, a frame wait) by `bounded` directly, a race of several
waits by `first_done`, and clean-up that must never raise or hang (releasing handles,
dismissing a late dialog, closing a popup) by `quietly`.

Budgets are milliseconds in every engine signature; this module is the one place they become
the seconds asyncio counts in, and holds the engine's one `asyncio.wait_for` and its one timed
`asyncio.wait` (tests/unit/test_engine_convention.py holds the engine to that).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Iterable
from typing import Any, TypeVar

__all__ = ["CLEANUP_MS", "bounded", "first_done", "quietly"]

T = TypeVar("T")

CLEANUP_MS = 1_000
"""How long one clean-up step (dispose, dismiss, close) may take before it is abandoned."""


async def bounded(awaitable: Awaitable[T], budget_ms: float) -> T:
    """Await `awaitable` for at most `budget_ms` milliseconds; past it the awaitable is
    cancelled (and awaited: `asyncio.wait_for` leaves nothing running) and the builtin
    `TimeoutError` is raised for the caller to classify. A budget below 0 counts as 0 (the
    awaitable gets one chance to be done at once, as `asyncio.wait_for` gives it)."""
    return await asyncio.wait_for(awaitable, timeout=max(0.0, budget_ms) / 1000)


async def first_done(
    futures: Iterable[asyncio.Future[Any]], budget_ms: float
) -> set[asyncio.Future[Any]]:
    """Wait until the first of `futures` is done or `budget_ms` has passed; the ones done by
    then (none when the budget ran out). Nothing is cancelled: the caller owns the futures
    (a `model.tasks.TaskOwner` it closes) and decides what the race meant."""
    done, _pending = await asyncio.wait(
        set(futures), timeout=max(0.0, budget_ms) / 1000, return_when=asyncio.FIRST_COMPLETED
    )
    return done


async def quietly(awaitable: Awaitable[object], budget_ms: float = CLEANUP_MS) -> None:
    """Clean-up that never raises and never takes longer than `budget_ms`: its failure changes
    nothing for the caller, whose own outcome is already decided."""
    with contextlib.suppress(Exception):
        await bounded(awaitable, budget_ms)
