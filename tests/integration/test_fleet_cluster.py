"""A fleet of real processes on loopback (issue 37): three `browsermesh --transport http`
replicas, a real `redis-server` and a plain round-robin balancer (no stickiness) in front, real
Chromium, the real MCP SDK client on the sessionless 2026-07-28 protocol.

- The buyer/seller flow with every call landing on the next replica completes and answers
  exactly what it answers through one replica; the sessions were made on different replicas.
- Two principals through the balancer never see each other's sessions.
- SIGTERM one replica mid-flow: a call running on it and the next calls for its session answer
  `SESSION_CLOSED` (`replica_stopped`); the other sessions go on.
- SIGKILL one replica: its session answers `BROWSER_DISCONNECTED` (`replica_lost`) and its
  record is `failed` within the lease; the others go on.
- Redis restarted mid-run: calls for a session on the replica that got them keep working, a
  call that needs the directory answers `SESSION_NOT_READY` (`directory_unreachable`) and works
  again once Redis is back.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import anyio
import pytest
import redis.asyncio as aioredis

from tests.fixtures.site import FixtureSite
from tests.support.clients import ToolClient, whoami
from tests.support.eventually import eventually
from tests.support.fleet_cluster import FleetCluster, Replica, running_cluster
from tests.support.fleet_records import owner_of as _owner_of
from tests.support.fleet_records import session_record as _record
from tests.support.http_transport import TOKENS, connect
from tests.support.locators import by_test_id, label, role
from tests.support.redis_server import dump

pytestmark = [pytest.mark.anyio, pytest.mark.long]

LEASE_MS = 3_000
CANARY = "fleet-cluster-canary-62d9"
_REF = re.compile(r"\[[a-z0-9]+\]")
_TIME = re.compile(r"\d{4}-\d\d-\d\dT[0-9:.]+Z")


def normal(value: Any, ids: dict[str, str]) -> Any:
    """`value` with what differs between two equal runs made equal: the sessions' and pages'
    ids (by role), element refs, times."""
    text = json.dumps(value, sort_keys=True)
    for real, shown in ids.items():
        text = text.replace(real, shown)
    return json.loads(_TIME.sub("<time>", _REF.sub("[ref]", text)))


async def buyer_and_seller(c: ToolClient, site: FixtureSite) -> list[Any]:
    """The product's two-role flow, as a model writes it; every answer, normalised."""
    answers: list[Any] = []

    async def ok(tool: str, args: dict[str, Any]) -> dict[str, Any]:
        data = await c.ok(tool, args)
        answers.append({k: v for k, v in data.items() if k != "operationId"})
        return data

    buyer = await ok("browser_session_create", {"name": "buyer"})
    seller = await ok("browser_session_create", {"name": "seller"})
    b = {"sessionId": buyer["session"]["sessionId"], "pageId": buyer["initialPage"]["pageId"]}
    s = {"sessionId": seller["session"]["sessionId"], "pageId": seller["initialPage"]["pageId"]}
    await ok("browser_navigate", {**b, "url": site.url("/buyer")})
    await ok("browser_fill", {**b, "locator": label("Item"), "value": "Blue teapot"})
    await ok("browser_click", {**b, "locator": role("button", "Create order")})
    await ok("browser_visible_text", {**b, "locator": by_test_id("order-created")})
    await ok("browser_navigate", {**s, "url": site.url("/seller")})
    await ok("browser_snapshot", {**s, "format": "actions"})
    await ok("browser_click", {**s, "locator": role("button", "Approve")})
    await ok("browser_navigate", {**b, "url": site.url("/buyer-status")})
    status = await ok("browser_visible_text", {**b, "locator": by_test_id("buyer-status")})
    assert "approved" in json.dumps(status)
    listed = await c.ok("browser_session_list")
    live = {v["sessionId"] for v in listed["sessions"] if v["status"] == "ready"}
    assert live == {b["sessionId"], s["sessionId"]}
    await ok("browser_session_close", {"sessionId": b["sessionId"]})
    await ok("browser_session_close", {"sessionId": s["sessionId"]})
    ids = {b["sessionId"]: "<buyer>", s["sessionId"]: "<seller>"}
    ids |= {b["pageId"]: "<buyer-page>", s["pageId"]: "<seller-page>"}
    return [normal(answer, ids) for answer in answers]


