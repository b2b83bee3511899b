"""browser_mouse's arguments and its wiring on the fake engine (issue 36 item 3, profile
`vision`): every field refused by name, the viewport check, the recorded step, and the
screenshot's `viewport` only with the profile."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from browsermesh.config import default_config
from browsermesh.errors import BrowserMeshError
from browsermesh.factory import create_states
from browsermesh.mcp.server import create_server
from browsermesh.model.mouse import MouseGesture, Viewport, check_in_viewport, parse_gesture
from browsermesh.runtime.checks import scroll_delta
from browsermesh.runtime.runtime import Runtime
from tests.fakes import FakeEngine
from tests.support.clients import ToolClient

pytestmark = pytest.mark.anyio


def _delta(value: object) -> int:
    return scroll_delta(value, "deltaY")


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({"action": "tap", "x": 1, "y": 1}, "action"),
        ({"action": "click", "x": 1, "y": 1, "button": "back"}, "button"),
        ({"action": "click", "y": 1}, "x"),
        ({"action": "click", "x": 1, "y": True}, "y"),
        ({"action": "click", "x": float("nan"), "y": 1}, "x"),
        ({"action": "drag", "x": 1, "y": 1, "toY": 2}, "toX"),
        ({"action": "drag", "x": 1, "y": 1, "toX": 2}, "toY"),
        ({"action": "wheel", "x": 1, "y": 1}, "deltaY"),
        ({"action": "wheel", "x": 1, "y": 1, "deltaY": 2_000_000}, "deltaY"),
    ],
)
def test_bad_arguments_name_their_field(args: dict[str, Any], field: str) -> None:
    with pytest.raises(BrowserMeshError) as caught:
        parse_gesture(args, _delta)
    assert caught.value.details["field"] == field


@pytest.mark.parametrize(
    ("gesture", "field"),
    [
        (MouseGesture(action="click", x=100, y=5), "x"),
        (MouseGesture(action="click", x=-0.5, y=5), "x"),
        (MouseGesture(action="click", x=5, y=50), "y"),
        (MouseGesture(action="drag", x=5, y=5, to=(100, 5)), "toX"),
        (MouseGesture(action="drag", x=5, y=5, to=(5, 50)), "toY"),
    ],
)
def test_coordinates_outside_the_viewport_are_refused(gesture: MouseGesture, field: str) -> None:
    with pytest.raises(BrowserMeshError) as caught:
        check_in_viewport(gesture, Viewport(100, 50, 2))
    assert caught.value.details["field"] == field
    assert "viewport 100x50" in caught.value.details["rule"]


def test_the_last_pixel_is_inside() -> None:
    check_in_viewport(MouseGesture(action="click", x=99.5, y=49), Viewport(100, 50, 1))


async def _client(tmp_path: Path, tools: tuple[str, ...]) -> AsyncIterator[ToolClient]:
    config = default_config(data_dir=tmp_path / "data", tools=tools)
    runtime = Runtime(config, FakeEngine(delay=0.001), states=create_states(config))
    try:
        async with Client(create_server(runtime)) as client:
            yield await ToolClient.of(client)
    finally:
        await runtime.shutdown()


@pytest.fixture
async def vision(tmp_path: Path) -> AsyncIterator[ToolClient]:
    async for c in _client(tmp_path, ("core", "testing", "vision")):
        yield c


async def test_a_gesture_runs_and_is_recorded(vision: ToolClient) -> None:
    s, p = await vision.session()
    at = {"sessionId": s, "pageId": p}
    done = await vision.ok("browser_mouse", {**at, "action": "click", "x": 10, "y": 20.5})
    assert (done["action"], done["x"], done["y"]) == ("click", 10, 20.5)
    err = await vision.err("browser_mouse", {**at, "action": "move", "x": 1280, "y": 0})
    assert err["code"] == "INVALID_ARGUMENT" and err["details"]["field"] == "x"
    code = (await vision.ok("browser_test_export", {"sessionIds": [s]}))["code"]
    assert ".mouse.click(10, 20.5)" in code and code.count(".mouse.") == 1  # refused: none
    shot = await vision.ok("browser_screenshot", at)
    assert shot["viewport"] == {"width": 1280, "height": 720, "deviceScaleFactor": 1}


async def test_without_the_profile_there_is_no_tool_and_no_viewport(tmp_path: Path) -> None:
    async for c in _client(tmp_path, ("core",)):
        assert "browser_mouse" not in c.tools
        s, p = await c.session()
        assert "viewport" not in await c.ok("browser_screenshot", {"sessionId": s, "pageId": p})
