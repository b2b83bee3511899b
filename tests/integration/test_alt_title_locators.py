"""The `alt` and `title` locator strategies (issue 32 item 6) on real Chromium through MCP:
matched like `text` and `label` (exact normalized name by default, `exact: false` any-case
substring), strict, with candidates on a miss, and replayed by an exported test."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.site import FixtureSite
from tests.support.clients import ToolClient, open_page, tool_client
from tests.support.export_runner import run_exported, write_export
from tests.support.locators import by_alt, by_title
from tests.support.runtimes import real_runtime

pytestmark = pytest.mark.anyio

PIXEL = "data:image/gif;base64,R0lGODlhAQABAAAAACw="
GALLERY = f"""<!doctype html><title>Gallery</title>
<h1>Gallery</h1>
<button onclick="out.textContent = 'logo clicked'">
<img alt="Company logo" src="{PIXEL}" width=24 height=24></button>
<p><input id=q title="Search the gallery"></p>
<p><span title="Shipping note">Ships in 2 days</span></p>
<p><img alt="Twin" src="{PIXEL}" width=8 height=8>
<img alt="Twin" src="{PIXEL}" width=8 height=8></p>
<p id=out></p>
<script>q.addEventListener('input', () => {{ out.textContent = 'q=' + q.value; }});</script>"""
TESTING = ("core", "testing")


@pytest.fixture
def gallery(site: FixtureSite) -> str:
    site.pages["/locators/gallery"] = GALLERY
    return site.url("/locators/gallery")


async def output(c: ToolClient, addr: dict[str, str]) -> str:
    data = await c.ok(
        "browser_visible_text", {**addr, "locator": {"strategy": "css", "value": "#out"}}
    )
    return str(data["text"])


async def test_alt_and_title_find_elements_by_their_exact_names(
    client: ToolClient, gallery: str
) -> None:
    addr = await open_page(client, gallery)
    await client.ok("browser_click", {**addr, "locator": by_alt("Company logo")})
    assert await output(client, addr) == "logo clicked"
    await client.ok(
        "browser_fill", {**addr, "locator": by_title("Search the gallery"), "value": "tea"}
    )
    assert await output(client, addr) == "q=tea"
    note = await client.ok("browser_visible_text", {**addr, "locator": by_title("Shipping note")})
    assert note["text"] == "Ships in 2 days"
    # Normalized like every named strategy: whitespace and a trailing `:` do not matter.
    await client.ok(
        "browser_fill", {**addr, "locator": by_title(" Search  the gallery: "), "value": "cup"}
    )
    assert await output(client, addr) == "q=cup"


async def test_exact_false_is_an_any_case_substring_and_exact_stays_exact(
    client: ToolClient, gallery: str
) -> None:
    addr = await open_page(client, gallery)
    await client.ok("browser_click", {**addr, "locator": by_alt("LOGO", exact=False)})
    assert await output(client, addr) == "logo clicked"
    note = await client.ok(
        "browser_visible_text", {**addr, "locator": by_title("shipping", exact=False)}
    )
    assert note["text"] == "Ships in 2 days"
    missed = await client.err(
        "browser_click", {**addr, "locator": by_alt("company logo"), "timeoutMs": 3000}
    )
    assert missed["code"] == "ELEMENT_NOT_FOUND", missed
    assert missed["details"]["locator"] == {
        "strategy": "alt",
        "value": "company logo",
        "exact": True,
    }
    names = [c.get("name") for c in missed["details"].get("candidates", [])]
    assert "Company logo" in names, missed  # the named node the client probably meant


async def test_two_matches_are_ambiguous_and_name_is_refused(
    client: ToolClient, gallery: str
) -> None:
    addr = await open_page(client, gallery)
    twins = await client.err("browser_hover", {**addr, "locator": by_alt("Twin")})
    assert twins["code"] == "LOCATOR_AMBIGUOUS", twins
    assert twins["details"]["matchCount"] == 2
    for tool in ("browser_click", "browser_hover"):  # the documented schema and an open one
        named = await client.err(tool, {**addr, "locator": by_title("Shipping note", name="x")})
        assert named["code"] == "INVALID_ARGUMENT"
        assert named["details"]["field"] == "locator.name", named


async def test_an_exported_test_replays_alt_and_title_locators(
    tmp_path: Path, site: FixtureSite, gallery: str
) -> None:
    async with real_runtime(tmp_path, tools=TESTING) as rt, tool_client(rt) as c:
        s, p = await c.session(name="Visitor")
        at: dict[str, Any] = {"sessionId": s, "pageId": p}
        await c.ok("browser_navigate", {**at, "url": gallery})
        await c.ok("browser_click", {**at, "locator": by_alt("Company logo")})
        clicked = {"kind": "text", "text": "logo clicked", "state": "present"}
        await c.ok("browser_wait", {**at, "condition": clicked})
        await c.ok(
            "browser_fill", {**at, "locator": by_title("search", exact=False), "value": "jam"}
        )
        await c.ok("browser_wait", {**at, "condition": {**clicked, "text": "q=jam"}})
        exported = await c.ok("browser_test_export", {"sessionIds": [s]})
    code = exported["code"]
    assert ".get_by_alt_text(exact('Company logo')).click()" in code, code
    assert ".get_by_title('search').fill('jam')" in code, code
    test = write_export(tmp_path / "export", code)
    passed = run_exported(test, {"BM_BASE_URL": site.base_url})
    assert passed.returncode == 0, passed.stdout + passed.stderr
    # The replay really depends on the locators: without the alt text it fails.
    site.pages["/locators/gallery"] = GALLERY.replace('alt="Company logo"', 'alt="Brand"')
    try:
        failed = run_exported(test, {"BM_BASE_URL": site.base_url, "BM_TIMEOUT_MS": "2000"})
    finally:
        site.pages["/locators/gallery"] = GALLERY
    assert failed.returncode == 1, failed.stdout + failed.stderr
