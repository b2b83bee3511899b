"""This replica's part in the fleet's session directory (issue 37 item 1, reference §37).

`FleetMember` is a `SessionWatcher`: told of a session change it only marks the session dirty
and wakes its writer, one task owned by the runtime's `TaskOwner`. The writer writes the dirty
sessions' current records (many changes of one session between two writes make one write),
renews this replica's lease every third of it, and marks the sessions of a replica whose lease
lapsed `failed` with reason `replica_lost` (one replica claims each). When Redis does not
answer, the sessions stay dirty and the writer retries with a growing pause: the runtime's own
work never waits for the directory. The runtime's shutdown ends with `stop`: every session of
this replica is written `closed` with reason `replica_stopped` and the lease is dropped, within
`STOP_DEADLINE_S`.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any, Final

import anyio

from browsermesh.config.fleet import replica_name, show_fleet_url
from browsermesh.runtime.session import ACTIVE_STATUSES, SessionRecord
from browsermesh.runtime.watchers import SessionChange

if TYPE_CHECKING:
    from browsermesh.persistence.fleet_directory import FleetDirectory
    from browsermesh.runtime.core import RuntimeCore

__all__ = ["REPLICA_LOST", "REPLICA_STOPPED", "TOMBSTONE_MS", "FleetMember"]

TOMBSTONE_MS: Final = 3_600_000
"""How long a closed or failed record stays in the directory (the runtime keeps its own
tombstones by count, §13.5, which means nothing across replicas)."""
STOP_DEADLINE_S: Final = 3.0
"""How long the shutdown may spend writing this replica's last records."""
RETRY_FIRST_S: Final = 0.25
REPLICA_STOPPED: Final = "replica_stopped"
REPLICA_LOST: Final = "replica_lost"


