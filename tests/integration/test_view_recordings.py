"""A session's traces and videos for a person (issue 35; reference §33.3, §30): the live view's
card links them, also after the session closed, and `/view/artifacts/...` serves them to the
session's principal only, always as an attachment; a real `browsermesh --transport http`."""

from __future__ import annotations

import zipfile
from collections.abc import Iterator
from io import BytesIO
from typing import Any

import httpx2
import pytest

from tests.fixtures.site import FixtureSite
from tests.integration.test_live_view import (
    WAIT_MS,
    Server,
    card,
    new_link,
    open_view,
    serving,
    sign_in,
)
from tests.integration.test_live_view import chromium as chromium  # the fixture
from tests.support.http_transport import TOKENS, connect

pytestmark = pytest.mark.anyio

PAGE = "<!doctype html><title>Recorded</title><h1>Recorded page</h1>"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serving(tmp_path_factory.mktemp("recordings"), "--tools", "core,files,testing") as running:
        yield running


@pytest.fixture
def pages(site: FixtureSite) -> FixtureSite:
    site.pages["/rec/page"] = PAGE
    return site


async def _cookie(http: httpx2.AsyncClient, server: Server, principal: str) -> dict[str, str]:
    answer = await sign_in(http, server, await new_link(server, principal))
    assert answer.status_code == 200
    http.cookies.clear()
    return {"Cookie": answer.headers["set-cookie"].split(";")[0]}


async def test_traces_are_linked_and_served_to_their_principal_only(
    server: Server, pages: FixtureSite, chromium: Any
) -> None:
    async with connect(server.mcp, "legacy", TOKENS["alice"]) as c:
        sid, pid = await c.session(name="recorded")
        await c.ok("browser_trace", {"sessionId": sid, "action": "start"})
        await c.ok(
            "browser_navigate", {"sessionId": sid, "pageId": pid, "url": pages.url("/rec/page")}
        )
        stopped = await c.ok("browser_trace", {"sessionId": sid, "action": "stop"})
        artifact = stopped["artifact"]
        await c.ok("browser_session_close", {"sessionId": sid})
    path = f"/view/artifacts/{sid}/{artifact['artifactId']}"
    # The result says where a person downloads it; alice is no `local` principal: no file path.
    assert stopped["download"] == server.base + path and "path" not in stopped

    # The card of the closed session links its trace; the link downloads the zip.
    context, view = await open_view(chromium, server, "alice")
    try:
        link = card(view, sid).locator("a.recording.trace")
        await link.wait_for(timeout=WAIT_MS)
        assert await link.get_attribute("href") == path.removeprefix("/view/")
        async with view.expect_download(timeout=WAIT_MS) as download_info:
            await link.click()
        download = await download_info.value
        assert download.suggested_filename == artifact["name"]
        saved = await download.path()
        with zipfile.ZipFile(saved) as archive:
            assert "trace.trace" in archive.namelist()
    finally:
        await context.close()

    async with httpx2.AsyncClient(trust_env=False, timeout=30) as http:
        alice = await _cookie(http, server, "alice")
        got = await http.get(server.base + path, headers=alice)
        assert got.status_code == 200
        assert got.headers["content-type"] == "application/zip"
        assert got.headers["content-disposition"].startswith("attachment;")
        assert got.headers["x-content-type-options"] == "nosniff"
        assert len(got.content) == artifact["size"]
        zipfile.ZipFile(BytesIO(got.content)).testzip()
        # Bob's view, no view at all, an unknown id: nothing is served or confirmed.
        bob = await _cookie(http, server, "bob")
        assert (await http.get(server.base + path, headers=bob)).status_code == 404
        assert (await http.get(server.base + path)).status_code == 401
        unknown = f"/view/artifacts/{sid}/a-nope"
        assert (await http.get(server.base + unknown, headers=alice)).status_code == 404
        bearer = {"Authorization": f"Bearer {TOKENS['alice']}"}
        assert (await http.get(server.base + path, headers=bearer)).status_code == 401
