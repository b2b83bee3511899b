"""Snapshots, element refs and cursor pagination on real Chromium."""

from __future__ import annotations

import re
from typing import Any

import pytest

from browsermesh.model.action_table import table_refs
from browsermesh.runtime.runtime import Runtime
from tests.fixtures.site import FixtureSite
from tests.support.clients import ToolClient, open_page

pytestmark = pytest.mark.anyio


def refs_of(data: dict[str, Any]) -> list[dict[str, str]]:
    """The refs of a snapshot result: its `refs` array (aria), or the table's lines (actions)."""
    return data["refs"] if "refs" in data else table_refs(data["snapshot"])


def ref_named(data: dict[str, Any], name: str) -> str:
    return next(r["ref"] for r in refs_of(data) if r.get("name") == name)


async def test_action_table_and_click_by_ref(mcp_client: ToolClient, site: FixtureSite) -> None:
    c = mcp_client
    addr = await open_page(c, site.url("/action-table"))
    data = await c.ok("browser_snapshot", {**addr, "format": "actions"})
    text = data["snapshot"]
    assert data["contentFormat"] == "action-table" and "partial" not in data
    assert text.startswith(f'page: "Action table" {site.url("/action-table")}\n')
    assert 'textbox "Item" · value "Blue teapot" — fill, press' in text
    assert 'textbox "Password" · value [REDACTED] — fill, press' in text
    assert "s3cret-pass" not in text
    assert 'combobox "Quantity" · selected "1" — select_option' in text
    assert "    more options: 5" in text
    assert 'checkbox "Gift wrap" · checked — check, uncheck' in text
    assert 'button "Cancel" · disabled — none' in text
    # every ref is inline on its line, with the same role and name as in `refs`
    for ref in refs_of(data):
        line = next(line for line in text.splitlines() if line.startswith(f"[{ref['ref']}] "))
        assert f"] {ref['role']} " in line and f'"{ref.get("name", "")}"' in line
    place = ref_named(data, "Place order")
    await c.ok("browser_click", {**addr, "ref": place})
    status = await c.ok(
        "browser_visible_text",
        {**addr, "locator": {"strategy": "testId", "value": "action-status"}},
    )
    assert status["text"] == "order placed"
    await c.ok("browser_fill", {**addr, "ref": "@" + ref_named(data, "Item"), "value": "Cup"})
    await c.ok("browser_select_option", {**addr, "ref": ref_named(data, "Quantity"), "value": "3"})
    again = await c.ok("browser_snapshot", {**addr, "format": "actions", "maxRefs": 2})
    lines = again["snapshot"].splitlines()
    assert len(refs_of(again)) == 2 and lines[-1].startswith("more: ")
    assert again["omissions"]["maxRefsNodes"] == int(lines[-1].split()[1])
    assert again["truncation"]["listedRefs"] == 2 and again["pagination"].get("nextCursor")
    assert 'value "Cup"' in again["snapshot"]


async def test_refs_go_stale(mcp_client: ToolClient, runtime: Runtime, site: FixtureSite) -> None:
    c = mcp_client
    addr = await open_page(c, site.url("/element-refs"))
    snap = await c.ok("browser_snapshot", {**addr, "format": "actions"})
    button = ref_named(snap, "Replace me")
    await c.ok("browser_click", {**addr, "ref": button})  # replaces itself
    err = await c.err("browser_click", {**addr, "ref": button})
    assert err["code"] == "STALE_ELEMENT_REFERENCE"
    # a newer capture kills older refs
    first = await c.ok("browser_snapshot", {**addr, "includeRefs": True})
    field = ref_named(first, "Ref input")
    await c.ok("browser_snapshot", {**addr, "includeRefs": True})
    assert (await c.err("browser_focus", {**addr, "ref": field}))["code"] == (
        "STALE_ELEMENT_REFERENCE"
    )
    # another session or page never resolves it
    current = await c.ok("browser_snapshot", {**addr, "includeRefs": True})
    field = ref_named(current, "Ref input")
    assert f"[ref={field}]" in current["snapshot"]
    other = await open_page(c, site.url("/element-refs"))
    assert (await c.err("browser_focus", {**other, "ref": field}))["code"] == (
        "STALE_ELEMENT_REFERENCE"
    )
    page2 = await c.ok("browser_page_create", {"sessionId": addr["sessionId"]})
    other_page = {"sessionId": addr["sessionId"], "pageId": page2["pageId"]}
    assert (await c.err("browser_focus", {**other_page, "ref": field}))["code"] == (
        "STALE_ELEMENT_REFERENCE"
    )
    # TTL: 30 s from capture on the engine's clock
    engine: Any = runtime.engine
    real = engine.clock
    try:

        class Later:
            def monotonic(self) -> float:
                return float(real.monotonic()) + 30.0

            def wall(self) -> float:
                return float(real.wall())

        engine.clock = Later()
        for page in runtime.sessions_snapshot()[addr["sessionId"]].pages.values():
            page.handle.refs.clock = engine.clock
        assert (await c.err("browser_focus", {**addr, "ref": field}))["code"] == (
            "STALE_ELEMENT_REFERENCE"
        )
    finally:
        engine.clock = real
    # navigation kills refs, even for an identical-looking page
    fresh = await c.ok("browser_snapshot", {**addr, "includeRefs": True})
    field = ref_named(fresh, "Ref input")
    await c.ok("browser_reload", addr)
    assert (await c.err("browser_focus", {**addr, "ref": field}))["code"] == (
        "STALE_ELEMENT_REFERENCE"
    )


