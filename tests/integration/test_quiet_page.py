"""Fail fast on a quiet page, capture a single-page app once it has rendered (issue 31 item 13).

Real Chromium via the real MCP client. A locator that matches nothing on a page that has
stopped changing answers ELEMENT_NOT_FOUND (with candidates) well before its budget; a page
that is still changing is waited on, so a late element is still found. Navigation results,
snapshots and the snapshot of a click are taken once the page is quiet, so the loopback
single-page app (tests/fixtures/spa_site.py: it fetches its content for 500 ms) is captured
rendered. A diff after an ARIA snapshot lists only what changed.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from browsermesh.engine import quiet
from browsermesh.model.deadline import Deadline
from browsermesh.runtime.runtime import Runtime
from tests.fixtures.site import FixtureSite
from tests.fixtures.spa_site import SpaSite
from tests.support.clients import ToolClient, open_page
from tests.support.locators import role

pytestmark = pytest.mark.anyio

BUDGET_MS = 12_000

STATIC = """<!doctype html><title>Static</title>
<main><h1>Orders</h1><button>Save</button> <button>Cancel</button>
<p id=out></p>
<button onclick="out.textContent = 'Saved at noon'; more.hidden = false">Publish</button>
<a id=more href="#more" hidden>Undo publish</a></main>"""

# A page that keeps changing (a clock ticking every 100 ms) and adds its button after 1.5 s.
CHANGING = """<!doctype html><title>Changing</title>
<main><p id=clock>0</p><div id=slot></div></main>
<script>
let n = 0;
setInterval(() => { clock.textContent = String(++n); }, 100);
setTimeout(() => { slot.innerHTML = '<button>Late button</button>'; }, 1500);
</script>"""


@pytest.fixture
def pages(site: FixtureSite) -> FixtureSite:
    site.pages["/static"] = STATIC
    site.pages["/changing"] = CHANGING
    return site


@pytest.fixture(scope="module")
def spa() -> Iterator[SpaSite]:
    with SpaSite(delay_ms=500) as app:
        yield app


async def test_a_miss_on_a_quiet_page_answers_well_before_the_budget(
    mcp_client: ToolClient, pages: FixtureSite
) -> None:
    addr = await open_page(mcp_client, pages.url("/static"))
    for locator in (role("button", "Sav"), {**role("button", "Save"), "within": role("dialog")}):
        started = time.monotonic()
        err = await mcp_client.err(
            "browser_click", {**addr, "locator": locator, "timeoutMs": BUDGET_MS}
        )
        elapsed = time.monotonic() - started
        assert err["code"] == "ELEMENT_NOT_FOUND", err
        assert elapsed < BUDGET_MS / 2000, elapsed
        assert "timeoutMs" not in err["details"]  # the budget did not run out
    started = time.monotonic()
    err = await mcp_client.err(
        "browser_click", {**addr, "locator": role("button", "Sav"), "timeoutMs": BUDGET_MS}
    )
    assert time.monotonic() - started < BUDGET_MS / 2000
    names = [c.get("name") for c in err["details"].get("candidates", [])]
    assert "Save" in names, err


async def test_a_late_element_on_a_changing_page_is_still_found(
    client: ToolClient, pages: FixtureSite
) -> None:
    addr = await open_page(client, pages.url("/changing"))
    await client.ok(
        "browser_click", {**addr, "locator": role("button", "Late button"), "timeoutMs": BUDGET_MS}
    )


async def test_a_late_element_after_a_fetch_is_still_found(
    client: ToolClient, spa: SpaSite
) -> None:
    """No DOM change while the request is pending: the pending request keeps the page busy."""
    addr = await open_page(client, spa.url("/app"))
    await client.ok(
        "browser_evaluate",
        {
            **addr,
            "expression": "fetch('/api/app/projects?delay=1500').then(r => r.text())"
            ".then(t => { document.getElementById('view').innerHTML = t; }); 1",
        },
    )
    await client.ok(
        "browser_click", {**addr, "locator": role("link", "Project 3"), "timeoutMs": BUDGET_MS}
    )


async def test_navigate_answers_and_snapshots_the_rendered_single_page_app(
    mcp_client: ToolClient, spa: SpaSite
) -> None:
    s, p = await mcp_client.session()
    addr = {"sessionId": s, "pageId": p}
    landed = await mcp_client.ok("browser_navigate", {**addr, "url": spa.url("/app/projects")})
    assert 'h1 "Projects (3)"' in landed.get("keys", []), landed
    snap = await mcp_client.ok("browser_snapshot", {**addr, "format": "actions"})
    assert 'link "Project 2"' in snap["snapshot"], snap["snapshot"]


async def test_a_client_side_route_is_captured_after_it_renders(
    client: ToolClient, spa: SpaSite
) -> None:
    addr = await open_page(client, spa.url("/app/projects"))
    clicked = await client.ok(
        "browser_click", {**addr, "locator": role("link", "Project 2"), "snapshot": "actions"}
    )
    assert 'h1 "Project 2"' in clicked["snapshot"], clicked["snapshot"]
    assert 'link "Back to projects"' in clicked["snapshot"], clicked["snapshot"]
    back = await client.ok(
        "browser_click",
        {**addr, "locator": role("link", "Back to projects"), "snapshot": "diff"},
    )
    diff = back["diff"].splitlines()
    assert '+ h1 "Projects (3)"' in diff, diff
    assert any(line.endswith('link "Project 1" — click') for line in diff), diff
    assert '- h1 "Project 2"' in diff, diff


async def test_diff_after_an_aria_snapshot_lists_only_real_changes(
    mcp_client: ToolClient, pages: FixtureSite
) -> None:
    addr = await open_page(mcp_client, pages.url("/static"))
    await mcp_client.ok("browser_snapshot", addr)  # the default format: aria
    clicked = await mcp_client.ok(
        "browser_click", {**addr, "locator": role("button", "Publish"), "snapshot": "diff"}
    )
    diff = clicked["diff"].splitlines()
    # The two real changes: the new paragraph under the heading (key text) and the new link;
    # none of the controls the aria snapshot already showed is re-listed.
    assert len(diff) == 2, diff
    assert diff[0] == '+ p "Saved at noon"', diff
    assert diff[1].startswith("+ [") and diff[1].endswith('link "Undo publish" — click'), diff
    # Nothing changes: nothing listed, after an aria snapshot as after a table.
    await mcp_client.ok("browser_snapshot", {**addr, "format": "aria", "interactiveOnly": True})
    again = await mcp_client.ok(
        "browser_click", {**addr, "locator": role("button", "Save"), "snapshot": "diff"}
    )
    assert again["diff"] == "no change in the action table", again


async def test_a_static_page_is_quiet_as_soon_as_it_has_loaded(
    runtime: Runtime, client: ToolClient, site: FixtureSite
) -> None:
    """The parser's own insertions are loading, not changes, even when Chromium delivers them
    to the page's observer after the document turned interactive (a big document parsed in
    chunks, text after a closing script): such a page is quiet at once, and navigating to it
    costs no settle time (reference §7.3)."""
    for path in ("/big?n=3000", "/"):
        addr = await open_page(client, site.url(path))
        rec = runtime.sessions_snapshot()[addr["sessionId"]]
        page = rec.pages[addr["pageId"]].handle.page  # type: ignore[attr-defined]
        state = await quiet.quiet_for(page, Deadline(5_000))
        assert state is not None
        since_ms = state[0]
        assert since_ms > 10 * 60_000, (path, since_ms)  # nothing changed since it was created
