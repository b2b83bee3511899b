"""browser_fill_form: several fields of one form in one call (issue 15)."""

from __future__ import annotations

from typing import Any

from browsermesh.mcp.registry import Hints, ToolCall, ToolSpec
from browsermesh.mcp.schemas import BOOL, Schema, array, obj, output, page_address
from browsermesh.model.forms import MAX_FIELDS

# `target` is an ElementTarget (checked by the runtime like action.target); `value` a string
# (text, date, select option) or a boolean (checkbox, switch, radio).
_FIELD: Schema = obj(
    {
        "target": {"type": "object", "description": "locator or {ref}"},
        "value": {"type": ["string", "boolean", "object"]},
        "secret": BOOL,
    },
    ("target", "value"),
)


async def fill_form(call: ToolCall) -> dict[str, Any]:
    op_id, data = await call.runtime.fill_form(
        call.page(),
        call.args.get("fields"),
        call.args.get("snapshot"),
    )
    return call.page_result(op_id, **data)


def specs() -> list[ToolSpec]:
    """browser_fill_form (profile `core`)."""
    return [
        ToolSpec(
            name="browser_fill_form",
            title="Fill form fields",
            description=(
                "Fill fields in order (text, date, select: string or {secret:NAME}; checkbox, "
                "radio: boolean); "
                "stops at the first failing one (details.field, details.filled). Beats "
                "browser_fill per field; changes, snapshot: as browser_click."
            ),
            profile="core",
            hints=Hints(open_world=True),
            input_schema=(
                page_address(
                    {"fields": array(_FIELD, minItems=1, maxItems=MAX_FIELDS), "snapshot": {}},
                    ("fields",),
                )
            ),
            output_schema=output({"filled": {}}),
            handler=fill_form,
        )
    ]
