"""What a session trace records and when the server keeps one (issue 35; reference §33).

`TraceOptions` are Playwright's `tracing.start` options as `browser_trace start` takes them.
`TRACE_POLICIES` is the catalogue of `--trace-sessions` values (pytest-playwright's
`--tracing` words): which traces the server starts itself and which it keeps at a session's end.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, Literal

__all__ = ["MAX_GROUPS", "TRACE_POLICIES", "TraceOptions", "TracePolicy", "TraceRun", "keeps"]

TracePolicy = Literal["off", "on", "retain-on-failure"]
TRACE_POLICIES: Final[dict[TracePolicy, str]] = {
    "off": "the server starts no trace (browser_trace starts one)",
    "on": "every new session is traced; its trace is saved when it closes",
    "retain-on-failure": (
        "every new session is traced; its trace is saved when it closes only if one of its "
        "calls failed, else discarded"
    ),
}


@dataclass(frozen=True, slots=True)
class TraceOptions:
    """What one trace records (Playwright's `tracing.start` options)."""

    screenshots: bool = True
    snapshots: bool = True
    sources: bool = False
    title: str | None = None


def keeps(policy: TracePolicy, failed: bool) -> bool:
    """Whether a trace the server started under `policy` is saved at its session's end."""
    if policy == "on":
        return True
    if policy == "retain-on-failure":
        return failed
    return False


MAX_GROUPS: Final = 10_000
"""Calls of one trace whose groups get their outcome in the saved trace (later ones keep their
plain title): bounds the memory a long trace holds."""


@dataclass(slots=True)
class TraceRun:
    """The trace a session is recording: its options, who started it (`policy` None: the
    client; else the server's `--trace-sessions`), whether one of its calls failed."""

    options: TraceOptions
    policy: TracePolicy | None = None
    failed: bool = False
    # Each call's group as written and as the saved trace names it (its outcome added), in
    # order; the last one's outcome is filled in when its call ends. Bounded by `MAX_GROUPS`.
    groups: list[list[str]] = field(default_factory=list)
    # The call in the session's queue slot opened its group (the session's calls run one at a
    # time): its end closes it.
    open: bool = False
