"""Real third-party applications driven through MCP the way an AI client would (issue 13).

The stock Django admin (``django_admin``) and stock Datasette (``datasette_app``) run on loopback
(tests/fixtures/apps). Every call names elements by what the page shows — label text, role and
accessible name — and every outcome is read back from the application's own SQLite database.

Django renders labels with a trailing colon (``<label>Username:</label>``), Datasette too
(``Search:``). The locator rule is that an exact label match ignores a trailing ``:`` or ``*``
and collapses whitespace, so ``{"strategy":"label","value":"Username"}`` must find that field.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from decimal import Decimal
from typing import Any

import pytest

from tests.fixtures.apps import AdminApp, Credentials, DatasetteApp
from tests.support.clients import ToolClient
from tests.support.locators import css, label, role

pytestmark = [pytest.mark.anyio, pytest.mark.long]

PRODUCTS = "/admin/shop/product/"


async def new_page(c: ToolClient, url: str) -> dict[str, Any]:
    session_id, page_id = await c.session()
    addr = {"sessionId": session_id, "pageId": page_id}
    await c.ok("browser_navigate", {**addr, "url": url})
    return addr


async def click_and_wait(
    c: ToolClient, addr: dict[str, Any], target: dict[str, Any], url_glob: str
) -> str:
    """Click something that navigates; returns the URL it arrived at."""
    data = await c.ok(
        "browser_action_and_wait",
        {
            **addr,
            "action": {"kind": "click", "target": target},
            "wait": {"kind": "navigation", "matcher": {"kind": "glob", "value": url_glob}},
        },
    )
    assert data["event"]["kind"] == "navigation"
    return str(data["event"]["url"])


async def text(c: ToolClient, addr: dict[str, Any], selector: str) -> str:
    data = await c.ok("browser_visible_text", {**addr, "locator": css(selector)})
    return str(data["text"])


# ------------------------------------------------------------------------------ Django admin


async def user_tools(c: ToolClient, addr: dict[str, Any]) -> str:
    """The admin's "Welcome, <user>." bar, case-folded (its CSS renders it upper-case)."""
    return (await text(c, addr, "#user-tools")).casefold()


async def sign_in(c: ToolClient, app: AdminApp, who: Credentials) -> dict[str, Any]:
    """A new session signed in to the admin through the stock login form."""
    addr = await new_page(c, app.url("/admin/login/?next=/admin/"))
    await c.ok("browser_fill", {**addr, "locator": label("Username"), "value": who.username})
    await c.ok("browser_fill", {**addr, "locator": label("Password"), "value": who.password})
    await click_and_wait(c, addr, role("button", "Log in"), "**/admin/")
    assert f"welcome, {who.username}." in await user_tools(c, addr)
    return addr


def price_text(value: Decimal) -> str:
    return f"{value:.2f}"


async def test_django_admin_fixture_is_the_stock_admin(
    mcp_client: ToolClient, django_admin: AdminApp
) -> None:
    """The fixture itself: the stock login page loads and the seeded rows are in its database."""
    c = mcp_client
    addr = await new_page(c, django_admin.url("/admin/login/"))
    assert (await c.ok("browser_get_title", addr))["title"] == "Log in | Django site admin"
    users = django_admin.query("SELECT username, is_superuser, is_staff FROM auth_user ORDER BY id")
    assert users[:2] == [("admin", 1, 1), ("editor", 0, 1)]
    granted = django_admin.query(
        "SELECT p.codename FROM auth_user_user_permissions up "
        "JOIN auth_permission p ON p.id = up.permission_id "
        "JOIN auth_user u ON u.id = up.user_id WHERE u.username = ? ORDER BY p.codename",
        ["editor"],
    )
    assert granted == [("change_product",), ("view_product",)]
    categories = django_admin.query("SELECT name FROM shop_category ORDER BY name")
    assert categories == [("Garden",), ("Kitchen",), ("Workshop",)]


