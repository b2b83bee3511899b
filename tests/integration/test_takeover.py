"""A person in the loop (issue 34), end to end: a real `browsermesh --transport http` with a
token file (alice and bob), sessions driven by the MCP SDK client, and Playwright in a real
Chromium driving the `/view` page as the person.

The fixture page places its controls at known CSS pixels, so the test knows where on the
view's picture each one is. `BM_TAKEOVER_SHOT` (a path): also keep a screenshot of the view
while held there (the one in docs/ was made so).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from typing import Any

import httpx2
import mcp.types as types
import pytest

from tests.fixtures.site import FixtureSite
from tests.integration.test_live_view import (
    WAIT_MS,
    Server,
    card,
    new_link,
    open_view,
    serving,
    sessions,
    sign_in,
)
from tests.integration.test_live_view import chromium as chromium  # the fixture
from tests.support.eventually import eventually
from tests.support.http_transport import TOKENS, connect

pytestmark = pytest.mark.anyio

PASSWORD = "HUMANPW-7d2e"
QUERY = "hello"
DROP_MS = 3_000
VIEWPORT = (1280, 720)
# Controls at known places (CSS pixels of the 1280 x 720 viewport): their centres.
QUERY_AT = (190, 60)
PASSWORD_AT = (190, 140)
PING_AT = (190, 220)
SEND_AT = (190, 300)
FORM = """<!doctype html><title>Take over</title>
<style>body{margin:0} .a{position:absolute;left:40px;width:300px;height:40px;font-size:20px}
#q{top:40px} #pw{top:120px} #ping{top:200px} #send{top:280px}</style>
<form action="/action-destination">
<input class=a id=q name=q aria-label="Query">
<input class=a id=pw type=password aria-label="Password" form=elsewhere>
<button class=a id=ping type=button onclick="document.title='Pinged'">Ping</button>
<button class=a id=send type=submit>Send</button>
</form>"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serving(
        tmp_path_factory.mktemp("takeover"),
        "--tools",
        "core,observability,testing",
        env={"BROWSERMESH_HOLD_DROP_MS": str(DROP_MS)},
        secrets=(PASSWORD,),
    ) as running:
        yield running


@pytest.fixture
def pages(site: FixtureSite) -> FixtureSite:
    site.pages["/to/form"] = FORM
    return site


async def person_clicks(view: Any, at: tuple[int, int]) -> None:
    """Click the remote page at CSS pixel `at` through the view's live picture."""
    box = await view.locator("#live").bounding_box()
    assert box is not None and box["width"] > 0
    x = box["x"] + (at[0] + 0.5) / VIEWPORT[0] * box["width"]
    y = box["y"] + (at[1] + 0.5) / VIEWPORT[1] * box["height"]
    await view.mouse.click(x, y)


