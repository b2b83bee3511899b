"""Playwright calls under a deadline: nothing the engine awaits may outlive the call's budget.

A page whose main thread never yields (`while (true) {}`) never answers anything that runs in it
(evaluate, `isConnected`, storage state, handle disposal), and Playwright's own `timeout=` does
not cover every call. `within` bounds a call by the caller's deadline; `quietly` bounds clean-up
that must never raise or hang (releasing handles, dismissing a late dialog, closing a popup).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable
from typing import TypeVar

from browsermesh.model.deadline import Deadline

T = TypeVar("T")

CLEANUP_S = 1.0
"""How long one clean-up step (dispose, dismiss, close) may take before it is abandoned."""


async def within(awaitable: Awaitable[T], deadline: Deadline) -> T:
    """Await `awaitable` within the remaining budget; past it, OPERATION_TIMEOUT
    (`{timeoutMs, reason: "timeout"}`). Any other failure propagates for the caller to
    classify."""
    try:
        return await asyncio.wait_for(awaitable, timeout=deadline.budget_ms() / 1000)
    except TimeoutError:
        raise deadline.timeout_error() from None


async def quietly(awaitable: Awaitable[object], seconds: float = CLEANUP_S) -> None:
    """Clean-up that never raises and never takes longer than `seconds`."""
    with contextlib.suppress(Exception):
        await asyncio.wait_for(awaitable, timeout=seconds)
