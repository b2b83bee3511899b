"""browser_session_create with `url`: a session opened where the task starts, in one call.

The first page lands as browser_navigate lands (status, title, key text); a bad or unreachable
URL leaves no session behind (docs/decisions.md, issue 31, "A session opened at a URL")."""

from __future__ import annotations

import pytest

from tests.fixtures.site import FixtureSite
from tests.support.clients import ToolClient
from tests.support.ports import closed_port

pytestmark = pytest.mark.anyio

PAGE = (
    "<!doctype html><title>Sign in</title><main><h1>Welcome back</h1><button>Log in</button></main>"
)


async def test_the_first_page_opens_at_the_url(mcp_client: ToolClient, site: FixtureSite) -> None:
    site.pages["/start"] = PAGE
    made = await mcp_client.ok("browser_session_create", {"url": site.url("/start")})
    first = made["initialPage"]
    assert first["url"] == site.url("/start") and first["status"] == 200, first
    assert first["title"] == "Sign in" and 'h1 "Welcome back"' in first["keys"], first
    addr = {"sessionId": made["session"]["sessionId"], "pageId": first["pageId"]}
    # The page is really there: an element tool acts on it at once.
    await mcp_client.ok(
        "browser_click", {**addr, "locator": {"strategy": "text", "value": "Log in"}}
    )
    # Several sessions: each first page opens there.
    many = await mcp_client.ok("browser_session_create", {"url": site.url("/start"), "count": 2})
    assert [s["initialPage"]["title"] for s in many["sessions"]] == ["Sign in", "Sign in"]


async def test_a_bad_or_unreachable_url_leaves_no_session(mcp_client: ToolClient) -> None:
    bad = await mcp_client.err("browser_session_create", {"url": "file:///etc/passwd"})
    assert bad["code"] == "INVALID_ARGUMENT" and bad["details"]["field"] == "url", bad
    refused = f"http://127.0.0.1:{closed_port()}/"
    failed = await mcp_client.err("browser_session_create", {"url": refused, "name": "gone"})
    assert failed["code"] == "NAVIGATION_FAILED", failed
    assert failed["details"]["reason"] == "connection", failed
    listed = await mcp_client.ok("browser_session_list")
    assert [s for s in listed["sessions"] if s["status"] != "closed"] == [], listed
