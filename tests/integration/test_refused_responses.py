"""A refused download or a failed response behind an action names its HTTP status and URL
(issue 31 item 14, first half), over the MCP SDK client on real Chromium.

A link whose server answers 401 used to leave `browser_action_and_wait {wait: download}`
waiting out its budget for a generic `OPERATION_TIMEOUT`; now it answers at once with the
status and the sanitized URL. A wait that does time out names the failed response behind the
action (a 500 from the fetch the click made).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.fixtures.site import FixtureSite
from tests.support.clients import ToolClient

pytestmark = pytest.mark.anyio


async def click_and_wait(
    client: ToolClient, site: FixtureSite, target: dict[str, Any], wait: dict[str, Any]
) -> dict[str, Any]:
    s, p = await client.session()
    addr = {"sessionId": s, "pageId": p}
    await client.ok("browser_navigate", {**addr, "url": site.url("/reports")})
    return await client.err(
        "browser_action_and_wait",
        {**addr, "timeoutMs": 30_000, "action": {"kind": "click", "target": target}, "wait": wait},
    )


@pytest.mark.parametrize("name", ["Export", "Export file"])  # an HTML 401, a 401 attachment
async def test_a_refused_download_says_the_status_and_the_sanitized_url(
    client: ToolClient, site: FixtureSite, name: str
) -> None:
    link = {"strategy": "role", "value": "link", "name": name}
    error = await click_and_wait(client, site, link, {"kind": "download"})
    assert error["code"] == "NAVIGATION_FAILED", error
    details = error["details"]
    assert details["reason"] == "http_status" and details["status"] == 401
    assert details["url"] == site.url("/refused-download")  # the token query is not sent
    assert "HTTP 401" in error["message"] and "s3cr3t" not in str(error)


async def test_a_timed_out_wait_names_the_failed_response_behind_the_action(
    client: ToolClient, site: FixtureSite
) -> None:
    s, p = await client.session()
    addr = {"sessionId": s, "pageId": p}
    await client.ok("browser_navigate", {**addr, "url": site.url("/reports")})
    save = {"strategy": "role", "value": "button", "name": "Save"}
    error = await client.err(
        "browser_action_and_wait",
        {
            **addr,
            "timeoutMs": 1_500,
            "action": {"kind": "click", "target": save},
            "wait": {"kind": "navigation"},
        },
    )
    assert error["code"] == "OPERATION_TIMEOUT", error
    assert error["details"]["status"] == 500
    assert error["details"]["url"] == site.url("/api/server-error")
    assert "HTTP 500" in error["message"] and "s3cr3t" not in str(error)
