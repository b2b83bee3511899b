"""tests/fakes.py's FakeEngine implements the whole engine port (issue 18), so every runtime
rule can be unit-tested without Chromium: checked by name and signature here, by mypy against
`Engine[...]` (tests/static/fake_engine_conformance.py), and by running every page tool on it
through the MCP server (each result validated against its output schema by ToolClient)."""

from __future__ import annotations

import base64
import inspect
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from browsermesh.config import default_config
from browsermesh.engine.protocol import Engine
from browsermesh.errors import ErrorCode
from browsermesh.factory import create_states
from browsermesh.mcp.server import create_server
from browsermesh.runtime.runtime import Runtime
from tests.fakes import FAKE_PDF, FakeEngine
from tests.support.clients import ToolClient

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
TYPED = ROOT / "tests" / "static" / "fake_engine_conformance.py"


def protocol_members(protocol: type) -> dict[str, Any]:
    """The members a protocol declares itself: methods, properties, annotated attributes."""
    members = {
        name: value
        for name, value in vars(protocol).items()
        if not name.startswith("_") and (callable(value) or isinstance(value, property))
    }
    members.update({name: None for name in vars(protocol).get("__annotations__", {})})
    return members


def shape(function: Any) -> list[tuple[str, Any, Any]]:
    """A signature without its annotations (the fake's handle types are its own)."""
    return [(p.name, p.kind, p.default) for p in inspect.signature(function).parameters.values()]


def test_the_protocol_is_read_whole() -> None:
    members = protocol_members(Engine)
    # A few members of each kind, so a change to how they are read cannot empty the check.
    assert {"events", "backend", "new_context", "current_url", "evaluate", "stop"} <= set(members)
    assert len(members) >= 30


@pytest.mark.parametrize("name", sorted(protocol_members(Engine)))
def test_fake_engine_has_every_protocol_member(name: str) -> None:
    declared = protocol_members(Engine)[name]
    fake = FakeEngine()
    assert hasattr(fake, name), f"FakeEngine lacks Engine.{name}"
    if declared is None:  # an attribute (`events`)
        return
    implemented = inspect.getattr_static(FakeEngine, name)
    if isinstance(declared, property):
        assert isinstance(implemented, property), f"Engine.{name} is a property"
        return
    assert inspect.iscoroutinefunction(implemented) == inspect.iscoroutinefunction(declared), (
        f"FakeEngine.{name}: async must match the protocol"
    )
    assert shape(implemented) == shape(declared), f"FakeEngine.{name}: parameters differ"


def test_mypy_accepts_the_fake_as_an_engine() -> None:
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-error-summary", str(TYPED)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    # The check must stay cheap (issue 18: < 10 s); mypy's cache makes it well under that.
    assert time.monotonic() - started < 30


# ------------------------------------------------------------------------------------------
# Every page tool runs on the fake
# ------------------------------------------------------------------------------------------


@pytest.fixture
async def fake(tmp_path: Path) -> AsyncIterator[tuple[ToolClient, FakeEngine]]:
    engine = FakeEngine(delay=0.001)
    config = default_config(
        data_dir=tmp_path / "data",
        tools=("core", "observability", "persistence", "files", "eval"),
    )
    runtime = Runtime(config, engine, states=create_states(config))
    try:
        async with Client(create_server(runtime)) as client:
            yield await ToolClient.of(client), engine
    finally:
        await runtime.shutdown()


CSS = {"strategy": "css", "value": "#x"}
NEVER = {"kind": "exact", "value": "http://never.test/"}


async def test_every_page_tool_runs_on_the_fake(
    fake: tuple[ToolClient, FakeEngine], tmp_path: Path
) -> None:
    c, engine = fake
    s, p = await c.session()
    addr = {"sessionId": s, "pageId": p}
    await c.ok("browser_navigate", {**addr, "url": "http://a.test/"})
    # Nothing changed: `changes` is left out (issue 31 item 9: no empty objects).
    assert "changes" not in await c.ok("browser_click", {**addr, "locator": CSS})
    await c.ok("browser_fill", {**addr, "locator": CSS, "value": "hello"})
    filled = await c.ok("browser_fill_form", {**addr, "fields": [{"target": CSS, "value": "v"}]})
    assert filled["filled"] == 1
    await c.ok("browser_scroll", {**addr, "deltaX": 0, "deltaY": 100})
    await c.ok("browser_drag_and_drop", {**addr, "source": CSS, "target": CSS})
    text = await c.ok("browser_visible_text", {**addr, "locator": CSS})
    assert text["text"] == "Text of http://a.test/"
    url = {"kind": "url", "matcher": {"kind": "exact", "value": "http://a.test/"}}
    assert (await c.ok("browser_wait", {**addr, "condition": url}))["satisfied"] is True
    navigation = await c.ok(
        "browser_action_and_wait",
        {**addr, "action": {"kind": "click", "target": CSS}, "wait": {"kind": "navigation"}},
    )
    assert navigation["event"]["kind"] == "navigation"
    popup = await c.ok(
        "browser_action_and_wait",
        {**addr, "action": {"kind": "click", "target": CSS}, "wait": {"kind": "popup"}},
    )
    assert popup["event"]["kind"] == "popup"
    assert engine.live_pages() == 2
    snapshot = await c.ok("browser_snapshot", addr)
    assert "Title of http://a.test/" in snapshot["snapshot"]
    shot = await c.raw("browser_screenshot", addr)
    assert not shot.is_error and any(block.type == "image" for block in shot.content)
    pdf = await c.ok("browser_pdf", addr)
    read = await c.ok(
        "browser_artifact_read",
        {"sessionId": s, "artifactId": pdf["artifact"]["artifactId"], "encoding": "base64"},
    )
    assert base64.b64decode(read["content"]) == FAKE_PDF
    assert (await c.ok("browser_evaluate", {**addr, "expression": "x => x", "arg": 7}))[
        "result"
    ] == 7
    await c.ok("browser_state_save", {"sessionId": s, "stateId": "fake"})
    restored = await c.ok("browser_session_create", {"stateId": "fake"})
    assert restored["session"]["status"] == "ready"
    page = engine.contexts[0].pages[0]
    assert [op for op, _ in page.actions] == [
        "click",
        "fill",
        "fill_field",
        "scroll",
        "drag",
        "click",
        "click",
    ]
    for step in ("storage_state", "snapshot", "screenshot", "pdf", "evaluate", "wait"):
        assert step in engine.calls


async def test_a_wait_the_fake_never_meets_ends_at_its_deadline(
    fake: tuple[ToolClient, FakeEngine],
) -> None:
    c, engine = fake
    s, p = await c.session()
    addr = {"sessionId": s, "pageId": p}
    started = time.monotonic()
    error = await c.err(
        "browser_wait",
        {**addr, "timeoutMs": 300, "condition": {"kind": "url", "matcher": NEVER}},
    )
    assert error["code"] == ErrorCode.OPERATION_TIMEOUT.value
    assert 0.25 < time.monotonic() - started < 5
    assert engine.active == 0  # the wait let go of the page
    # The session's queue moves on.
    await c.ok("browser_get_url", addr)
