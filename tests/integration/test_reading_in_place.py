"""Reading a page in place (issue 31 items 3, 5, 10), real Chromium through the MCP client.

- item 3: ``tables: "rows"`` gives a table's ``columns:`` line and one ``[ref] row:`` line per
  data row, paged by the cursor (the columns line repeated on the next page); a row is
  addressed by its text with a role locator; ``browser_visible_text`` joins cells with ``|``;
- item 5: the candidates of a LOCATOR_AMBIGUOUS differ by container (the heading above them),
  link path, or position (``nth``), and hidden matches are offered, marked ``hidden``;
- item 10: key content without a ``main`` landmark (an ``h4``, "No products found", a price
  beside its controls, a heading's first paragraph), an open listbox inside the banner listed
  in full, and ``changes.opened`` naming the dialog a click opened.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest

from tests.fixtures.apps import ADMIN, AdminApp
from tests.fixtures.reading_site import ROWS, ReadingSite
from tests.integration.test_thirdparty_apps import price_text, sign_in
from tests.support.clients import ToolClient, open_page
from tests.support.locators import css, role

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def reading() -> Iterator[ReadingSite]:
    with ReadingSite() as site:
        yield site


async def actions(c: ToolClient, addr: dict[str, str], **options: Any) -> list[str]:
    data = await c.ok("browser_snapshot", {**addr, "format": "actions", **options})
    return str(data["snapshot"]).splitlines()


def rows_of(lines: list[str]) -> list[str]:
    return [line.split("] ", 1)[1] for line in lines if "] row: " in line]


# ------------------------------------------------------------------------------ item 3


async def test_table_rows_are_read_in_place_and_paged(
    mcp_client: ToolClient, reading: ReadingSite
) -> None:
    c = mcp_client
    addr = await open_page(c, reading.url("/shop"))
    folded = await actions(c, addr)
    assert not rows_of(folded)
    assert any(line.endswith(f'table "Stock" · {ROWS} links — snapshot') for line in folded)
    data = await c.ok(
        "browser_snapshot", {**addr, "format": "actions", "tables": "rows", "maxRefs": 20}
    )
    first = str(data["snapshot"]).splitlines()
    assert "columns: Name | Price | In stock" in first
    assert rows_of(first)[:2] == ["row: Item 1 | $1.25 | 1", "row: Item 2 | $2.25 | 2"]
    # A row's ref is an element ref like any other.
    row_ref = next(line for line in first if "] row: Item 2 |" in line).split("]", 1)[0][1:]
    await c.ok("browser_hover", {**addr, "ref": row_ref})
    # The next page starts with the table's columns again, then the rows that follow.
    page2 = await c.ok("browser_snapshot", {**addr, "cursor": data["pagination"]["nextCursor"]})
    lines = str(page2["snapshot"]).splitlines()
    assert lines[0] == "columns: Name | Price | In stock"
    seen = rows_of(first) + rows_of(lines)
    assert seen == [f"row: Item {n} | ${n}.25 | {n}" for n in range(1, len(seen) + 1)]
    # A row is addressed by its text: the role locator of the descriptions.
    row = {**role("row", "Item 12 $12.25"), "exact": False}
    text = await c.ok("browser_visible_text", {**addr, "locator": row, "tables": "rows"})
    assert text["text"] == "Item 12 | $12.25 | 12"
    whole = await c.ok("browser_visible_text", {**addr, "locator": css("table")})
    assert "Item 3\t$3.25\t3" in whole["text"]  # unchanged without the option
    err = await c.err("browser_snapshot", {**addr, "tables": "rows"})
    assert err["code"] == "INVALID_ARGUMENT" and err["details"]["field"] == "tables"


async def test_django_admin_product_row_with_its_price_reads_in_place(
    mcp_client: ToolClient, django_admin: AdminApp
) -> None:
    c = mcp_client
    addr = await sign_in(c, django_admin, ADMIN)
    await c.ok("browser_navigate", {**addr, "url": django_admin.url("/admin/shop/product/")})
    ((name, price),) = django_admin.query(
        "SELECT name, price FROM shop_product ORDER BY name LIMIT 1 OFFSET 3"
    )
    lines = await actions(c, addr, tables="rows")
    (line,) = [row for row in rows_of(lines) if f"| {name} |" in row]
    assert f"| {price_text(Decimal(str(price)))} |" in line
    assert any(line.startswith("columns: ") and "Price" in line for line in lines)


# ------------------------------------------------------------------------------ item 10


async def test_key_content_shows_without_a_main_landmark(
    mcp_client: ToolClient, reading: ReadingSite
) -> None:
    c = mcp_client
    addr = await open_page(c, reading.url("/empty"))
    lines = await actions(c, addr)
    assert 'h4 "Sorry, you need credentials access to see this page."' in lines
    assert 'text "No products found"' in lines
    landing = await c.ok("browser_navigate", {**addr, "url": reading.url("/empty")})
    assert 'text "No products found"' in landing["keys"]
    await c.ok("browser_navigate", {**addr, "url": reading.url("/shop")})
    shop = await actions(c, addr)
    assert shop[1:4] == [
        f'text "{ROWS} results"',
        'h3 "Featured"',
        'p "Hand-picked for the season, while stock lasts."',
    ]
    teapot = next(i for i, line in enumerate(shop) if line.endswith('link "Blue teapot" — click'))
    assert shop[teapot + 1] == 'text "$12.00"'
    assert shop[teapot + 2].endswith('button "Add to cart" — click')


async def test_an_open_listbox_in_the_banner_is_listed_in_full(
    mcp_client: ToolClient, reading: ReadingSite
) -> None:
    c = mcp_client
    addr = await open_page(c, reading.url("/shop"))
    before = await actions(c, addr)
    assert not any(" option " in line for line in before)
    await c.ok(
        "browser_fill", {**addr, "locator": role("combobox", "Search products"), "value": "blue"}
    )
    lines = await actions(c, addr)
    options = [line for line in lines if " option " in line]
    assert [o.split("] ", 1)[1] for o in options] == [
        'option "Blue teapot" — click',
        'option "Blue mug" — click',
    ]
    banner = next(i for i, line in enumerate(lines) if " banner " in line)
    assert lines.index(options[0]) < banner  # an open popup first, before the folded banner
    ref = options[1].split("]", 1)[0][1:]
    await c.ok("browser_click", {**addr, "ref": ref})


async def test_a_click_names_the_dialog_it_opened(
    mcp_client: ToolClient, reading: ReadingSite
) -> None:
    c = mcp_client
    addr = await open_page(c, reading.url("/dialog"))
    data = await c.ok("browser_click", {**addr, "locator": role("button", "Sign in")})
    assert data["changes"]["opened"] == [
        {"role": "dialog", "name": "Sign in", "text": "Welcome back · Password Log in"}
    ]
    again = await c.ok("browser_click", {**addr, "locator": role("button", "Log in")})
    assert "opened" not in again.get("changes", {})  # already open before this click


# ------------------------------------------------------------------------------ item 5


async def test_ambiguous_candidates_can_be_told_apart(
    mcp_client: ToolClient, reading: ReadingSite
) -> None:
    c = mcp_client
    addr = await open_page(c, reading.url("/ambiguous"))
    err = await c.err("browser_click", {**addr, "locator": role("link", "All")})
    assert err["code"] == "LOCATOR_AMBIGUOUS"
    picks = err["details"]["candidates"]
    assert [(p["container"], p["path"]) for p in picks] == [
        ({"role": "heading", "name": "By category"}, "/ambiguous?category=all"),
        ({"role": "heading", "name": "By status"}, "/ambiguous?status=all"),
    ]
    assert not any("nth" in p for p in picks)  # the heading and the path tell them apart
    await c.ok("browser_click", {**addr, "ref": picks[1]["ref"]})
    # Same name, heading and path: only the position differs.
    await c.ok("browser_navigate", {**addr, "url": reading.url("/ambiguous")})
    err = await c.err("browser_click", {**addr, "locator": role("link", "More")})
    assert [p.get("nth") for p in err["details"]["candidates"]] == [0, 1]
    # Hidden matches are offered too, marked.
    err = await c.err("browser_click", {**addr, "locator": css("button"), "timeoutMs": 3000})
    assert err["code"] == "LOCATOR_AMBIGUOUS"
    hidden = err["details"]["candidates"]
    assert [(p["role"], p["name"], p["hidden"], p["nth"]) for p in hidden] == [
        ("button", "Archive", True, 0),
        ("button", "Archive", True, 1),
    ]
    assert all(p["ref"] for p in hidden)
