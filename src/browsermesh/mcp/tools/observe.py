"""browser_observe (profile `observability`)."""

from __future__ import annotations

from typing import Any

from browsermesh.config import Config
from browsermesh.mcp.registry import Hints, ToolCall, ToolSpec
from browsermesh.mcp.schemas import (
    BOOL,
    Schema,
    enum,
    integer,
    page_address,
    string,
)

_SOURCE = enum("console", "pageError", "network", "requestFailed")


def input_schema(page_size: int) -> Schema:
    """The input schema for a server whose `BROWSERMESH_OBSERVABILITY_PAGE_SIZE` is `page_size`:
    `limit` publishes the runtime's own maximum (issue 13), so a limit the schema accepts is never
    refused for its size. Which fields combine with which source (includeText, the filters,
    requestId) is checked by the runtime, naming the field: an if/then per field would cost
    discovery bytes on every connection (issue 15)."""
    return page_address(
        {
            "source": _SOURCE,
            # 1..128 characters, checked by the runtime (an empty one is no eventId either).
            "sinceEventId": string(max_length=128),
            "limit": integer(1, page_size),
            "includeText": BOOL,
            "newestFirst": BOOL,
            "url": string(),
            "method": string(),
            "statusMin": integer(),
            "statusMax": integer(),
            "resourceType": string(),
            "requestId": string(),
        },
        ("source",),
    )


# Event reads and the request detail read answer different shapes (reference §8.2, issue 15):
# the open object names neither, which costs the fewest discovery bytes.
_OUTPUT: Schema = {"type": "object"}


async def observe(call: ToolCall) -> dict[str, Any]:
    op_id, data = await call.runtime.observe(call.page(), call.args)
    return call.page_result(op_id, **data)


def specs(page_size: int | None = None) -> list[ToolSpec]:
    """browser_observe for the configured page size (default: the configuration's default)."""
    size = Config().observability_page_size if page_size is None else page_size
    return [
        ToolSpec(
            name="browser_observe",
            title="Read page observations",
            description=(
                "console (incl. popups, human steps), pageError, network (incl. 5xx) or "
                "requestFailed events; "
                "poll: sinceEventId=nextCursor, check gap/droppedCount. One request: network "
                "+ requestId."
            ),
            profile="observability",
            hints=Hints(read_only=True, idempotent=True, open_world=True),
            input_schema=input_schema(size),
            output_schema=_OUTPUT,
            handler=observe,
        )
    ]
