"""The idle reaper (§13.7): closes sessions nobody has touched for ``session_idle_ms``.

Only the HTTP transport runs it (over stdio sessions end with the process): the HTTP service owns
its :meth:`IdleReaper.run` task for as long as it serves. It goes through the runtime's public API
only (the registry snapshot, the clock, ``close_session``), so an idle close is a normal close.
"""

from __future__ import annotations

import asyncio
from typing import Final

from browsermesh.errors import BrowserMeshError
from browsermesh.log import EventLog
from browsermesh.model.tasks import all_settled
from browsermesh.runtime.runtime import Runtime
from browsermesh.runtime.session import SessionRecord

__all__ = ["REAPER_MAX_INTERVAL_MS", "IdleReaper", "reaper_interval_ms"]

REAPER_MAX_INTERVAL_MS: Final = 30_000


def reaper_interval_ms(idle_ms: int) -> int:
    """min(30,000, idle/2) ms, at least 1 ms."""
    return max(1, min(REAPER_MAX_INTERVAL_MS, idle_ms // 2))


class IdleReaper:
    """Closes untouched, idle, ready sessions through the normal close path (reason ``idle``).

    Idleness is measured from the record's ``last_touch`` (monotonic seconds on the runtime
    clock): an accepted call naming the session or a finished queued operation.
    """

    def __init__(self, runtime: Runtime, idle_ms: int, log: EventLog) -> None:
        self.runtime = runtime
        self.idle_ms = idle_ms
        self.log = log

    def _idle_for_ms(self, rec: SessionRecord) -> float:
        return (self.runtime.clock.monotonic() - float(rec.last_touch)) * 1000

    def idle_sessions(self) -> list[SessionRecord]:
        """Records that are due: ready, accepting, nothing queued or running, idle long enough."""
        due = []
        for rec in self.runtime.sessions_snapshot().values():
            if rec.status != "ready" or not rec.accepting or rec.queue.busy:
                continue
            if self._idle_for_ms(rec) >= self.idle_ms:
                due.append(rec)
        return due

    async def sweep(self) -> int:
        """One pass; returns how many sessions it closed."""
        if self.idle_ms <= 0 or self.runtime.shutting_down:
            return 0
        due = self.idle_sessions()
        # all_settled awaits every close (a cancelled sweep cancels and awaits them all); one
        # failing close neither stops the others nor the reaper.
        results = await all_settled(
            *(self.runtime.close_session(r.principal, r.session_id, reason="idle") for r in due)
        )
        closed = 0
        for rec, result in zip(due, results, strict=True):
            if isinstance(result, BaseException):
                if not isinstance(result, BrowserMeshError | asyncio.CancelledError):
                    self.log.warn(
                        "operation.failed",
                        sessionId=rec.session_id,
                        principal=rec.principal,
                        code="INTERNAL_ERROR",
                        reason="idle",
                    )
            else:
                closed += 1
        return closed

    async def run(self) -> None:
        """Sweep every :func:`reaper_interval_ms` until cancelled; returns at once if disabled."""
        if self.idle_ms <= 0:
            return
        interval = reaper_interval_ms(self.idle_ms) / 1000
        while True:
            await asyncio.sleep(interval)
            await self.sweep()
