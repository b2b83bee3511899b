"""Device emulation (issue 19 #3) on real Chromium: `contextSettings.device`, explicit settings
over the descriptor's, and the generated descriptor table against the installed Playwright."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

from browsermesh.model.device_table import PLAYWRIGHT_VERSION
from browsermesh.model.devices import devices
from tests.fixtures.device_site import DeviceSite
from tests.support.clients import ToolClient

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def device_site() -> Iterator[DeviceSite]:
    with DeviceSite() as site:
        yield site


async def probe(c: ToolClient, site: DeviceSite, settings: dict[str, Any]) -> list[str]:
    """What /device reports in a new session with `settings` (see tests/fixtures/device_site)."""
    s, p = await c.session(contextSettings=settings)
    addr = {"sessionId": s, "pageId": p}
    await c.ok("browser_navigate", {**addr, "url": site.url("/device")})
    data = await c.ok(
        "browser_visible_text", {**addr, "locator": {"strategy": "testId", "value": "device"}}
    )
    return str(data["text"]).split("|")


async def test_a_phone_beside_a_desktop(client: ToolClient, device_site: DeviceSite) -> None:
    phone, desktop = await asyncio.gather(
        probe(client, device_site, {"device": "iPhone 15"}), probe(client, device_site, {})
    )
    iphone = devices()["iPhone 15"]
    assert phone == [
        iphone.user_agent,
        "393x659",
        "3",
        "coarse:true",
        "touch:true",
        "points:1",
        "screen:393x852",
    ]
    assert "HeadlessChrome" in desktop[0] and "iPhone" not in desktop[0]
    assert desktop[1:] == ["1280x720", "1", "coarse:false", "touch:false", "points:0", desktop[6]]


async def test_explicit_settings_win_over_the_device(
    client: ToolClient, device_site: DeviceSite
) -> None:
    created = await client.ok(
        "browser_session_create",
        {
            "contextSettings": {
                "device": "pixel 7",  # names match case-insensitively
                "viewport": {"width": 600, "height": 800},
                "userAgent": "ExplicitUA/1.0",
            }
        },
    )
    assert created["session"]["contextSettings"] == {
        "device": "Pixel 7",
        "viewport": {"width": 600, "height": 800},
        "userAgent": "ExplicitUA/1.0",
    }
    s, p = created["session"]["sessionId"], created["initialPage"]["pageId"]
    await client.ok(
        "browser_navigate", {"sessionId": s, "pageId": p, "url": device_site.url("/device")}
    )
    text = await client.ok(
        "browser_visible_text",
        {"sessionId": s, "pageId": p, "locator": {"strategy": "testId", "value": "device"}},
    )
    ua, size, scale, coarse, touch, _points, screen = str(text["text"]).split("|")
    pixel = devices()["Pixel 7"]
    assert (ua, size) == ("ExplicitUA/1.0", "600x800")  # explicit
    assert (float(scale), coarse, touch) == (pixel.device_scale_factor, "coarse:true", "touch:true")
    assert pixel.screen is not None and screen == "screen:{}x{}".format(*pixel.screen)


async def test_touch_and_mobile_flags_alone_and_over_a_device(
    client: ToolClient, device_site: DeviceSite
) -> None:
    untouched = await probe(
        client, device_site, {"device": "iPhone 15", "hasTouch": False, "isMobile": False}
    )
    assert untouched[3:6] == ["coarse:false", "touch:false", "points:0"]
    assert untouched[0] == devices()["iPhone 15"].user_agent  # the rest stays the device's
    touch_laptop = await probe(
        client, device_site, {"hasTouch": True, "deviceScaleFactor": 1.5, "isMobile": False}
    )
    assert touch_laptop[1:3] == ["1280x720", "1.5"]
    assert touch_laptop[4:6] == ["touch:true", "points:1"]


async def test_bad_device_settings_name_the_field_and_rule(client: ToolClient) -> None:
    cases = [
        ({"device": "Nokia 3310 (secret-name)"}, "contextSettings.device", "browser_runtime_info"),
        ({"device": 7}, "contextSettings.device", "string"),
        ({"isMobile": "yes"}, "contextSettings.isMobile", "boolean"),
        ({"hasTouch": 1}, "contextSettings.hasTouch", "boolean"),
        ({"deviceScaleFactor": 11}, "contextSettings.deviceScaleFactor", "at most 10"),
        ({"deviceScaleFactor": 0.05}, "contextSettings.deviceScaleFactor", "at least 0.1"),
    ]
    before = len((await client.ok("browser_session_list"))["sessions"])
    for settings, field, rule in cases:
        err = await client.err("browser_session_create", {"contextSettings": settings})
        assert err["code"] == "INVALID_ARGUMENT", settings
        assert err["details"]["field"] == field and rule in err["details"]["rule"], err
        assert "secret-name" not in json.dumps(err)
    # validated before any session (or context) existed
    assert len((await client.ok("browser_session_list"))["sessions"]) == before


async def test_runtime_info_lists_the_devices(client: ToolClient) -> None:
    info = await client.ok("browser_runtime_info")
    listed = info["devices"]
    assert listed["iPhone 15"] == "393x659 mobile"
    assert listed["iPhone 15 landscape"] == "734x343 mobile"
    assert listed["Desktop Chrome"] == "1280x720"
    assert list(listed) == list(devices())
    assert len(json.dumps(listed, separators=(",", ":"))) < 10_000  # compact


async def test_the_table_is_the_installed_playwrights() -> None:
    """The generated table (scripts/update_devices.py) equals `playwright.devices` of the
    installed Playwright; only the driver starts, never a browser."""
    from importlib import metadata

    from playwright.async_api import async_playwright

    assert metadata.version("playwright") == PLAYWRIGHT_VERSION
    pw = await async_playwright().start()
    try:
        live = dict(pw.devices)
    finally:
        await pw.stop()
    assert list(live) == list(devices())
    for name, spec in live.items():
        ours = devices()[name]
        assert spec["user_agent"] == ours.user_agent, name
        assert (spec["viewport"]["width"], spec["viewport"]["height"]) == ours.viewport, name
        screen = spec.get("screen")
        assert (None if screen is None else (screen["width"], screen["height"])) == ours.screen
        assert spec["device_scale_factor"] == ours.device_scale_factor, name
        assert (spec["is_mobile"], spec["has_touch"]) == (ours.is_mobile, ours.has_touch), name
        assert spec["default_browser_type"] == ours.default_browser_type, name
