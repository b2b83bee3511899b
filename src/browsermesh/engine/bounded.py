"""Clean-up under a bound: nothing the engine awaits may outlive the call's budget.

A page whose main thread never yields (`while (true) {}`) never answers anything that runs in it
(evaluate, `isConnected`, storage state, handle disposal), and Playwright's own `timeout=` does
not cover every call. A call is bounded by the caller's deadline with `failures.within` or
`failures.timed`; `quietly` bounds clean-up that must never raise or hang (releasing handles,
dismissing a late dialog, closing a popup).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable

CLEANUP_S = 1.0
"""How long one clean-up step (dispose, dismiss, close) may take before it is abandoned."""


async def quietly(awaitable: Awaitable[object], seconds: float = CLEANUP_S) -> None:
    """Clean-up that never raises and never takes longer than `seconds`: its failure changes
    nothing for the caller, whose own outcome is already decided."""
    with contextlib.suppress(Exception):
        await asyncio.wait_for(awaitable, timeout=seconds)
