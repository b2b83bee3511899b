"""A failed navigation must not poison the ones after it (issue 12 #3).

After a navigation fails (an unsafe port, a refused port), Chromium commits its error page
(`chrome-error://chromewebdata/`) a moment later; a navigation issued meanwhile was reported
as interrupted although the page did reach its URL. A result must match where the page is.
"""

from __future__ import annotations

import pytest

from tests.fixtures.site import FixtureSite
from tests.support.clients import ToolClient
from tests.support.ports import closed_port

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("bad", ["unsafe", "refused"])
async def test_navigation_after_a_failed_one_reports_where_the_page_is(
    client: ToolClient, site: FixtureSite, bad: str
) -> None:
    s, p = await client.session()
    addr = {"sessionId": s, "pageId": p}
    bad_url = "http://127.0.0.1:1/" if bad == "unsafe" else f"http://127.0.0.1:{closed_port()}/"
    outcomes: list[str] = []
    for trial in range(6):
        good = site.url(f"/?value=t{trial}")
        await client.ok("browser_navigate", {**addr, "url": good})
        failed = await client.err("browser_navigate", {**addr, "url": bad_url})
        assert failed["code"] == "NAVIGATION_FAILED"
        assert failed["details"]["reason"] in ("connection", "other")
        for again in range(3):
            target = site.url(f"/?value=t{trial}a{again}")
            result = await client.raw("browser_navigate", {**addr, "url": target})
            where = (await client.ok("browser_get_url", addr))["url"]
            if result.is_error:
                outcomes.append(f"error while page is at {where}")
            else:
                assert result.structured_content["url"] == where == target
                outcomes.append("ok")
    assert set(outcomes) == {"ok"}, outcomes
