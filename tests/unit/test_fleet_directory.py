"""The fleet's session directory (issue 37 item 1, reference §37) on the fake engine and a real
`redis-server` (tests/support/redis_server.py): records through a session's life, tombstones,
the shutdown, a lost replica, a Redis outage, and no password in logs or runtime_info."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis

from browsermesh.config import default_config
from browsermesh.log import EventLog
from browsermesh.persistence.fleet_directory import RECORD_FIELDS, FleetDirectory
from browsermesh.runtime.runtime import Runtime
from tests.fakes import FakeEngine, Gate
from tests.support.eventually import eventually
from tests.support.redis_server import RedisServer, running_redis

pytestmark = pytest.mark.anyio

LEASE_MS = 3_000


@pytest.fixture
async def redis_server(tmp_path: Path) -> AsyncIterator[RedisServer]:
    async with running_redis(tmp_path) as server:
        yield server


@pytest.fixture
async def peek(redis_server: RedisServer) -> AsyncIterator[aioredis.Redis]:
    """A plain client on the test's Redis, to read what the replicas wrote."""
    client = aioredis.Redis.from_url(redis_server.url, decode_responses=True)
    yield client
    await client.aclose()


def fleet_runtime(
    tmp_path: Path, url: str, replica: str, log: EventLog | None = None, **overrides: Any
) -> Runtime:
    config = default_config(
        data_dir=tmp_path / replica,
        timeout_ms=2_000,
        fleet_redis=url,
        replica_id=replica,
        fleet_lease_ms=LEASE_MS,
        **overrides,
    )
    runtime = Runtime(config, FakeEngine(), log or EventLog("silent"))
    runtime.start()
    return runtime


async def record_of(client: aioredis.Redis, session_id: str) -> dict[str, Any] | None:
    text = await client.get(f"bm:session:{session_id}")
    return None if text is None else dict(json.loads(text))


async def status_becomes(
    client: aioredis.Redis, session_id: str, status: str, within: float = 10.0
) -> dict[str, Any]:
    async def check() -> dict[str, Any] | None:
        record = await record_of(client, session_id)
        return record if record is not None and record["status"] == status else None

    return await eventually(check, within, f"{session_id} {status}")


async def test_records_follow_a_sessions_life(
    tmp_path: Path, redis_server: RedisServer, peek: aioredis.Redis
) -> None:
    runtime = fleet_runtime(tmp_path, redis_server.url, "replica-a")
    engine = runtime.engine
    assert isinstance(engine, FakeEngine)
    try:
        engine.gate = Gate("new_context")
        creating = runtime.core.tasks.spawn(
            runtime.create_session(name="buyer", metadata={"role": "buyer"})
        )
        await engine.gate.arrivals(1)
        sid = next(iter(runtime.sessions_snapshot()))
        first = await status_becomes(peek, sid, "creating")
        engine.gate.open()
        _, view, _ = await creating
        ready = await status_becomes(peek, sid, "ready")
        assert set(ready) == set(RECORD_FIELDS)
        assert ready["sessionId"] == sid == view["sessionId"]
        assert ready["principal"] == "local" and ready["name"] == "buyer"
        assert ready["metadata"] == {"role": "buyer"} and ready["replica"] == "replica-a"
        assert ready["createdAt"] == view["createdAt"] == first["createdAt"]
        assert ready["gridBrowser"] is None and ready["reason"] is None
        assert await peek.pttl(f"bm:session:{sid}") == -1  # a live record does not expire
        assert await peek.smembers("bm:principal:local") == {sid}
        lease = json.loads(await peek.get("bm:replica:replica-a"))
        assert lease["replicaId"] == "replica-a" and lease["sessions"] == 1
        assert lease["maxSessions"] == runtime.config.max_sessions and lease["startedAt"]
        assert 0 < await peek.pttl("bm:replica:replica-a") <= LEASE_MS

        await runtime.close_session("local", sid)
        closed = await status_becomes(peek, sid, "closed")
        assert closed["reason"] is None
        assert 0 < await peek.pttl(f"bm:session:{sid}") <= 3_600_000  # a tombstone
        info = runtime.info()
        expected = {"replicaId": "replica-a", "directory": "connected", "forwarding": False}
        assert info["fleet"] == {**expected, "replicas": 1}
    finally:
        await runtime.shutdown()
    assert all(key.startswith("bm:") for key in await peek.keys("*"))


