"""browser_find (issue 31 item 1) on real Chromium through the MCP client: literal and pattern
search over what a person sees, refs an element tool uses, table rows whole, scoping, paging,
bounds, password values never found, and hostile or invalid patterns answered in structure."""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.fixtures.apps import AdminApp
from tests.fixtures.site import FixtureSite
from tests.integration.test_thirdparty_apps import PRODUCTS, sign_in
from tests.support.clients import ToolClient, open_page

pytestmark = pytest.mark.anyio

EVIL = "a" * 5000 + "b"
PAGE = (
    """<!doctype html><title>Find</title>
<main>
<h1>Product list</h1>
<p>3 results</p>
<p>Shipping   is
   free today</p>
<h2 style="text-transform:uppercase">dependencies (2)</h2>
<p style="display:none">Hidden gem text</p>
<p style="visibility:hidden">Invisible words</p>
<details><summary>More details</summary><p>Folded text</p></details>
<label for=pw>Password</label><input id=pw type=password>
<p id=echo></p>
<label for=q>Search</label><input id=q value="blue widget">
<button aria-label="Close dialog">×</button>
<table><thead><tr><th>Name</th><th>Price</th></tr></thead><tbody>
<tr onclick="out.textContent = 'clicked ' + this.cells[0].textContent">
<td>Widget</td><td>$9.99</td></tr>
<tr onclick="out.textContent = 'clicked ' + this.cells[0].textContent">
<td><a href="#gadget">Gadget</a></td><td>$19.50</td></tr>
</tbody></table>
<p id=out></p>
<section id=side><p>Side note: widget care</p></section>
<ul>"""
    + "".join(f"<li>Item {i}</li>" for i in range(1, 46))
    + f"""</ul>
<p>{EVIL}</p>
<iframe src="/find/inner"></iframe>
</main>
<script>
const pw = document.getElementById('pw');
pw.addEventListener('input', () => {{ echo.textContent = 'typed ' + pw.value; }});
</script>"""
)
INNER = "<!doctype html><title>Inner</title><p>Inside the frame: widget</p>"


@pytest.fixture
def pages(site: FixtureSite) -> FixtureSite:
    site.pages["/find/page"] = PAGE
    site.pages["/find/inner"] = INNER
    return site


async def find(c: ToolClient, addr: dict[str, str], text: str, **args: Any) -> dict[str, Any]:
    return await c.ok("browser_find", {**addr, "text": text, **args})


def texts(data: dict[str, Any]) -> list[str]:
    return [m["text"] for m in data.get("matches", [])]


async def test_literal_search_is_any_case_and_whitespace_normalised(
    client: ToolClient, pages: FixtureSite
) -> None:
    addr = await open_page(client, pages.url("/find/page"))
    data = await find(client, addr, "3 RESULTS")
    assert data["count"] == 1 and texts(data) == ["3 results"]
    assert "ref" not in data["matches"][0]  # a plain paragraph: nothing to address
    heading = await find(client, addr, "product list")
    assert heading["matches"] == [{"text": "Product list", "ref": heading["matches"][0]["ref"],
                                   "role": "heading"}]  # fmt: skip
    assert texts(await find(client, addr, "shipping is free")) == ["Shipping is free today"]
    button = await find(client, addr, "close dialog")
    assert button["count"] == 1 and button["matches"][0]["role"] == "button"
    assert (await find(client, addr, "no such words"))["count"] == 0


async def test_transformed_text_is_found_by_dom_and_shown_text(
    client: ToolClient, pages: FixtureSite
) -> None:
    addr = await open_page(client, pages.url("/find/page"))
    assert texts(await find(client, addr, "dependencies (")) == ["DEPENDENCIES (2)"]
    shown = await find(client, addr, r"DEPENDENCIES \(2\)", regex=True)
    dom = await find(client, addr, r"dependencies \(\d\)", regex=True)
    assert texts(shown) == ["DEPENDENCIES (2)"] and texts(dom) == ["dependencies (2)"]
    assert dom["matches"][0]["role"] == "heading"
    # A pattern is case-sensitive unless it says otherwise.
    assert (await find(client, addr, "Dependencies", regex=True))["count"] == 0
    assert (await find(client, addr, "(?i)Dependencies", regex=True))["count"] == 1


async def test_hidden_text_and_password_values_are_never_found(
    client: ToolClient, pages: FixtureSite
) -> None:
    addr = await open_page(client, pages.url("/find/page"))
    assert (await find(client, addr, "Hidden gem"))["count"] == 0
    assert (await find(client, addr, "Invisible words"))["count"] == 0
    assert (await find(client, addr, "Folded text"))["count"] == 0  # a closed <details>
    assert (await find(client, addr, "more details"))["matches"][0]["role"] == "button"
    await client.ok("browser_fill", {**addr, "locator": {"strategy": "css", "value": "#pw"},
                                     "value": "hunter2secret"})  # fmt: skip
    assert (await find(client, addr, "hunter2"))["count"] == 0
    copied = await find(client, addr, "typed")  # the page copied the value into a paragraph
    assert copied["count"] == 1 and "hunter2" not in copied["matches"][0]["text"]
    everything = await find(client, addr, ".", regex=True, limit=100)
    assert all("hunter2" not in t for t in texts(everything))


