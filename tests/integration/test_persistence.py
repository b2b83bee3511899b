"""Saved states, context settings, permissions and labels through MCP on real Chromium."""

from __future__ import annotations

import asyncio
import json
import stat
from pathlib import Path
from typing import Any

import pytest

from browsermesh.runtime.runtime import Runtime
from tests.fixtures.site import FixtureSite
from tests.support.clients import ToolClient, tool_client
from tests.support.runtimes import real_runtime

pytestmark = pytest.mark.anyio


async def whoami(c: ToolClient, s: str, p: str, site: FixtureSite) -> str:
    await c.ok("browser_navigate", {"sessionId": s, "pageId": p, "url": site.url("/whoami")})
    return str((await c.ok("browser_get_title", {"sessionId": s, "pageId": p}))["title"])


async def test_save_and_restore_login(
    mcp_client: ToolClient, runtime: Runtime, site: FixtureSite
) -> None:
    c = mcp_client
    buyer, page = await c.session(name="buyer")
    await c.ok(
        "browser_navigate", {"sessionId": buyer, "pageId": page, "url": site.url("/?value=buyer1")}
    )
    saved = await c.ok("browser_state_save", {"sessionId": buyer, "stateId": "buyer-login"})
    assert saved["state"]["stateId"] == "buyer-login" and saved["state"]["createdAt"]
    restored = await c.ok("browser_session_create", {"stateId": "buyer-login"})
    assert restored["session"]["restoredFromStateId"] == "buyer-login"
    s2, p2 = restored["session"]["sessionId"], restored["initialPage"]["pageId"]
    assert await whoami(c, s2, p2, site) == "ls:buyer1|cookie:identity=buyer1"
    s3, p3 = await c.session()
    assert await whoami(c, s3, p3, site) == "ls:|cookie:"
    # files are private
    folder = runtime.config.data_dir / "states"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE((folder / "buyer-login.json").stat().st_mode) == 0o600
    listed = await c.ok("browser_state_list")
    assert [s["stateId"] for s in listed["states"]] == ["buyer-login"]
    assert "buyer1" not in str(listed)
    await c.ok("browser_state_remove", {"stateId": "buyer-login"})
    err = await c.err("browser_state_remove", {"stateId": "buyer-login"})
    assert err["code"] == "SAVED_STATE_NOT_FOUND"
    missing = await c.err("browser_session_create", {"stateId": "buyer-login"})
    assert missing["code"] == "SAVED_STATE_NOT_FOUND" and missing["operationId"]
    for bad in ("../x", "a/b", ".hidden", "x" * 129):
        result = await c.raw("browser_state_save", {"sessionId": buyer, "stateId": bad})
        assert result.is_error  # the schema (length) or the runtime (format): INVALID_ARGUMENT
        assert json.loads(result.content[0].text)["error"]["details"]["field"] == "stateId"


async def test_save_is_ordered_after_queued_fill(mcp_client: ToolClient, site: FixtureSite) -> None:
    c = mcp_client
    s, p = await c.session()
    addr = {"sessionId": s, "pageId": p}
    await c.ok("browser_navigate", {**addr, "url": site.url("/?value=first")})
    # navigate (sets a new cookie) and save issued back to back: the save sees the navigation
    nav = asyncio.create_task(c.ok("browser_navigate", {**addr, "url": site.url("/?value=second")}))
    save = asyncio.create_task(c.ok("browser_state_save", {"sessionId": s, "stateId": "order"}))
    await nav
    await save
    restored = await c.ok("browser_session_create", {"stateId": "order"})
    title = await whoami(
        c, restored["session"]["sessionId"], restored["initialPage"]["pageId"], site
    )
    assert title == "ls:second|cookie:identity=second"


async def test_persistence_disabled(tmp_path: Path) -> None:
    async with real_runtime(tmp_path, persistence=False) as rt, tool_client(rt) as c:
        assert (await c.err("browser_state_list"))["code"] == "PERSISTENCE_DISABLED"
        assert (await c.err("browser_state_remove", {"stateId": "x"}))["code"] == (
            "PERSISTENCE_DISABLED"
        )
        err = await c.err("browser_session_create", {"stateId": "x"})
        assert err["code"] == "PERSISTENCE_DISABLED"
        view = (await c.ok("browser_session_list"))["sessions"][-1]
        assert view["status"] == "failed" and view["failureCode"] == "PERSISTENCE_DISABLED"


