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
            "sinceEventId": string(1, 128, description="nextCursor of an earlier read."),
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
_EVENT: Schema = {
    "type": "object",
    "properties": {
        "eventId": string(),
        "timestamp": string(),
        "sessionId": string(),
        "pageId": string(),
        "kind": enum("console", "page_error", "request", "response", "request_failed"),
        "level": string(),
        "text": string(),
        "requestId": string(),
        "method": string(),
        "url": string(),
        "resourceType": string(),
        "status": integer(0, 999),
        "durationMs": integer(0),
        "failure": string(),
    },
    "required": ["eventId", "timestamp", "sessionId", "pageId", "kind"],
}


async def observe(call: ToolCall) -> dict[str, Any]:
    op_id, data = await call.runtime.observe(
        call.principal, call.session_id(), call.page_id(), call.args
    )
    return {
        "operationId": op_id,
        "sessionId": call.args["sessionId"],
        "pageId": call.args["pageId"],
        **data,
    }


def specs() -> list[ToolSpec]:
    return [
        ToolSpec(
            "browser_observe",
            "Read page observations",
            "Read a page's captured console messages, page errors, network requests/responses "
            "(HTTP 5xx are here) or failed requests, oldest first; pass nextCursor as "
            "sinceEventId to continue. Check gap/droppedCount before concluding absence. "
            "includeText (console/pageError only) adds redacted text.",
            "observability",
            True,
            False,
            True,
            True,
            _INPUT,
            page_output(
                {
                    "source": _SOURCE,
                    "events": array(_EVENT),
                    "nextCursor": {"type": ["string", "null"]},
                    "droppedCount": integer(0),
                    "gap": BOOL,
                }
            ),
            observe,
        )
    ]