async def test_runtime_info_is_lean_without_a_fleet(tmp_path: Path) -> None:
    runtime = Runtime(default_config(data_dir=tmp_path), FakeEngine())
    try:
        assert "fleet" not in runtime.info()
        assert runtime.fleet is None
        assert not any(type(w).__name__ == "FleetMember" for w in runtime.watchers)
    finally:
        await runtime.shutdown()


async def test_shutdown_tombstones_every_session_and_drops_the_lease(
    tmp_path: Path, redis_server: RedisServer, peek: aioredis.Redis
) -> None:
    runtime = fleet_runtime(tmp_path, redis_server.url, "replica-a")
    _, first, _ = await runtime.create_session(name="one")
    _, second, _ = await runtime.create_session(name="two")
    for view in (first, second):
        await status_becomes(peek, view["sessionId"], "ready")
    await runtime.shutdown()
    for view in (first, second):
        record = await record_of(peek, view["sessionId"])
        assert record is not None
        assert (record["status"], record["reason"]) == ("closed", "replica_stopped")
        assert 0 < await peek.pttl(f"bm:session:{view['sessionId']}") <= 3_600_000
    assert await peek.exists("bm:replica:replica-a") == 0


async def test_a_lost_replicas_sessions_are_marked_failed_by_another(
    tmp_path: Path, redis_server: RedisServer, peek: aioredis.Redis
) -> None:
    """Replica A stops renewing without its shutdown (as if killed): once its lease lapses,
    replica B or C marks A's live sessions failed, reason replica_lost (one of them: each claims
    first); B's own stay ready."""
    log = EventLog("silent")
    records: list[dict[str, Any]] = []
    log.sinks.append(records.append)
    a = fleet_runtime(tmp_path, redis_server.url, "replica-a")
    b = fleet_runtime(tmp_path, redis_server.url, "replica-b", log)
    c = fleet_runtime(tmp_path, redis_server.url, "replica-c", log)
    try:
        _, lost, _ = await a.create_session(name="on-a")
        _, kept, _ = await b.create_session(name="on-b")
        await status_becomes(peek, lost["sessionId"], "ready")
        await status_becomes(peek, kept["sessionId"], "ready")
        assert a.fleet is not None
        await a.fleet.halt()
        failed = await status_becomes(peek, lost["sessionId"], "failed", within=LEASE_MS / 1000 * 4)
        assert failed["reason"] == "replica_lost" and failed["replica"] == "replica-a"
        assert await peek.exists("bm:replica:replica-a") == 0
        assert (await record_of(peek, kept["sessionId"]) or {}).get("status") == "ready"
        assert await eventually(lambda: b.info()["fleet"].get("replicas") == 2, 5)
    finally:
        await a.shutdown()  # writes nothing more: a halted member is done
        await b.shutdown()
        await c.shutdown()
    lost_logs = [r for r in records if r["type"] == "fleet.session_lost"]
    assert [(r["sessionId"], r["reason"]) for r in lost_logs] == [
        (lost["sessionId"], "replica_lost")
    ]
    record = await record_of(peek, lost["sessionId"])
    assert record is not None and record["reason"] == "replica_lost"