async def test_old_generation_ref_never_hits_new_element(
    mcp_client: ToolClient, site: FixtureSite
) -> None:
    c = mcp_client
    addr = await open_page(c, site.url("/generation?step=1"))
    snap = await c.ok("browser_snapshot", {**addr, "format": "actions"})
    old = ref_named(snap, "Step 1 action")
    await c.ok("browser_navigate", {**addr, "url": site.url("/generation?step=2")})
    await c.ok("browser_snapshot", {**addr, "format": "actions"})
    assert (await c.err("browser_click", {**addr, "ref": old}))["code"] == (
        "STALE_ELEMENT_REFERENCE"
    )
    status = await c.ok(
        "browser_visible_text", {**addr, "locator": {"strategy": "testId", "value": "gen-status"}}
    )
    assert status["text"] == ""


async def test_pagination_reads_everything_exactly(
    mcp_client: ToolClient, site: FixtureSite
) -> None:
    c = mcp_client
    addr = await open_page(c, site.url("/multibyte?n=300"))
    full = await c.ok("browser_snapshot", {**addr, "maxChars": 100_000, "maxBytes": 131_072})
    whole = full["snapshot"]
    pieces: list[str] = []
    first = await c.ok("browser_snapshot", {**addr, "maxChars": 3000, "maxBytes": 4001})
    assert first["partial"] and first["contentFormat"] == "aria-yaml-fragment"
    t = first["truncation"]
    assert t["returnedBytes"] == len(first["snapshot"].encode()) <= 4001
    assert t["returnedChars"] == len(first["snapshot"])
    assert t["originalChars"] == len(whole) and t["originalBytes"] == len(whole.encode())
    pieces.append(first["snapshot"])
    cursor = first["pagination"].get("nextCursor")
    while cursor:
        nxt = await c.ok("browser_snapshot", {**addr, "cursor": cursor})
        assert "refs" not in nxt
        pieces.append(nxt["snapshot"])
        cursor = nxt["pagination"].get("nextCursor")
    assert "".join(pieces) == whole
    with_options = await c.err(
        "browser_snapshot", {**addr, "cursor": "snapshot_x.5", "maxChars": 10}
    )
    assert with_options["code"] == "INVALID_ARGUMENT"
    for unknown in ("snapshot_x.5", "c0zzz.5"):  # the old form; a short id never issued
        stale = await c.err("browser_snapshot", {**addr, "cursor": unknown})
        assert stale["code"] == "STALE_SNAPSHOT_CURSOR"
    cursor = first["pagination"].get("nextCursor")
    await c.ok("browser_reload", addr)
    assert (await c.err("browser_snapshot", {**addr, "cursor": cursor}))["code"] == (
        "STALE_SNAPSHOT_CURSOR"
    )


