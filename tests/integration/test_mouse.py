"""browser_mouse on real Chromium (issue 36 item 3, profile `vision`): a canvas page that logs
its pointer events sees exactly the CSS coordinates asked for at device scale factors 1 and 2;
out-of-viewport coordinates are refused naming the field; screenshots say the viewport; the
export of a mouse click replays green."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.site import FixtureSite
from tests.support.clients import ToolClient, tool_client
from tests.support.export_runner import run_exported, write_export
from tests.support.runtimes import real_runtime

pytestmark = pytest.mark.anyio

VISION = ("core", "vision")
CANVAS = """<!doctype html><title>Canvas</title>
<style>body{margin:0} canvas{position:fixed;left:0;top:0}
pre{position:fixed;left:0;top:0;margin:0;pointer-events:none}</style>
<canvas id=c width=400 height=300></canvas><pre id=log></pre>
<script>
const log = document.getElementById('log');
const say = (line) => { log.textContent += line + '\\n'; };
for (const type of ['mousedown', 'mouseup', 'click', 'dblclick', 'contextmenu']) {
  document.addEventListener(type, (e) => {
    if (type === 'contextmenu') e.preventDefault();
    say(`${type} ${e.clientX},${e.clientY} b${e.button}`);
  });
}
document.addEventListener('mousemove', (e) => say(`mousemove ${e.clientX},${e.clientY}`));
document.addEventListener('wheel', (e) => say(`wheel ${e.clientX},${e.clientY} dy${e.deltaY}`),
  {passive: true});
</script>"""
LOG = {"strategy": "css", "value": "#log"}


@pytest.fixture
def canvas(site: FixtureSite) -> FixtureSite:
    site.pages["/vision/canvas"] = CANVAS
    return site


async def _page(c: ToolClient, url: str, scale: float) -> dict[str, str]:
    settings = {"viewport": {"width": 400, "height": 300}, "deviceScaleFactor": scale}
    s, p = await c.session(contextSettings=settings)
    at = {"sessionId": s, "pageId": p}
    await c.ok("browser_navigate", {**at, "url": url})
    return at


async def _log(c: ToolClient, at: dict[str, str]) -> list[str]:
    text = await c.ok("browser_visible_text", {**at, "locator": LOG})
    return [line for line in str(text["text"]).splitlines() if line]


@pytest.mark.parametrize("scale", [1, 2])
async def test_the_page_sees_the_css_coordinates_asked_for(
    tmp_path: Path, canvas: FixtureSite, scale: int
) -> None:
    async with real_runtime(tmp_path, tools=VISION) as rt, tool_client(rt) as c:
        at = await _page(c, f"{canvas.base_url}/vision/canvas", scale)
        done = await c.ok("browser_mouse", {**at, "action": "click", "x": 140, "y": 130})
        assert (done["action"], done["x"], done["y"]) == ("click", 140, 130)
        lines = await _log(c, at)
        assert lines[-3:] == ["mousedown 140,130 b0", "mouseup 140,130 b0", "click 140,130 b0"]

        await c.ok("browser_mouse", {**at, "action": "double_click", "x": 50, "y": 60})
        assert (await _log(c, at))[-1] == "dblclick 50,60 b0"

        await c.ok("browser_mouse", {**at, "action": "click", "x": 300, "y": 20, "button": "right"})
        assert "contextmenu 300,20 b2" in await _log(c, at)

        drag = {"action": "drag", "x": 20, "y": 30, "toX": 220, "toY": 250}
        await c.ok("browser_mouse", {**at, **drag})
        lines = await _log(c, at)
        down = lines.index("mousedown 20,30 b0", len(lines) - 10)
        # a press and release on the same canvas is a click too
        assert lines[-3:] == ["mousemove 220,250", "mouseup 220,250 b0", "click 220,250 b0"]
        assert len(lines) - down - 3 >= 3  # moves between down and up

        await c.ok("browser_mouse", {**at, "action": "wheel", "x": 100, "y": 110, "deltaY": 120})
        # Chromium reports the wheel's delta in device pixels (as browser_scroll's): the
        # page sees deltaY / deviceScaleFactor; the pointer's coordinates are CSS pixels.
        assert (await _log(c, at))[-1] == f"wheel 100,110 dy{120 // scale}"

        await c.ok("browser_mouse", {**at, "action": "down", "x": 10, "y": 11})
        await c.ok("browser_mouse", {**at, "action": "up", "x": 12, "y": 13})
        assert (await _log(c, at))[-4:] == [
            "mousedown 10,11 b0",
            "mousemove 12,13",
            "mouseup 12,13 b0",
            "click 12,13 b0",
        ]

        shot = await c.ok("browser_screenshot", at)
        assert shot["viewport"] == {"width": 400, "height": 300, "deviceScaleFactor": scale}
        assert (shot["width"], shot["height"]) == (400, 300)


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({"action": "click", "x": 400, "y": 10}, "x"),
        ({"action": "click", "x": 10, "y": -1}, "y"),
        ({"action": "drag", "x": 10, "y": 10, "toX": 10, "toY": 300}, "toY"),
        ({"action": "drag", "x": 10, "y": 10, "toY": 30}, "toX"),
        ({"action": "wheel", "x": 10, "y": 10}, "deltaY"),
    ],
)
async def test_bad_coordinates_are_refused_naming_the_field(
    tmp_path: Path, canvas: FixtureSite, args: dict[str, Any], field: str
) -> None:
    async with real_runtime(tmp_path, tools=VISION) as rt, tool_client(rt) as c:
        at = await _page(c, f"{canvas.base_url}/vision/canvas", 1)
        error = await c.err("browser_mouse", {**at, **args})
        assert error["code"] == "INVALID_ARGUMENT" and error["details"]["field"] == field
        if field in ("x", "toY"):
            assert "400x300" in error["details"]["rule"]
        # nothing reached the page (Chromium's own move to 0,0 on load aside)
        assert [line for line in await _log(c, at) if line != "mousemove 0,0"] == []


async def test_without_vision_no_mouse_tool_and_plain_screenshots(
    tmp_path: Path, canvas: FixtureSite
) -> None:
    async with real_runtime(tmp_path) as rt, tool_client(rt) as c:
        assert "browser_mouse" not in c.tools
        at = await _page(c, f"{canvas.base_url}/vision/canvas", 1)
        shot = await c.ok("browser_screenshot", at)
        assert "viewport" not in shot


async def test_a_mouse_click_exports_and_replays_green(tmp_path: Path, canvas: FixtureSite) -> None:
    tools = ("core", "testing", "vision")
    async with real_runtime(tmp_path, tools=tools) as rt, tool_client(rt) as c:
        s, p = await c.session()
        at = {"sessionId": s, "pageId": p}
        await c.ok("browser_navigate", {**at, "url": f"{canvas.base_url}/vision/canvas"})
        await c.ok("browser_mouse", {**at, "action": "click", "x": 140, "y": 130})
        await c.ok("browser_mouse", {**at, "action": "wheel", "x": 30, "y": 40, "deltaY": 50})
        for seen in ("click 140,130 b0", "wheel 30,40 dy50"):
            condition = {"kind": "text", "text": seen, "state": "present"}
            await c.ok("browser_wait", {**at, "condition": condition})
        exported = await c.ok("browser_test_export", {"sessionIds": [s]})
    code = exported["code"]
    assert ".mouse.click(140, 130)" in code and ".mouse.wheel(0, 50)" in code
    test = write_export(tmp_path / "export", code)
    passed = run_exported(test, {"BM_BASE_URL": canvas.base_url})
    assert passed.returncode == 0, passed.stdout + passed.stderr
