"""browser_find: search one page for text or a pattern in what a person sees (issue 31)."""

from __future__ import annotations

from typing import Any

from browsermesh.mcp.registry import Hints, ToolCall, ToolSpec
from browsermesh.mcp.schemas import BOOL, integer, page_address, string


async def find(call: ToolCall) -> dict[str, Any]:
    op_id, data = await call.runtime.find(call.page(), call.args)
    return call.page_result(op_id, **data)


def specs() -> list[ToolSpec]:
    """browser_find (profile `core`)."""
    # Bounds (text 1..1000 chars, limit 1..100) and the scope's shape are checked by
    # model.find (INVALID_ARGUMENT naming field and rule): schema bytes kept for issue 31.
    scope: dict[str, Any] = {"type": "object"}
    return [
        ToolSpec(
            name="browser_find",
            title="Find text",
            description=(
                "To read a value, count or message, or locate an element by text, without a "
                "snapshot: visible text, names, values (no passwords); any-case, regex:true: "
                "case-sensitive unless (?i). Gives count, matches [{text,ref,role}]: refs fit "
                "element tools; table rows come whole. within/frame as locators; limit 20; "
                "more: cursor=nextCursor"
            ),
            profile="core",
            hints=Hints(read_only=True, idempotent=True, open_world=True),
            input_schema=page_address(
                {
                    "text": string(),
                    "regex": BOOL,
                    "within": scope,
                    "frame": scope,
                    "limit": integer(),
                    "cursor": string(),
                },
                ("text",),
            ),
            output_schema={"type": "object"},  # count, matches, nextCursor: the description
            handler=find,
        )
    ]
