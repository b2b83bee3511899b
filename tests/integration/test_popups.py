"""Popups nobody asked for (issue 12): bounded by the session's page limit and reported."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from browsermesh.runtime.runtime import Runtime
from tests.fixtures.site import FixtureSite
from tests.support.clients import ToolClient, tool_client
from tests.support.runtimes import real_runtime

pytestmark = pytest.mark.anyio

MAX_PAGES = 5
POPUPS = 200
ABSENT = {"kind": "text", "text": "never shown", "state": "present"}


def context_pages(rt: Runtime, session_id: str) -> int:
    context = rt.sessions_snapshot()[session_id].context
    return len(context.context.pages)  # type: ignore[union-attr]


async def popup_events(c: ToolClient, addr: dict[str, Any], count: int) -> list[dict[str, Any]]:
    """Every popup event of the page's console source, once `count` of them were recorded."""
    for _ in range(100):
        events: list[dict[str, Any]] = []
        cursor = None
        while True:
            args: dict[str, Any] = {**addr, "source": "console", "limit": 100}
            data = await c.ok(
                "browser_observe", args | ({"sinceEventId": cursor} if cursor else {})
            )
            if not data.get("events", []):
                break
            events += [e for e in data.get("events", []) if e["kind"] == "popup"]
            cursor = data.get("nextCursor")
        if len(events) >= count:
            return events
        await c.err("browser_wait", {**addr, "timeoutMs": 100, "condition": ABSENT})
    raise AssertionError(f"{len(events)} popup events, expected {count}")


async def test_a_popup_flood_is_cut_to_the_page_limit_and_reported(
    tmp_path: Path, site: FixtureSite
) -> None:
    async with (
        real_runtime(tmp_path, max_pages=MAX_PAGES, observability_events=500) as rt,
        tool_client(rt) as c,
    ):
        s, p = await c.session()
        addr = {"sessionId": s, "pageId": p}
        url = site.url(f"/popup-flood?n={POPUPS}")
        await c.ok("browser_navigate", {**addr, "url": url})
        opened = {"kind": "text", "text": f"opened {POPUPS}", "state": "present"}
        await c.ok("browser_wait", {**addr, "condition": opened, "timeoutMs": 60_000})
        events = await popup_events(c, addr, POPUPS)
        closed = [e for e in events if e["closed"]]
        # The session's page is managed; popups fill the context up to the limit, no further.
        assert len(events) - len(closed) == MAX_PAGES - 1
        assert all(e["url"].startswith(site.url("/?value=popup")) for e in events), events[0]
        for _ in range(100):  # closing is asynchronous: wait until it is done
            if context_pages(rt, s) <= MAX_PAGES:
                break
            await c.err("browser_wait", {**addr, "timeoutMs": 100, "condition": ABSENT})
        assert context_pages(rt, s) <= MAX_PAGES
        started = time.monotonic()
        await c.ok("browser_get_url", addr)
        assert time.monotonic() - started < 1.0
        pages = await c.ok("browser_page_list", {"sessionId": s})
        assert [page["pageId"] for page in pages["pages"]] == [p]  # none of them is managed


async def test_the_expected_popup_is_still_registered_when_the_context_is_full(
    tmp_path: Path, site: FixtureSite
) -> None:
    """Unmanaged popups fill the context; the popup an action-and-wait expects is still the
    waiter's (registered while the session has room for managed pages)."""
    async with real_runtime(tmp_path, max_pages=MAX_PAGES) as rt, tool_client(rt) as c:
        s, p = await c.session()
        addr = {"sessionId": s, "pageId": p}
        await c.ok("browser_navigate", {**addr, "url": site.url("/popup-flood?n=10")})
        opened = {"kind": "text", "text": "opened 10", "state": "present"}
        await c.ok("browser_wait", {**addr, "condition": opened, "timeoutMs": 60_000})
        await popup_events(c, addr, 10)
        await c.ok("browser_navigate", {**addr, "url": site.url("/popup-dialog-actions")})
        button = {"strategy": "role", "value": "button", "name": "Open popup"}
        popup = await c.ok(
            "browser_action_and_wait",
            {**addr, "action": {"kind": "click", "target": button}, "wait": {"kind": "popup"}},
        )
        assert popup["event"]["kind"] == "popup"
        pages = await c.ok("browser_page_list", {"sessionId": s})
        assert len(pages["pages"]) == 2
