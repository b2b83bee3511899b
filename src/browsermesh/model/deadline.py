"""One absolute deadline per call, fixed at acceptance, and the cancel signal that goes with it."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TypeAlias

from browsermesh.errors import BrowserMeshError, ErrorCode

MonotonicClock: TypeAlias = Callable[[], float]
"""Seconds from an arbitrary origin that never go backwards (``time.monotonic``)."""


@dataclass(eq=False)
class Deadline:
    """An absolute monotonic deadline. Queue wait and every engine step share it; so do the
    doctor's checks. ``clock`` (seconds, monotonic) is injectable for tests of deadline rules."""

    timeout_ms: int
    expires_at: float = 0.0
    clock: MonotonicClock = field(default=time.monotonic, repr=False)

    def __post_init__(self) -> None:
        if self.expires_at == 0.0:
            self.expires_at = self.clock() + self.timeout_ms / 1000

    def remaining_ms(self) -> float:
        return max(0.0, (self.expires_at - self.clock()) * 1000)

    def expired(self) -> bool:
        return self.remaining_ms() < 1

    def timeout_error(self) -> BrowserMeshError:
        return BrowserMeshError(
            ErrorCode.OPERATION_TIMEOUT,
            details={"timeoutMs": self.timeout_ms, "reason": "timeout"},
            cause=f"exceeded {self.timeout_ms} ms",
        )

    def budget_ms(self) -> float:
        """The remaining budget for an engine call; below 1 ms is a timeout before any call
        (Playwright treats 0 as "no timeout")."""
        remaining = self.remaining_ms()
        if remaining < 1:
            raise self.timeout_error()
        return remaining


@dataclass(eq=False)
class OperationContext:
    """What a queued job needs: its id, its deadline and the caller's cancel signal.

    Abortable engine steps (polling waits) call `sleep`, which stops at once on cancellation or
    at the deadline; non-abortable steps simply run to completion and keep their queue slot.
    """

    operation_id: str
    deadline: Deadline
    cancelled: asyncio.Event = field(default_factory=asyncio.Event)
    started: bool = False
    # The order the runtime accepted this operation in, one counter for every session (issue
    # 20: a test export interleaves the sessions' recorded steps by it); 0 outside a runtime.
    accepted: int = 0

    def at_least(self, ms: float) -> OperationContext:
        """This operation (same id, same cancel signal) with at least `ms` left: for clean-up
        that may run a little past the deadline (closing a popup nobody may keep)."""
        if self.deadline.remaining_ms() >= ms:
            return self
        return replace(self, deadline=Deadline(max(1, int(ms))))

    def check(self) -> None:
        """Raise if the caller cancelled or the budget is gone."""
        if self.cancelled.is_set():
            raise OperationCancelled()
        self.deadline.budget_ms()

    async def sleep(self, ms: float) -> None:
        """Sleep up to `ms` (bounded by the deadline); raise on cancellation."""
        delay = min(ms, self.deadline.remaining_ms()) / 1000
        if delay > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.cancelled.wait(), timeout=delay)
        if self.cancelled.is_set():
            raise OperationCancelled()


class OperationCancelled(BrowserMeshError):
    """The caller cancelled; on the runtime API this is `OPERATION_CANCELLED`."""

    def __init__(self) -> None:
        super().__init__(ErrorCode.OPERATION_CANCELLED)
