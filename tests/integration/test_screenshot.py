"""Screenshot modes and limits on real Chromium."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from browsermesh.model.png import png_size
from tests.fixtures.site import FixtureSite
from tests.support.clients import ToolClient, tool_client
from tests.support.runtimes import real_runtime

pytestmark = pytest.mark.anyio


async def test_screenshot_modes(mcp_client: ToolClient, site: FixtureSite) -> None:
    c = mcp_client
    s, p = await c.session()
    addr = {"sessionId": s, "pageId": p}
    await c.ok("browser_navigate", {**addr, "url": site.url("/interactions")})
    result = await c.raw("browser_screenshot", addr)
    assert not result.is_error
    image, text = result.content
    assert image.type == "image" and image.mime_type == "image/png" and text.type == "text"
    png = base64.b64decode(image.data)
    data = result.structured_content
    assert (data["width"], data["height"]) == (1280, 720) == png_size(png)
    assert data["bytes"] == len(png)
    full = await c.ok("browser_screenshot", {**addr, "capture": {"kind": "fullPage"}})
    assert full["width"] == 1280 and full["height"] > 3000
    element = await c.ok(
        "browser_screenshot",
        {
            **addr,
            "capture": {
                "kind": "element",
                "locator": {"strategy": "role", "value": "button", "name": "Far button"},
            },
        },
    )
    assert 0 < element["width"] < 1280 and 0 < element["height"] < 200
    err = await c.err(
        "browser_screenshot",
        {
            **addr,
            "timeoutMs": 1000,
            "capture": {"kind": "element", "locator": {"strategy": "css", "value": "#missing"}},
        },
    )
    assert err["code"] == "ELEMENT_NOT_FOUND"


async def test_screenshot_limits_do_not_poison_queue(tmp_path: Path, site: FixtureSite) -> None:
    async with (
        real_runtime(tmp_path, screenshot_max_dimension=1000, screenshot_max_bytes=1024) as rt,
        tool_client(rt) as c,
    ):
        s, p = await c.session()
        addr = {"sessionId": s, "pageId": p}
        await c.ok("browser_navigate", {**addr, "url": site.url("/interactions")})
        err = await c.err("browser_screenshot", {**addr, "capture": {"kind": "fullPage"}})
        assert err["code"] == "LIMIT_EXCEEDED"
        assert "BROWSERMESH_SCREENSHOT_MAX_DIMENSION" in err["message"]
        err = await c.err("browser_screenshot", addr)  # 1280 wide viewport
        assert err["code"] == "LIMIT_EXCEEDED"
        small = await c.err(
            "browser_screenshot",
            {
                **addr,
                "capture": {
                    "kind": "element",
                    "locator": {"strategy": "testId", "value": "drop-target"},
                },
            },
        )
        assert small["code"] == "LIMIT_EXCEEDED"  # over 1024 encoded bytes
        assert "BROWSERMESH_SCREENSHOT_MAX_BYTES" in small["message"]
        assert (await c.ok("browser_get_title", addr))["title"] == "Interactions"