class FleetMember:
    """Keeps this replica's sessions in the directory (`runtime.watchers` entry)."""

    def __init__(self, core: RuntimeCore, url: str) -> None:
        self.core = core
        config = core.config
        self.replica_id = replica_name(config.replica_id)
        self.lease_ms = config.fleet_lease_ms
        self._url = url
        self._directory: FleetDirectory | None = None
        self._dirty: set[str] = set()
        self._written: dict[str, str] = {}  # session id -> the status last written
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._stop_task: asyncio.Task[None] | None = None
        self._ended = False  # stopped or halted: never starts again
        self._stopping: set[str] = set()  # sessions that changed once the shutdown began
        self._started_at = core.now()
        self._reachable: bool | None = None  # None: not tried yet
        self.replicas: int | None = None  # live replicas at the last look
        self._renewed_at = -1e9
        self._sent: dict[str, Any] = {}  # the lease last written
        self._reaped_at = -1e9
        # Where other replicas reach this one's channel (set by the HTTP service once bound;
        # None: no channel, e.g. stdio or no fleet token).
        self.endpoint: str | None = None

    # ---------------------------------------------------------------- SessionWatcher

    def session_changed(self, change: SessionChange) -> None:
        """Mark the session dirty and wake the writer (never waits)."""
        if change.kind == "artifacts" or change.kind == "pages":
            return  # nothing the record shows
        self._dirty.add(change.session_id)
        if self.core.shutting_down:
            self._stopping.add(change.session_id)
        self.start()
        self._wake.set()

    def watches_pages(self, principal: str) -> bool:
        """Never: the record holds no page facts."""
        return False

    # ---------------------------------------------------------------- lifecycle

    def start(self) -> None:
        """Start the writer (once; the runtime's task owner awaits it)."""
        if self._task is None and not self._ended:
            from browsermesh.persistence.fleet_directory import FleetDirectory

            self._directory = FleetDirectory(
                self._url, lease_ms=self.lease_ms, tombstone_ms=TOMBSTONE_MS
            )
            self._task = self.core.tasks.spawn(self._run(), name="fleet-writer")

    async def stop(self) -> None:
        """Write every session of this replica closed (`replica_stopped`), drop the lease and
        close the client, bounded by `STOP_DEADLINE_S`. Idempotent."""
        if self._stop_task is None:
            self._ended = True
            self._stop_task = self.core.tasks.spawn(self._stop(), name="fleet-stop")
        await asyncio.shield(self._stop_task)

    async def halt(self) -> None:
        """End the writer without a word to the directory: what a killed replica leaves
        (its lease lapses; tests)."""
        task, self._task = self._task, None
        self._ended = True
        self._wake.set()
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        directory, self._directory = self._directory, None  # `stop` then writes nothing
        if directory is not None:
            await directory.aclose()

    async def _stop(self) -> None:
        task, self._task = self._task, None
        self._wake.set()
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        directory = self._directory
        if directory is None:
            return
        with anyio.move_on_after(STOP_DEADLINE_S):
            try:
                own = [
                    self._record(rec, stopping=sid in self._stopping or rec.status != "closed")
                    for rec in self.core.records()
                    if (sid := rec.session_id) in self._dirty
                    or sid in self._stopping
                    or self._written.get(sid) in ACTIVE_STATUSES
                ]
                await directory.write_records(own)
                await directory.remove_replica(self.replica_id)
            except Exception:
                self.core.log.warn("fleet.stop_incomplete", endpoint=show_fleet_url(self._url))
        await directory.aclose()

    # ---------------------------------------------------------------- the writer

    async def _run(self) -> None:
        from browsermesh.persistence.fleet_directory import DirectoryUnavailable

        pause = RETRY_FIRST_S
        interval = self.lease_ms / 3000
        while not self._ended:  # `stop` and `halt` also cancel; this ends a swallowed cancel
            try:
                await self._tick(interval)
            except DirectoryUnavailable:
                self._unreachable()
                await asyncio.sleep(pause)  # the backoff; changes meanwhile wait for the retry
                pause = min(pause * 2, interval)
                continue
            except Exception:  # a bug of ours: the writer goes on, the operator is told
                self.core.log.warn("fleet.writer_failed", code="INTERNAL_ERROR")
                await asyncio.sleep(pause)
                pause = min(pause * 2, interval)
                continue
            pause = RETRY_FIRST_S
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(interval):
                    await self._wake.wait()

    async def _tick(self, interval: float) -> None:
        directory = self._directory
        assert directory is not None
        self._wake.clear()
        now = self.core.clock.monotonic()
        lease = self._lease()
        if now - self._renewed_at >= interval or self._reachable is not True or lease != self._sent:
            kept = await directory.renew(self.replica_id, lease)
            self._renewed_at, self._sent = now, lease
            if self._reachable is False:
                self.core.log.info("fleet.redis_back", endpoint=show_fleet_url(self._url))
            if self._reachable is False or not kept:
                # The lease lapsed or Redis lost its data (a restart between two renewals is
                # seen only here): rewrite every own record.
                self._dirty.update(self._written)
            self._reachable = True
        await self._flush(directory)
        if now - self._reaped_at >= interval:
            await self._reap(directory)
            self._reaped_at = now

    def _unreachable(self) -> None:
        if self._reachable is not False:
            self.core.log.warn("fleet.redis_unreachable", endpoint=show_fleet_url(self._url))
        self._reachable = False

    async def _flush(self, directory: FleetDirectory) -> None:
        if not self._dirty:
            return
        batch, self._dirty = self._dirty, set()
        records = self.core.sessions_snapshot()
        live = {sid: records[sid] for sid in batch if sid in records}
        try:
            await directory.write_records(
                self._record(rec, stopping=sid in self._stopping) for sid, rec in live.items()
            )
        except BaseException:
            self._dirty |= batch
            raise
        for sid, rec in live.items():
            self._written[sid] = rec.status
        for sid in [sid for sid in self._written if sid not in records]:
            del self._written[sid]  # the runtime forgot its tombstone; Redis keeps its own

    async def _reap(self, directory: FleetDirectory) -> None:
        live = await directory.live_replicas()
        self.replicas = len(live)
        for record in await directory.records():
            owner = record.get("replica")
            if record.get("status") not in ACTIVE_STATUSES or owner in live:
                continue
            if owner == self.replica_id:
                continue  # our own lease is renewed above; our records are rewritten on return
            if not await directory.claim(str(record.get("sessionId"))):
                continue
            if owner in await directory.live_replicas():
                continue  # it came back meanwhile
            lost = {
                **record,
                "status": "failed",
                "reason": REPLICA_LOST,
                "updatedAt": self.core.now(),
            }
            await directory.write_records([lost])
            self.core.log.warn(
                "fleet.session_lost", sessionId=lost.get("sessionId"), reason=REPLICA_LOST
            )

    # ---------------------------------------------------------------- what is written

    def _lease(self) -> dict[str, Any]:
        return {
            "replicaId": self.replica_id,
            "startedAt": self._started_at,
            "sessions": self.core.active_count(),
            "maxSessions": self.core.config.max_sessions,
            "endpoint": self.endpoint,
        }

    def _record(self, rec: SessionRecord, *, stopping: bool = False) -> dict[str, Any]:
        """The directory record of `rec` (reference §37.2): names, labels and status only."""
        status: str = rec.status
        reason: str | None = None
        if rec.status == "failed":
            reason = rec.failure_code.value if rec.failure_code is not None else "failed"
        if stopping and rec.status != "failed":
            status, reason = "closed", REPLICA_STOPPED
        grid = self.core.config.backend == "selenium-grid"
        return {
            "sessionId": rec.session_id,
            "principal": rec.principal,
            "name": rec.name,
            "metadata": dict(rec.metadata),
            "status": status,
            "replica": self.replica_id,
            "createdAt": rec.created_at,
            "updatedAt": self.core.now(),
            "gridBrowser": rec.placement if grid else None,
            "reason": reason,
        }

    @property
    def directory(self) -> FleetDirectory | None:
        """The directory client while the writer runs (None before the start, after the stop)."""
        return self._directory

    def info(self) -> dict[str, Any]:
        """runtime_info's `fleet` (reference §4.1)."""
        out: dict[str, Any] = {
            "replicaId": self.replica_id,
            "directory": "connected" if self._reachable else "unreachable",
            # Whether calls for other replicas' sessions are forwarded (the fleet token, §37.6).
            "forwarding": self.core.config.fleet_token is not None,
        }
        if self.replicas is not None:
            out["replicas"] = self.replicas
        return out
