"""Calls for another replica's session are forwarded to it (issue 37 item 2, reference §37.6):
two replicas served over real HTTP in this process, one real `redis-server`, real Chromium.

A session made through replica A is driven through replica B exactly as through A (the answers
are A's, progress included); B's session list shows it; another principal never reaches it;
the channel refuses a caller without the fleet token; a replica without room places a new
session on the other one (§37.7).
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from browsermesh.mcp.forwarding import FLEET_CALL_PATH
from tests.fixtures.site import FixtureSite
from tests.support.clients import ToolClient
from tests.support.eventually import eventually
from tests.support.http_transport import TOKENS, Running, connect, http_server
from tests.support.redis_server import RedisServer, running_redis

pytestmark = pytest.mark.anyio

FLEET_TOKEN = "fleet-token-" + "0123456789abcdef" * 3


@contextlib.asynccontextmanager
async def two_replicas(
    tmp_path: Path, redis: RedisServer, **overrides: Any
) -> AsyncIterator[tuple[Running, Running]]:
    """Replicas `a` and `b` of one fleet, both with the principals' tokens."""
    common: dict[str, Any] = {
        "fleet_redis": redis.url,
        "fleet_token": FLEET_TOKEN,
        "fleet_lease_ms": 3_000,
        "view": False,
        **overrides,
    }
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
    async with (
        http_server(tmp_path / "a", tokens=True, replica_id="a", **common) as a,
        http_server(tmp_path / "b", tokens=True, replica_id="b", **common) as b,
    ):
        for running in (a, b):
            assert running.runtime.fleet is not None
            running.runtime.fleet.start()

        async def both_leased() -> bool:
            fleet = a.runtime.fleet
            assert fleet is not None and fleet.directory is not None
            leases = await fleet.directory.leases()
            return {"a", "b"} <= set(leases) and all(v.get("endpoint") for v in leases.values())

        await eventually(both_leased, 15, "both replicas hold a lease with an endpoint")
        yield a, b


def _any_generation(answer: dict[str, Any]) -> str:
    """`answer` as JSON with every ref's generation blanked (`s2e1` → `s*e1`)."""
    return re.sub(r"\bs[0-9a-z]+e(\d+)\b", r"s*e\1", json.dumps(answer, sort_keys=True))


async def recorded(running: Running, session_id: str) -> bool:
    """Whether `session_id`'s record is in the directory as ready."""
    fleet = running.runtime.fleet
    assert fleet is not None and fleet.directory is not None
    record = await fleet.directory.record(session_id)
    return record is not None and record["status"] == "ready"


@dataclass
class Pair:
    """Two replicas, alice connected to each, and her session made through `a` (recorded)."""

    a: Running
    b: Running
    via_a: ToolClient
    via_b: ToolClient
    sid: str
    pid: str

    @property
    def addr(self) -> dict[str, str]:
        return {"sessionId": self.sid, "pageId": self.pid}


@contextlib.asynccontextmanager
async def alice_on_both(tmp_path: Path, redis: RedisServer, **session: Any) -> AsyncIterator[Pair]:
    async with (
        two_replicas(tmp_path, redis) as (a, b),
        connect(a.url, "auto", TOKENS["alice"]) as via_a,
        connect(b.url, "auto", TOKENS["alice"]) as via_b,
    ):
        sid, pid = await via_a.session(**session)
        await eventually(lambda: recorded(a, sid), 15, "the record is written")
        yield Pair(a, b, via_a, via_b, sid, pid)


@pytest.fixture
async def redis(tmp_path: Path) -> AsyncIterator[RedisServer]:
    async with running_redis(tmp_path) as server:
        yield server


