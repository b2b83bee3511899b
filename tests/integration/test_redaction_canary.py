"""Password values never leave the process: a canary through every structured exit (issue 12).

The page has no script for the first case: the button's accessible name is built by
`aria-labelledby` from a password field, so Playwright's own tree carries the value. Later cases
copy the value into page text with script (a "show password" label) and type one with fill.
"""

from __future__ import annotations

from typing import Any

import pytest

from browsermesh.model.action_table import table_refs
from tests.fixtures.site import FixtureSite
from tests.support.clients import ToolClient, open_page
from tests.support.results import assert_clean

pytestmark = pytest.mark.anyio

CANARY = "CANARY-7f3a"
QUOTED = 'Q"uo\\te-9b1c'
TYPED = "typed-canary-44d0"

LABELLED_BY = f"""<!doctype html><title>Sign in</title>
<label>Password <input type=password id=p value="{CANARY}"></label>
<span id=lbl>Sign in with</span><button aria-labelledby="lbl p">Go</button>"""

SHOW_PASSWORD = f"""<!doctype html><title>Show password</title>
<form><label>Password <input type=password id=p value="{CANARY}"></label>
<label>Other <input type=password id=q></label></form>
<button id=say onclick="alert('Your password is ' + p.value)">Say it</button>
<div id=box><h2>Shown</h2><span id=shown></span>
<button id=copy onclick="shown.textContent = q.value">Reveal other</button>
<select aria-label="Pick"><option>x</option></select></div>
<iframe srcdoc='<label>Quoted <input type=password value="{QUOTED.replace('"', "&quot;")}"></label>
<button aria-labelledby="x"><span id=x>{QUOTED.replace('"', "&quot;")}</span></button>'></iframe>
<script>shown.textContent = p.value; document.title = 'Show ' + p.value;</script>"""


@pytest.fixture
def pages(site: FixtureSite) -> FixtureSite:
    site.pages.update({"/canary/labelled-by": LABELLED_BY, "/canary/show": SHOW_PASSWORD})
    return site


@pytest.mark.parametrize(
    "options",
    [
        {"format": "aria"},
        {"format": "aria", "includeRefs": True},
        {"format": "aria", "interactiveOnly": True, "includeRefs": True},
        {"format": "actions"},
    ],
    ids=["aria", "aria-refs", "aria-interactive", "actions"],
)
async def test_labelled_by_password_is_redacted_in_text_and_refs(
    client: ToolClient, pages: FixtureSite, options: dict[str, Any]
) -> None:
    addr = await open_page(client, pages.url("/canary/labelled-by"))
    data = await client.ok("browser_snapshot", {**addr, **options})
    assert "Sign in with [REDACTED]" in data["snapshot"]
    assert_clean(data, CANARY)
    if options.get("includeRefs") or options["format"] == "actions":
        names = [
            r.get("name")
            for r in (data.get("refs") or table_refs(data["snapshot"]))
            if r["role"] == "button"
        ]
        assert names == ["Sign in with [REDACTED]"]
        # The redacted ref still acts on its element.
        ref = next(
            r["ref"]
            for r in (data.get("refs") or table_refs(data["snapshot"]))
            if r["role"] == "button"
        )
        await client.ok("browser_click", {**addr, "ref": ref})


async def test_copied_and_typed_passwords_are_redacted_in_every_exit(
    client: ToolClient, pages: FixtureSite, log_records: list[dict[str, Any]]
) -> None:
    addr = await open_page(client, pages.url("/canary/show"))
    await client.ok(
        "browser_fill", {**addr, "locator": {"strategy": "css", "value": "#q"}, "value": TYPED}
    )
    await client.ok("browser_click", {**addr, "locator": {"strategy": "css", "value": "#copy"}})
    box = {"strategy": "css", "value": "#box"}
    results = [
        await client.ok("browser_snapshot", {**addr, "format": "aria"}),
        await client.ok("browser_snapshot", {**addr, "format": "actions"}),
        await client.ok("browser_snapshot", {**addr, "format": "aria", "scope": box}),
        await client.ok("browser_snapshot", {**addr, "format": "actions", "scope": box}),
        await client.ok(
            "browser_snapshot", {**addr, "format": "aria", "scope": box, "includeRefs": True}
        ),
        await client.ok("browser_visible_text", {**addr, "locator": box}),
        await client.ok(
            "browser_visible_text", {**addr, "locator": {"strategy": "css", "value": "body"}}
        ),
        await client.ok("browser_get_title", addr),
    ]
    scoped = results[2]["snapshot"]
    assert "[REDACTED]" in scoped  # the copied value, outside any password field
    assert "[REDACTED]" in results[5]["text"]
    for data in results:
        assert_clean(data, CANARY, TYPED, QUOTED)
    assert_clean(log_records, CANARY, TYPED, QUOTED)


async def test_quoted_password_in_a_frame_is_redacted(
    client: ToolClient, pages: FixtureSite
) -> None:
    addr = await open_page(client, pages.url("/canary/show"))
    frame = [{"strategy": "css", "value": "iframe"}]
    for fmt in ("aria", "actions"):
        data = await client.ok(
            "browser_snapshot",
            {
                **addr,
                "format": fmt,
                "scope": {
                    "strategy": "css",
                    "value": "body",
                    "frame": {"kind": "iframe", "chain": frame},
                },
            },
        )
        assert "[REDACTED]" in data["snapshot"]
        assert_clean(data, QUOTED)


async def test_a_dialog_quoting_a_password_is_redacted(
    client: ToolClient, pages: FixtureSite
) -> None:
    addr = await open_page(client, pages.url("/canary/show"))
    data = await client.ok(
        "browser_action_and_wait",
        {
            **addr,
            "action": {"kind": "click", "target": {"strategy": "css", "value": "#say"}},
            "wait": {"kind": "dialog", "dialogType": "alert", "action": "accept"},
        },
    )
    assert data["event"]["message"] == "Your password is [REDACTED]"
    assert_clean(data, CANARY)
