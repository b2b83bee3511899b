"""Page content with lone UTF-16 surrogates comes back well-formed (U+FFFD), never as an error.

Found by structured fuzzing: a title, text node or evaluation result holding ``'\\ud800'`` made
several tools answer INTERNAL_ERROR (UTF-8 encoding failed) or BROWSER_ERROR (the ARIA YAML did
not parse).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from browsermesh.model.action_table import table_refs
from tests.fixtures.site import FixtureSite
from tests.support.clients import ToolClient

pytestmark = pytest.mark.anyio

REPLACEMENT = "\ufffd"


def well_formed(data: dict[str, Any]) -> str:
    """The JSON text of `data`; fails if any lone surrogate is left in it."""
    text = json.dumps(data, ensure_ascii=False)
    text.encode("utf-8")  # raises UnicodeEncodeError on a lone surrogate
    return text


async def test_lone_surrogates_are_replaced_everywhere(
    mcp_client: ToolClient, site: FixtureSite
) -> None:
    c = mcp_client
    s, p = await c.session()
    addr = {"sessionId": s, "pageId": p}
    await c.ok("browser_navigate", {**addr, "url": site.url("/surrogates")})

    title = await c.ok("browser_get_title", addr)
    assert title["title"] == f"Lone {REPLACEMENT} title"
    text = await c.ok(
        "browser_visible_text",
        {**addr, "locator": {"strategy": "testId", "value": "lone-text"}},
    )
    assert text["text"] == f"Lone {REPLACEMENT} text"
    for args in ({}, {"includeRefs": True}, {"interactiveOnly": True}, {"maxChars": 40}):
        snap = await c.ok("browser_snapshot", {**addr, **args})
        assert REPLACEMENT in well_formed(snap) or args.get("maxChars")
    table = await c.ok("browser_snapshot", {**addr, "format": "actions"})
    assert f"Press {REPLACEMENT}" in well_formed(table)
    assert f'value "v{REPLACEMENT}"' in table["snapshot"]
    evaluated = await c.ok(
        "browser_evaluate", {**addr, "expression": "({['k\\ud800']: 'v\\udfff'})"}
    )
    assert evaluated["result"] == {f"k{REPLACEMENT}": f"v{REPLACEMENT}"}
    console = await c.ok("browser_observe", {**addr, "source": "console", "includeText": True})
    assert f"lone {REPLACEMENT} console" in well_formed(console)
    # The name as shown cannot be typed back (U+FFFD is not the page's character): use the ref.
    (button,) = [r for r in table_refs(table["snapshot"]) if r["role"] == "button"]
    assert button["name"] == f"Press {REPLACEMENT}"
    clicked = await c.ok("browser_click", {**addr, "ref": button["ref"]})
    assert "changes" not in clicked  # nothing changed (an empty object is left out)
