"""A page whose renderer crashed (issue 12 #13): listed as crashed, answered clearly, reloadable."""

from __future__ import annotations

import contextlib

import pytest

from browsermesh.model.action_table import table_refs
from browsermesh.runtime.runtime import Runtime
from tests.fixtures.site import FixtureSite
from tests.support.clients import ToolClient
from tests.support.eventually import eventually

pytestmark = pytest.mark.anyio


async def crash(runtime: Runtime, session_id: str, page_id: str) -> None:
    """Crash the page's renderer the way Chromium's own crash URL does."""
    handle = runtime.sessions_snapshot()[session_id].pages[page_id].handle
    with contextlib.suppress(Exception):
        await handle.page.goto("chrome://crash", timeout=5_000)  # type: ignore[attr-defined]
    await eventually(lambda: handle.crashed, 10, "the page crashed")


async def test_crashed_page_is_marked_answered_and_recovered_by_reload(
    client: ToolClient, runtime: Runtime, site: FixtureSite
) -> None:
    s, p = await client.session()
    addr = {"sessionId": s, "pageId": p}
    url = site.url("/?value=before-crash")
    await client.ok("browser_navigate", {**addr, "url": url})
    snap = await client.ok("browser_snapshot", {**addr, "format": "actions"})
    await crash(runtime, s, p)

    pages = (await client.ok("browser_page_list", {"sessionId": s}))["pages"]
    assert [pg.get("crashed") for pg in pages] == [True]
    error = await client.err("browser_get_title", addr)
    assert error["code"] == "BROWSER_ERROR"
    assert error["details"]["reason"] == "page_crashed"
    assert "browser_reload" in error["nextStep"]
    if table_refs(snap["snapshot"]):
        ref_error = await client.err(
            "browser_click", {**addr, "ref": table_refs(snap["snapshot"])[0]["ref"]}
        )
        assert ref_error["details"]["reason"] == "page_crashed"

    reloaded = await client.ok("browser_reload", addr)
    assert reloaded["url"] == url
    pages = (await client.ok("browser_page_list", {"sessionId": s}))["pages"]
    assert [(pg["pageId"], pg.get("crashed")) for pg in pages] == [(p, None)]
    assert (await client.ok("browser_get_title", addr))["title"]
    # The same pageId keeps working: observation, navigation, snapshots.
    await client.ok("browser_evaluate", {**addr, "expression": "console.log('after-crash'), 1"})
    events = await client.ok("browser_observe", {**addr, "source": "console", "includeText": True})
    assert any("after-crash" in e.get("text", "") for e in events.get("events", []))
    await client.ok("browser_navigate", {**addr, "url": site.url("/?value=next")})
    await client.ok("browser_snapshot", {**addr, "format": "actions"})


async def test_crashed_page_can_be_closed(
    client: ToolClient, runtime: Runtime, site: FixtureSite
) -> None:
    s, p = await client.session()
    second = (await client.ok("browser_page_create", {"sessionId": s}))["page"]["pageId"]
    await client.ok("browser_navigate", {"sessionId": s, "pageId": second, "url": site.url("/")})
    await crash(runtime, s, second)
    await client.ok("browser_page_close", {"sessionId": s, "pageId": second})
    pages = (await client.ok("browser_page_list", {"sessionId": s}))["pages"]
    assert [pg["pageId"] for pg in pages] == [p]
