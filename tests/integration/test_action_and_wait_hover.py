"""browser_action_and_wait's `hover` kind (issue 32 item 6) on real Chromium, through the MCP
client: hovering a menu button fetches and shows its submenu, the call's response wait observes
the fetch, and the recorded scenario exports as a test that replays green on a fresh copy of the
site and red on one whose menu no longer opens on hover (tests/fixtures/export_site.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.export_site import ExportSite
from tests.support.clients import ToolClient, tool_client
from tests.support.export_runner import run_exported, write_export
from tests.support.results import ref_named
from tests.support.runtimes import real_runtime

pytestmark = pytest.mark.anyio

TESTING = ("core", "testing")
PRODUCTS = {"strategy": "role", "value": "button", "name": "Products"}
LAPTOPS = {"strategy": "role", "value": "menuitem", "name": "Laptops"}


async def browse_the_menu(c: ToolClient, base: str) -> str:
    """Hover "Products" (by ref) waiting for the submenu's fetch, wait for "Laptops", follow it;
    the session's id."""
    s, p = await c.session(name="Shopper")
    at = {"sessionId": s, "pageId": p}
    await c.ok("browser_navigate", {**at, "url": f"{base}/menu"})
    table = await c.ok("browser_snapshot", {**at, "format": "actions"})
    assert "menuitem" not in table["snapshot"]  # the submenu is not there before the hover
    hovered = await c.ok(
        "browser_action_and_wait",
        {
            **at,
            "action": {
                "kind": "hover",
                "target": {"ref": ref_named(table["snapshot"], "button", "Products")},
            },
            "wait": {
                "kind": "response",
                "matcher": {"kind": "glob", "value": "**/api/menu?*"},
                "method": "GET",
                "status": 200,
            },
        },
    )
    assert hovered["event"] == {
        "kind": "response",
        "url": f"{base}/api/menu?section=products",
        "method": "GET",
        "status": 200,
    }
    visible = {"kind": "locator", "locator": LAPTOPS, "state": "visible"}
    await c.ok("browser_wait", {**at, "condition": visible})
    # a hover, not a click: a click on "Products" would have left for /products
    assert (await c.ok("browser_get_url", at))["url"] == f"{base}/menu"
    menu = await c.ok("browser_snapshot", {**at, "format": "actions"})
    assert 'button "Products"' in menu["snapshot"] and "expanded" in menu["snapshot"]
    assert 'menuitem "Phones"' in menu["snapshot"]
    opened = await c.ok(
        "browser_action_and_wait",
        {**at, "action": {"kind": "click", "target": LAPTOPS}, "wait": {"kind": "navigation"}},
    )
    assert opened["event"]["url"] == f"{base}/products/laptops"
    assert opened["event"]["title"] == "Laptops"
    return s


async def test_hover_and_wait_observes_the_submenu_and_replays(tmp_path: Path) -> None:
    with ExportSite() as recorded:
        async with real_runtime(tmp_path, tools=TESTING) as rt, tool_client(rt) as c:
            shopper = await browse_the_menu(c, recorded.base_url)
            # hover is refused like browser_hover: its target must be there
            missing = {"strategy": "role", "value": "button", "name": "No such menu"}
            pages = await c.ok("browser_page_list", {"sessionId": shopper})
            bad = await c.err(
                "browser_action_and_wait",
                {
                    "sessionId": shopper,
                    "pageId": pages["pages"][0]["pageId"],
                    "action": {"kind": "hover", "target": missing},
                    "wait": {"kind": "popup"},
                    "timeoutMs": 500,
                },
            )
            assert bad["code"] == "ELEMENT_NOT_FOUND"
            assert bad["details"]["operation"] == "hover over"
            exported = await c.ok("browser_test_export", {"sessionIds": [shopper]})
    code = exported["code"]
    # the hover replays by the locator the ref was described as, inside the response wait
    hover = "page.get_by_role('button', name=exact('Products')).hover()"
    lines = code.splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip().endswith(hover))
    assert "expect_response(" in lines[at - 1] and "No such menu" not in code
    test = write_export(tmp_path / "export", code)
    with ExportSite() as fresh:
        passed = run_exported(test, {"BM_BASE_URL": fresh.base_url})
        assert passed.returncode == 0, passed.stdout + passed.stderr
    with ExportSite(broken=True) as broken:  # the menu opens on click only: the hover shows nothing
        failed = run_exported(test, {"BM_BASE_URL": broken.base_url, "BM_TIMEOUT_MS": "2000"})
        assert failed.returncode == 1, failed.stdout + failed.stderr
        assert "expect_response" in failed.stdout
