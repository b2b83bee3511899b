"""browser_select_option by value, label and index, several at once, and what it answers
(issue 31 items 6 and 14), on real Chromium through the MCP client; the export of a label
selection uses the same mode."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.site import FixtureSite
from tests.support.clients import ToolClient, open_page, tool_client
from tests.support.runtimes import real_runtime

pytestmark = pytest.mark.anyio

PAGE = """<!doctype html><title>Pick</title>
<label for=size>Size</label><select id=size>
<option value=s>Small</option><option value=m>Medium</option><option value=l>Large</option>
</select>
<label for=tags>Tags</label><select id=tags multiple>
<option value=a>Alpha</option><option value=b>Beta</option><option value=c>Gamma</option>
</select>"""

SIZE = {"strategy": "label", "value": "Size"}
TAGS = {"strategy": "label", "value": "Tags"}


@pytest.fixture
def pages(site: FixtureSite) -> FixtureSite:
    site.pages["/select/pick"] = PAGE
    return site


async def chosen(c: ToolClient, addr: dict[str, Any], args: dict[str, Any]) -> list[Any]:
    data = await c.ok("browser_select_option", {**addr, **args})
    return list(data["selected"])


async def test_each_mode_selects_and_answers_what_is_selected(
    client: ToolClient, pages: FixtureSite
) -> None:
    addr = await open_page(client, pages.url("/select/pick"))
    medium = [{"value": "m", "label": "Medium"}]
    assert await chosen(client, addr, {"locator": SIZE, "value": "m"}) == medium
    large = [{"value": "l", "label": "Large"}]
    assert await chosen(client, addr, {"locator": SIZE, "label": "Large"}) == large
    small = [{"value": "s", "label": "Small"}]
    assert await chosen(client, addr, {"locator": SIZE, "index": 0}) == small
    # Today's calls keep working: a value string may name the label.
    assert await chosen(client, addr, {"locator": SIZE, "value": "Medium"}) == medium
    both = [{"value": "a", "label": "Alpha"}, {"value": "c", "label": "Gamma"}]
    assert await chosen(client, addr, {"locator": TAGS, "label": ["Alpha", "Gamma"]}) == both
    assert await chosen(client, addr, {"locator": TAGS, "index": [0, 2]}) == both
    assert await chosen(client, addr, {"locator": TAGS, "value": ["b"]}) == [
        {"value": "b", "label": "Beta"}
    ]


async def test_choice_errors_name_the_field_and_rule(
    client: ToolClient, pages: FixtureSite
) -> None:
    addr = await open_page(client, pages.url("/select/pick"))
    cases = [
        ({}, "value", "exactly one of value, label, index"),
        ({"value": "m", "label": "Large"}, "label", "exactly one of value, label, index"),
        ({"index": -1}, "index", "at least 0"),
        ({"index": ["1"]}, "index[0]", "integer"),
        ({"label": []}, "label", "1..100 items"),
        ({"label": 3}, "label", "string"),
    ]
    for args, field, rule in cases:
        error = await client.err("browser_select_option", {**addr, "locator": SIZE, **args})
        assert error["code"] == "INVALID_ARGUMENT", args
        assert (error["details"]["field"], error["details"]["rule"]) == (field, rule), args


async def test_a_label_selection_exports_as_a_label_selection(
    tmp_path: Path, pages: FixtureSite
) -> None:
    async with real_runtime(tmp_path, tools=("core", "testing")) as rt, tool_client(rt) as c:
        s, p = await c.session(name="Buyer")
        addr = {"sessionId": s, "pageId": p}
        await c.ok("browser_navigate", {**addr, "url": pages.url("/select/pick")})
        await c.ok("browser_select_option", {**addr, "locator": SIZE, "label": "Large"})
        await c.ok("browser_select_option", {**addr, "locator": TAGS, "index": [0, 2]})
        await c.ok("browser_select_option", {**addr, "locator": SIZE, "value": "m"})
        code = (await c.ok("browser_test_export", {"sessionIds": [s]}))["code"]
    assert "get_by_label(exact('Size')).select_option(label='Large')" in code
    assert "get_by_label(exact('Tags')).select_option(index=[0, 2])" in code
    assert "get_by_label(exact('Size')).select_option('m')" in code