async def test_worked_example_and_bounds(mcp_client: ToolClient, site: FixtureSite) -> None:
    c = mcp_client
    addr = await open_page(c, site.url("/exact"))
    tiny = await c.ok("browser_snapshot", {**addr, "maxChars": 4, "maxBytes": 4})
    assert tiny["snapshot"] == "- ma" and tiny["truncation"]["byMaxChars"]
    assert tiny["truncation"]["byMaxBytes"] and tiny["partial"] is True
    nxt = await c.ok("browser_snapshot", {**addr, "cursor": tiny["pagination"].get("nextCursor")})
    assert nxt["pagination"]["offsetChars"] == 4
    bad = await c.err("browser_snapshot", {**addr, "maxChars": 0})
    assert bad["code"] == "INVALID_ARGUMENT"
    assert bad["details"] == {"field": "maxChars", "rule": "at least 1"}
    for args in (
        {"format": "actions", "interactiveOnly": True},
        {"format": "actions", "includeRefs": False},
        {"maxRefs": 5},
    ):
        assert (await c.err("browser_snapshot", {**addr, **args}))["code"] == ("INVALID_ARGUMENT")


async def test_password_redaction_in_both_formats(
    mcp_client: ToolClient, site: FixtureSite
) -> None:
    c = mcp_client
    addr = await open_page(c, site.url("/password"))
    for args in ({}, {"includeRefs": True}, {"format": "actions"}):
        text = (await c.ok("browser_snapshot", {**addr, **args}))["snapshot"]
        assert "hunter2-secret" not in text and "other-secret-9" not in text
        assert "[REDACTED]" in text and "alice" in text


async def test_filters_and_source_budget(mcp_client: ToolClient, site: FixtureSite) -> None:
    c = mcp_client
    addr = await open_page(c, site.url("/interactions"))
    only = await c.ok("browser_snapshot", {**addr, "interactiveOnly": True})
    assert only["omissions"]["nonInteractiveNodes"] > 0
    assert "heading" not in only["snapshot"] and "button" in only["snapshot"]
    capped = await c.ok("browser_snapshot", {**addr, "maxChildren": 1})
    assert capped["omissions"]["maxChildrenNodes"] > 0
    scoped = await c.ok(
        "browser_snapshot",
        {**addr, "scope": {"strategy": "role", "value": "button", "name": "Double me"}},
    )
    assert scoped["snapshot"].startswith('- button "Double me"')
    assert scoped["appliedBounds"]["scope"] == {
        "strategy": "role",
        "value": "button",
        "name": "Double me",
        "exact": True,
    }
    big = await open_page(c, site.url("/big?n=12000"))
    err = await c.err("browser_snapshot", {**big, "timeoutMs": 20000})
    assert err["code"] == "LIMIT_EXCEEDED"
    assert (await c.ok("browser_get_title", big))["title"]  # the queue still works


async def test_regions_collapse_and_region_scope(mcp_client: ToolClient, site: FixtureSite) -> None:
    c = mcp_client
    addr = await open_page(c, site.url("/docs-large"))
    data = await c.ok("browser_snapshot", {**addr, "format": "actions"})
    lines = data["snapshot"].splitlines()
    region = next(line for line in lines if "· 480 links — snapshot" in line)
    assert re.match(r'^\[s[0-9a-z]+r1\] navigation "Table of contents"', region)
    assert data["omissions"]["collapsedNodes"] == 480
    assert any(
        'searchbox "Search this book"' in line or 'textbox "Search this book"' in line
        for line in lines
    )
    region_ref = region[1 : region.index("]")]
    inside = await c.ok(
        "browser_snapshot",
        {**addr, "format": "actions", "scope": {"ref": region_ref}, "maxRefs": 100},
    )
    last = inside["snapshot"].splitlines()[-1]
    assert len(refs_of(inside)) == 100 and last == "more: 380 — pass nextCursor"
    t = inside["truncation"]
    assert (t["truncated"], t["listedRefs"], t["omittedRefs"]) == (True, 100, 380)
    # Every link of the region is reachable through the cursor, each once, with live refs.
    seen, cursor = refs_of(inside), inside["pagination"].get("nextCursor")
    while cursor:
        nxt = await c.ok("browser_snapshot", {**addr, "cursor": cursor})
        seen += refs_of(nxt)
        cursor = nxt.get("pagination", {}).get("nextCursor")
    assert len(seen) == 480 and len({r["ref"] for r in seen}) == 480
    await c.ok("browser_scroll_into_view", {**addr, "ref": seen[-1]["ref"]})
    element_ref = refs_of(data)[0]["ref"]
    assert (await c.err("browser_snapshot", {**addr, "scope": {"ref": element_ref}}))[
        "code"
    ] == "STALE_ELEMENT_REFERENCE"
