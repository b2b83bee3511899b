"""Counting BrowserMesh's own page evaluations (issue 33): every message this process's
Playwright client sends that evaluates script in a page (`evaluateExpression`,
`evaluateExpressionHandle`, `evalOnSelector`, `evalOnSelectorAll`) is one evaluation of ours;
Playwright's own actionability checks run inside its driver and never cross the client, so they
are not counted. Patches the client connection's one sending method (Playwright's private
`Connection.send_message_to_server`): a Playwright that renames it fails the test loudly rather
than counting nothing."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from playwright._impl.connection import Connection

EVALUATING = frozenset(
    {"evaluateExpression", "evaluateExpressionHandle", "evalOnSelector", "evalOnSelectorAll"}
)
"""The protocol methods that run script of ours in a page."""


@contextmanager
def counting() -> Iterator[Counter[str]]:
    """Count the messages sent while inside, by protocol method (the counter is live)."""
    counts: Counter[str] = Counter()
    original = Connection.send_message_to_server

    def send(self: Connection, obj: Any, method: str, params: Any, options: Any) -> Any:
        counts[method] += 1
        return original(self, obj, method, params, options)

    Connection.send_message_to_server = send  # type: ignore[method-assign]
    try:
        yield counts
    finally:
        Connection.send_message_to_server = original  # type: ignore[method-assign]


def evaluations(counts: Counter[str]) -> int:
    """How many of `counts` evaluated script in a page."""
    return sum(n for method, n in counts.items() if method in EVALUATING)