async def test_input_values_and_rows_come_with_refs_element_tools_use(
    client: ToolClient, pages: FixtureSite
) -> None:
    addr = await open_page(client, pages.url("/find/page"))
    value = await find(client, addr, "blue widget")
    assert value["count"] == 1 and value["matches"][0]["role"] == "textbox"
    assert "blue widget" in value["matches"][0]["text"]
    await client.ok("browser_fill", {**addr, "ref": value["matches"][0]["ref"], "value": "red"})
    assert (await find(client, addr, "blue widget"))["count"] == 0
    assert (await find(client, addr, "red"))["matches"][0]["role"] == "textbox"
    # A price in a table: the whole row, with the row's ref (even where the match is a link).
    price = await find(client, addr, "$19.50")
    assert price["matches"][0]["text"] == "Gadget | $19.50"
    assert price["matches"][0]["role"] == "row"
    assert texts(await find(client, addr, "gadget")) == ["Gadget | $19.50"]
    widget = await find(client, addr, "$9.99")
    await client.ok("browser_click", {**addr, "ref": widget["matches"][0]["ref"]})
    assert (await find(client, addr, "clicked Widget"))["count"] == 1
    header = await find(client, addr, "price")
    assert texts(header) == ["Name | Price"]


async def test_within_and_frame_scope_the_search(client: ToolClient, pages: FixtureSite) -> None:
    addr = await open_page(client, pages.url("/find/page"))
    everywhere = await find(client, addr, "widget")
    assert "Side note: widget care" in texts(everywhere)
    assert "Inside the frame: widget" not in texts(everywhere)  # frames: `frame`
    side = await find(client, addr, "widget", within={"strategy": "css", "value": "#side"})
    assert side == {**side, "count": 1} and texts(side) == ["Side note: widget care"]
    frame = {"kind": "iframe", "chain": [{"strategy": "css", "value": "iframe"}]}
    inside = await find(client, addr, "widget", frame=frame)
    assert texts(inside) == ["Inside the frame: widget"]
    missing = await client.err(
        "browser_find",
        {**addr, "text": "x", "within": {"strategy": "css", "value": "#nope"}, "timeoutMs": 1500},
    )
    assert missing["code"] == "ELEMENT_NOT_FOUND"


async def test_paging_by_cursor_and_limit_bounds(client: ToolClient, pages: FixtureSite) -> None:
    addr = await open_page(client, pages.url("/find/page"))
    first = await find(client, addr, "item")
    assert first["count"] == 45 and len(first["matches"]) == 20
    assert texts(first)[0] == "Item 1" and "nextCursor" in first
    second = await find(client, addr, "item", cursor=first["nextCursor"])
    assert texts(second)[0] == "Item 21" and len(second["matches"]) == 20
    third = await find(client, addr, "item", cursor=second["nextCursor"])
    assert texts(third) == [f"Item {i}" for i in range(41, 46)] and "nextCursor" not in third
    small = await find(client, addr, "item", limit=3)
    assert texts(small) == ["Item 1", "Item 2", "Item 3"]
    for args, field in [
        ({"text": "item", "limit": 0}, "limit"),
        ({"text": "item", "limit": 101}, "limit"),
        ({"text": ""}, "text"),
        ({"text": "x" * 1001}, "text"),
        ({"text": "other", "cursor": first["nextCursor"]}, "cursor"),
    ]:
        error = await client.err("browser_find", {**addr, **args})
        assert (error["code"], error["details"]["field"]) == ("INVALID_ARGUMENT", field), args


async def test_long_lines_are_cut_around_the_match(client: ToolClient, pages: FixtureSite) -> None:
    addr = await open_page(client, pages.url("/find/page"))
    data = await find(client, addr, "ab")
    (text,) = texts(data)
    assert len(text) <= 160 and text.startswith("…") and text.endswith("ab")


async def test_hostile_and_invalid_patterns_answer_invalid_argument(
    client: ToolClient, pages: FixtureSite
) -> None:
    addr = await open_page(client, pages.url("/find/page"))
    started = time.monotonic()
    error = await client.err("browser_find", {**addr, "text": "(a+)+$", "regex": True})
    assert time.monotonic() - started < 8
    assert (error["code"], error["details"]["field"]) == ("INVALID_ARGUMENT", "text")
    assert "matches within" in error["details"]["rule"]
    assert (await find(client, addr, "3 results"))["count"] == 1  # the server still answers
    invalid = await client.err("browser_find", {**addr, "text": "(unclosed", "regex": True})
    assert (invalid["code"], invalid["details"]["field"]) == ("INVALID_ARGUMENT", "text")
    assert invalid["details"]["rule"].startswith("a valid regular expression (")


async def test_django_admin_count_and_a_row_price(
    client: ToolClient, django_admin: AdminApp
) -> None:
    """On the stock Django admin: the search's result count and one product's row (price)."""
    c = client
    addr = await sign_in(c, django_admin, django_admin.admin)
    await c.ok("browser_navigate", {**addr, "url": django_admin.url(PRODUCTS + "?q=watering")})
    matches = django_admin.query("SELECT count(*) FROM shop_product WHERE name LIKE '%watering%'")
    total = django_admin.query("SELECT count(*) FROM shop_product")[0][0]
    counted = await find(c, addr, "total)")
    plural = "" if matches[0][0] == 1 else "s"
    assert f"{matches[0][0]} result{plural} ({total} total)" in texts(counted)[0]
    await c.ok("browser_navigate", {**addr, "url": django_admin.url(PRODUCTS)})
    (price,) = django_admin.query(
        "SELECT printf('%.2f', price) FROM shop_product WHERE name = ?", ["Watering can"]
    )[0]
    row = await find(c, addr, price)
    (hit,) = row["matches"]
    assert hit["role"] == "row" and hit["text"].startswith("Watering can | Garden | " + price)
    await c.ok("browser_hover", {**addr, "ref": hit["ref"]})  # a ref every element tool takes
    assert texts(await find(c, addr, "0 of")) == [f"Action: --------- Go 0 of {total} selected"]
