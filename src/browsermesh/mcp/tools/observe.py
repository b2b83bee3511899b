"""browser_observe (profile `observability`)."""

from __future__ import annotations

from typing import Any

from browsermesh.config import Config
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


def input_schema(page_size: int) -> Schema:
    """The input schema for a server whose `BROWSERMESH_OBSERVABILITY_PAGE_SIZE` is `page_size`:
    `limit` publishes the runtime's own maximum (issue 13), so a limit the schema accepts is never
    refused for its size."""
    return {
        **page_address(
            {
                "source": _SOURCE,
                "sinceEventId": string(1, 128),
                "limit": integer(1, page_size),
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


def specs(page_size: int | None = None) -> list[ToolSpec]:
    """browser_observe for the configured page size (default: the configuration's default)."""
    size = Config().observability_page_size if page_size is None else page_size
    return [
        ToolSpec(
            "browser_observe",
            "Read page observations",
            "Captured console (incl. unexpected popups), pageError, network (incl. HTTP 5xx) "
            "or requestFailed events; continue with sinceEventId=nextCursor; check "
            "gap/droppedCount. includeText: console/pageError only.",
            "observability",
            True,
            False,
            True,
            True,
            input_schema(size),
            page_output({"events": array(_EVENT), "droppedCount": integer(0), "gap": BOOL}),
            observe,
        )
    ]
