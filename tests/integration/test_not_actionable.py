"""An element that exists but cannot act answers ELEMENT_NOT_ACTIONABLE at once (issue 31 #4).

Real Chromium, the real MCP SDK client. Each case gives a budget far larger than the answer may
take, so an answer "well before the budget" is the reason, never a timeout; the locator in the
details is the one given, `within` included. A condition that really needs the whole budget
still answers OPERATION_TIMEOUT.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from browsermesh.model.action_table import table_refs
from tests.fixtures.site import FixtureSite
from tests.support.clients import ToolClient, open_page
from tests.support.locators import css, role

pytestmark = pytest.mark.anyio

BUDGET_MS = 20_000
QUICK_S = 8.0  # the settle time (1 s) and a covered first try (1 s), with room for a loaded host

PAGE = """<!doctype html><title>Blocked</title>
<section aria-label="Checkout">
<button id=dis disabled>Place order</button>
<button id=hid style="display:none">Hidden menu</button>
<input id=ro readonly value=fixed aria-label=Reference>
<input id=file type=file aria-label=Receipt>
<div style="position:relative"><button id=under>Buy now</button>
<div id=cover role=dialog aria-label="Cookie banner"
  style="position:absolute;inset:0;background:#eee">Accept cookies</div></div>
<div style="position:relative"><button id=brief
  onclick="document.title='brief clicked'">Brief</button>
<div id=veil style="position:absolute;inset:0;background:#ddd"></div></div>
<button id=moving style="animation: wobble 0.2s infinite alternate">Moving</button>
</section>
<style>@keyframes wobble { from { transform: translateX(0) } to { transform: translateX(40px) } }
</style>"""

SECTION = role("region", "Checkout")

STICKY = """<!doctype html><title>Sticky</title>
<header style="position:fixed;top:0;left:0;right:0;height:120px;background:#333;z-index:5">
Site header</header>
<div style="height:1500px"></div>
<button id=low onclick="document.title='low clicked'">Low</button>
<div style="height:3000px"></div>"""


@pytest.fixture
def pages(site: FixtureSite) -> FixtureSite:
    site.pages["/blocked"] = PAGE
    site.pages["/sticky"] = STICKY
    return site


@pytest.mark.parametrize(
    ("tool", "target", "extra", "reason", "hint"),
    [
        ("browser_click", role("button", "Place order"), {}, "disabled", "browser_wait"),
        ("browser_click", css("#hid"), {}, "hidden", "scroll"),
        ("browser_fill", css("#ro"), {"value": "x"}, "not_editable", "textbox"),
        ("browser_click", role("button", "Buy now"), {}, "covered", "coveredBy"),
        ("browser_fill", css("#file"), {"value": "x"}, "file_input", "browser_file_upload"),
    ],
)
async def test_an_element_that_cannot_act_says_why_at_once(
    client: ToolClient,
    pages: FixtureSite,
    tool: str,
    target: dict[str, Any],
    extra: dict[str, Any],
    reason: str,
    hint: str,
) -> None:
    addr = await open_page(client, pages.url("/blocked"))
    locator = {**target, "within": SECTION}
    started = time.monotonic()
    err = await client.err(tool, {**addr, "locator": locator, "timeoutMs": BUDGET_MS, **extra})
    elapsed = time.monotonic() - started
    assert err["code"] == "ELEMENT_NOT_ACTIONABLE", err
    assert err["message"] == "Element exists but cannot take this action."
    assert err["details"]["reason"] == reason
    assert "timeoutMs" not in err["details"]
    assert err["details"]["locator"]["within"] == {
        "strategy": "role",
        "value": "region",
        "name": "Checkout",
        "exact": True,
    }
    assert err["details"]["locator"]["strategy"] == target["strategy"]
    assert hint in err["nextStep"] and "larger timeoutMs" not in err["nextStep"]
    if reason == "covered":
        assert err["details"]["coveredBy"] == {"role": "dialog", "name": "Cookie banner"}
    assert elapsed < QUICK_S, elapsed


async def test_a_disabled_ref_answers_the_same_code(client: ToolClient, pages: FixtureSite) -> None:
    addr = await open_page(client, pages.url("/blocked"))
    snap = await client.ok("browser_snapshot", {**addr, "format": "actions"})
    ref = next(r["ref"] for r in table_refs(snap["snapshot"]) if r.get("name") == "Place order")
    err = await client.err("browser_click", {**addr, "ref": ref, "timeoutMs": BUDGET_MS})
    assert err["code"] == "ELEMENT_NOT_ACTIONABLE" and err["details"]["reason"] == "disabled"


async def test_a_cover_that_goes_away_lets_the_click_through(
    client: ToolClient, pages: FixtureSite
) -> None:
    addr = await open_page(client, pages.url("/blocked"))
    await client.ok(
        "browser_evaluate",
        {**addr, "expression": "setTimeout(() => veil.remove(), 300); true"},
    )
    await client.ok("browser_click", {**addr, "locator": role("button", "Brief")})
    title = await client.ok("browser_get_title", addr)
    assert title["title"] == "brief clicked"


async def test_an_element_under_a_sticky_header_is_scrolled_clear_and_clicked(
    client: ToolClient, pages: FixtureSite
) -> None:
    """Seen covered by the first read, but Playwright scrolls it clear within the first try."""
    addr = await open_page(client, pages.url("/sticky"))
    await client.ok(
        "browser_evaluate", {**addr, "expression": "window.scrollTo(0, low.offsetTop - 40); 1"}
    )
    await client.ok("browser_click", {**addr, "locator": role("button", "Low")})
    assert (await client.ok("browser_get_title", addr))["title"] == "low clicked"


async def test_a_condition_that_needs_the_whole_budget_still_times_out(
    client: ToolClient, pages: FixtureSite
) -> None:
    addr = await open_page(client, pages.url("/blocked"))
    started = time.monotonic()
    err = await client.err(
        "browser_click", {**addr, "locator": role("button", "Moving"), "timeoutMs": 1500}
    )
    assert err["code"] == "OPERATION_TIMEOUT", err
    assert err["details"]["timeoutMs"] == 1500 and err["details"]["reason"] == "timeout"
    assert time.monotonic() - started >= 1.0
    never = {"kind": "text", "text": "never appears", "state": "present"}
    err = await client.err("browser_wait", {**addr, "condition": never, "timeoutMs": 500})
    assert err["code"] == "OPERATION_TIMEOUT" and err["details"]["timeoutMs"] == 500