async def test_a_person_takes_over_types_clicks_and_hands_back(
    server: Server, pages: FixtureSite, chromium: Any
) -> None:
    # The site serves the whole test session (other files send this form too): count from here.
    sent_before = pages.arrived("/action-destination")
    async with sessions(server, "alice", ("buyer", pages.url("/to/form"))) as (agent, made):
        sid, pid = made[0]
        addr = {"sessionId": sid, "pageId": pid}
        context, view = await open_view(chromium, server, "alice")
        seen = Seen()
        try:
            # The agent asks for help (on a connection that asked for log lines); the card
            # says so.
            helping = asyncio.create_task(
                request_help(
                    server,
                    seen,
                    {**addr, "reason": "Type the query, then Send", "timeoutMs": 120_000},
                )
            )
            await (
                card(view, sid)
                .locator(".help", has_text="Type the query, then Send")
                .wait_for(timeout=WAIT_MS)
            )
            # The person takes the page over: the large live picture opens.
            await card(view, sid).locator("button.takeover").click()
            await view.locator("#takeover").wait_for(state="visible", timeout=WAIT_MS)
            await view.wait_for_function(
                "() => (document.querySelector('#live')?.naturalWidth || 0) >= 1000",
                timeout=WAIT_MS,
            )
            held = await agent.ok("browser_session_get", {"sessionId": sid})
            assert held["session"]["heldBy"] == "alice"
            # The client was told where to find the session in the view.
            asked = [d for d in seen.logs() if d.get("message") == "session.help_requested"]
            assert asked and asked[0]["url"] == f"{server.base}/view/#s={sid}"
            assert asked[0]["reason"] == "Type the query, then Send"
            # A second viewer of alice sees who holds it and cannot take over; it watches.
            second_context, second = await open_view(chromium, server, "alice")
            try:
                await card(second, sid).locator(".held", has_text="held by alice").wait_for()
                assert await card(second, sid).locator("button.takeover").is_hidden()
            finally:
                await second_context.close()
            # The agent's action waits for the hand-back, then SESSION_HELD; reads go on.
            refused = await agent.err("browser_click", {**addr, "ref": "e1", "timeoutMs": 1_500})
            assert refused["code"] == "SESSION_HELD" and refused["details"]["heldBy"] == "alice"
            assert "handback" in refused["nextStep"]
            assert (await agent.ok("browser_get_url", addr))["url"].endswith("/to/form")
            # The person clicks Ping (in a smaller window: the pointer still lands right),
            # types a query and a password, and sends the form.
            await view.set_viewport_size({"width": 700, "height": 520})
            await person_clicks(view, PING_AT)
            await eventually(
                lambda: title_is(agent, addr, "Pinged"), 15, "the person's click reached the page"
            )
            before = await view.locator("#live").get_attribute("src")
            await person_clicks(view, QUERY_AT)
            await view.keyboard.type("draft")
            # A shortcut (select all) and a paste replace it with the query.
            await view.keyboard.press("Control+a")
            await view.locator("#surface").evaluate(
                """(surface, text) => {
                    const data = new DataTransfer();
                    data.setData("text/plain", text);
                    surface.dispatchEvent(new ClipboardEvent("paste", {clipboardData: data,
                        bubbles: true, cancelable: true}));
                }""",
                QUERY,
            )
            await eventually(
                lambda: query_value_is(agent, addr, QUERY), 15, "the pasted text reached the page"
            )
            assert not await query_value_is(agent, addr, "draft")
            await person_clicks(view, PASSWORD_AT)
            await view.keyboard.type(PASSWORD)
            await eventually(
                lambda: query_value_is(agent, addr, QUERY), 15, "the typed text reached the page"
            )
            shot = os.environ.get("BM_TAKEOVER_SHOT")
            if shot:  # once the picture shows what was typed
                await view.wait_for_function(
                    "s => document.querySelector('#live').src !== s", arg=before, timeout=WAIT_MS
                )
                await view.screenshot(path=shot)
            await person_clicks(view, SEND_AT)
            await eventually(
                lambda: url_has(agent, addr, "/action-destination?q=hello"), 15, "the form was sent"
            )
            assert pages.arrived("/action-destination") == sent_before + 1
            await view.locator("#handback").click()
            await view.locator("#takeover").wait_for(state="hidden", timeout=WAIT_MS)
            # The request for help answers with where the person left the page.
            answer = await asyncio.wait_for(helping, WAIT_MS / 1000)
            logged = "\n".join(server.proc.lines)
            assert '"view.takeover"' in logged and '"view.handback"' in logged
            assert not answer.is_error, answer.content[0].text
            helped = answer.structured_content
            assert helped["handedBack"] is True and "/action-destination?q=hello" in helped["url"]
            steps = helped["steps"]
            assert steps[0] == "took over" and steps[-1] == "handed back (person)"
            assert 'clicked button "Ping"' in steps and 'clicked button "Send"' in steps
            # "draft", then (after the shortcut) the paste: one step per run of typing.
            assert steps.count('typed 5 characters into textbox "Query"') == 2
            assert 'typed into textbox "Password"' in steps  # no count for a password
            after = await agent.ok("browser_session_get", {"sessionId": sid})
            assert "heldBy" not in after["session"]
            # The server itself saw the text the person typed.
            found = await agent.ok("browser_find", {**addr, "text": QUERY})
            assert found["count"] >= 1
            # Observe shows what the person did, never what they typed.
            events = await agent.ok("browser_observe", {**addr, "source": "console"})
            human = [e for e in events["events"] if e["kind"] == "human"]
            actions = [e["action"] for e in human]
            assert actions[0] == "took_over" and actions[-1] == "handed_back"
            typed = [e for e in human if e["action"] == "type"]
            assert (typed[0]["role"], typed[0]["name"], typed[0]["chars"]) == (
                "textbox",
                "Query",
                5,
            )
            assert typed[-1]["password"] is True and "chars" not in typed[-1]
            # The export replays the person's steps, the typed values from the environment.
            export = await agent.ok("browser_test_export", {"sessionIds": [sid]})
            code = export["code"]
            assert "get_by_role('button', name=exact('Send')).click()" in code
            assert any(name.startswith("BM_SECRET_") for name in export["secrets"])
            everything = json.dumps([helped, events, export, after, refused])
            assert PASSWORD not in everything
            # The typed query shows only where the page put it: the URL the form went to.
            shown = [s for s in steps if not s.startswith("navigated to")]
            shown += [e for e in human if e["action"] != "navigate"]
            assert QUERY not in json.dumps(shown)
        finally:
            await context.close()
            if not helping.done():
                helping.cancel()


class Seen:
    """The log notifications a client received."""

    def __init__(self) -> None:
        self.items: list[Any] = []

    async def handler(self, message: Any) -> None:
        if isinstance(message, types.LoggingMessageNotification):
            self.items.append(message)

    def logs(self) -> list[dict[str, Any]]:
        return [m.params.data for m in self.items if isinstance(m.params.data, dict)]


