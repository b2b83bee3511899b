"""The Grid HTTP client and the backend's bookkeeping (issue 22) against a fake Grid (httpx2's
MockTransport): what is sent (capabilities, markers, credentials), how each answer maps to an
outcome, the reaper and the shutdown sweep. The real Grid: tests/integration/test_grid.py."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

import httpx2
import pytest

from browsermesh.engine import grid
from browsermesh.engine.grid import GridBackend, grid_capabilities, grid_failure
from browsermesh.engine.grid_client import (
    OWNER_CAPABILITY,
    REQUEST_CAPABILITY,
    GridClient,
    GridError,
)
from browsermesh.errors import ErrorCode
from tests.support.eventually import eventually

pytestmark = pytest.mark.anyio
SECRET = "grid-secret-canary-33"
URL = f"http://bm:{SECRET}@grid.test:4444/wd/hub/"

Handler = Callable[[httpx2.Request], httpx2.Response]


class FakeGrid:
    """Answers with `handler`, recording every request."""

    def __init__(self, handler: Handler) -> None:
        self.requests: list[httpx2.Request] = []
        self.handler = handler

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        return self.handler(request)

    def client(self, url: str = URL, headers: tuple[tuple[str, str], ...] = ()) -> GridClient:
        return GridClient(url, headers, transport=httpx2.MockTransport(self))


def value(payload: Any, status: int = 200) -> httpx2.Response:
    return httpx2.Response(status, json={"value": payload})


def created(
    request: httpx2.Request, cdp: str | None = "ws://10.1.2.3:4444/session/s1/se/cdp"
) -> httpx2.Response:
    caps: dict[str, Any] = {"browserName": "chrome", "browserVersion": "156.0"}
    if cdp is not None:
        caps["se:cdp"] = cdp
    return value({"sessionId": "s1", "capabilities": caps})


async def test_new_session_sends_capabilities_and_credentials_and_rewrites_se_cdp() -> None:
    fake = FakeGrid(created)
    client = fake.client()
    session = await client.new_session({"browserName": "chrome"}, 5)
    assert session.session_id == "s1" and session.browser_version == "156.0"
    # The Grid's own address (a pod IP) is replaced by the configured one; the path is kept.
    assert session.cdp_url == "ws://grid.test:4444/session/s1/se/cdp"
    (sent,) = fake.requests
    assert str(sent.url) == "http://grid.test:4444/wd/hub/session"  # no userinfo in the URL
    assert sent.headers["Content-Type"] == "application/json; charset=utf-8"
    assert sent.headers["Authorization"] == "Basic " + base64.b64encode(
        f"bm:{SECRET}".encode()
    ).decode("ascii")
    assert json.loads(sent.content) == {"capabilities": {"alwaysMatch": {"browserName": "chrome"}}}
    assert client.shown == "http://grid.test:4444/wd/hub/"
    await client.aclose()


async def test_header_file_wins_and_https_gives_wss() -> None:
    fake = FakeGrid(created)
    client = fake.client("https://g.test", (("Authorization", "Bearer t"), ("X-A", "1")))
    session = await client.new_session({}, 5)
    assert session.cdp_url == "wss://g.test/session/s1/se/cdp"
    assert fake.requests[0].headers["Authorization"] == "Bearer t"
    assert client.headers == {"Authorization": "Bearer t", "X-A": "1"}
    await client.aclose()


@pytest.mark.parametrize(
    ("answer", "kind"),
    [
        (lambda r: value({"error": "session not created", "message": SECRET}, 500), "rejected"),
        (lambda r: httpx2.Response(401, text=SECRET), "rejected"),
        (lambda r: value({"capabilities": {}}), "protocol"),
    ],
)
async def test_failed_creations(answer: Handler, kind: str) -> None:
    client = FakeGrid(answer).client()
    with pytest.raises(GridError) as info:
        await client.new_session({}, 5)
    assert info.value.kind == kind
    assert SECRET not in str(info.value) and "grid.test" not in str(info.value)


async def test_a_session_without_cdp_is_ended_at_once() -> None:
    fake = FakeGrid(lambda r: created(r, None) if r.method == "POST" else value(None))
    with pytest.raises(GridError) as info:
        await fake.client().new_session({}, 5)
    assert info.value.kind == "protocol"
    assert [(r.method, r.url.path) for r in fake.requests] == [
        ("POST", "/wd/hub/session"),
        ("DELETE", "/wd/hub/session/s1"),
    ]


async def test_transport_failures_are_unreachable_or_timeout() -> None:
    def refuse(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("refused", request=request)

    def slow(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ReadTimeout("slow", request=request)

    with pytest.raises(GridError) as info:
        await FakeGrid(refuse).client().status(1)
    assert info.value.kind == "unreachable"
    with pytest.raises(GridError) as info:
        await FakeGrid(slow).client().new_session({}, 1)
    assert info.value.kind == "timeout"
    assert await FakeGrid(refuse).client().alive("s1", 1) is None


async def test_delete_alive_and_status() -> None:
    answers = {"gone": 404, "broken": 500, "ok": 200, "odd": 418}
    fake = FakeGrid(lambda r: value(None, answers[r.url.path.split("/")[4]]))
    client = fake.client()
    await client.delete_session("ok", 1)
    await client.delete_session("gone", 1)  # already gone counts as deleted
    with pytest.raises(GridError):
        await client.delete_session("broken", 1)
    assert await client.alive("ok", 1) is True
    assert await client.alive("gone", 1) is False
    assert await client.alive("broken", 1) is False  # the router could not reach its node
    assert await client.alive("odd", 1) is None
    with pytest.raises(GridError) as info:
        await FakeGrid(lambda r: httpx2.Response(503, text="x")).client().status(1)
    assert info.value.kind == "unreachable"
    with pytest.raises(GridError) as info:
        await FakeGrid(lambda r: httpx2.Response(401)).client().status(1)
    assert info.value.kind == "rejected"


def status_with(*sessions: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    slots = [{"session": {"sessionId": sid, "capabilities": caps}} for sid, caps in sessions]
    slots.append({"session": None})
    return {"ready": True, "nodes": [{"availability": "UP", "slots": slots}, "junk"]}


async def test_owned_sessions_pick_this_backends_marker() -> None:
    mine = {OWNER_CAPABILITY: "me", REQUEST_CAPABILITY: "r1"}
    fake = FakeGrid(
        lambda r: value(status_with(("a", mine), ("b", {OWNER_CAPABILITY: "other"}), ("c", {})))
    )
    assert await fake.client().owned_sessions("me", 1) == {"a": "r1"}


def test_capabilities_join_the_quiet_flags_and_headless() -> None:
    caps = grid_capabilities(json.dumps({"goog:chromeOptions": {"args": ["--no-first-run"]}}), True)
    args = caps["goog:chromeOptions"]["args"]
    assert caps["browserName"] == "chrome"
    assert args.count("--no-first-run") == 1 and "--headless=new" in args
    assert "--disable-background-networking" in args
    assert "--headless=new" not in grid_capabilities("", False)["goog:chromeOptions"]["args"]
    edge = grid_capabilities(json.dumps({"browserName": "MicrosoftEdge"}), True)
    assert "goog:chromeOptions" not in edge  # Edge's options are its own


def test_grid_failures_are_browser_errors_with_the_grid_next_step() -> None:
    err = grid_failure(GridError("unreachable"))
    assert err.code is ErrorCode.BROWSER_ERROR and err.details == {"reason": "connection"}
    assert "/status" in err.next_step and "--doctor" in err.next_step
    assert grid_failure(GridError("rejected", 500)).details == {"reason": "other"}


async def test_reaper_deletes_the_session_created_for_a_given_up_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(grid, "REAP_POLL_S", 0.01)
    backend = GridBackend(FakeGrid(lambda r: value(None)).client(), {}, 1)
    polls: list[int] = []

    def answer(request: httpx2.Request) -> httpx2.Response:
        if request.method == "DELETE":
            return value(None)
        polls.append(1)
        late = {OWNER_CAPABILITY: backend.owner, REQUEST_CAPABILITY: "r9"}
        return value(status_with(("late", late)) if len(polls) > 2 else status_with())

    fake = FakeGrid(answer)
    backend.client = fake.client()
    backend.reap("r9")
    await eventually(lambda: any(r.method == "DELETE" for r in fake.requests), within=10)
    assert [r.url.path for r in fake.requests if r.method == "DELETE"] == ["/wd/hub/session/late"]
    await backend.stop()


async def test_stop_sweeps_every_session_this_backend_owns() -> None:
    holder: dict[str, GridBackend] = {}

    def answer(request: httpx2.Request) -> httpx2.Response:
        if request.method == "DELETE":
            return value(None)
        owner = holder["backend"].owner
        return value(
            status_with(
                ("x", {OWNER_CAPABILITY: owner, REQUEST_CAPABILITY: "1"}),
                ("y", {OWNER_CAPABILITY: owner, REQUEST_CAPABILITY: "2"}),
                ("z", {OWNER_CAPABILITY: "someone else"}),
            )
        )

    fake = FakeGrid(answer)
    backend = GridBackend(fake.client(), {"browserName": "chrome"}, 2)
    holder["backend"] = backend
    assert backend.capabilities("r")[REQUEST_CAPABILITY] == "r"
    assert backend.endpoints()[0]["endpoint"] == "http://grid.test:4444/wd/hub/"
    assert backend.launch_state == "not_started" and backend.browser_version is None
    await backend.stop()
    deleted = sorted(r.url.path.rsplit("/", 1)[1] for r in fake.requests if r.method == "DELETE")
    assert deleted == ["x", "y"]


async def test_the_watchdog_loses_a_grid_browser_after_two_gone_answers() -> None:
    answers = iter([500, 200, 404, 404])
    fake = FakeGrid(lambda r: value(None, next(answers)))
    backend = GridBackend(fake.client(), {}, 1)
    slot = grid.GridSlot(backend, "grid-1")
    slot.session_id = "s1"
    lost: list[grid.GridSlot] = []

    async def record(s: grid.GridSlot) -> None:
        lost.append(s)

    backend._lost = record  # type: ignore[method-assign]
    for _ in range(3):
        await backend._probe(slot)  # 500 (1 miss), 200 (reset), 404 (1 miss)
    assert lost == [] and slot.misses == 1
    await backend._probe(slot)  # 404 again: two in a row
    assert lost == [slot]
    assert all(r.url.path == "/wd/hub/session/s1/timeouts" for r in fake.requests)
