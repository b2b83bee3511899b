"""Screenshots: an image block plus structured width/height/bytes."""

from __future__ import annotations

import base64

import mcp.types as types

from browsermesh.mcp.registry import Hints, ToolCall, ToolOutput, ToolSpec
from browsermesh.mcp.schemas import integer, page_address, page_output

# Runtime-checked; published as objects whose description spells out the shape.
_CAPTURE = {"type": "object", "description": "{kind:viewport|fullPage}|{kind:element,locator}"}
_HIGHLIGHT = {"type": "object", "description": "{ref}|{locator}: box this element"}


async def screenshot(call: ToolCall) -> ToolOutput:
    op_id, shot = await call.runtime.screenshot(
        call.page(), call.args.get("capture"), call.args.get("highlight")
    )
    # No mimeType field: always image/png, and the image block says so (issue 31 item 9).
    data = call.page_result(op_id, width=shot.width, height=shot.height, bytes=len(shot.png))
    if shot.highlight is not None:
        data["highlight"] = shot.highlight.wire()
    if shot.viewport is not None:
        data["viewport"] = shot.viewport.wire()
    image = types.ImageContent(
        type="image", data=base64.b64encode(shot.png).decode("ascii"), mime_type="image/png"
    )
    return ToolOutput(data, leading=[image])


def specs() -> list[ToolSpec]:
    return [
        ToolSpec(
            name="browser_screenshot",
            title="Capture page screenshot",
            description=(
                "PNG of viewport (default), full page or element; to read: browser_snapshot."
            ),
            profile="core",
            hints=Hints(read_only=True, idempotent=True, open_world=True),
            input_schema=page_address({"capture": _CAPTURE, "highlight": _HIGHLIGHT}),
            output_schema=(
                page_output({"width": integer(1), "height": integer(1), "bytes": integer(1)})
            ),
            handler=screenshot,
        )
    ]
