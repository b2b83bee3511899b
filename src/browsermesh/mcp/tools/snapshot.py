"""browser_snapshot: bounded ARIA snapshots and compact action tables with element refs."""

from __future__ import annotations

from typing import Any

from browsermesh.mcp.registry import Hints, ToolCall, ToolSpec
from browsermesh.mcp.schemas import BOOL, enum, integer, page_address, page_output, string
from browsermesh.model.snapshot_options import TABLES_MODES


async def snapshot(call: ToolCall) -> dict[str, Any]:
    op_id, data = await call.runtime.snapshot(call.page(), call.args)
    return call.page_result(op_id, **data)


def specs() -> list[ToolSpec]:
    # No defaults are injected: an option counts as given exactly when its key is present.
    options = {
        "format": enum("aria", "actions"),
        "scope": {"type": "object", "description": "locator or {ref}"},
        "maxDepth": integer(0, 100),
        "includeBoundingBoxes": BOOL,
        "maxChars": integer(1, 100_000),
        "maxBytes": integer(1, 131_072),
        "includeRefs": BOOL,
        "maxRefs": integer(1, 100),
        "interactiveOnly": BOOL,
        "maxChildren": integer(1, 1000),
        "tables": enum(*TABLES_MODES),
        "cursor": string(1, 160),
    }
    return [
        ToolSpec(
            name="browser_snapshot",
            title="Get accessibility snapshot",
            description=(
                'Read the page. format:"actions": key text, a line per control (ref, ops), main '
                "first, site chrome one line each (scope:{ref} lists it); more: nextCursor alone. "
                'tables:"rows": a line per table row (ref, cells); a row is '
                '{strategy:role,value:row,name:"<cell text>",exact:false}. '
                "aria (default): ARIA YAML; includeRefs: inline [ref=...]. Refs live 30 s, "
                "die on navigation/newer snapshots. Passwords redacted."
            ),
            profile="core",
            hints=Hints(read_only=True, idempotent=True, open_world=True),
            input_schema=page_address(options),
            output_schema=page_output({"snapshot": string()}),
            handler=snapshot,
        )
    ]
