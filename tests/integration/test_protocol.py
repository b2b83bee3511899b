"""The published surface and the real stdio transport (both protocol eras)."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.fixtures.site import FixtureSite
from tests.stdio_peer import StdioPeer
from tests.support.clients import ERAS, ToolClient
from tests.support.eventually import eventually
from tests.support.servers import (
    assert_no_chromium_left,
    chromium_pids_with_marker,
    spawn_stdio_server,
    stdio_server,
)

pytestmark = pytest.mark.anyio

# Reference §3.2: title, readOnly, destructive, idempotent, openWorld.
ANNOTATIONS: dict[str, tuple[str, str]] = {
    "browser_runtime_info": ("Inspect BrowserMesh runtime", "TFTF"),
    "browser_session_create": ("Create isolated browser session", "FFFF"),
    "browser_session_list": ("List browser sessions", "TFTF"),
    "browser_session_get": ("Get browser session", "TFTF"),
    "browser_session_close": ("Close browser session", "FTTF"),
    "browser_page_create": ("Create browser page", "FFFF"),
    "browser_page_list": ("List browser pages", "TFTF"),
    "browser_page_close": ("Close browser page", "FTFF"),
    # Issue 19: changes a session's network policy in place.
    "browser_session_update": ("Update browser session", "FFTF"),
    "browser_navigate": ("Navigate browser page", "FFFT"),
    "browser_back": ("Navigate browser page back", "FFFT"),
    "browser_forward": ("Navigate browser page forward", "FFFT"),
    "browser_reload": ("Reload browser page", "FFFT"),
    "browser_get_url": ("Get browser page URL", "TFTF"),
    "browser_get_title": ("Get browser page title", "TFTT"),
    # Issue 15: fills like browser_fill, never submits.
    "browser_fill_form": ("Fill form fields", "FFFT"),
}


def _flags(t: Any) -> str:
    """The hints as a client reads them: an absent hint is the MCP default (readOnly false,
    destructive true, idempotent false, openWorld true); only other values are published."""
    a = t.annotations
    hints = (a.read_only_hint, a.destructive_hint, a.idempotent_hint, a.open_world_hint)
    defaults = (False, True, False, True)
    assert all(v is None or v != d for v, d in zip(hints, defaults, strict=True)), hints
    return "".join(
        "T" if (d if v is None else v) else "F" for v, d in zip(hints, defaults, strict=True)
    )


async def test_tools_are_published_with_titles_hints_and_schemas(mcp_client: ToolClient) -> None:
    for name, (title, flags) in ANNOTATIONS.items():
        tool = mcp_client.tools[name]
        assert tool.title == title and tool.annotations.title is None
        assert _flags(tool) == flags, name
        assert tool.output_schema["type"] == "object"
        for schema in (tool.input_schema, tool.output_schema):
            assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert tool.description
    create = mcp_client.tools["browser_session_create"].description
    assert "one per role, auth state or workflow" in create
    assert not [n for n in mcp_client.tools if "agent" in n or "message" in n or "assign" in n]


async def test_schema_failures_are_invalid_argument(mcp_client: ToolClient) -> None:
    """Issue 31 item 7: the published schema's failures answer the BrowserMesh payload."""
    wrong = await mcp_client.err(
        "browser_get_url", {"sessionId": "s", "pageId": "p", "timeoutMs": "2"}
    )
    assert wrong["code"] == "INVALID_ARGUMENT"
    assert wrong["details"] == {"field": "timeoutMs", "rule": "integer"}
    extra = await mcp_client.err("browser_session_list", {"bogus": 1})
    assert extra["details"] == {"field": "bogus", "rule": "unknown field"}


@pytest.mark.parametrize("mode", ERAS)
async def test_stdio_wrong_shapes_and_lean_results_on_a_live_page(
    mode: str, tmp_path: Path, site: FixtureSite
) -> None:
    """Over stdio with real Chromium: a schema failure and the runtime's check of the same
    mistake read alike (field and rule), and successes do not repeat the page's address."""
    async with Client(stdio_server(tmp_path, BM_TEST_MARKER=f"bm-{uuid.uuid4()}"), mode=mode) as cl:
        c = await ToolClient.of(cl)
        s, p = await c.session(name="shapes")
        addr = {"sessionId": s, "pageId": p}
        landed = await c.ok("browser_navigate", {**addr, "url": site.url("/interactions")})
        assert set(landed) >= {"operationId", "url"} and not set(landed) & set(addr)
        bad = {"strategy": "xpath", "value": "//button"}
        by_schema = await c.err("browser_click", {**addr, "locator": bad})
        by_runtime = await c.err("browser_hover", {**addr, "locator": bad})
        for error in (by_schema, by_runtime):
            assert error["code"] == "INVALID_ARGUMENT"
            assert error["details"] == {
                "field": "locator.strategy",
                "rule": "one of: role, text, label, placeholder, alt, title, testId, css",
            }
        assert "operationId" not in by_schema  # refused before the runtime saw it
        too_long = await c.err("browser_session_create", {"name": "n" * 129})
        assert too_long["details"] == {"field": "name", "rule": "at most 128 characters"}
        assert too_long["message"] == "Invalid argument. Bound: name <= 128."
        missing = await c.err("browser_navigate", addr)
        assert missing["details"] == {"field": "url", "rule": "required"}
        text = await c.ok("browser_get_title", addr)
        assert set(text) == {"operationId", "title"}


@pytest.mark.parametrize("mode", ERAS)
async def test_stdio_subprocess_roundtrip(mode: str, tmp_path: Path, site: FixtureSite) -> None:
    marker = f"bm-{uuid.uuid4()}"
    async with Client(stdio_server(tmp_path, BM_TEST_MARKER=marker), mode=mode) as client:
        c = await ToolClient.of(client)
        assert "browser_session_create" in c.tools
        assert client.session.instructions and "sessionId" in client.session.instructions
        s, p = await c.session(name="stdio")
        await c.ok(
            "browser_navigate", {"sessionId": s, "pageId": p, "url": site.url("/delay?value=stdio")}
        )
        assert (await c.ok("browser_get_title", {"sessionId": s, "pageId": p}))["title"] == (
            "Delay stdio"
        )
        assert chromium_pids_with_marker(marker)
    # closing stdin ended the server, which closed Chromium
    await eventually(lambda: not chromium_pids_with_marker(marker), 10, "Chromium exited")


async def test_no_agent_guidelines_sends_no_instructions(tmp_path: Path) -> None:
    params = stdio_server(tmp_path, "--no-agent-guidelines", BM_TEST_MARKER="x")
    async with Client(params, mode="legacy") as client:
        assert not client.session.instructions


def test_sigterm_shuts_down_and_leaves_no_chromium(tmp_path: Path, site: FixtureSite) -> None:
    marker = f"bm-{uuid.uuid4()}"
    proc = spawn_stdio_server(tmp_path, marker)
    peer = StdioPeer(proc)
    assert peer.initialize()["result"]["serverInfo"]["name"] == "browsermesh"
    created = peer.call("browser_session_create", {})
    assert created["session"]["status"] == "ready"
    assert chromium_pids_with_marker(marker)
    started = time.monotonic()
    proc.terminate()
    code = proc.wait(timeout=15)
    assert code == 0 and time.monotonic() - started < 5
    stderr = peer.rest_of_stderr()
    assert "Traceback" not in stderr
    lines = [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]
    assert any(r.get("type") == "session.closed" and r.get("reason") == "shutdown" for r in lines)
    assert_no_chromium_left(marker, 10)