async def test_a_session_is_driven_through_either_replica(
    tmp_path: Path, redis: RedisServer, site: FixtureSite
) -> None:
    async with (
        two_replicas(tmp_path, redis) as (a, b),
        connect(a.url, "auto", TOKENS["alice"]) as via_a,
        connect(b.url, "auto", TOKENS["alice"]) as via_b,
    ):
        sid, pid = await via_a.session(name="buyer")
        addr = {"sessionId": sid, "pageId": pid}
        await eventually(lambda: recorded(a, sid), 15, "the record is written")
        await via_b.ok("browser_navigate", {**addr, "url": site.url("/form")})
        assert sid in a.runtime.core.sessions_snapshot()
        assert sid not in b.runtime.core.sessions_snapshot()
        through_a = await via_a.ok("browser_get_url", addr)
        through_b = await via_b.ok("browser_get_url", addr)
        assert through_b["url"] == through_a["url"] == site.url("/form")
        snap_a = await via_a.ok("browser_snapshot", {**addr, "format": "actions"})
        snap_b = await via_b.ok("browser_snapshot", {**addr, "format": "actions"})
        assert snap_a.pop("operationId") != snap_b.pop("operationId")
        # The same table either way; only the refs' generation may differ (a capture may start
        # a new one, reference §5.5: `s2e1` then `s3e1`).
        assert _any_generation(snap_b) == _any_generation(snap_a) and snap_a
        # An error of the owner comes back as it is.
        missing = await via_b.err("browser_page_close", {"sessionId": sid, "pageId": "p-nope"})
        assert missing["code"] == "PAGE_NOT_FOUND"
        # The list of either replica shows the caller's sessions of both.
        own_sid, _ = await via_b.session(name="admin")
        listed_a = await via_a.ok("browser_session_list")
        listed_b = await via_b.ok("browser_session_list")
        assert {s["sessionId"] for s in listed_a["sessions"]} == {sid, own_sid}
        info = (await via_b.ok("browser_runtime_info"))["fleet"]
        assert info["replicaId"] == "b" and info["forwarding"] is True
        assert {s["sessionId"] for s in listed_b["sessions"]} == {sid, own_sid}
        names = {s["sessionId"]: s.get("name") for s in listed_b["sessions"]}
        assert names == {sid: "buyer", own_sid: "admin"}
        # A fork is made where its source lives.
        fork = await via_b.ok("browser_session_create", {"fromSessionId": sid})
        assert fork["session"]["sessionId"] in a.runtime.core.sessions_snapshot()
        # Closing through B closes A's session; the next call says so.
        await via_b.ok("browser_session_close", {"sessionId": sid})
        closed = await via_b.err("browser_get_url", addr)
        assert closed["code"] == "SESSION_CLOSED"


async def test_progress_of_a_forwarded_call_reaches_the_caller(
    tmp_path: Path, redis: RedisServer
) -> None:
    async with alice_on_both(tmp_path, redis) as pair:
        seen: list[str | None] = []

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            seen.append(message)

        condition = {"kind": "text", "text": "Saved", "state": "present"}
        args = {**pair.addr, "condition": condition, "timeoutMs": 1600}
        error = await pair.via_b.err("browser_wait", args, progress_callback=on_progress)
        assert error["code"] == "OPERATION_TIMEOUT"
        pattern = re.compile(r"waiting for text 'Saved' \(\d+(\.\d)? s of 1(\.\d)? s\)")
        assert seen and all(m is not None and pattern.fullmatch(m) for m in seen), seen


async def test_principals_stay_apart_across_replicas(tmp_path: Path, redis: RedisServer) -> None:
    async with (
        two_replicas(tmp_path, redis) as (a, b),
        connect(a.url, "auto", TOKENS["alice"]) as alice,
        connect(b.url, "auto", TOKENS["bob"]) as bob,
    ):
        sid, pid = await alice.session(name="private")
        await eventually(lambda: recorded(a, sid), 15, "the record is written")
        theirs = await bob.err("browser_get_url", {"sessionId": sid, "pageId": pid})
        unknown = await bob.err("browser_get_url", {"sessionId": "s-unknown", "pageId": pid})
        assert theirs == unknown and theirs["code"] == "SESSION_NOT_FOUND"
        assert (await bob.ok("browser_session_list"))["sessions"] == []
        closing = await bob.err("browser_session_close", {"sessionId": sid})
        assert closing["code"] == "SESSION_NOT_FOUND"
        assert a.runtime.core.sessions_snapshot()[sid].status == "ready"