def created(cluster: FleetCluster) -> dict[str, int]:
    """How many sessions each replica has made (its `session.created` log records)."""
    return {
        r.replica_id: sum(1 for rec in r.records() if rec.get("type") == "session.created")
        for r in cluster.replicas
    }


async def test_a_flow_through_three_replicas_answers_as_through_one(
    tmp_path: Path, site: FixtureSite
) -> None:
    async with running_cluster(tmp_path, replicas=3, lease_ms=LEASE_MS) as cluster:
        async with connect(cluster.replicas[0].url, "auto", TOKENS["alice"]) as one:
            alone = await buyer_and_seller(one, site)
        site.reset()
        before, made_before = dict(cluster.balancer.hits), created(cluster)
        async with connect(cluster.url, "auto", TOKENS["alice"]) as spread:
            fleet = await buyer_and_seller(spread, site)
        assert fleet == alone
        hits = {k: v - before.get(k, 0) for k, v in cluster.balancer.hits.items()}
        assert len([n for n in hits.values() if n > 0]) == 3, hits
        # The two sessions of the round-robin run were made on two different replicas, so
        # most calls crossed replicas (forwarded over the channel).
        made = {k: v - made_before[k] for k, v in created(cluster).items()}
        assert sorted(made.values()) == [0, 1, 1], made


async def test_principals_stay_apart_through_the_balancer(
    tmp_path: Path, site: FixtureSite
) -> None:
    async with (
        running_cluster(tmp_path, replicas=3, lease_ms=LEASE_MS) as cluster,
        connect(cluster.url, "auto", TOKENS["alice"]) as alice,
        connect(cluster.url, "auto", TOKENS["bob"]) as bob,
    ):
        sid, pid = await alice.session(name="alices")
        other, _ = await bob.session(name="bobs")
        addr = {"sessionId": sid, "pageId": pid}
        for _ in range(3):  # each lands on the next replica
            assert (await bob.err("browser_get_url", addr))["code"] == "SESSION_NOT_FOUND"
            listed = (await bob.ok("browser_session_list"))["sessions"]
            assert [v["sessionId"] for v in listed] == [other]
            await alice.ok("browser_get_url", addr)
        # A password filled through the fleet (forwarded as an argument) reaches neither the
        # directory nor any replica's log; nor do the fleet's and the principals' tokens.
        await alice.ok("browser_navigate", {**addr, "url": site.url("/password")})
        for _ in range(3):
            await alice.ok("browser_fill", {**addr, "locator": label("Password"), "value": CANARY})
        client = aioredis.Redis.from_url(cluster.redis.url, decode_responses=True)
        try:
            stored = json.dumps(await dump(client))
        finally:
            await client.aclose()
        logs = json.dumps([r.records() for r in cluster.replicas])
        for secret in (CANARY, cluster.fleet_token, *TOKENS.values()):
            assert secret not in stored and secret not in logs


async def _status(cluster: FleetCluster, session_id: str) -> tuple[str, str | None]:
    record = await _record(cluster, session_id)
    return record.get("status", ""), record.get("reason")


async def _one_on_each(
    cluster: FleetCluster, c: ToolClient
) -> tuple[list[tuple[str, str]], Replica]:
    """Three sessions made through the balancer (round robin puts one on each replica) and
    the replica that holds the first."""
    made = [await c.session() for _ in range(3)]
    owners = {sid: await _owner_of(cluster, sid) for sid, _ in made}
    assert len(set(owners.values())) == 3, owners
    return made, cluster.replica(owners[made[0][0]])


