"""Element actions and locators on real Chromium, each with a visible effect asserted."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fixtures.site import FixtureSite
from tests.support.clients import ToolClient, open_page, tool_client
from tests.support.locators import by_test_id, role
from tests.support.runtimes import real_runtime

pytestmark = pytest.mark.anyio


async def text_of(c: ToolClient, addr: dict[str, Any], test_id: str) -> str:
    data = await c.ok("browser_visible_text", {**addr, "locator": by_test_id(test_id)})
    return str(data["text"])


async def test_every_interaction_has_its_effect(mcp_client: ToolClient, site: FixtureSite) -> None:
    c = mcp_client
    addr = await open_page(c, site.url("/interactions"))
    await c.ok("browser_hover", {**addr, "locator": by_test_id("hover-target")})
    assert await text_of(c, addr, "hover-status") == "hovered"
    await c.ok("browser_focus", {**addr, "locator": {"strategy": "label", "value": "Focus me"}})
    assert await text_of(c, addr, "focus-status") == "focused"
    await c.ok("browser_double_click", {**addr, "locator": role("button", "Double me")})
    assert await text_of(c, addr, "dblclick-status") == "double-clicked"
    terms = role("checkbox", "Accept terms")
    for _ in range(2):  # idempotent ensure-state
        await c.ok("browser_check", {**addr, "locator": terms})
    assert "checked" in (await text_of(c, addr, "checkbox-status"))
    await c.ok("browser_uncheck", {**addr, "locator": terms})
    await c.ok("browser_uncheck", {**addr, "locator": terms})
    assert "unchecked" in (await text_of(c, addr, "checkbox-status"))
    await c.ok("browser_check", {**addr, "locator": role("radio", "Large")})
    assert await text_of(c, addr, "radio-status") == "large"
    size = {"strategy": "label", "value": "Size"}
    await c.ok("browser_select_option", {**addr, "locator": size, "value": "s"})
    assert await text_of(c, addr, "select-status") == "s"
    await c.ok("browser_select_option", {**addr, "locator": size, "value": "Large size"})
    assert await text_of(c, addr, "select-status") == "l"
    await c.ok(
        "browser_drag_and_drop",
        {**addr, "source": by_test_id("drag-source"), "target": by_test_id("drop-target")},
    )
    assert await text_of(c, addr, "drop-status") == "dropped"
    search = role("textbox", "Search")
    await c.ok("browser_fill", {**addr, "locator": search, "value": "teapots"})
    await c.ok("browser_press", {**addr, "locator": search, "key": "Enter"})
    assert await text_of(c, addr, "form-status") == "submitted:teapots"
    await c.ok("browser_scroll", {**addr, "deltaX": 0, "deltaY": 800})
    assert await text_of(c, addr, "scroll-status") == "scrolled"
    await c.ok("browser_scroll_into_view", {**addr, "locator": role("button", "Far button")})
    await c.ok("browser_click", {**addr, "locator": role("button", "Far button")})
    assert await text_of(c, addr, "far-status") == "far clicked"


async def test_locator_strategies_and_errors(mcp_client: ToolClient, site: FixtureSite) -> None:
    c = mcp_client
    addr = await open_page(c, site.url("/ambiguous"))
    # exact by default: "Employees" matches one link, partial matches two
    await c.ok("browser_hover", {**addr, "locator": role("link", "Employees")})
    err = await c.err("browser_hover", {**addr, "locator": role("link", "employees", exact=False)})
    assert err["code"] == "LOCATOR_AMBIGUOUS"
    assert err["details"]["locator"] == {
        "strategy": "role",
        "value": "link",
        "name": "employees",
        "exact": False,
    }
    err = await c.err("browser_click", {**addr, "locator": role("button", "Save")})
    assert err["code"] == "LOCATOR_AMBIGUOUS" and err["operationId"]
    err = await c.err(
        "browser_click", {**addr, "locator": role("button", "Missing"), "timeoutMs": 1000}
    )
    assert err["code"] == "ELEMENT_NOT_FOUND" and err["details"]["operation"] == "click"
    err = await c.err("browser_click", {**addr, "locator": {"strategy": "css", "value": "##bad"}})
    assert err["code"] == "ELEMENT_NOT_FOUND"
    both = await c.err(
        "browser_click", {**addr, "locator": role("link", "Employees"), "ref": "s1e1"}
    )
    assert both["code"] == "INVALID_ARGUMENT"
    neither = await c.err("browser_click", addr)
    assert neither["code"] == "INVALID_ARGUMENT"
    bad_role = await c.err("browser_click", {**addr, "locator": role("buton", "x")})
    assert bad_role["code"] == "INVALID_ARGUMENT"
    assert bad_role["details"]["field"] == "locator.value"  # every ARIA role is accepted
    bad_strategy = await c.err(
        "browser_click", {**addr, "locator": {"strategy": "xpath", "value": "//a"}}
    )
    assert bad_strategy["code"] == "INVALID_ARGUMENT"
    assert bad_strategy["details"]["field"] == "locator.strategy"
    addr2 = await open_page(c, site.url("/"))
    await c.ok(
        "browser_fill",
        {**addr2, "locator": {"strategy": "placeholder", "value": "Your name"}, "value": "Ann"},
    )
    await c.ok("browser_click", {**addr2, "locator": {"strategy": "text", "value": "Submit"}})
    assert await text_of(c, addr2, "status") == "clicked"


async def test_not_actionable_is_its_own_code(mcp_client: ToolClient, site: FixtureSite) -> None:
    c = mcp_client
    addr = await open_page(c, site.url("/not-actionable"))
    for name, reason in (("Disabled action", "disabled"), ("Covered action", "covered")):
        err = await c.err(
            "browser_click", {**addr, "locator": role("button", name), "timeoutMs": 600}
        )
        assert err["code"] == "ELEMENT_NOT_ACTIONABLE", name
        assert err["details"]["reason"] == reason, name
    # the queue still works
    assert (await c.ok("browser_get_title", addr))["title"] == "Not actionable"


async def test_iframe_chains(mcp_client: ToolClient, site: FixtureSite) -> None:
    c = mcp_client
    addr = await open_page(c, site.url("/iframes"))
    chain = [{"strategy": "css", "value": "#frame-one"}, {"strategy": "css", "value": "#frame-two"}]
    deep = role("button", "Deep button", frame={"kind": "iframe", "chain": chain})
    await c.ok("browser_click", {**addr, "locator": deep})  # cross-origin level two
    text = await c.ok(
        "browser_visible_text",
        {
            **addr,
            "locator": {
                "strategy": "testId",
                "value": "deep-status",
                "frame": {"kind": "iframe", "chain": chain},
            },
        },
    )
    assert text["text"]
    one = role("button", "Level one button", frame={"kind": "iframe", "chain": chain[:1]})
    await c.ok("browser_click", {**addr, "locator": one})
    dup = role(
        "button",
        "x",
        frame={"kind": "iframe", "chain": [{"strategy": "css", "value": "iframe.dup"}]},
    )
    err = await c.err("browser_click", {**addr, "locator": dup})
    assert err["code"] == "LOCATOR_AMBIGUOUS"
    missing = role(
        "button", "x", frame={"kind": "iframe", "chain": [{"strategy": "css", "value": "#nope"}]}
    )
    err = await c.err("browser_click", {**addr, "locator": missing, "timeoutMs": 10_000})
    assert err["code"] == "ELEMENT_NOT_FOUND"


async def test_visible_text_truncation(tmp_path: Any, site: FixtureSite) -> None:
    async with (
        real_runtime(tmp_path, visible_text_max_chars=128, visible_text_max_bytes=512) as rt,
        tool_client(rt) as c,
    ):
        addr = await open_page(c, site.url("/multibyte?n=50"))
        data = await c.ok(
            "browser_visible_text", {**addr, "locator": {"strategy": "css", "value": "body"}}
        )
        t = data["truncation"]
        assert t["truncated"] and t["returnedChars"] == len(data["text"])
        assert t["returnedBytes"] == len(data["text"].encode()) <= 512
        assert t["returnedChars"] <= 128 and t["originalChars"] > 128