async def test_the_channel_takes_only_the_fleet_token(tmp_path: Path, redis: RedisServer) -> None:
    async with two_replicas(tmp_path, redis) as (a, _b):
        url = a.service.base + FLEET_CALL_PATH
        body = {"tool": "browser_session_list", "arguments": {}, "principal": "alice"}
        body |= {"budgetMs": 5_000, "progress": False}
        async with httpx2.AsyncClient(timeout=10) as http:
            nothing = await http.post(url, json=body)
            wrong = await http.post(url, json=body, headers={"authorization": "Bearer x" * 40})
            mcp_token = {"authorization": f"Bearer {TOKENS['alice']}"}
            user = await http.post(url, json=body, headers=mcp_token)
            right = {"authorization": f"Bearer {FLEET_TOKEN}"}
            bad = await http.post(url, content=b"{}", headers=right)
            taken = await http.post(url, json=body, headers=right)
        assert [r.status_code for r in (nothing, wrong, user)] == [401, 401, 401]
        assert bad.status_code == 400
        assert taken.status_code == 200
        lines = [json.loads(line) for line in taken.text.splitlines()]
        assert lines[-1]["result"]["structuredContent"]["sessions"] == []
        refused = [r for r in a.records if r.get("type") == "fleet.refused"]
        assert len(refused) == 3 and all(FLEET_TOKEN not in json.dumps(r) for r in a.records)


async def test_a_full_replica_places_new_sessions_on_another(
    tmp_path: Path, redis: RedisServer
) -> None:
    async with (
        two_replicas(tmp_path, redis, max_sessions=1) as (a, b),
        connect(a.url, "auto", TOKENS["alice"]) as via_a,
    ):
        first, _ = await via_a.session()
        fleet = a.runtime.fleet
        assert fleet is not None

        async def a_counts_one() -> bool:
            assert fleet.directory is not None
            return (await fleet.directory.leases())["a"]["sessions"] == 1

        await eventually(a_counts_one, 15, "replica a's lease counts its session")
        second, page = await via_a.session()
        assert first in a.runtime.core.sessions_snapshot()
        assert second in b.runtime.core.sessions_snapshot()
        await via_a.ok("browser_get_url", {"sessionId": second, "pageId": page})
        # Both full: the answer is this replica's own LIMIT_EXCEEDED.
        await eventually(lambda: recorded(b, second), 15, "the placed session is recorded")
        full = await via_a.err("browser_session_create")
        assert full["code"] == "LIMIT_EXCEEDED"


async def test_the_doctor_checks_the_fleet_token_with_the_live_replicas(
    tmp_path: Path, redis: RedisServer
) -> None:
    from browsermesh.config import default_config
    from browsermesh.doctor.fleet import check_fleet_token
    from browsermesh.model.deadline import Deadline

    async with two_replicas(tmp_path, redis) as (a, _b):
        settings = {"fleet_redis": redis.url, "replica_id": "doctor", "data_dir": tmp_path}
        right = await check_fleet_token(
            default_config(fleet_token=FLEET_TOKEN, **settings), Deadline(10_000)
        )
        assert (right.status, right.code) == ("passed", "FLEET_TOKEN_ACCEPTED")
        wrong_token = "w" * 48
        wrong = await check_fleet_token(
            default_config(fleet_token=wrong_token, **settings), Deadline(10_000)
        )
        assert (wrong.status, wrong.code) == ("failed", "FLEET_TOKEN_REFUSED")
        assert wrong.message.startswith("2 other replica(s)")
        assert wrong_token not in json.dumps(wrong.to_json())
        none = await check_fleet_token(default_config(**settings), Deadline(10_000))
        assert (none.status, none.code) == ("passed", "FLEET_TOKEN_MISSING")
        # Asking ran nothing: no call reached a replica's tools.
        assert not [r for r in a.records if r.get("type") == "operation.started"]


