"""Text waits match what the snapshot shows (issue 31 item 11), real Chromium via the MCP client.

The rendered text (CSS `text-transform` applied) and the DOM text are both accepted,
whitespace-normalized; `exact: false` (the default) is a case-insensitive substring, `exact:
true` an element's whole text; a timed-out wait names the nearest text the page shows.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.fixtures.site import FixtureSite
from tests.support.clients import ToolClient, open_page
from tests.support.locators import role

pytestmark = pytest.mark.anyio

BUDGET_MS = 10_000

PAGE = """<!doctype html><title>Package</title>
<style>.up { text-transform: uppercase }</style>
<main>
<h2 class=up>Dependencies (2)</h2>
<p>Released
   on   <b>Monday</b>,
   in the <i>stable</i> channel</p>
<label>Password <input type=password id=pw></label>
<p id=late></p>
</main>"""


@pytest.fixture
def pages(site: FixtureSite) -> FixtureSite:
    site.pages["/package"] = PAGE
    return site


def text(value: str, state: str = "present", **extra: Any) -> dict[str, Any]:
    return {"condition": {"kind": "text", "text": value, "state": state, **extra}}


@pytest.mark.parametrize(
    "wanted",
    [
        "dependencies (",  # the DOM text's case, a part of it
        "DEPENDENCIES (2)",  # what CSS text-transform shows
        "Dependencies (2)",
        "released on monday, in the stable",  # whitespace collapsed, across inline elements
    ],
)
async def test_a_text_wait_matches_the_shown_and_the_dom_text(
    mcp_client: ToolClient, pages: FixtureSite, wanted: str
) -> None:
    addr = await open_page(mcp_client, pages.url("/package"))
    started = time.monotonic()
    done = await mcp_client.ok("browser_wait", {**addr, **text(wanted), "timeoutMs": BUDGET_MS})
    assert done["satisfied"] is True
    assert time.monotonic() - started < BUDGET_MS / 2000


async def test_exact_matches_an_element_whole_text_case_sensitively(
    client: ToolClient, pages: FixtureSite
) -> None:
    addr = await open_page(client, pages.url("/package"))
    for wanted in ("Dependencies (2)", "DEPENDENCIES (2)", "  Dependencies   (2) "):
        await client.ok("browser_wait", {**addr, **text(wanted, exact=True), "timeoutMs": 5_000})
    for wanted in ("dependencies (2)", "Dependencies ("):
        err = await client.err(
            "browser_wait", {**addr, **text(wanted, exact=True), "timeoutMs": 600}
        )
        assert err["code"] == "OPERATION_TIMEOUT", err
    # Absent, exactly: no element's whole text is the lower-case heading.
    await client.ok(
        "browser_wait", {**addr, **text("dependencies (2)", "absent", exact=True), "timeoutMs": 600}
    )


async def test_a_text_that_appears_later_is_waited_for(
    client: ToolClient, pages: FixtureSite
) -> None:
    addr = await open_page(client, pages.url("/package"))
    await client.ok(
        "browser_evaluate",
        {**addr, "expression": "setTimeout(() => late.textContent = 'Build passed', 400); 1"},
    )
    await client.ok("browser_wait", {**addr, **text("build PASSED"), "timeoutMs": BUDGET_MS})


async def test_a_timeout_names_the_nearest_text_redacted(
    client: ToolClient, pages: FixtureSite
) -> None:
    addr = await open_page(client, pages.url("/package"))
    err = await client.err("browser_wait", {**addr, **text("Dependencies (3)"), "timeoutMs": 800})
    assert err["code"] == "OPERATION_TIMEOUT"
    assert err["details"]["nearest"] == "DEPENDENCIES (2)", err
    assert "details.nearest" in err["nextStep"]
    # The nearest text passes the page's password values like snapshot text.
    await client.ok(
        "browser_fill", {**addr, "locator": role("textbox", "Password"), "value": "hunter2x"}
    )
    await client.ok(
        "browser_evaluate", {**addr, "expression": "late.textContent = 'token hunter2x here'; 1"}
    )
    err = await client.err("browser_wait", {**addr, **text("token hunter2y"), "timeoutMs": 800})
    assert "hunter2x" not in str(err), err
    assert "token" in err["details"]["nearest"], err
    # Nothing like it: no nearest.
    err = await client.err("browser_wait", {**addr, **text("zzqqxxjj"), "timeoutMs": 600})
    assert "nearest" not in err["details"], err


async def test_exact_must_be_a_boolean(client: ToolClient, pages: FixtureSite) -> None:
    addr = await open_page(client, pages.url("/package"))
    err = await client.err("browser_wait", {**addr, **text("x", exact="yes")})
    assert err["code"] == "INVALID_ARGUMENT"
    assert err["details"]["field"] == "condition.exact"


async def test_a_text_locator_matches_the_name_the_snapshot_prints(
    client: ToolClient, pages: FixtureSite
) -> None:
    """The snapshot prints the DOM text (no CSS text-transform); an exact text locator takes
    that name, `exact: false` also the shown (transformed) text."""
    addr = await open_page(client, pages.url("/package"))
    snap = await client.ok("browser_snapshot", {**addr, "format": "actions"})
    assert 'h2 "Dependencies (2)"' in snap["snapshot"] or "Dependencies (2)" in snap["snapshot"]
    for locator in (
        {"strategy": "text", "value": "Dependencies (2)"},
        {"strategy": "text", "value": "  Dependencies   (2)"},
        {"strategy": "text", "value": "DEPENDENCIES (2)", "exact": False},
        {"strategy": "text", "value": "dependencies (", "exact": False},
    ):
        read = await client.ok("browser_visible_text", {**addr, "locator": locator})
        assert read["text"] == "DEPENDENCIES (2)", read
