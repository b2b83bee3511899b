"""The fleet's session directory in Redis (issue 37, reference §37): the only importer of `redis`.

Keys, all under ``bm:``:

- ``bm:session:<sessionId>``: one session's record, a JSON object (:data:`RECORD_FIELDS`); a
  closed or failed record is a tombstone that expires after ``tombstone_ms``;
- ``bm:principal:<principal>``: the set of that principal's session ids (an id whose record
  expired is removed when the set is read);
- ``bm:replica:<replicaId>``: a replica's lease, a JSON object written with ``PX`` = the lease;
- ``bm:reap:<sessionId>``: a short claim (``SET NX PX``) so that one replica alone marks a lost
  replica's session failed;
- ``bm:view:<kind>:<digest>``: the live view's one-time codes (``code``) and view sessions
  (``session``) shared by the fleet, keyed by the SHA-256 digest of the secret (the secret itself
  is never written), holding the principal, with ``PX`` = its lifetime;
  ``bm:viewindex:<kind>:<principal>``: a sorted set of that principal's digests by expiry, which
  bounds how many one principal has (its entry closest to expiry goes first).

Every call is bounded (:data:`CALL_TIMEOUT_S`, and socket timeouts of the same size, no
retries): a dead Redis answers :class:`DirectoryUnavailable` within seconds and never hangs a
caller. Nothing here knows what a session is beyond the record it is handed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Iterable, Mapping
from typing import Any, Final

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError

__all__ = [
    "CALL_TIMEOUT_S",
    "KEY_PREFIX",
    "RECORD_FIELDS",
    "DirectoryUnavailable",
    "FleetDirectory",
]

KEY_PREFIX: Final = "bm:"
CALL_TIMEOUT_S: Final = 2.0
"""The longest one directory call may take (connecting included)."""
RECORD_FIELDS: Final = (
    "sessionId",
    "principal",
    "name",
    "metadata",
    "status",
    "replica",
    "createdAt",
    "updatedAt",
    "gridBrowser",
    "reason",
)
"""Every field of a session record, and nothing else is ever written (no page content, no
cookies, storage, form values or tokens)."""
_SCAN_COUNT: Final = 500


class DirectoryUnavailable(Exception):
    """Redis did not answer in time, refused, or answered with an error (never its text)."""


class FleetDirectory:
    """The directory's keys over one Redis client."""

    def __init__(self, url: str, *, lease_ms: int, tombstone_ms: int) -> None:
        self.lease_ms = lease_ms
        self.tombstone_ms = tombstone_ms
        self._client: aioredis.Redis = aioredis.Redis.from_url(
            url,
            decode_responses=True,
            socket_timeout=CALL_TIMEOUT_S,
            socket_connect_timeout=CALL_TIMEOUT_S,
            retry=Retry(NoBackoff(), 0),
            health_check_interval=0,
        )

    async def _bounded(self, awaitable: Any) -> Any:
        try:
            async with asyncio.timeout(CALL_TIMEOUT_S):
                return await awaitable
        except (RedisError, OSError, TimeoutError):
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                # A cancellation that arrived with the failure (or the bound) stays one: the
                # caller's owner is waiting for this task to end.
                raise asyncio.CancelledError from None
            raise DirectoryUnavailable from None

    async def ping(self) -> None:
        """Answer within the bound, or raise :class:`DirectoryUnavailable`."""
        await self._bounded(self._client.ping())

    async def write_records(self, records: Iterable[Mapping[str, Any]]) -> None:
        """Write each record (a terminal one with the tombstone TTL) and its principal's set
        entry, in one round trip."""
        pipe = self._client.pipeline(transaction=False)
        count = 0
        for record in records:
            body = {name: record.get(name) for name in RECORD_FIELDS}
            key = f"{KEY_PREFIX}session:{body['sessionId']}"
            text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
            terminal = body["status"] in ("closed", "failed")
            pipe.set(key, text, px=self.tombstone_ms if terminal else None)
            pipe.sadd(f"{KEY_PREFIX}principal:{body['principal']}", str(body["sessionId"]))
            count += 1
        if count:
            await self._bounded(pipe.execute())

    async def renew(self, replica_id: str, lease: Mapping[str, Any]) -> bool:
        """Write (or renew) the replica's lease; whether it was still there (False: it lapsed,
        or Redis lost its data, so the replica's records may be gone too)."""
        text = json.dumps(dict(lease), separators=(",", ":"))
        previous = await self._bounded(
            self._client.set(f"{KEY_PREFIX}replica:{replica_id}", text, px=self.lease_ms, get=True)
        )
        return previous is not None

    async def remove_replica(self, replica_id: str) -> None:
        """Drop the replica's lease (a clean stop)."""
        await self._bounded(self._client.delete(f"{KEY_PREFIX}replica:{replica_id}"))

    async def live_replicas(self) -> set[str]:
        """The ids of the replicas whose lease has not lapsed."""
        prefix = f"{KEY_PREFIX}replica:"
        keys = await self._scan(prefix + "*")
        return {key[len(prefix) :] for key in keys}

    async def leases(self) -> dict[str, dict[str, Any]]:
        """The live replicas' leases by replica id (one scan and one read)."""
        prefix = f"{KEY_PREFIX}replica:"
        keys = await self._scan(prefix + "*")
        found = await self._read(keys)
        return {
            key[len(prefix) :]: lease
            for key, lease in zip(keys, found, strict=True)
            if lease is not None
        }

    async def lease(self, replica_id: str) -> dict[str, Any] | None:
        """One replica's lease, or None once it lapsed."""
        return (await self._read([f"{KEY_PREFIX}replica:{replica_id}"]))[0]

    async def records(self) -> list[dict[str, Any]]:
        """Every session record in the directory (live ones and tombstones)."""
        keys = await self._scan(f"{KEY_PREFIX}session:*")
        return [r for r in await self._read(keys) if r is not None]

    async def record(self, session_id: str) -> dict[str, Any] | None:
        """One session's record, or None."""
        return (await self._read([f"{KEY_PREFIX}session:{session_id}"]))[0]

    async def principal_records(self, principal: str) -> list[dict[str, Any]]:
        """The records of `principal`'s sessions; ids whose record expired leave its set."""
        set_key = f"{KEY_PREFIX}principal:{principal}"
        ids = sorted(await self._bounded(self._client.smembers(set_key)))
        found = await self._read([f"{KEY_PREFIX}session:{sid}" for sid in ids])
        gone = [sid for sid, record in zip(ids, found, strict=True) if record is None]
        if gone:
            await self._bounded(self._client.srem(set_key, *gone))
        return [r for r in found if r is not None]

    async def claim(self, session_id: str) -> bool:
        """Claim the right to rewrite a lost replica's session for one lease (first wins)."""
        won = await self._bounded(
            self._client.set(f"{KEY_PREFIX}reap:{session_id}", "1", nx=True, px=self.lease_ms)
        )
        return bool(won)

    async def view_put(
        self, kind: str, digest: str, principal: str, ttl_ms: int, per_principal: int
    ) -> None:
        """Keep a live-view secret's `digest` for `principal` for `ttl_ms`; past
        `per_principal` of its `kind`, the principal's entries closest to expiry go."""
        index = f"{KEY_PREFIX}viewindex:{kind}:{principal}"
        now = time.time()  # seconds to the microsecond: entries made one after another differ
        pipe = self._client.pipeline(transaction=False)
        pipe.set(f"{KEY_PREFIX}view:{kind}:{digest}", principal, px=ttl_ms)
        pipe.zremrangebyscore(index, "-inf", now)
        pipe.zadd(index, {digest: now + ttl_ms / 1000})
        pipe.pexpire(index, ttl_ms)
        pipe.zcard(index)
        count = (await self._bounded(pipe.execute()))[-1]
        if isinstance(count, int) and count > per_principal:
            dropped = await self._bounded(self._client.zpopmin(index, count - per_principal))
            keys = [f"{KEY_PREFIX}view:{kind}:{member}" for member, _ in dropped]
            if keys:
                await self._bounded(self._client.delete(*keys))

    async def view_get(self, kind: str, digest: str, *, remove: bool) -> str | None:
        """The principal of a live-view secret's `digest`, or None (unknown or expired);
        `remove` uses it up (``GETDEL``: one replica alone gets it)."""
        key = f"{KEY_PREFIX}view:{kind}:{digest}"
        command = self._client.getdel(key) if remove else self._client.get(key)
        value = await self._bounded(command)
        return value if isinstance(value, str) else None

    async def aclose(self) -> None:
        """Close the client's connections (bounded; a dead Redis is simply let go)."""
        with contextlib.suppress(DirectoryUnavailable):
            await self._bounded(self._client.aclose())

    async def _scan(self, pattern: str) -> list[str]:
        keys: list[str] = []
        cursor: int = 0
        while True:
            cursor, batch = await self._bounded(
                self._client.scan(cursor=cursor, match=pattern, count=_SCAN_COUNT)
            )
            keys.extend(batch)
            if not cursor:
                return keys

    async def _read(self, keys: list[str]) -> list[dict[str, Any] | None]:
        if not keys:
            return []
        texts = await self._bounded(self._client.mget(keys))
        out: list[dict[str, Any] | None] = []
        for text in texts:
            try:
                value = json.loads(text) if isinstance(text, str) else None
            except ValueError:
                value = None
            out.append(value if isinstance(value, dict) else None)
        return out
