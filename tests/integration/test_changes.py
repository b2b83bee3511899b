"""Fewer calls per task (issue 15): list pages whose table puts the work first and pages every
control through the cursor, and interaction results that say what changed (real Chromium)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from browsermesh.model.action_table import MAX_KEY_LINES, table_refs
from tests.fixtures.list_site import ListSite
from tests.support.clients import ToolClient, open_page
from tests.support.locators import role

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def lists() -> Iterator[ListSite]:
    with ListSite() as site:
        yield site


async def every_page(c: ToolClient, addr: dict[str, str], first: dict[str, Any]) -> list[str]:
    """The table's text over all its pages (first page, then the cursor alone)."""
    texts = [first["snapshot"]]
    cursor = first.get("pagination", {}).get("nextCursor")
    while cursor:
        nxt = await c.ok("browser_snapshot", {**addr, "cursor": cursor})
        texts.append(nxt["snapshot"])
        cursor = nxt.get("pagination", {}).get("nextCursor")
    return texts


async def test_list_page_rows_first_sidebar_one_line_every_row_through_the_cursor(
    client: ToolClient, lists: ListSite
) -> None:
    addr = await open_page(client, lists.url("/list"))
    first = await client.ok("browser_snapshot", {**addr, "format": "actions"})
    lines = first["snapshot"].splitlines()
    key = lines[1 : lines.index(next(line for line in lines if line.startswith("[")))]
    assert key == ['h1 "Orders"', "table · 50 rows", 'text "50 results"']
    assert len(key) <= MAX_KEY_LINES
    refs = table_refs(first["snapshot"])
    # main's own controls first, then the rows; no chrome on the first page
    assert [r["name"] for r in refs[:5]] == [
        "Select all",
        "Load more",
        "Delete selected",
        "Refresh",
        "Next page",
    ]
    assert refs[5]["name"] == "Select Order 1"
    assert len(refs) == 50 and first["truncation"]["truncated"]
    assert (first["truncation"]["listedRefs"], first["truncation"]["omittedRefs"]) == (50, 55)
    assert lines[-1] == "more: 55 — pass nextCursor"
    assert "Section 1" not in first["snapshot"]
    pages = await every_page(client, addr, first)
    everything = "\n".join(pages)
    names = [r["name"] for r in table_refs(everything)]
    assert [n for n in names if n.startswith("Select Order")] == [
        f"Select Order {i}" for i in range(1, 51)
    ]
    sidebar = [line for line in everything.splitlines() if "Sidebar" in line]
    assert len(sidebar) == 1 and sidebar[0].endswith('navigation "Sidebar" · 60 links — snapshot')
    assert "Section 7" not in everything
    # A ref from the last page acts: every ref of the capture is live.
    last_box = next(r for r in table_refs(everything) if r["name"] == "Select Order 50")
    assert "changes" not in await client.ok("browser_check", {**addr, "ref": last_box["ref"]})
    # Scoped to the sidebar's region ref it lists the links themselves.
    region = re.match(r"\[(\w+)\]", sidebar[0])
    assert region is not None
    inside = await client.ok(
        "browser_snapshot", {**addr, "format": "actions", "scope": {"ref": region[1]}}
    )
    assert table_refs(inside["snapshot"])[0]["name"] == "Section 0"


async def test_changes_after_navigation_dialog_added_rows_and_nothing(
    client: ToolClient, lists: ListSite
) -> None:
    addr = await open_page(client, lists.url("/list"))
    nothing = await client.ok("browser_click", {**addr, "locator": role("button", "Refresh")})
    assert "changes" not in nothing

    more = await client.ok("browser_click", {**addr, "locator": role("button", "Load more")})
    assert more["changes"] == {"added": 10, "text": ["5 rows added"]}

    for n in (1, 2):
        await client.ok("browser_check", {**addr, "locator": role("checkbox", f"Select Order {n}")})
    dialog = await client.ok(
        "browser_click", {**addr, "locator": role("button", "Delete selected")}
    )
    assert dialog["changes"] == {"dialogs": [{"type": "confirm", "message": "Delete 2 orders?"}]}
    accepted = await client.ok(
        "browser_action_and_wait",
        {
            **addr,
            "action": {"kind": "click", "target": role("button", "Delete selected")},
            "wait": {"kind": "dialog", "dialogType": "confirm", "action": "accept"},
        },
    )
    assert accepted["event"]["message"] == "Delete 2 orders?"
    assert accepted["changes"] == {"removed": 4, "text": ["Deleted 2 orders"]}

    moved = await client.ok("browser_click", {**addr, "locator": role("link", "Next page")})
    assert moved["changes"] == {
        "navigated": True,
        "url": lists.url("/list?page=2"),
        "title": "Orders — page 2",
        "text": ["Page 2 loaded"],
    }


async def test_snapshot_diff_gives_fresh_refs_and_old_refs_go_stale(
    client: ToolClient, lists: ListSite
) -> None:
    addr = await open_page(client, lists.url("/list"))
    table = await client.ok("browser_snapshot", {**addr, "format": "actions"})
    old = {r["name"]: r["ref"] for r in table_refs(table["snapshot"])}
    result = await client.ok("browser_click", {**addr, "ref": old["Load more"], "snapshot": "diff"})
    diff = result["diff"].splitlines()
    assert '+ status "5 rows added"' in diff
    assert "- table · 50 rows" in diff and "+ table · 55 rows" in diff
    added = table_refs("\n".join(line[2:] for line in diff if line.startswith("+ [")))
    assert [r["name"] for r in added if r["role"] == "checkbox"] == [
        f"Select Order {n}" for n in range(51, 56)
    ]
    assert not any(line.startswith("- [") for line in diff)  # removed lines carry no ref
    fresh = next(r["ref"] for r in added if r["name"] == "Select Order 53")
    await client.ok("browser_check", {**addr, "ref": fresh})
    stale = await client.err("browser_click", {**addr, "ref": old["Refresh"]})
    assert stale["code"] == "STALE_ELEMENT_REFERENCE"
    # The diff is against the page's previous table: the check made since shows up...
    again = await client.ok(
        "browser_click", {**addr, "locator": role("button", "Refresh"), "snapshot": "diff"}
    )
    assert again["diff"].splitlines() == [
        '- checkbox "Select Order 53" · unchecked — check, uncheck',
        next(line for line in again["diff"].splitlines() if line.startswith("+ [")),
    ]
    assert again["diff"].endswith('] checkbox "Select Order 53" · checked — check, uncheck')
    # ...and when nothing changed, the diff says so in one line.
    quiet = await client.ok(
        "browser_click", {**addr, "locator": role("button", "Refresh"), "snapshot": "diff"}
    )
    assert quiet["diff"] == "no change in the action table"

    whole = await client.ok(
        "browser_click", {**addr, "locator": role("button", "Refresh"), "snapshot": "actions"}
    )
    assert whole["snapshot"].startswith('page: "Orders" ')
    assert "nextCursor" in whole and "[" in whole["snapshot"]
    bad = await client.raw("browser_click", {**addr, "ref": fresh, "snapshot": "full"})
    assert bad.is_error and "snapshot" in bad.content[0].text
