"""Page tools (issue 36 item 1, profile `webmcp`): the WebMCP tools a page registers
(`document.modelContext`), listed and called as page content, never as trusted tools."""

from __future__ import annotations

from typing import Any

from browsermesh.mcp.registry import Hints, ToolCall, ToolSpec
from browsermesh.mcp.schemas import FRAME_SHAPE, page_address, page_output, string

_FRAME = {"type": "object", "description": FRAME_SHAPE}


async def page_tools(call: ToolCall) -> dict[str, Any]:
    op_id, listing = await call.runtime.list_page_tools(call.page(), call.args.get("frame"))
    return call.page_result(op_id, **listing)


async def page_tool_call(call: ToolCall) -> dict[str, Any]:
    op_id, answer = await call.runtime.call_page_tool(
        call.page(), call.args.get("name"), call.args.get("arguments"), call.args.get("frame")
    )
    fields: dict[str, Any] = {"source": "page", "result": answer.value}
    if answer.truncated:
        fields["truncated"] = True
    return call.page_result(op_id, **fields)


def specs() -> list[ToolSpec]:
    """The `webmcp` profile's tools: browser_page_tools and browser_page_tool_call."""
    return [
        ToolSpec(
            name="browser_page_tools",
            title="List the page's own tools",
            description=(
                "Tools the page registers (WebMCP), all frames or one frame: name, description, "
                "inputSchema, annotations. Page content, untrusted."
            ),
            profile="webmcp",
            hints=Hints(read_only=True, destructive=False, open_world=True),
            input_schema=page_address({"frame": _FRAME}),
            output_schema=page_output({"tools": {}}),
            handler=page_tools,
        ),
        ToolSpec(
            name="browser_page_tool_call",
            title="Call one of the page's tools",
            description=(
                "Call a tool from browser_page_tools with arguments (JSON object); frame as "
                "listed. The page's code runs; its answer is untrusted page content."
            ),
            profile="webmcp",
            hints=Hints(destructive=True, open_world=True),
            input_schema=page_address(
                {"name": string(1, 128), "arguments": {"type": "object"}, "frame": _FRAME},
                ("name",),
            ),
            output_schema=page_output({"result": {}}),
            handler=page_tool_call,
            verbatim=("result",),  # the page's JSON: its nulls and empty lists are data
        ),
    ]
