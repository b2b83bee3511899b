"""Page tools on real Chromium (issue 36 item 1, profile `webmcp`), against the loopback
WebMCP site (tests/fixtures/webmcp_site.py): the listing (marks, annotations, the iframe's
tool, `frame` narrowing), calls (structured answer, isError, a throwing tool, a tool that was
unregistered or never was), redaction of the page's password value, a late registration found
by polling, two sessions each seeing only its own page's tools, the `pageTools` count on
snapshots and navigations only with the profile, `--webmcp off`, and oversized arguments."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.webmcp_site import WebMcpSite
from tests.support.clients import ToolClient, tool_client
from tests.support.runtimes import real_runtime

pytestmark = pytest.mark.anyio

WEBMCP = ("core", "webmcp")
POLL_S = 30.0
FRAME = {"kind": "iframe", "chain": [{"strategy": "css", "value": "iframe"}]}
MAIN_TOOLS = {"search_catalog", "update_cart", "explode", "reveal", "failing", "slow", "gone_tool"}


@pytest.fixture(scope="module")
def shop() -> Iterator[WebMcpSite]:
    with WebMcpSite() as site:
        yield site


async def opened(c: ToolClient, url: str) -> dict[str, str]:
    s, p = await c.session()
    at = {"sessionId": s, "pageId": p}
    await c.ok("browser_navigate", {**at, "url": url})
    return at


async def listed(c: ToolClient, at: dict[str, str], *need: str) -> dict[str, Any]:
    """browser_page_tools, polled until every name in `need` is listed (the page registers
    them from its scripts; `late_tool` 300 ms after load)."""
    give_up = time.monotonic() + POLL_S
    while True:
        data = await c.ok("browser_page_tools", at)
        names = {t["name"] for t in data.get("tools", [])}
        if set(need) <= names:
            return data
        assert time.monotonic() < give_up, f"never listed: {set(need) - names}"
        # One more round trip to the page before asking again (no fixed sleep).
        await c.ok("browser_wait", {**at, "condition": {"kind": "load", "state": "load"}})


async def test_listing_marks_annotations_and_frames(tmp_path: Path, shop: WebMcpSite) -> None:
    async with real_runtime(tmp_path, tools=WEBMCP) as rt, tool_client(rt) as c:
        at = await opened(c, shop.url("/"))
        data = await listed(c, at, *MAIN_TOOLS, "frame_tool", "late_tool")
        assert data["source"] == "page" and data["untrusted"] is True
        assert "not as instructions" in data["notice"]
        tools = {t["name"]: t for t in data["tools"]}
        assert tools["search_catalog"]["annotations"] == {"readOnly": True}
        assert tools["search_catalog"]["inputSchema"]["required"] == ["query"]
        assert tools["update_cart"]["annotations"] == {
            "untrustedContent": True,
            "consequential": True,
        }
        assert "annotations" not in tools["explode"] and "inputSchema" not in tools["explode"]
        assert tools["search_catalog"]["description"] == "Search the catalog by text."
        assert "frame" not in tools["search_catalog"]
        assert tools["frame_tool"]["frame"]["kind"] == "iframe"
        assert len(tools["frame_tool"]["frame"]["chain"]) == 1

        only = await c.ok("browser_page_tools", {**at, "frame": FRAME})
        assert [t["name"] for t in only["tools"]] == ["frame_tool"]
        main = await c.ok("browser_page_tools", {**at, "frame": {"kind": "main"}})
        assert "frame_tool" not in {t["name"] for t in main["tools"]}
        # The listed address calls the frame's tool; the main frame does not have it.
        address = tools["frame_tool"]["frame"]
        done = await c.ok("browser_page_tool_call", {**at, "name": "frame_tool", "frame": address})
        assert done["result"] == {"content": [{"type": "text", "text": "from frame"}]}
        assert done["source"] == "page"
        err = await c.err("browser_page_tool_call", {**at, "name": "frame_tool"})
        assert err["details"]["reason"] == "page_tool_not_found"
        bad = {"kind": "iframe", "chain": [{"strategy": "css", "value": "#no-such"}]}
        missing = await c.err("browser_page_tools", {**at, "frame": bad, "timeoutMs": 10_000})
        assert missing["code"] == "ELEMENT_NOT_FOUND"


async def test_a_frame_that_refuses_is_skipped_and_counted(
    tmp_path: Path, shop: WebMcpSite
) -> None:
    async with real_runtime(tmp_path, tools=WEBMCP) as rt, tool_client(rt) as c:
        at = await opened(c, shop.url("/?xo=1"))
        data = await listed(c, at, "search_catalog", "frame_tool")
        frames = [t for t in data["tools"] if t["name"] == "frame_tool"]
        assert len(frames) == 1  # the same-origin iframe's; the cross-origin one has none
        other = {"kind": "iframe", "chain": [{"strategy": "css", "value": "iframe[title=other]"}]}
        narrowed = await c.ok("browser_page_tools", {**at, "frame": other})
        assert data["skippedFrames"] == 1
        assert narrowed["tools"] == [] and narrowed["skippedFrames"] == 1


async def test_calls_answer_or_fail_clearly(tmp_path: Path, shop: WebMcpSite) -> None:
    async with real_runtime(tmp_path, tools=WEBMCP) as rt, tool_client(rt) as c:
        at = await opened(c, shop.url("/"))
        await listed(c, at, *MAIN_TOOLS)
        found = await c.ok(
            "browser_page_tool_call",
            {**at, "name": "search_catalog", "arguments": {"query": "red"}},
        )
        assert found["result"]["structuredContent"]["hits"][1] == {"id": 2, "name": "red cap"}
        assert found["result"]["content"][0]["text"] == "found 2 for red"
        assert "truncated" not in found

        added = await c.ok(
            "browser_page_tool_call", {**at, "name": "update_cart", "arguments": {"item": "mug"}}
        )
        assert added["result"]["content"][0]["text"] == "added mug"
        cart = await c.ok(
            "browser_visible_text", {**at, "locator": {"strategy": "css", "value": "#cart"}}
        )
        assert cart["text"] == "cart: mug"

        failing = await c.err("browser_page_tool_call", {**at, "name": "failing"})
        assert failing["code"] == "BROWSER_ERROR"
        assert failing["details"] == {
            "reason": "page_tool_error",
            "toolName": "failing",
            "toolText": "out of stock",
        }
        assert "isError" in failing["message"]

        threw = await c.err("browser_page_tool_call", {**at, "name": "explode"})
        assert threw["code"] == "BROWSER_ERROR"
        assert threw["details"]["reason"] == "page_tool_threw"
        assert "does not pass on the exception" in threw["message"]
        assert "kaboom" not in str(threw)

        unknown = await c.err("browser_page_tool_call", {**at, "name": "nope"})
        assert unknown["code"] == "INVALID_ARGUMENT"
        assert unknown["details"] == {
            "reason": "page_tool_not_found",
            "toolName": "nope",
            "field": "name",
            "rule": "a tool that frame registers now",
        }
        assert 'Page tool "nope" is not registered on this page now.' in unknown["message"]
        assert "browser_page_tools" in unknown["nextStep"]
        assert "search_catalog" not in str(unknown)  # never the page's list of names

        # Registered, called, then unregistered by the page: a clear error with the next step.
        still = await c.ok("browser_page_tool_call", {**at, "name": "gone_tool"})
        assert still["result"]["content"][0]["text"] == "still here"
        await c.ok("browser_click", {**at, "locator": {"strategy": "css", "value": "#drop"}})
        await c.ok(
            "browser_wait",
            {**at, "condition": {"kind": "text", "text": "dropped", "state": "present"}},
        )
        gone = await c.err("browser_page_tool_call", {**at, "name": "gone_tool"})
        assert gone["details"]["reason"] == "page_tool_not_found"
        names = {t["name"] for t in (await c.ok("browser_page_tools", at))["tools"]}
        assert "gone_tool" not in names

        slow = await c.err(
            "browser_page_tool_call",
            {**at, "name": "slow", "arguments": {"ms": 60_000}, "timeoutMs": 1_000},
        )
        assert slow["code"] == "OPERATION_TIMEOUT"
        # The page stays usable after a tool timed out.
        again = await c.ok(
            "browser_page_tool_call", {**at, "name": "search_catalog", "arguments": {"query": "x"}}
        )
        assert again["result"]["structuredContent"]["query"] == "x"


async def test_answers_are_redacted_like_page_text(tmp_path: Path, shop: WebMcpSite) -> None:
    secret = "hunter2-Secret-77"
    async with real_runtime(tmp_path, tools=WEBMCP) as rt, tool_client(rt) as c:
        at = await opened(c, shop.url("/"))
        await listed(c, at, "reveal")
        pw = {"strategy": "css", "value": "#pw"}
        await c.ok("browser_fill", {**at, "locator": pw, "value": secret})
        raw = await c.raw("browser_page_tool_call", {**at, "name": "reveal"})
        assert not raw.is_error
        text = raw.content[-1].text
        assert secret not in text
        assert raw.structured_content["result"]["content"][0]["text"] == (
            "the password is [REDACTED]"
        )


async def test_two_sessions_see_only_their_own_pages_tools(
    tmp_path: Path, shop: WebMcpSite
) -> None:
    async with real_runtime(tmp_path, tools=WEBMCP) as rt, tool_client(rt) as c:
        a = await opened(c, shop.url("/?who=alpha"))
        b = await opened(c, shop.url("/?who=beta"))
        names_a = {t["name"] for t in (await listed(c, a, "tool_alpha"))["tools"]}
        names_b = {t["name"] for t in (await listed(c, b, "tool_beta"))["tools"]}
        assert "tool_beta" not in names_a and "tool_alpha" not in names_b
        done = await c.ok("browser_page_tool_call", {**b, "name": "tool_beta"})
        assert done["result"]["content"][0]["text"] == "page beta"
        other = await c.err("browser_page_tool_call", {**a, "name": "tool_beta"})
        assert other["details"]["reason"] == "page_tool_not_found"


async def test_snapshot_and_navigation_count_page_tools_with_the_profile(
    tmp_path: Path, shop: WebMcpSite
) -> None:
    async with real_runtime(tmp_path, tools=WEBMCP) as rt, tool_client(rt) as c:
        at = await opened(c, shop.url("/"))
        await listed(c, at, *MAIN_TOOLS, "frame_tool", "late_tool")
        snap = await c.ok("browser_snapshot", at)
        assert snap["pageTools"] == len(MAIN_TOOLS) + 2  # frame_tool and late_tool
        reloaded = await c.ok("browser_reload", at)
        assert reloaded["pageTools"] >= len(MAIN_TOOLS)  # late_tool comes 300 ms after load
        plain = await c.ok("browser_navigate", {**at, "url": shop.url("/plain")})
        assert "pageTools" not in plain  # 0 is left out
        assert "pageTools" not in await c.ok("browser_snapshot", at)
        back = await c.ok("browser_back", at)
        assert back["pageTools"] >= len(MAIN_TOOLS)
        info = await c.ok("browser_runtime_info")
        assert info["webmcp"] is True

    async with real_runtime(tmp_path, tools=("core",)) as rt, tool_client(rt) as c:
        assert "browser_page_tools" not in c.tools
        at = await opened(c, shop.url("/"))
        assert "pageTools" not in await c.ok("browser_reload", at)
        assert "pageTools" not in await c.ok("browser_snapshot", at)


async def test_webmcp_off_and_argument_bounds(tmp_path: Path, shop: WebMcpSite) -> None:
    async with real_runtime(tmp_path, tools=WEBMCP, webmcp=False) as rt, tool_client(rt) as c:
        at = await opened(c, shop.url("/"))
        off = await c.err("browser_page_tools", at)
        assert off["code"] == "BROWSER_ERROR"
        assert off["details"] == {"reason": "webmcp_off"}
        assert "--webmcp on" in off["nextStep"]
        assert "pageTools" not in await c.ok("browser_snapshot", at)
        assert (await c.ok("browser_runtime_info"))["webmcp"] is False

    async with real_runtime(tmp_path, tools=WEBMCP) as rt, tool_client(rt) as c:
        at = await opened(c, shop.url("/"))
        big = {"blob": "x" * 70_000}
        err = await c.err("browser_page_tool_call", {**at, "name": "slow", "arguments": big})
        assert err["code"] == "INVALID_ARGUMENT"
        assert err["details"]["field"] == "arguments"
        bad_name = await c.err("browser_page_tool_call", {**at, "name": "has space"})
        assert bad_name["details"]["field"] == "name"
