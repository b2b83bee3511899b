"""Playwright tracing of one session's context (issue 35): start, named groups, stop.

A trace is Playwright's own (`BrowserContext.tracing`): the Trace Viewer opens it. The runtime
adds one group per BrowserMesh tool call (`group`/`group_end`), so the viewer lists the agent's
steps with Playwright's calls inside them. `stop` writes the raw zip to a path of the runtime's
choosing; the runtime scrubs it (persistence.trace_scrub) before it becomes an artifact, since
Playwright keeps password values in its action log and DOM snapshots.

Every call is bounded; a failure is `BROWSER_ERROR` (a group that cannot be written must not
fail the tool call it marks: the runtime swallows those).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from browsermesh.engine.failures import timed
from browsermesh.model.deadline import Deadline
from browsermesh.model.tracing import TraceOptions

__all__ = ["group", "start", "stop"]

GROUP_BUDGET_MS = 5_000
"""One group mark may take this long (a hung driver must not hold a tool call for longer)."""


def _tracing(context: Any) -> Any:
    return context.context.tracing  # a PwContext's BrowserContext


async def start(context: Any, options: TraceOptions, deadline: Deadline) -> None:
    """Start tracing `context` (a PwContext)."""
    await timed(
        _tracing(context).start(
            title=options.title,
            screenshots=options.screenshots,
            snapshots=options.snapshots,
            sources=options.sources,
        ),
        deadline,
    )


async def group(context: Any, name: str | None) -> None:
    """Open a named group (the calls until its end show inside it in the viewer), or close
    the innermost open one when `name` is None. Its own bound, not the call's: the end of a
    call's group must be written even when the call's budget ran out."""
    tracing = _tracing(context)
    await timed(
        tracing.group(name) if name is not None else tracing.group_end(),
        Deadline(GROUP_BUDGET_MS),
    )


async def stop(context: Any, path: Path | None, deadline: Deadline) -> None:
    """Stop tracing; write the zip to `path`, or discard it when `path` is None."""
    await timed(_tracing(context).stop(path=path), deadline)