async def test_admin_adds_a_product_by_its_visible_labels(
    mcp_client: ToolClient, django_admin: AdminApp
) -> None:
    c = mcp_client
    addr = await sign_in(c, django_admin, django_admin.admin)
    last_login = django_admin.query(
        "SELECT last_login FROM auth_user WHERE username = ?", [django_admin.admin.username]
    )
    assert last_login[0][0] is not None
    await c.ok("browser_navigate", {**addr, "url": django_admin.url(PRODUCTS)})
    await click_and_wait(c, addr, role("link", "Add product"), f"**{PRODUCTS}add/")
    name = f"Blue teapot {uuid.uuid4().hex[:8]}"
    await c.ok("browser_fill", {**addr, "locator": label("Name"), "value": name})
    await c.ok("browser_select_option", {**addr, "locator": label("Category"), "value": "Kitchen"})
    await c.ok("browser_fill", {**addr, "locator": label("Price"), "value": "19.99"})
    await c.ok("browser_fill", {**addr, "locator": label("Available on"), "value": "2025-06-01"})
    await c.ok("browser_check", {**addr, "locator": label("In stock")})
    await c.ok("browser_select_option", {**addr, "locator": label("Status"), "value": "Published"})
    await click_and_wait(c, addr, role("button", "Save"), f"**{PRODUCTS}")
    assert f"The product “{name}” was added successfully." in await text(c, addr, ".messagelist")
    rows = django_admin.query(
        "SELECT p.name, c.name, printf('%.2f', p.price), p.available_on, p.status, p.in_stock "
        "FROM shop_product p JOIN shop_category c ON c.id = p.category_id WHERE p.name = ?",
        [name],
    )
    assert rows == [(name, "Kitchen", "19.99", "2025-06-01", "published", 1)]


async def test_admin_search_shows_the_database_count(
    mcp_client: ToolClient, django_admin: AdminApp
) -> None:
    c = mcp_client
    addr = await sign_in(c, django_admin, django_admin.admin)
    await c.ok("browser_navigate", {**addr, "url": django_admin.url(PRODUCTS)})
    term = "watering"  # the admin's search is case-insensitive: it finds "Watering can"
    await c.ok("browser_fill", {**addr, "locator": role("textbox", "Search"), "value": term})
    arrived = await click_and_wait(c, addr, role("button", "Search"), f"**{PRODUCTS}?q=*")
    assert arrived.endswith(f"?q={term}")
    # Django's icontains on SQLite is LIKE, case-insensitive for ASCII.
    matches = django_admin.query(
        "SELECT name FROM shop_product WHERE name LIKE ? ORDER BY name", [f"%{term}%"]
    )
    total = django_admin.query("SELECT count(*) FROM shop_product")[0][0]
    assert matches, "the seeded product should match"
    counted = await text(c, addr, "#changelist-search .quiet")
    plural = "" if len(matches) == 1 else "s"
    assert counted == f"{len(matches)} result{plural} ({total} total)"
    listed = await text(c, addr, "#result_list tbody")
    for (match,) in matches:
        assert match in listed


async def test_admin_and_editor_in_parallel_sessions(
    mcp_client: ToolClient, django_admin: AdminApp
) -> None:
    """Two roles at once in two isolated sessions: each sees only its own sign-in; the editor
    (view + change only) has no add link and no add page, and its price change lands in the
    database and on the admin's page."""
    c = mcp_client
    admin, editor = await asyncio.gather(
        sign_in(c, django_admin, django_admin.admin),
        sign_in(c, django_admin, django_admin.editor),
    )
    assert admin["sessionId"] != editor["sessionId"]
    assert "welcome, admin." in await user_tools(c, admin)
    assert "welcome, editor." in await user_tools(c, editor)

    changelist = django_admin.url(PRODUCTS)
    await asyncio.gather(
        c.ok("browser_navigate", {**admin, "url": changelist}),
        c.ok("browser_navigate", {**editor, "url": changelist}),
    )
    add_link = role("link", "Add product")
    await c.ok("browser_hover", {**admin, "locator": add_link})  # the control: a superuser has it
    # (the admin's CSS upper-cases the link: innerText is "ADD PRODUCT")
    assert "add product" in (await text(c, admin, "#content")).casefold()
    assert "add product" not in (await text(c, editor, "#content")).casefold()
    missing = await c.err("browser_hover", {**editor, "locator": add_link, "timeoutMs": 10_000})
    assert missing["code"] == "ELEMENT_NOT_FOUND"
    count_before = django_admin.query("SELECT count(*) FROM shop_product")
    await c.ok("browser_navigate", {**editor, "url": django_admin.url(PRODUCTS + "add/")})
    assert (await c.ok("browser_get_title", editor))["title"] == "403 Forbidden"
    assert django_admin.query("SELECT count(*) FROM shop_product") == count_before

    product = "Watering can"
    (old,) = django_admin.query(
        "SELECT printf('%.2f', price) FROM shop_product WHERE name = ?", [product]
    )[0]
    new_price = price_text(Decimal(old) + Decimal("1.11"))
    await c.ok("browser_navigate", {**editor, "url": changelist})
    await click_and_wait(c, editor, role("link", product), f"**{PRODUCTS}*/change/")
    await c.ok("browser_fill", {**editor, "locator": label("Price"), "value": new_price})
    await click_and_wait(c, editor, role("button", "Save"), f"**{PRODUCTS}")
    assert django_admin.query(
        "SELECT printf('%.2f', price) FROM shop_product WHERE name = ?", [product]
    ) == [(new_price,)]
    changes = django_admin.query(
        "SELECT u.username FROM django_admin_log l JOIN auth_user u ON u.id = l.user_id "
        "WHERE l.object_repr = ? AND l.action_flag = 2 ORDER BY l.id DESC LIMIT 1",
        [product],
    )
    assert changes == [("editor",)]
    await c.ok("browser_navigate", {**admin, "url": changelist})
    assert new_price in await text(c, admin, "#result_list tbody")