async def test_context_settings_observed_by_page(mcp_client: ToolClient, site: FixtureSite) -> None:
    c = mcp_client
    settings: dict[str, Any] = {
        "viewport": {"width": 800, "height": 600},
        "deviceScaleFactor": 2,
        "locale": "DE-de",
        "timezoneId": "Europe/Berlin",
        "colorScheme": "dark",
        "reducedMotion": "reduce",
        "userAgent": "TestUA/1.0",
    }
    created = await c.ok("browser_session_create", {"contextSettings": settings})
    assert created["session"]["contextSettings"]["locale"] == "de-DE"
    s, p = created["session"]["sessionId"], created["initialPage"]["pageId"]
    await c.ok(
        "browser_navigate", {"sessionId": s, "pageId": p, "url": site.url("/context-settings")}
    )
    text = await c.ok(
        "browser_visible_text",
        {"sessionId": s, "pageId": p, "locator": {"strategy": "testId", "value": "settings"}},
    )
    assert text["text"] == "800x600|2|de-DE|Europe/Berlin|dark|reduce|TestUA/1.0"
    bad = await c.err("browser_session_create", {"contextSettings": {"timezoneId": "Mars/Olympus"}})
    assert bad["code"] == "INVALID_ARGUMENT"


async def test_geolocation_granted_for_exact_origin_only(
    mcp_client: ToolClient, site: FixtureSite
) -> None:
    c = mcp_client

    async def locate(settings: dict[str, Any]) -> str:
        created = await c.ok("browser_session_create", {"contextSettings": settings})
        s, p = created["session"]["sessionId"], created["initialPage"]["pageId"]
        addr = {"sessionId": s, "pageId": p}
        await c.ok("browser_navigate", {**addr, "url": site.url("/geolocation")})
        await c.ok(
            "browser_click",
            {**addr, "locator": {"strategy": "role", "value": "button", "name": "Locate"}},
        )
        await c.ok(
            "browser_wait",
            {
                **addr,
                "condition": {
                    "kind": "locator",
                    "locator": {"strategy": "testId", "value": "geo"},
                    "state": "visible",
                },
            },
        )
        await c.ok(
            "browser_wait",
            {
                **addr,
                "timeoutMs": 5000,
                "condition": {"kind": "text", "text": "|", "state": "present"},
            },
        )
        data = await c.ok(
            "browser_visible_text", {**addr, "locator": {"strategy": "testId", "value": "geo"}}
        )
        return str(data["text"])

    geo = {"latitude": 52.5, "longitude": 13.4}
    granted = await locate(
        {
            "geolocation": geo,
            "permissions": [{"permission": "geolocation", "origin": site.base_url.upper() + "/"}],
        }
    )
    assert granted == "granted|52.5,13.4"
    other = await locate(
        {
            "geolocation": geo,
            "permissions": [{"permission": "geolocation", "origin": site.alt_base_url}],
        }
    )
    assert not other.startswith("granted")
    none = await locate({})
    assert not none.startswith("granted")
    wildcard = await c.err(
        "browser_session_create",
        {
            "contextSettings": {
                "geolocation": geo,
                "permissions": [{"permission": "geolocation", "origin": "http://*.example.com"}],
            }
        },
    )
    assert wildcard["code"] == "INVALID_ARGUMENT"


async def test_label_bounds(mcp_client: ToolClient) -> None:
    c = mcp_client
    ok = await c.ok(
        "browser_session_create", {"name": "n" * 128, "metadata": {"k" * 64: "v" * 512}}
    )
    assert ok["session"]["name"] == "n" * 128
    schema_rejects = [
        ({"name": ""}, "name", "at least 1 character"),
        ({"name": "x" * 129}, "name", "at most 128 characters"),
        ({"name": "bad\u0007name"}, "name", "no control characters"),
        ({"metadata": {"__proto__": "x"}}, "metadata", "keys: not a reserved name"),
        ({"metadata": {"k": "v" * 513}}, "metadata.k", "at most 512 characters"),
        ({"metadata": {f"k{i}": "v" for i in range(33)}}, "metadata", "at most 32 entries"),
        ({"metadata": {"": "v"}}, "metadata", "keys: at least 1 character"),
    ]
    for args, field, rule in schema_rejects:
        error = await c.err("browser_session_create", args)
        assert error["code"] == "INVALID_ARGUMENT", args
        assert error["details"] == {"field": field, "rule": rule}, args
    # 128 four-byte characters are exactly the 512-byte name limit
    assert (await c.ok("browser_session_create", {"name": "😀" * 128}))["session"]["name"]
    aggregate = {f"k{i}": "é" * 300 for i in range(20)}  # 20 * (2 + 600) bytes > 8192
    assert (await c.err("browser_session_create", {"metadata": aggregate}))["code"] == (
        "LIMIT_EXCEEDED"
    )
    assert (await c.ok("browser_runtime_info"))["activeSessions"] == 2
