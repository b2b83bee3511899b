"""Coordinates for what has no element (issue 36 item 3, profile `vision`): mouse gestures
at CSS pixels of the viewport, e.g. on a canvas, as seen in a screenshot."""

from __future__ import annotations

from typing import Any

from browsermesh.mcp.registry import Hints, ToolCall, ToolSpec
from browsermesh.mcp.schemas import Schema, enum, integer, page_address, page_output
from browsermesh.model.mouse import MOUSE_ACTIONS, MOUSE_BUTTONS

_PX: Schema = {"type": "number"}


async def mouse(call: ToolCall) -> dict[str, Any]:
    op_id, gesture = await call.runtime.mouse(call.page(), call.args)
    return call.page_result(op_id, action=gesture.action, x=gesture.x, y=gesture.y)


def specs() -> list[ToolSpec]:
    """The `vision` profile's tool: browser_mouse."""
    return [
        ToolSpec(
            name="browser_mouse",
            title="Use mouse at page coordinates",
            description=(
                "Mouse at x,y in CSS pixels of the viewport (a viewport screenshot's pixels; "
                "its `viewport` gives size and deviceScaleFactor), for what has no element, "
                "e.g. a canvas. drag: to toX,toY; wheel: deltaY. Prefer element tools."
            ),
            profile="vision",
            hints=Hints(destructive=True, open_world=True),
            input_schema=page_address(
                {
                    "action": enum(*MOUSE_ACTIONS),
                    "x": _PX,
                    "y": _PX,
                    "toX": _PX,
                    "toY": _PX,
                    "button": enum(*MOUSE_BUTTONS),
                    "deltaY": integer(),
                },
                ("action", "x", "y"),
            ),
            output_schema=page_output({"action": {}, "x": {}, "y": {}}),
            handler=mouse,
        )
    ]
