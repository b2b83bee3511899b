"""The features that differ between Chromium binaries, under every binary on this machine
(issue 16): the headless shell (the old headless mode, which headless sessions prefer) and the
full Chromium in headless mode. PDF, screenshots, downloads, file choosers,
`prefers-color-scheme` and geolocation, each through the MCP client on real Chromium, and
`browser_runtime_info.browserBinary` naming the binary in use.

The parameter list holds the binaries the lookup finds here (one entry when only one is
installed); each case pins its binary with the configured browser path.
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from browsermesh.config import (
    ChromiumLocation,
    locate_full_chromium,
    locate_headless_shell,
    process_environ,
)
from browsermesh.log import EventLog
from browsermesh.model.png import png_size
from tests.fixtures.files_site import EXPORT_CSV, FilesSite
from tests.fixtures.site import FixtureSite
from tests.integration.test_files import completed, read_all
from tests.support.clients import ToolClient, open_page, tool_client
from tests.support.locators import by_test_id, role
from tests.support.runtimes import real_config, real_runtime

pytestmark = pytest.mark.anyio

BINARIES: list[ChromiumLocation] = [
    found
    for found in (
        locate_headless_shell(process_environ()),
        locate_full_chromium(process_environ()),
    )
    if found is not None
]


@pytest.fixture(params=BINARIES, ids=[b.kind for b in BINARIES])
async def binary_client(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[ChromiumLocation, ToolClient]]:
    binary: ChromiumLocation = request.param
    async with (
        real_runtime(tmp_path, EventLog("silent"), browser_path=binary.path) as runtime,
        tool_client(runtime) as c,
    ):
        yield binary, c


async def check_screenshot(c: ToolClient, site: FixtureSite) -> None:
    addr = await open_page(c, site.url("/interactions"))
    result = await c.raw("browser_screenshot", addr)
    assert not result.is_error
    png = base64.b64decode(result.content[0].data)
    assert png_size(png) == (1280, 720)
    full = await c.ok("browser_screenshot", {**addr, "capture": {"kind": "fullPage"}})
    assert full["width"] == 1280 and full["height"] > 3000


async def check_pdf_and_download(c: ToolClient, files_site: FilesSite) -> None:
    addr = await open_page(c, files_site.url("/exports"))
    sid = addr["sessionId"]
    printed = await c.ok("browser_pdf", addr)
    assert (await read_all(c, sid, printed["artifact"]["artifactId"], "base64")).startswith(
        b"%PDF-"
    )
    before = len(await completed(c, sid, 0))
    await c.ok("browser_click", {**addr, "locator": role("button", "Export CSV")})
    done = {a["name"]: a for a in await completed(c, sid, before + 1)}
    assert await read_all(c, sid, done["export.csv"]["artifactId"], "text") == EXPORT_CSV


async def check_file_chooser(c: ToolClient, files_site: FilesSite) -> None:
    addr = await open_page(c, files_site.url("/chooser"))
    result = await c.ok(
        "browser_file_upload",
        {**addr, "locator": role("button", "Pick a file"),
         "files": [{"name": "c.bin", "contentBase64": base64.b64encode(b"\x01\x02").decode()}]},
    )  # fmt: skip
    assert result["via"] == "chooser"
    picked = {"strategy": "css", "value": "#picked"}
    shown = await c.ok("browser_visible_text", {**addr, "locator": picked})
    assert "c.bin (2 B)" in shown["text"]


async def page_with(c: ToolClient, settings: dict[str, Any], url: str) -> dict[str, str]:
    created = await c.ok("browser_session_create", {"contextSettings": settings})
    addr = {
        "sessionId": created["session"]["sessionId"],
        "pageId": created["initialPage"]["pageId"],
    }
    await c.ok("browser_navigate", {**addr, "url": url})
    return addr


async def check_color_scheme(c: ToolClient, site: FixtureSite) -> None:
    for scheme in ("dark", "light"):
        addr = await page_with(c, {"colorScheme": scheme}, site.url("/context-settings"))
        text = (await c.ok("browser_visible_text", {**addr, "locator": by_test_id("settings")}))[
            "text"
        ]
        assert text.split("|")[4] == scheme, text


async def check_geolocation(c: ToolClient, site: FixtureSite) -> None:
    settings = {
        "geolocation": {"latitude": 52.5, "longitude": 13.4},
        "permissions": [{"permission": "geolocation", "origin": site.base_url}],
    }
    addr = await page_with(c, settings, site.url("/geolocation"))
    await c.ok("browser_click", {**addr, "locator": role("button", "Locate")})
    await c.ok(
        "browser_wait",
        {
            **addr,
            "condition": {"kind": "locator", "locator": by_test_id("geo"), "state": "visible"},
        },
    )
    await c.ok(
        "browser_wait",
        {**addr, "timeoutMs": 5000, "condition": {"kind": "text", "text": "|", "state": "present"}},
    )
    geo = await c.ok("browser_visible_text", {**addr, "locator": by_test_id("geo")})
    assert geo["text"] == "granted|52.5,13.4"


async def test_features_under_each_binary(
    binary_client: tuple[ChromiumLocation, ToolClient], site: FixtureSite, files_site: FilesSite
) -> None:
    binary, c = binary_client
    files_site.clear()
    await check_screenshot(c, site)
    info = await c.ok("browser_runtime_info")
    assert info["browserBinary"] == binary.kind
    assert info["browserLaunchState"] == "ready" and info["headless"] is True
    await check_pdf_and_download(c, files_site)
    await check_file_chooser(c, files_site)
    await check_color_scheme(c, site)
    await check_geolocation(c, site)


def test_the_suite_default_is_the_headless_shell_when_there_is_one() -> None:
    """tests/support/runtimes.py `real_config` sets no browser path: the lookup gives headless
    sessions the headless shell whenever one is installed (so CI runs the suite on it)."""
    from browsermesh.config import locate_chromium

    chosen = locate_chromium(real_config(Path("/nonexistent")), process_environ())
    assert chosen is not None
    assert chosen == BINARIES[0]
