"""browser_observe (profile `observability`)."""

from __future__ import annotations

from typing import Any

from browsermesh.mcp.registry import ToolCall, ToolSpec
from browsermesh.mcp.schemas import (
    BOOL,
    Schema,
    array,
    enum,
    integer,
    page_address,
    page_output,
    string,
)

_SOURCE = enum("console", "pageError", "network", "requestFailed")
_INPUT: Schema = {
    **page_address(
        {
            "source": _SOURCE,
            "sinceEventId": string(1, 128),
            "limit": integer(1, 200),
            "includeText": BOOL,
        },
        ("source",),
    ),
    # includeText is only for console and pageError.
    "if": {
        "properties": {"source": {"enum": ["network", "requestFailed"]}},
        "required": ["source"],
    },
    "then": {"properties": {"includeText": {"const": False}}},
}
_EVENT: Schema = {"type": "object", "required": ["eventId", "kind"]}


async def observe(call: ToolCall) -> dict[str, Any]:
    op_id, data = await call.runtime.observe(
        call.principal, call.session_id(), call.page_id(), call.args
    )
    return call.page_result(op_id, **data)


def specs() -> list[ToolSpec]:
    return [
        ToolSpec(
            "browser_observe",
            "Read page observations",
            "Read captured console (incl. popups nobody expected), pageError, network (incl. "
            "HTTP 5xx) or requestFailed events; continue with sinceEventId=nextCursor; check "
            "gap/droppedCount. includeText only for console/pageError.",
            "observability",
            True,
            False,
            True,
            True,
            _INPUT,
            page_output({"events": array(_EVENT), "droppedCount": integer(0), "gap": BOOL}),
            observe,
        )
    ]
