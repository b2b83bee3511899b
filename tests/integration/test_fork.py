"""Session forks (issue 19 #4) on real Chromium: `fromSessionId` copies a ready session's live
cookies (HttpOnly too), localStorage, IndexedDB and sessionStorage into isolated sessions;
`count` makes several at once. The sign-in pages are tests/fixtures/device_site.py's."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from browsermesh.runtime.runtime import Runtime
from tests.fixtures.device_site import DeviceSite
from tests.integration.test_http import TOKENS, connect, http_server
from tests.support.clients import ToolClient

pytestmark = pytest.mark.anyio

SIGNED_IN = "cookie:{0}|local:{0}|session:{0}|idb:{0}"
SIGNED_OUT = "cookie:|local:|session:|idb:"


@pytest.fixture(scope="module")
def device_site() -> Iterator[DeviceSite]:
    with DeviceSite() as site:
        yield site


def address(created: dict[str, Any]) -> dict[str, str]:
    return {
        "sessionId": created["session"]["sessionId"],
        "pageId": created["initialPage"]["pageId"],
    }


async def visit(c: ToolClient, addr: dict[str, str], url: str, testid: str, text: str) -> str:
    """Navigate, wait until `testid` shows `text` (a prefix of what it will say), return it."""
    await c.ok("browser_navigate", {**addr, "url": url})
    locator = {"strategy": "testId", "value": testid}
    await c.ok(
        "browser_wait", {**addr, "condition": {"kind": "text", "text": text, "state": "present"}}
    )
    return str((await c.ok("browser_visible_text", {**addr, "locator": locator}))["text"])


async def sign_in(c: ToolClient, addr: dict[str, str], site: DeviceSite, user: str) -> None:
    url = site.url(f"/sign-in?user={user}")
    assert await visit(c, addr, url, "status", "signed in") == f"signed in {user}"


async def sign_out(c: ToolClient, addr: dict[str, str], site: DeviceSite) -> None:
    assert await visit(c, addr, site.url("/sign-out"), "status", "signed out") == "signed out"


async def whoami(c: ToolClient, addr: dict[str, str], site: DeviceSite) -> str:
    return await visit(c, addr, site.url("/whoami"), "whoami", "cookie:")


async def test_fork_copies_the_sign_in_and_then_lives_apart(
    client: ToolClient, device_site: DeviceSite
) -> None:
    source = address(await client.ok("browser_session_create", {"name": "src"}))
    await sign_in(client, source, device_site, "alice")
    fork = await client.ok(
        "browser_session_create", {"fromSessionId": source["sessionId"], "name": "copy"}
    )
    assert "sessions" not in fork  # one fork: the usual single-session result
    view = fork["session"]
    assert view["status"] == "ready" and view["forkedFromSessionId"] == source["sessionId"]
    assert view["name"] == "copy" and "metadata" not in view and "restoredFromStateId" not in view
    forked = address(fork)
    assert await whoami(client, forked, device_site) == SIGNED_IN.format("alice")
    # the source signs out: the fork stays signed in
    await sign_out(client, source, device_site)
    assert await whoami(client, source, device_site) == SIGNED_OUT
    assert await whoami(client, forked, device_site) == SIGNED_IN.format("alice")
    # and the other way round: a fork of a fresh sign-in, which then signs out
    await sign_in(client, source, device_site, "bob")
    second = address(
        await client.ok("browser_session_create", {"fromSessionId": source["sessionId"]})
    )
    await sign_out(client, second, device_site)
    assert await whoami(client, second, device_site) == SIGNED_OUT  # sessionStorage not put back
    assert await whoami(client, source, device_site) == SIGNED_IN.format("bob")
    assert await whoami(client, forked, device_site) == SIGNED_IN.format("alice")


async def test_ten_forks_at_once_are_signed_in_and_isolated(
    client: ToolClient, runtime: Runtime, device_site: DeviceSite
) -> None:
    source = address(await client.ok("browser_session_create"))
    await sign_in(client, source, device_site, "carol")
    made = await client.ok(
        "browser_session_create", {"fromSessionId": source["sessionId"], "count": 10}
    )
    sessions = made["sessions"]
    assert len(sessions) == 10
    assert {"session": made["session"], "initialPage": made["initialPage"]} == sessions[0]
    ids = {s["session"]["sessionId"] for s in sessions}
    assert len(ids) == 10 and source["sessionId"] not in ids
    assert all(s["session"]["forkedFromSessionId"] == source["sessionId"] for s in sessions)
    forks = [address(s) for s in sessions]
    seen = await asyncio.gather(*(whoami(client, f, device_site) for f in forks))
    assert seen == [SIGNED_IN.format("carol")] * 10
    # a change in one fork is seen in no other fork and not in the source
    await sign_in(client, forks[3], device_site, "dave")
    seen = await asyncio.gather(*(whoami(client, f, device_site) for f in forks))
    assert seen[3] == SIGNED_IN.format("dave")
    assert seen[:3] + seen[4:] == [SIGNED_IN.format("carol")] * 9
    assert await whoami(client, source, device_site) == SIGNED_IN.format("carol")
    assert runtime.engine.live_contexts() == 11  # type: ignore[attr-defined]


async def test_fork_takes_its_own_settings_and_waits_for_the_source_queue(
    client: ToolClient, device_site: DeviceSite
) -> None:
    source = address(
        await client.ok("browser_session_create", {"contextSettings": {"device": "iPhone 15"}})
    )
    # accepted back to back: the copy runs in the source's queue, after the navigation, so it
    # sees what the sign-in page left (its cookie and the storage its inline script wrote; the
    # IndexedDB write may commit after the load event, so it is not checked here)
    url = device_site.url("/sign-in?user=erin")
    signing = asyncio.create_task(client.ok("browser_navigate", {**source, "url": url}))
    forking = asyncio.create_task(
        client.ok(
            "browser_session_create",
            {"fromSessionId": source["sessionId"], "contextSettings": {"locale": "fr-FR"}},
        )
    )
    await signing
    fork = await forking
    assert fork["session"]["contextSettings"] == {"locale": "fr-FR"}  # not the source's
    seen = (await whoami(client, address(fork), device_site)).split("|")
    assert seen[:3] == ["cookie:erin", "local:erin", "session:erin"]


async def test_fork_refusals(client: ToolClient) -> None:
    src, _ = await client.session()
    before = len((await client.ok("browser_session_list"))["sessions"])
    both = await client.err("browser_session_create", {"fromSessionId": src, "stateId": "x"})
    assert both["code"] == "INVALID_ARGUMENT" and both["details"]["field"] == "fromSessionId"
    for count, rule in ((0, "at least 1"), (11, "at most 10")):
        err = await client.err("browser_session_create", {"fromSessionId": src, "count": count})
        assert err["code"] == "INVALID_ARGUMENT" and err["details"] == {
            "field": "count",
            "rule": rule,
        }
    unknown = await client.err("browser_session_create", {"fromSessionId": "s0nope"})
    assert unknown["code"] == "SESSION_NOT_FOUND"
    assert len((await client.ok("browser_session_list"))["sessions"]) == before
    await client.ok("browser_session_close", {"sessionId": src})
    closed = await client.err("browser_session_create", {"fromSessionId": src})
    assert closed["code"] == "SESSION_CLOSED"
    failed = await client.err("browser_session_create", {"stateId": "missing"})
    assert failed["code"] == "SAVED_STATE_NOT_FOUND"
    tombstone = (await client.ok("browser_session_list"))["sessions"][-1]
    assert tombstone["status"] == "failed"
    not_ready = await client.err(
        "browser_session_create", {"fromSessionId": tombstone["sessionId"]}
    )
    assert not_ready["code"] == "SESSION_NOT_READY"


async def test_count_beyond_capacity_is_refused_before_any_context(tmp_path: Path) -> None:
    from mcp import Client

    from browsermesh.factory import create_runtime
    from browsermesh.mcp.server import create_server
    from tests.support.runtimes import real_config

    rt = create_runtime(real_config(tmp_path, max_sessions=4))
    try:
        async with Client(create_server(rt)) as raw:
            c = ToolClient(raw, {t.name: t for t in (await raw.list_tools()).tools})
            src, _ = await c.session()
            over = await c.err("browser_session_create", {"fromSessionId": src, "count": 4})
            assert over["code"] == "LIMIT_EXCEEDED"
            assert "Bound: sessions <= 4 (BROWSERMESH_MAX_SESSIONS)." in over["message"]
            assert len((await c.ok("browser_session_list"))["sessions"]) == 1
            assert rt.engine.live_contexts() == 1  # type: ignore[attr-defined]
            fits = await c.ok("browser_session_create", {"fromSessionId": src, "count": 3})
            assert len(fits["sessions"]) == 3
            assert rt.engine.live_contexts() == 4  # type: ignore[attr-defined]
    finally:
        await rt.shutdown()


async def test_another_principals_session_cannot_be_forked(tmp_path: Path) -> None:
    async with (
        http_server(tmp_path, tokens=True) as srv,
        connect(srv.url, "auto", TOKENS["alice"]) as alice,
        connect(srv.url, "auto", TOKENS["bob"]) as bob,
    ):
        theirs, _ = await alice.session()
        err = await bob.err("browser_session_create", {"fromSessionId": theirs})
        unknown = await bob.err("browser_session_create", {"fromSessionId": "s0nope"})
        assert err == unknown and err["code"] == "SESSION_NOT_FOUND"  # indistinguishable
        assert (await bob.ok("browser_session_list"))["sessions"] == []
        mine = await alice.ok("browser_session_create", {"fromSessionId": theirs})
        assert mine["session"]["forkedFromSessionId"] == theirs
