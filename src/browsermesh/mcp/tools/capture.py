"""Screenshots: an image block plus structured width/height/bytes."""

from __future__ import annotations

import base64

import mcp.types as types

from browsermesh.mcp.registry import Hints, ToolCall, ToolOutput, ToolSpec
from browsermesh.mcp.schemas import integer, page_address, page_output

# Runtime-checked; published as an object whose description spells out the shape.
_CAPTURE = {"type": "object", "description": "{kind:viewport|fullPage}|{kind:element,locator}"}


async def screenshot(call: ToolCall) -> ToolOutput:
    op_id, (png, width, height) = await call.runtime.screenshot(
        call.page(), call.args.get("capture")
    )
    # No mimeType field: always image/png, and the image block says so (issue 31 item 9).
    data = call.page_result(op_id, width=width, height=height, bytes=len(png))
    image = types.ImageContent(
        type="image", data=base64.b64encode(png).decode("ascii"), mime_type="image/png"
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
            input_schema=page_address({"capture": _CAPTURE}),
            output_schema=(
                page_output({"width": integer(1), "height": integer(1), "bytes": integer(1)})
            ),
            handler=screenshot,
        )
    ]