# ------------------------------------------------------------------------------ Datasette

COUNT_HEADING = "h3:has(+ form.filters)"
"""The row-count heading just above the filter form (the page has another h3 further down)."""


def shown_rows(table_text: str) -> list[tuple[int, str, str, int]]:
    """Rows of Datasette's ``table.rows-and-columns`` body from its innerText (tab-separated)."""
    rows = []
    for line in table_text.splitlines():
        if not line.strip():
            continue
        cells = [cell.strip() for cell in line.split("\t")]
        assert len(cells) == 4, line
        rows.append((int(cells[0]), cells[1], cells[2], int(cells[3])))
    return rows


async def test_datasette_search_shows_the_fts_matches(
    mcp_client: ToolClient, datasette_app: DatasetteApp
) -> None:
    c = mcp_client
    addr = await new_page(c, datasette_app.table_url)
    (total,) = datasette_app.query("SELECT count(*) FROM books")[0]
    assert (await text(c, addr, COUNT_HEADING)) == f"{total} rows"
    term = "night"
    await c.ok("browser_fill", {**addr, "locator": label("Search"), "value": term})
    arrived = await click_and_wait(c, addr, role("button", "Apply"), "**/books/books?*")
    assert f"_search={term}" in arrived
    expected = datasette_app.query(
        "SELECT id, title, author, year FROM books WHERE id IN "
        "(SELECT rowid FROM books_fts WHERE books_fts MATCH ?) ORDER BY id",
        [f'"{term}"'],
    )
    assert len(expected) >= 2
    heading = await text(c, addr, COUNT_HEADING)
    assert re.match(rf"{len(expected)} rows where search matches", heading), heading
    shown = shown_rows(await text(c, addr, "table.rows-and-columns tbody"))
    assert sorted(shown) == expected


async def test_datasette_filter_and_sort_match_sqlite(
    mcp_client: ToolClient, datasette_app: DatasetteApp
) -> None:
    """The stock filter row (its selects carry no label: named by their form names) and a
    click on the column heading that sorts."""
    c = mcp_client
    addr = await new_page(c, datasette_app.table_url)
    await c.ok(
        "browser_select_option",
        {**addr, "locator": css("select[name=_filter_column]"), "value": "year"},
    )
    await c.ok(
        "browser_select_option", {**addr, "locator": css("select[name=_filter_op]"), "value": "≥"}
    )
    await c.ok(
        "browser_fill", {**addr, "locator": css("input[name=_filter_value]"), "value": "1900"}
    )
    filtered = await click_and_wait(c, addr, role("button", "Apply"), "**/books/books?*")
    assert "year__gte=1900" in filtered
    await click_and_wait(c, addr, role("link", "year"), "**_sort=year*")
    expected = datasette_app.query(
        "SELECT id, title, author, year FROM books WHERE year >= ? ORDER BY year, id", [1900]
    )
    by_id = sorted(expected)
    assert expected != by_id, "the sort must be observable"
    heading = await text(c, addr, COUNT_HEADING)
    assert heading.startswith(f"{len(expected)} rows where year ≥ 1900"), heading
    assert shown_rows(await text(c, addr, "table.rows-and-columns tbody")) == expected