async def test_a_redis_outage_never_stops_the_runtime_and_ends_in_written_records(
    tmp_path: Path, redis_server: RedisServer, peek: aioredis.Redis
) -> None:
    log = EventLog("silent")
    records: list[dict[str, Any]] = []
    log.sinks.append(records.append)
    runtime = fleet_runtime(tmp_path, redis_server.url, "replica-a", log)
    try:
        _, before, _ = await runtime.create_session(name="before")
        await status_becomes(peek, before["sessionId"], "ready")
        redis_server.stop()
        # The calls go on while the directory is away.
        _, during, _ = await runtime.create_session(name="during")
        await runtime.create_page("local", during["sessionId"])
        await runtime.close_session("local", before["sessionId"])
        await eventually(
            lambda: any(r["type"] == "fleet.redis_unreachable" for r in records), 10, "warned"
        )
        assert runtime.info()["fleet"]["directory"] == "unreachable"
        await redis_server.start()  # empty: nothing was saved
        await status_becomes(peek, during["sessionId"], "ready")
        await status_becomes(peek, before["sessionId"], "closed")
        await eventually(lambda: any(r["type"] == "fleet.redis_back" for r in records), 10)
        assert runtime.info()["fleet"]["directory"] == "connected"
        assert await peek.exists("bm:replica:replica-a") == 1
    finally:
        await runtime.shutdown()
    warned = [r for r in records if r["type"] == "fleet.redis_unreachable"]
    assert len(warned) == 1 and warned[0]["level"] == "warn"
    assert warned[0]["endpoint"] == f"redis://127.0.0.1:{redis_server.port}/0"


async def test_the_password_never_shows_in_logs_or_runtime_info(tmp_path: Path) -> None:
    password = "canary-pw-5d1e"
    log = EventLog("silent")
    records: list[dict[str, Any]] = []
    log.sinks.append(records.append)
    async with running_redis(tmp_path, password=password) as server:
        runtime = fleet_runtime(tmp_path, server.url, "replica-a", log)
        client = aioredis.Redis.from_url(server.url, decode_responses=True)
        try:
            _, view, _ = await runtime.create_session()
            await status_becomes(client, view["sessionId"], "ready")  # AUTH worked
            server.stop()
            await eventually(
                lambda: any(r["type"] == "fleet.redis_unreachable" for r in records), 10
            )
            shown = json.dumps(runtime.info())
            await server.start()
            await eventually(lambda: any(r["type"] == "fleet.redis_back" for r in records), 10)
        finally:
            await runtime.shutdown()
            await client.aclose()
    assert password not in shown
    assert records and not any(password in json.dumps(r) for r in records)
    assert password not in repr(runtime.config)


