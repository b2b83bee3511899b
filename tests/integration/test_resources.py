"""Session resources, their change notifications and completions (issue 17), through the real
SDK client on real Chromium, in both protocol eras; over HTTP with two principals.

Handshake era: `resources/subscribe` and notifications on the connection (`message_handler`).
2026-07-28: `subscriptions/listen` streams (`Client.listen`). Where a test shows that something
is *not* sent, it waits for a later notification on the same channel instead of sleeping: the
server sends everything through one ordered sender, so an unwanted notification would have
arrived first.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp import Client, MCPError
from mcp.client.subscriptions import ResourcesListChanged, ResourceUpdated, Subscription
from mcp.server.streamable_http import GET_STREAM_KEY
from mcp.shared.exceptions import MCPDeprecationWarning

from browsermesh.mcp.resources import (
    ARTIFACTS_TEMPLATE,
    SESSION_TEMPLATE,
    SESSIONS_URI,
    artifacts_uri,
    session_uri,
)
from browsermesh.mcp.server import create_server
from browsermesh.runtime.runtime import Runtime
from tests.fixtures.site import FixtureSite
from tests.support.clients import ERAS, ToolClient
from tests.support.eventually import eventually
from tests.support.http_transport import TOKENS, Running, connect, http_server
from tests.support.servers import stdio_server

pytestmark = pytest.mark.anyio

UPDATED = "notifications/resources/updated"
LIST_CHANGED = "notifications/resources/list_changed"
Note = tuple[str, str | None]


class Inbox:
    """Handshake-era resource notifications of one connection, in arrival order."""

    def __init__(self) -> None:
        self.items: list[Note] = []
        self._arrived = anyio.Event()

    async def __call__(self, message: Any) -> None:
        method = getattr(message, "method", None)
        if method in (UPDATED, LIST_CHANGED):
            self.items.append((method, getattr(message.params, "uri", None)))
            self._arrived.set()
            self._arrived = anyio.Event()

    async def wait(self, note: Note, after: int = 0) -> int:
        """Wait until `note` arrives at an index >= `after` (fails after 15 s); its index."""
        with anyio.fail_after(15):
            while note not in self.items[after:]:
                await self._arrived.wait()
        return self.items.index(note, after)


async def until(sub: Subscription | None, want: object) -> list[object]:
    """The events of a listen stream up to and including `want` (fails after 15 s)."""
    assert sub is not None
    seen: list[object] = []
    with anyio.fail_after(15):
        async for event in sub:
            seen.append(event)
            if event == want:
                return seen
    raise AssertionError(f"stream ended before {want}: {seen}")


async def read_json(client: Client, uri: str) -> dict[str, Any]:
    result = await client.read_resource(uri)
    assert len(result.contents) == 1 and str(result.contents[0].uri) == uri
    assert result.contents[0].mime_type == "application/json"
    data: dict[str, Any] = json.loads(result.contents[0].text)  # type: ignore[union-attr]
    return data


async def not_found(client: Client, uri: str) -> tuple[int, str]:
    with pytest.raises(MCPError) as info:
        await client.read_resource(uri)
    return info.value.error.code, info.value.error.message


async def subscribe(client: Client, uri: str) -> None:
    with warnings.catch_warnings():  # deprecated for 2026-07-28 only; this is the handshake era
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        await client.subscribe_resource(uri)


async def unsubscribe(client: Client, uri: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        await client.unsubscribe_resource(uri)


def prompt(name: str) -> types.PromptReference:
    return types.PromptReference(type="ref/prompt", name=name)


def template(uri: str) -> types.ResourceTemplateReference:
    return types.ResourceTemplateReference(type="ref/resource", uri=uri)


async def values(client: Client, ref: Any, name: str, value: str, **context: str) -> list[str]:
    result = await client.complete(ref, {"name": name, "value": value}, context or None)
    return result.completion.values


# ------------------------------------------------------------------------------------------
# Publication and reads (both eras, in process)
# ------------------------------------------------------------------------------------------


async def test_capabilities_and_templates(mcp_client: ToolClient) -> None:
    client = mcp_client.client
    caps = client.server_capabilities
    assert caps.resources is not None
    assert caps.resources.subscribe is True and caps.resources.list_changed is True
    assert caps.completions is not None
    templates = (await client.list_resource_templates()).resource_templates
    assert [(t.name, t.uri_template, t.mime_type) for t in templates] == [
        ("session", "browsermesh://sessions/{sessionId}", "application/json"),
        ("session-artifacts", "browsermesh://sessions/{sessionId}/artifacts", "application/json"),
    ]
    assert all(t.title and t.description for t in templates)


async def test_session_resource_shows_pages_and_titles(
    mcp_client: ToolClient, site: FixtureSite
) -> None:
    c, client = mcp_client, mcp_client.client
    sid, pid = await c.session(name="buyer")
    uris = [str(r.uri) for r in (await client.list_resources()).resources]
    assert uris == [SESSIONS_URI, session_uri(sid), artifacts_uri(sid)]

    first = await read_json(client, session_uri(sid))
    assert first["session"] == (await c.ok("browser_session_get", {"sessionId": sid}))["session"]
    assert [(p["pageId"], p["url"], p["isDefault"]) for p in first["pages"]] == [
        (pid, "about:blank", True)
    ]

    other = (await c.ok("browser_page_create", {"sessionId": sid}))["pageId"]
    await c.ok("browser_navigate", {"sessionId": sid, "pageId": pid, "url": site.url("/buyer")})
    data = await read_json(client, session_uri(sid))
    by_id = {p["pageId"]: p for p in data["pages"]}
    assert list(by_id) == [pid, other]
    assert by_id[pid]["title"] == "Buyer" and by_id[pid]["url"] == site.url("/buyer")
    # The same PageViews browser_page_list returns, plus the title.
    listed = (await c.ok("browser_page_list", {"sessionId": sid}))["pages"]
    assert [{k: v for k, v in p.items() if k != "title"} for p in data["pages"]] == listed
    await c.ok("browser_navigate", {"sessionId": sid, "pageId": pid, "url": site.url("/seller")})
    again = await read_json(client, session_uri(sid))
    assert again["pages"][0]["title"] == "Seller"

    await c.ok("browser_session_close", {"sessionId": sid})
    closed = await read_json(client, session_uri(sid))  # a retained record is still readable
    assert closed["session"]["status"] == "closed" and closed["pages"] == []
    assert [str(r.uri) for r in (await client.list_resources()).resources] == [SESSIONS_URI]

    expected = (-32602, "Resource not found")
    for uri in [
        session_uri("s0zzz"),
        artifacts_uri("s0zzz"),
        "browsermesh://sessions/s1/pages",
        "browsermesh://nothing",
    ]:
        assert await not_found(client, uri) == expected, uri


async def test_artifacts_resource_lists_what_browser_downloads_lists(
    mcp_client: ToolClient, site: FixtureSite
) -> None:
    c, client = mcp_client, mcp_client.client
    sid, pid = await c.session()
    assert await read_json(client, artifacts_uri(sid)) == {
        "sessionId": sid,
        "artifacts": [],
        "total": 0,
    }
    await c.ok("browser_navigate", {"sessionId": sid, "pageId": pid, "url": site.url("/buyer")})
    printed = await c.ok("browser_pdf", {"sessionId": sid, "pageId": pid})
    listing = await read_json(client, artifacts_uri(sid))
    downloads = await c.ok("browser_downloads", {"sessionId": sid})
    del downloads["operationId"]
    assert listing == {"sessionId": sid, **downloads}  # the tool does not echo the session
    assert [a["artifactId"] for a in listing["artifacts"]] == [printed["artifact"]["artifactId"]]
    session = await read_json(client, session_uri(sid))
    assert session["session"]["artifacts"]["count"] == 1


async def test_completions(mcp_client: ToolClient, site: FixtureSite) -> None:
    c, client = mcp_client, mcp_client.client
    sid, pid = await c.session(name="Auditor", metadata={"role": "approver"})
    await c.ok("browser_navigate", {"sessionId": sid, "pageId": pid, "url": site.url("/buyer")})
    roles = prompt("parallel_roles")
    assert await values(client, roles, "roles", "buyer, a") == [
        "buyer, approver",
        "buyer, Auditor",
        "buyer, admin",
    ]
    assert await values(client, roles, "task", "") == []
    diagnose = prompt("diagnose_page")
    assert await values(client, diagnose, "sessionId", "") == [sid]
    assert await values(client, diagnose, "sessionId", sid.upper()[:2]) == [sid]
    assert await values(client, diagnose, "url", site.url("/b")) == [site.url("/buyer")]
    assert await values(client, diagnose, "url", "ftp:") == []
    assert SESSION_TEMPLATE == "browsermesh://sessions/{sessionId}"
    for uri in (SESSION_TEMPLATE, ARTIFACTS_TEMPLATE):
        assert await values(client, template(uri), "sessionId", "s") == [sid]
    # a prompt or template we do not have completes to nothing (not an error: generic clients)
    assert await values(client, prompt("nope"), "x", "") == []
    assert await values(client, template("browsermesh://other/{x}"), "x", "") == []
    text = await client.get_prompt("diagnose_page", {"url": site.url("/"), "sessionId": sid})
    assert f"in your session {sid}." in text.messages[0].content.text  # type: ignore[union-attr]
    await c.ok("browser_session_close", {"sessionId": sid})
    assert await values(client, diagnose, "sessionId", "") == []  # live sessions only


# ------------------------------------------------------------------------------------------
# Change notifications, in process
# ------------------------------------------------------------------------------------------


async def test_handshake_subscriptions(runtime: Runtime, site: FixtureSite) -> None:
    inbox = Inbox()
    async with Client(create_server(runtime), mode="legacy", message_handler=inbox) as client:
        c = await ToolClient.of(client)
        await client.list_resources()  # a connection that listed hears list_changed
        sid, pid = await c.session()
        await inbox.wait((LIST_CHANGED, None))
        for uri in (SESSIONS_URI, session_uri(sid), artifacts_uri(sid)):
            await subscribe(client, uri)
        addr = {"sessionId": sid, "pageId": pid}

        mark = len(inbox.items)
        await c.ok("browser_navigate", {**addr, "url": site.url("/buyer")})
        await inbox.wait((UPDATED, session_uri(sid)), mark)
        mark = len(inbox.items)
        await c.ok("browser_page_create", {"sessionId": sid})
        await inbox.wait((UPDATED, session_uri(sid)), mark)
        mark = len(inbox.items)
        await c.ok("browser_pdf", addr)
        await inbox.wait((UPDATED, artifacts_uri(sid)), mark)

        # Unsubscribed: a navigation tells nothing about the session; the PDF after it (still
        # subscribed to the artifacts) proves the sender went past where it would have been.
        await unsubscribe(client, session_uri(sid))
        mark = len(inbox.items)
        await c.ok("browser_navigate", {**addr, "url": site.url("/seller")})
        await c.ok("browser_pdf", addr)
        await inbox.wait((UPDATED, artifacts_uri(sid)), mark)
        assert (UPDATED, session_uri(sid)) not in inbox.items[mark:]

        mark = len(inbox.items)
        await c.ok("browser_session_close", {"sessionId": sid})
        await inbox.wait((LIST_CHANGED, None), mark)
        await inbox.wait((UPDATED, SESSIONS_URI), mark)
        # any URI may be subscribed (it never fires unless it is one of ours); only a
        # pathological length is refused
        await subscribe(client, "browsermesh://elsewhere")
        with pytest.raises(MCPError):
            await subscribe(client, "browsermesh://sessions/" + "x" * 3000)


async def test_listen_streams(runtime: Runtime, site: FixtureSite) -> None:
    async with Client(create_server(runtime)) as client:
        assert client.protocol_version == "2026-07-28"
        c = await ToolClient.of(client)
        async with client.listen(
            resources_list_changed=True, resource_subscriptions=[SESSIONS_URI]
        ) as everything:
            sid, pid = await c.session()
            await until(everything, ResourcesListChanged())
            async with client.listen(resource_subscriptions=[session_uri(sid)]) as one:
                url = site.url("/buyer")
                await c.ok("browser_navigate", {"sessionId": sid, "pageId": pid, "url": url})
                assert await until(one, ResourceUpdated(session_uri(sid))) == [
                    ResourceUpdated(session_uri(sid))
                ]
            # Nobody listens to pages any more: the runtime stops fingerprinting them.
            url = site.url("/seller")
            await c.ok("browser_navigate", {"sessionId": sid, "pageId": pid, "url": url})
            assert runtime.sessions_snapshot()[sid].fingerprint is None
            await c.ok("browser_session_close", {"sessionId": sid})
            await until(everything, ResourcesListChanged())


@pytest.mark.parametrize("mode", ERAS)
async def test_over_stdio(mode: str, tmp_path: Path, site: FixtureSite) -> None:
    """The real stdio transport: connection-wide notifications on the handshake era, a listen
    stream on 2026-07-28."""
    inbox = Inbox()
    async with Client(stdio_server(tmp_path), mode=mode, message_handler=inbox) as client:
        c = await ToolClient.of(client)
        sid, pid = await c.session()
        url = site.url("/buyer")
        async with asking(client, mode == "legacy", [session_uri(sid)]) as stream:
            await c.ok("browser_navigate", {"sessionId": sid, "pageId": pid, "url": url})
            if stream is None:
                await inbox.wait((UPDATED, session_uri(sid)))
            else:
                await until(stream, ResourceUpdated(session_uri(sid)))
        page = (await read_json(client, session_uri(sid)))["pages"][0]
        assert (page["url"], page["title"]) == (url, "Buyer")
        await c.ok("browser_session_close", {"sessionId": sid})


# ------------------------------------------------------------------------------------------
# Two principals over HTTP
# ------------------------------------------------------------------------------------------


async def standalone_streams(srv: Running, count: int) -> None:
    """Wait until `count` handshake-era MCP sessions have their GET stream open: the SDK drops
    a connection-wide notification sent before it (by design), and the client opens it in the
    background after the handshake."""
    manager = srv.service.server.session_manager

    def opened() -> bool:
        transports = list(manager._server_instances.values())
        return sum(GET_STREAM_KEY in t._request_streams for t in transports) >= count

    await eventually(opened, 10, f"{count} GET streams open")


async def bob_sees_nothing_of_alice(
    alice: ToolClient, bob: ToolClient, a_sid: str, b_sid: str, site: FixtureSite
) -> None:
    """Reads, listings and completions: bob gets his own or what an unknown id gets."""
    listed = [str(r.uri) for r in (await bob.client.list_resources()).resources]
    assert listed == [SESSIONS_URI, session_uri(b_sid), artifacts_uri(b_sid)]
    unknown = await not_found(bob.client, session_uri("s0zzz"))
    assert unknown == (-32602, "Resource not found")
    assert await not_found(bob.client, session_uri(a_sid)) == unknown
    assert await not_found(bob.client, artifacts_uri(a_sid)) == unknown
    sessions = await read_json(bob.client, SESSIONS_URI)
    assert [s["sessionId"] for s in sessions["sessions"]] == [b_sid]
    diagnose, roles = prompt("diagnose_page"), prompt("parallel_roles")
    for who, mine in ((bob, b_sid), (alice, a_sid)):  # alice: the positive control
        assert await values(who.client, diagnose, "sessionId", "") == [mine]
        for uri in (SESSION_TEMPLATE, ARTIFACTS_TEMPLATE):
            assert await values(who.client, template(uri), "sessionId", "") == [mine]
    assert await values(bob.client, diagnose, "url", "http") == []  # his page is blank
    assert await values(alice.client, diagnose, "url", "http") == [site.url("/seller")]
    assert "auditor" not in await values(bob.client, roles, "roles", "")
    assert "auditor" in await values(alice.client, roles, "roles", "")


@pytest.mark.parametrize("mode", ERAS)
async def test_principals_hear_and_see_only_their_own(
    mode: str, tmp_path: Path, site: FixtureSite
) -> None:
    legacy = mode == "legacy"
    a_inbox, b_inbox = Inbox(), Inbox()
    async with (
        http_server(tmp_path, tokens=True) as srv,
        connect(srv.url, mode, TOKENS["alice"], message_handler=a_inbox) as alice,
        connect(srv.url, mode, TOKENS["bob"], message_handler=b_inbox) as bob,
    ):
        a_sid, a_pid = await alice.session(name="alice-1", metadata={"role": "auditor"})
        b_sid, b_pid = await bob.session(name="bob-1")
        # Bob asks for everything, alice's session included (he knows its id).
        bob_wants = [SESSIONS_URI, session_uri(a_sid), artifacts_uri(a_sid), session_uri(b_sid)]
        async with (
            asking(bob.client, legacy, bob_wants) as bob_stream,
            asking(alice.client, legacy, [session_uri(a_sid)]) as a_stream,
        ):
            if legacy:
                await standalone_streams(srv, 2)
            mark_a, mark_b = len(a_inbox.items), len(b_inbox.items)
            # Alice works: a new page, a navigation, an artifact.
            addr = {"sessionId": a_sid, "pageId": a_pid}
            await alice.ok("browser_page_create", {"sessionId": a_sid})
            await alice.ok("browser_navigate", {**addr, "url": site.url("/seller")})
            await alice.ok("browser_pdf", addr)
            # Positive control: alice hears about her own session.
            if legacy:
                await a_inbox.wait((UPDATED, session_uri(a_sid)), mark_a)
            else:
                await until(a_stream, ResourceUpdated(session_uri(a_sid)))

            await bob_sees_nothing_of_alice(alice, bob, a_sid, b_sid, site)
            await alice.ok("browser_session_close", {"sessionId": a_sid})

            # Bob's own navigation is the marker: whatever was sent to him before it would
            # have arrived first, so it must be the only thing he heard.
            url = site.url("/whoami")
            await bob.ok("browser_navigate", {"sessionId": b_sid, "pageId": b_pid, "url": url})
            mine = session_uri(b_sid)
            if legacy:
                await b_inbox.wait((UPDATED, mine), mark_b)
                assert b_inbox.items[mark_b:] == [(UPDATED, mine)]
            else:
                assert await until(bob_stream, ResourceUpdated(mine)) == [ResourceUpdated(mine)]


@asynccontextmanager
async def asking(
    client: Client, legacy: bool, uris: list[str]
) -> AsyncIterator[Subscription | None]:
    """Ask for list changes and updates of `uris`: subscriptions on the handshake era, one
    listen stream on 2026-07-28 (yielded)."""
    if legacy:
        await client.list_resources()
        for uri in uris:
            await subscribe(client, uri)
        yield None
        return
    async with client.listen(resources_list_changed=True, resource_subscriptions=uris) as sub:
        yield sub
