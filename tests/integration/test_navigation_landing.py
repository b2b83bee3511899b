"""What a navigation answered (issue 31 item 2), over the MCP SDK client on real Chromium.

`browser_navigate`, the history steps and `browser_action_and_wait` with a navigation wait say
the main document's HTTP status (none without a document: about:blank, a same-document step),
the final URL, the title and the key text lines the actions snapshot's header shows, so a 403
is seen without a second call.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.fixtures.site import FixtureSite
from tests.support.clients import ToolClient

pytestmark = pytest.mark.anyio


async def header_keys(client: ToolClient, addr: dict[str, str], count: int) -> list[str]:
    """The `count` key text lines after the `page:` header of the page's actions table."""
    table = await client.ok("browser_snapshot", {**addr, "format": "actions"})
    lines: list[str] = table["snapshot"].splitlines()
    assert lines[0].startswith("page: ")
    return lines[1 : 1 + count]


async def new_page(client: ToolClient) -> dict[str, str]:
    s, p = await client.session()
    return {"sessionId": s, "pageId": p}


async def test_navigate_answers_status_title_and_the_headers_key_lines(
    client: ToolClient, site: FixtureSite
) -> None:
    addr = await new_page(client)
    ok = await client.ok("browser_navigate", {**addr, "url": site.url("/landing")})
    assert ok["status"] == 200 and ok["url"] == site.url("/landing")
    assert ok["title"] == "Landing page"
    assert any("Welcome back." in k for k in ok["keys"]), ok["keys"]
    assert any(k.startswith("h1 ") and "Landing" in k for k in ok["keys"]), ok["keys"]
    assert any("3 results" in k for k in ok["keys"]), ok["keys"]
    assert ok["keys"] == await header_keys(client, addr, len(ok["keys"]))


async def test_a_403_page_is_visible_in_the_navigation_result(
    client: ToolClient, site: FixtureSite
) -> None:
    addr = await new_page(client)
    denied = await client.ok("browser_navigate", {**addr, "url": site.url("/forbidden")})
    assert denied["status"] == 403 and denied["title"] == "Forbidden"
    assert any("You need the staff role." in k for k in denied["keys"]), denied["keys"]
    assert any("Access denied" in k for k in denied["keys"]), denied["keys"]
    assert denied["keys"] == await header_keys(client, addr, len(denied["keys"]))


async def test_a_redirect_answers_the_final_url_and_the_final_documents_status(
    client: ToolClient, site: FixtureSite
) -> None:
    addr = await new_page(client)
    moved = await client.ok(
        "browser_navigate", {**addr, "url": site.url("/redirect?to=/forbidden")}
    )
    assert moved["url"] == site.url("/forbidden")
    assert moved["status"] == 403 and moved["title"] == "Forbidden"


async def test_history_steps_answer_like_navigate_and_about_blank_has_no_status(
    client: ToolClient, site: FixtureSite
) -> None:
    addr = await new_page(client)  # the first page starts at about:blank
    await client.ok("browser_navigate", {**addr, "url": site.url("/landing")})
    await client.ok("browser_navigate", {**addr, "url": site.url("/forbidden")})
    reloaded = await client.ok("browser_reload", addr)
    assert reloaded["status"] == 403 and reloaded["title"] == "Forbidden"
    assert any("You need the staff role." in k for k in reloaded["keys"])
    back = await client.ok("browser_back", addr)
    assert back["url"] == site.url("/landing")
    assert back["status"] == 200 and back["title"] == "Landing page"
    forward = await client.ok("browser_forward", addr)
    assert forward["status"] == 403 and forward["url"] == site.url("/forbidden")
    await client.ok("browser_back", addr)
    blank = await client.ok("browser_back", addr)
    # Lean: no document, no title, no key text -> only the url (no echoed ids: issue 31 #9).
    assert blank["url"] == "about:blank"
    assert set(blank) == {"operationId", "url"}, blank


async def test_a_same_document_step_has_a_title_but_no_status(
    client: ToolClient, site: FixtureSite
) -> None:
    addr = await new_page(client)
    await client.ok("browser_navigate", {**addr, "url": site.url("/landing")})
    hop = await client.ok("browser_navigate", {**addr, "url": site.url("/landing#below")})
    assert hop["url"] == site.url("/landing#below") and hop["title"] == "Landing page"
    assert "status" not in hop


async def test_action_and_wait_with_a_navigation_wait_answers_the_status(
    client: ToolClient, site: FixtureSite
) -> None:
    addr = await new_page(client)
    await client.ok("browser_navigate", {**addr, "url": site.url("/landing")})
    link: dict[str, Any] = {"strategy": "role", "value": "link", "name": "Staff area"}
    done = await client.ok(
        "browser_action_and_wait",
        {
            **addr,
            "action": {"kind": "click", "target": link},
            "wait": {"kind": "navigation"},
        },
    )
    event = done["event"]
    assert event["kind"] == "navigation" and event["url"] == site.url("/forbidden")
    assert event["status"] == 403 and event["title"] == "Forbidden"
    assert any("You need the staff role." in k for k in event["keys"]), event