async def test_sigterm_closes_only_that_replicas_sessions(
    tmp_path: Path, site: FixtureSite
) -> None:
    async with (
        running_cluster(tmp_path, replicas=3, lease_ms=LEASE_MS) as cluster,
        connect(cluster.url, "auto", TOKENS["alice"]) as c,
    ):
        made, victim = await _one_on_each(cluster, c)
        victim_sid, victim_pid = made[0]
        never = {"kind": "text", "text": "never-appears-3c1d", "state": "present"}
        waiting: dict[str, Any] = {}

        async def long_wait() -> None:
            args = {"sessionId": victim_sid, "pageId": victim_pid, "condition": never}
            waiting["answer"] = await c.err("browser_wait", {**args, "timeoutMs": 60_000})

        async with anyio.create_task_group() as group:
            group.start_soon(long_wait)
            await eventually(
                lambda: any(
                    r.get("type") == "operation.started" and r.get("tool") == "browser_wait"
                    for r in victim.records()
                ),
                30,
                "the wait runs on its replica",
            )
            assert await victim.sigterm() == 0
        assert waiting["answer"]["code"] == "SESSION_CLOSED"
        assert waiting["answer"]["details"] == {"reason": "replica_stopped"}
        assert await _status(cluster, victim_sid) == ("closed", "replica_stopped")
        for _ in range(2):
            after = await c.err("browser_get_url", {"sessionId": victim_sid, "pageId": victim_pid})
            assert (
                after["code"] == "SESSION_CLOSED"
                and after["details"]["reason"] == "replica_stopped"
            )
            assert "browser_session_create" in after["nextStep"]
        for sid, pid in made[1:]:
            await c.ok("browser_navigate", {"sessionId": sid, "pageId": pid, "url": site.url("/")})
        await c.session()  # new sessions go to the replicas still running


async def test_sigkill_loses_that_replicas_sessions_within_the_lease(
    tmp_path: Path, site: FixtureSite
) -> None:
    async with (
        running_cluster(tmp_path, replicas=3, lease_ms=LEASE_MS) as cluster,
        connect(cluster.url, "auto", TOKENS["alice"]) as c,
    ):
        made, victim = await _one_on_each(cluster, c)
        victim_sid, victim_pid = made[0]
        await victim.sigkill()
        killed_at = anyio.current_time()

        async def lost() -> bool:
            return await _status(cluster, victim_sid) == ("failed", "replica_lost")

        await eventually(lost, LEASE_MS / 1000 * 3, "the session is marked lost")
        # Within the lease plus a reaper's round (a third of it), with room for a loaded machine.
        assert anyio.current_time() - killed_at < LEASE_MS / 1000 * 3
        gone = await c.err("browser_get_url", {"sessionId": victim_sid, "pageId": victim_pid})
        assert gone["code"] == "BROWSER_DISCONNECTED" and gone["details"] == {
            "reason": "replica_lost"
        }
        listed = {v["sessionId"]: v for v in (await c.ok("browser_session_list"))["sessions"]}
        assert listed[victim_sid]["status"] == "failed"
        for sid, pid in made[1:]:
            await c.ok("browser_navigate", {"sessionId": sid, "pageId": pid, "url": site.url("/")})


async def test_a_redis_restart_stops_only_what_needs_the_directory(
    tmp_path: Path, site: FixtureSite
) -> None:
    async with running_cluster(tmp_path, replicas=3, lease_ms=LEASE_MS) as cluster:
        first, second = cluster.replicas[0], cluster.replicas[1]
        async with (
            connect(first.url, "auto", TOKENS["alice"]) as on_first,
            connect(second.url, "auto", TOKENS["alice"]) as on_second,
        ):
            sid, pid = await on_first.session()
            addr = {"sessionId": sid, "pageId": pid}
            await _owner_of(cluster, sid)
            cluster.redis.stop()
            # Its own replica serves it without the directory.
            await on_first.ok("browser_navigate", {**addr, "url": site.url("/")})
            unsure = await on_second.err("browser_get_url", addr)
            assert unsure["code"] == "SESSION_NOT_READY"
            assert unsure["details"] == {"reason": "directory_unreachable"}
            await cluster.redis.start()  # empty: the replicas write their records again

            async def answers() -> bool:
                result = await on_second.raw("browser_get_url", addr)
                return not result.is_error

            await eventually(answers, 30, "the other replica reaches the session again")
            assert (await on_second.ok("browser_get_url", addr))["url"] == site.url("/")