async def test_the_doctor_pings_the_directory_only_when_configured(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    from browsermesh.doctor.catalogue import CHECK_IDS, CHECKS
    from browsermesh.doctor.fleet import check_fleet_redis
    from browsermesh.model.deadline import Deadline
    from tests.support.ports import closed_port

    entry = next(check for check in CHECKS if check.id == "fleet-redis")
    assert "fleet-redis" not in CHECK_IDS and entry.applies is not None
    assert not entry.applies(default_config(data_dir=tmp_path))
    good = default_config(data_dir=tmp_path, fleet_redis=redis_server.url)
    assert entry.applies(good)
    result = await check_fleet_redis(good, Deadline(5_000))
    assert (result.status, result.code) == ("passed", "FLEET_REDIS_REACHABLE")
    dead = f"redis://:pw-canary-5d1e@127.0.0.1:{closed_port()}/0"
    result = await check_fleet_redis(default_config(fleet_redis=dead), Deadline(5_000))
    assert (result.status, result.code) == ("failed", "FLEET_REDIS_UNREACHABLE")
    assert "pw-canary-5d1e" not in json.dumps(result.to_json())


async def test_a_shutdown_with_redis_down_ends_within_its_bound(
    tmp_path: Path, redis_server: RedisServer, peek: aioredis.Redis
) -> None:
    runtime = fleet_runtime(tmp_path, redis_server.url, "replica-a")
    _, view, _ = await runtime.create_session()
    await status_becomes(peek, view["sessionId"], "ready")
    redis_server.stop()
    started = time.monotonic()
    await runtime.shutdown()
    assert time.monotonic() - started < 8  # the stop's 3 s bound, a 2 s call bound, slack
    assert not runtime.tasks.pending


async def test_an_expired_tombstone_leaves_its_principals_set_when_read(
    redis_server: RedisServer, peek: aioredis.Redis
) -> None:
    directory = FleetDirectory(redis_server.url, lease_ms=LEASE_MS, tombstone_ms=100)
    try:
        live = {"sessionId": "s1", "principal": "ann", "status": "ready", "replica": "r"}
        gone = {**live, "sessionId": "s2", "status": "closed"}
        await directory.write_records([live, gone])
        assert await peek.smembers("bm:principal:ann") == {"s1", "s2"}

        async def expired() -> bool:
            return await peek.exists("bm:session:s2") == 0

        await eventually(expired, 5, "the tombstone expired")
        found = await directory.principal_records("ann")
        assert [r["sessionId"] for r in found] == ["s1"]
        assert set(found[0]) == set(RECORD_FIELDS) and found[0]["name"] is None
        assert await peek.smembers("bm:principal:ann") == {"s1"}
    finally:
        await directory.aclose()


async def test_a_call_for_a_session_another_replica_held_says_why_it_is_gone(
    tmp_path: Path, redis_server: RedisServer, peek: aioredis.Redis
) -> None:
    """Reference §37.5: a call landing on replica B for a session replica A held answers from
    the directory — SESSION_CLOSED (replica_stopped) once A stopped, BROWSER_DISCONNECTED
    (replica_lost) once A was lost — and SESSION_NOT_FOUND for what the caller may not know."""
    from tests.support.clients import tool_client

    a = fleet_runtime(tmp_path, redis_server.url, "replica-a")
    lost_side = fleet_runtime(tmp_path, redis_server.url, "replica-l")
    b = fleet_runtime(tmp_path, redis_server.url, "replica-b")
    try:
        _, stopped, _ = await a.create_session(name="stops")
        _, theirs, _ = await a.create_session("alice", name="alices")
        _, lost, _ = await lost_side.create_session(name="lost")
        for view in (stopped, theirs, lost):
            await status_becomes(peek, view["sessionId"], "ready")
        async with tool_client(b) as c:

            async def answer(session_id: str) -> dict[str, Any]:
                return await c.err("browser_get_url", {"sessionId": session_id, "pageId": "p1"})

            live = await answer(stopped["sessionId"])  # live on A: not B's to answer (yet)
            assert live["code"] == "SESSION_NOT_FOUND"
            await a.shutdown()
            await status_becomes(peek, stopped["sessionId"], "closed")
            closed = await answer(stopped["sessionId"])
            assert closed["code"] == "SESSION_CLOSED"
            assert closed["details"] == {"reason": "replica_stopped"}
            assert "browser_session_create" in closed["nextStep"]
            assert (await answer(theirs["sessionId"]))["code"] == "SESSION_NOT_FOUND"
            assert lost_side.fleet is not None
            await lost_side.fleet.halt()
            await status_becomes(peek, lost["sessionId"], "failed", within=LEASE_MS / 1000 * 4)
            gone = await answer(lost["sessionId"])
            assert gone["code"] == "BROWSER_DISCONNECTED"
            assert gone["details"] == {"reason": "replica_lost"}
            assert (await answer("s-never-made"))["code"] == "SESSION_NOT_FOUND"
            redis_server.stop()  # no directory: where the session is cannot be told now
            unsure = await answer(stopped["sessionId"])
            assert unsure["code"] == "SESSION_NOT_READY"
            assert unsure["details"] == {"reason": "directory_unreachable"}
            assert "retry" in unsure["nextStep"]
    finally:
        await a.shutdown()
        await lost_side.shutdown()
        await b.shutdown()