async def test_the_session_resources_span_the_fleet(
    tmp_path: Path, redis: RedisServer, site: FixtureSite
) -> None:
    async with (
        two_replicas(tmp_path, redis) as (a, b),
        connect(a.url, "auto", TOKENS["alice"]) as via_a,
        connect(b.url, "auto", TOKENS["alice"]) as via_b,
        connect(b.url, "auto", TOKENS["bob"]) as bob,
    ):
        sid, pid = await via_a.session(name="buyer")
        await via_a.ok("browser_navigate", {"sessionId": sid, "pageId": pid, "url": site.url("/")})
        await eventually(lambda: recorded(a, sid), 15, "the record is written")
        uri = f"browsermesh://sessions/{sid}"
        listed = await via_b.client.list_resources()
        assert uri in [str(r.uri) for r in listed.resources]
        here = json.loads((await via_a.client.read_resource(uri)).contents[0].text)
        there = json.loads((await via_b.client.read_resource(uri)).contents[0].text)
        assert there["pages"] == here["pages"] and there["pages"][0]["url"] == site.url("/")
        assert there["session"]["sessionId"] == sid
        every = json.loads(
            (await via_b.client.read_resource("browsermesh://sessions")).contents[0].text
        )
        assert [s["sessionId"] for s in every["sessions"]] == [sid]
        assert uri not in [str(r.uri) for r in (await bob.client.list_resources()).resources]
        with pytest.raises(Exception, match="Resource not found"):
            await bob.client.read_resource(uri)


async def test_an_owner_that_does_not_answer_is_named_with_a_careful_next_step(
    tmp_path: Path, redis: RedisServer
) -> None:
    from tests.support.ports import closed_port

    async with alice_on_both(tmp_path, redis) as pair:
        fleet = pair.a.runtime.fleet
        assert fleet is not None and fleet.directory is not None
        dead = f"http://127.0.0.1:{closed_port()}"
        fleet.endpoint = dead  # A's lease now names an address nobody answers at

        async def leased_dead() -> bool:
            assert fleet.directory is not None
            return (await fleet.directory.leases())["a"].get("endpoint") == dead

        await eventually(leased_dead, 15, "the lease names the dead address")
        error = await pair.via_b.err("browser_get_url", pair.addr)
        assert error["code"] == "SESSION_NOT_READY"
        assert error["details"] == {"reason": "owner_unreachable"}
        assert "may or may not have run" in error["nextStep"]
        assert "browser_snapshot" in error["nextStep"]


async def test_a_forwarded_call_the_caller_abandons_ends_on_the_owner(
    tmp_path: Path, redis: RedisServer
) -> None:
    async with alice_on_both(tmp_path, redis) as pair:
        never = {"kind": "text", "text": "never-appears-51c0", "state": "present"}
        args = {**pair.addr, "condition": never, "timeoutMs": 60_000}

        def on_a(kind: str) -> list[dict[str, Any]]:
            records = pair.a.records
            return [r for r in records if r.get("type") == kind and r.get("tool") == "browser_wait"]

        async with anyio.create_task_group() as group:
            group.start_soon(pair.via_b.raw, "browser_wait", args)
            await eventually(lambda: on_a("operation.started"), 15, "the wait runs on A")
            group.cancel_scope.cancel()  # the caller gives up: its request closes
        ended = await eventually(lambda: on_a("operation.failed"), 15, "the wait ends on A")
        assert ended[0]["code"] == "OPERATION_CANCELLED"
        await pair.via_a.ok("browser_get_url", pair.addr)  # the session goes on