async def request_help(server: Server, seen: Seen, args: dict[str, Any]) -> Any:
    """browser_request_help from a connection of alice's that asked for info log lines."""
    async with connect(server.mcp, "legacy", TOKENS["alice"], message_handler=seen.handler) as c:
        await c.client.set_logging_level("info")
        return await c.raw("browser_request_help", args)


async def title_is(agent: Any, addr: dict[str, str], title: str) -> bool:
    return bool((await agent.ok("browser_get_title", addr))["title"] == title)


async def query_value_is(agent: Any, addr: dict[str, str], value: str) -> bool:
    found = await agent.ok("browser_find", {**addr, "text": value})
    return bool(found["count"] >= 1)


async def url_has(agent: Any, addr: dict[str, str], part: str) -> bool:
    return part in (await agent.ok("browser_get_url", addr))["url"]


async def test_only_the_sessions_own_principal_can_take_over(
    server: Server, pages: FixtureSite
) -> None:
    async with sessions(server, "alice", ("mine", pages.url("/to/form"))) as (_, made):
        sid, pid = made[0]
        body = {"viewer": "f" * 32, "sessionId": sid, "pageId": pid}
        origin = {"Origin": server.base}
        async with httpx2.AsyncClient(trust_env=False, timeout=30) as http:
            # No view cookie (a view link opened without a token's one-time code): 401.
            nobody = await http.post(server.base + "/view/hold", json=body, headers=origin)
            assert nobody.status_code == 401
            # Bob's view: alice's session does not exist for him.
            assert (await sign_in(http, server, await new_link(server, "bob"))).status_code == 200
            bobs = await http.post(server.base + "/view/hold", json=body, headers=origin)
            assert bobs.status_code == 404 and sid not in bobs.text
            http.cookies.clear()
            # Alice's own view, but posted by another site: 403.
            assert (await sign_in(http, server, await new_link(server, "alice"))).status_code == 200
            foreign = {"Origin": "http://evil.test"}
            assert (
                await http.post(server.base + "/view/hold", json=body, headers=foreign)
            ).status_code == 403
            # From the view itself: taken; a second tab sees who holds it; input is checked.
            taken = await http.post(server.base + "/view/hold", json=body, headers=origin)
            assert taken.status_code == 200 and taken.json()["heldBy"] == "alice"
            # The view pings a quarter of the drop time: an open view is never dropped.
            assert taken.json()["pingMs"] == DROP_MS // 4
            other = {**body, "viewer": "e" * 32}
            second = await http.post(server.base + "/view/hold", json=other, headers=origin)
            assert second.status_code == 409 and second.json()["heldBy"] == "alice"
            not_mine = await http.post(
                server.base + "/view/input",
                json={**other, "events": [{"type": "ping"}]},
                headers=origin,
            )
            assert not_mine.status_code == 409
            bad = await http.post(
                server.base + "/view/input",
                json={**body, "events": [{"type": "move", "x": 2, "y": 0}]},
                headers=origin,
            )
            assert bad.status_code == 400 and bad.json()["details"]["field"] == "events[0].x"
            done = await http.post(server.base + "/view/release", json=body, headers=origin)
            assert done.status_code == 200


async def test_a_dropped_holder_is_released_and_the_agent_goes_on(
    server: Server, pages: FixtureSite
) -> None:
    async with sessions(server, "alice", ("dropped", pages.url("/to/form"))) as (agent, made):
        sid, pid = made[0]
        addr = {"sessionId": sid, "pageId": pid}
        body = {"viewer": "d" * 32, "sessionId": sid, "pageId": pid}
        async with httpx2.AsyncClient(trust_env=False, timeout=30) as http:
            assert (await sign_in(http, server, await new_link(server, "alice"))).status_code == 200
            taken = await http.post(
                server.base + "/view/hold", json=body, headers={"Origin": server.base}
            )
            assert taken.status_code == 200
        # The holder's view is gone (no more input). An action waits within its budget and
        # runs once the hold drops; browser_wait handback answers with the hand-back.
        click = asyncio.create_task(
            agent.raw(
                "browser_click",
                {
                    **addr,
                    "locator": {"strategy": "role", "value": "button", "name": "Ping"},
                    "timeoutMs": 60_000,
                },
            )
        )
        waited = await agent.ok(
            "browser_wait", {**addr, "condition": {"kind": "handback"}, "timeoutMs": 60_000}
        )
        assert waited["handedBack"] is True and waited["steps"][-1] == "handed back (dropped)"
        clicked = await asyncio.wait_for(click, WAIT_MS / 1000)
        assert not clicked.is_error, clicked.content[0].text
        assert (await agent.ok("browser_get_title", addr))["title"] == "Pinged"
        # Nobody holds it now: the wait answers at once, with nothing handed back.
        now = await agent.ok("browser_wait", {**addr, "condition": {"kind": "handback"}})
        assert now["handedBack"] is False
    assert any('"view.handback"' in line and '"dropped"' in line for line in server.proc.lines)
