"""`eventually(predicate, within)`: the one way a test waits for a condition that something it
does not control makes true (a child process, the browser, a timer in the code under test)."""

from __future__ import annotations

import inspect
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio

T = TypeVar("T")

POLL_S = 0.05
"""How often the predicate is asked again: often enough not to slow a test down noticeably,
rarely enough not to compete with the work it waits for on a loaded 2-core machine."""


async def eventually(predicate: Callable[[], T | Awaitable[T]], within: float, what: str = "") -> T:
    """Ask `predicate` (sync or async) until its answer is truthy and return that answer; after
    `within` seconds, raise AssertionError with the last answer (and `what`, when given).

    Give a generous `within`: it bounds a failure, not a success, and the suite runs on loaded
    machines. The predicate is always asked once more at the deadline."""
    deadline = time.monotonic() + within
    while True:
        answer = predicate()
        if inspect.isawaitable(answer):
            answer = await answer
        if answer:
            return answer
        if time.monotonic() >= deadline:
            label = f" ({what})" if what else ""
            raise AssertionError(f"not true within {within} s{label}; last answer: {answer!r}")
        await anyio.sleep(POLL_S)
