"""The live view across the fleet, its pieces (issue 37 item 2, reference §37.9): view codes and
sessions kept in a real `redis-server` and shared by every replica's `ViewAuth`, and the merged
grid of a fleet-wide feed (transports/view_fleet.py)."""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import redis.asyncio as aioredis
from starlette.applications import Starlette
from starlette.testclient import TestClient

from browsermesh.log import EventLog
from browsermesh.model.frame_pacing import Frame
from browsermesh.persistence.fleet_directory import FleetDirectory
from browsermesh.runtime.live import MAX_VIEW_SESSIONS
from browsermesh.transports.access import AccessPolicy
from browsermesh.transports.view import view_routes
from browsermesh.transports.view_auth import (
    MAX_VIEW_SESSIONS_PER_PRINCIPAL,
    ViewAuth,
    ViewAuthUnavailable,
)
from browsermesh.transports.view_fleet import FleetFeed
from tests.support.redis_server import RedisServer, dump, running_redis

pytestmark = pytest.mark.anyio

TOKENS = [("alice", "alice-token-0123456789"), ("bob", "bob-token-9876543210ab")]


@pytest.fixture
async def redis_server(tmp_path: Path) -> AsyncIterator[RedisServer]:
    async with running_redis(tmp_path) as server:
        yield server


@pytest.fixture
async def directories(redis_server: RedisServer) -> AsyncIterator[list[FleetDirectory]]:
    """Two replicas' directory clients on one Redis."""
    made = [FleetDirectory(redis_server.url, lease_ms=3000, tombstone_ms=60_000) for _ in "ab"]
    yield made
    for directory in made:
        await directory.aclose()


def replica(directory: FleetDirectory | None) -> ViewAuth:
    return ViewAuth(AccessPolicy(["*"], ["*"], TOKENS), shared=lambda: directory)


async def test_a_code_from_one_replica_signs_in_once_on_another(
    directories: list[FleetDirectory], redis_server: RedisServer
) -> None:
    one, two = replica(directories[0]), replica(directories[1])
    code = await one.issue_code("alice")
    assert await two.peek(code) == "alice" and await one.peek(code) == "alice"
    assert await two.redeem(code) == "alice"
    assert await one.redeem(code) is None and await two.peek(code) is None  # used, fleet-wide
    cookie = await two.open_session("alice")
    header = f"bm_view={cookie}".encode()
    assert await one.principal_of(header) == "alice" and await two.principal_of(header) == "alice"
    assert await one.principal_of(b"bm_view=guess") is None and await one.redeem("") is None
    client = aioredis.Redis.from_url(redis_server.url, decode_responses=True)
    try:
        stored = str(await dump(client))
    finally:
        await client.aclose()
    # Only digests: neither the code nor the cookie value is in any key or value.
    assert cookie not in stored and code not in stored
    assert hashlib.sha256(cookie.encode()).hexdigest() in stored


async def test_the_shared_sessions_are_bounded_per_principal(
    directories: list[FleetDirectory],
) -> None:
    one, two = replica(directories[0]), replica(directories[1])
    bob = await one.open_session("bob")
    alice = [await (one, two)[n % 2].open_session("alice") for n in range(70)]
    assert await two.principal_of(f"bm_view={bob}".encode()) == "bob"
    kept = MAX_VIEW_SESSIONS_PER_PRINCIPAL
    seen = [await one.principal_of(f"bm_view={c}".encode()) for c in alice]
    assert seen[-kept:] == ["alice"] * kept
    assert seen[: len(alice) - kept] == [None] * (len(alice) - kept)  # the oldest went


async def test_a_directory_that_does_not_answer_is_unavailable_not_signed_out(
    directories: list[FleetDirectory], redis_server: RedisServer
) -> None:
    one = replica(directories[0])
    cookie = await one.open_session("alice")
    redis_server.stop()
    with pytest.raises(ViewAuthUnavailable):
        await one.principal_of(f"bm_view={cookie}".encode())
    with pytest.raises(ViewAuthUnavailable):
        await one.issue_code("alice")
    with pytest.raises(ViewAuthUnavailable):  # no directory client (not started, stopped)
        await replica(None).redeem("code")


async def test_a_fleet_feed_merges_the_replicas_grids() -> None:
    feed = FleetFeed("alice")

    def card(sid: str, at: str) -> dict[str, str]:
        return {"sessionId": sid, "createdAt": f"2026-12-06T10:00:0{at}Z"}

    feed.put_part("r3", [card("c", "1")])
    feed.put_part("r2", [card("b", "3"), "not a card"])
    feed.put_part("r1", [card("a", "2")])
    feed.put_frame("c", "p1", Frame(data="AAAA", source="screencast"))
    news = await feed.next()
    # Creation order, whichever replica holds which (and whichever serves the view).
    assert news[0] == (
        "state",
        {"principal": "alice", "sessions": [card("c", "1"), card("a", "2"), card("b", "3")]},
    )
    assert news[1] == (
        "frame",
        {"sessionId": "c", "pageId": "p1", "source": "screencast", "data": "AAAA"},
    )
    feed.put_part("r1", [card("a", "2")])  # unchanged: no new state
    feed.put_part("r3", None)  # its stream ended
    assert await feed.next() == [
        ("state", {"principal": "alice", "sessions": [card("a", "2"), card("b", "3")]})
    ]
    feed.put_part("r1", [{"sessionId": f"x{n}"} for n in range(MAX_VIEW_SESSIONS + 5)])
    (kind, state), *_ = await feed.next()
    assert kind == "state" and len(state["sessions"]) == MAX_VIEW_SESSIONS


def test_the_view_answers_503_when_the_directory_does_not() -> None:
    """A sign-in that cannot be checked is 503 (try again), never a 401 that sends the person
    for a new link, on every view route that checks one, and never a 500."""
    live: Any = SimpleNamespace(core=SimpleNamespace(owner_of=lambda _sid: None))
    app = Starlette(routes=view_routes(live, replica(None), EventLog()))
    cookie = {"Cookie": "bm_view=anything"}
    with TestClient(app, raise_server_exceptions=False) as http:
        for path in ("/view", "/view/", "/view/events", "/view/static/view.js"):
            answer = http.get(path, headers=cookie)
            assert answer.status_code == 503, path
            assert answer.json()["error"] == "directory_unreachable"
        assert http.get("/view/login?code=abc").status_code == 503
        assert http.get("/view/artifacts/s1/a1", headers=cookie).status_code == 503
        assert http.get("/view/nope").status_code == 404  # no sign-in read: as ever