async def test_a_grid_session_of_a_killed_replica_fails_replica_lost(
    tmp_path: Path, site: FixtureSite
) -> None:
    """Reference §37.8: with the Grid backend a killed replica's session is not taken over
    (its context died with the replica's CDP connection): it fails `replica_lost`; the other
    replica's Grid sessions go on."""
    from tests.support.grid import start_grid

    (tmp_path / "grid").mkdir()
    grid = await anyio.to_thread.run_sync(
        lambda: start_grid(tmp_path / "grid", nodes=1, max_sessions=3)
    )
    try:
        extra = ["--selenium-grid", grid.url, "--timeout", "30000"]
        async with running_cluster(
            tmp_path, replicas=2, lease_ms=LEASE_MS, extra_args=extra
        ) as cluster:
            first, second = cluster.replicas
            async with (
                connect(first.url, "auto", TOKENS["alice"]) as on_first,
                connect(second.url, "auto", TOKENS["alice"]) as on_second,
            ):
                lost_sid, lost_pid = await on_first.session()
                kept_sid, kept_pid = await on_second.session()
                assert await _owner_of(cluster, lost_sid) == first.replica_id
                record = await _record(cluster, lost_sid)
                assert str(record.get("gridBrowser", "")).startswith("grid-")
                await first.sigkill()

                async def lost() -> bool:
                    return await _status(cluster, lost_sid) == ("failed", "replica_lost")

                await eventually(lost, LEASE_MS / 1000 * 3, "the Grid session is marked lost")
                addr = {"sessionId": lost_sid, "pageId": lost_pid}
                gone = await on_second.err("browser_get_url", addr)
                assert gone["code"] == "BROWSER_DISCONNECTED"
                assert gone["details"] == {"reason": "replica_lost"}
                kept = {"sessionId": kept_sid, "pageId": kept_pid}
                await on_second.ok("browser_navigate", {**kept, "url": site.url("/")})
                await on_second.session()  # and new ones start on the Grid
    finally:
        await anyio.to_thread.run_sync(grid.stop)


async def test_a_login_saved_before_a_stop_restores_on_another_replica(
    tmp_path: Path, site: FixtureSite
) -> None:
    """The next step of `replica_stopped` ("create a replacement, pass stateId") works when the
    replicas share one data directory (README: a ReadWriteMany volume in Kubernetes)."""
    shared = tmp_path / "shared-data"
    async with (
        running_cluster(
            tmp_path,
            replicas=2,
            lease_ms=LEASE_MS,
            extra_env={"BROWSERMESH_DATA_DIR": str(shared)},
        ) as cluster,
        connect(cluster.url, "auto", TOKENS["alice"]) as c,
    ):
        sid, pid = await c.session()
        signed_in = await whoami(c, site, sid, pid, "signed-in-7b2e")
        assert "cookie:identity=signed-in-7b2e" in signed_in
        await c.ok("browser_state_save", {"sessionId": sid, "stateId": "login"})
        await cluster.replica(await _owner_of(cluster, sid)).sigterm()
        gone = await c.err("browser_get_url", {"sessionId": sid, "pageId": pid})
        assert gone["code"] == "SESSION_CLOSED" and "stateId" in gone["nextStep"]
        again = await c.ok("browser_session_create", {"stateId": "login"})
        new_sid, new_pid = again["session"]["sessionId"], again["initialPage"]["pageId"]
        assert await whoami(c, site, new_sid, new_pid, None) == signed_in
