"""Saved authentication state: save, list, remove (profile `persistence`)."""

from __future__ import annotations

from typing import Any

from browsermesh.mcp.registry import Hints, ToolCall, ToolSpec
from browsermesh.mcp.schemas import (
    EMPTY_INPUT,
    SESSION_ID,
    Schema,
    array,
    obj,
    output,
    string,
)

# Described once, where a client picks the name; remove takes one browser_state_list returned.
_STATE_ID_PLAIN = string(1, 128)
_STATE_ID = {**_STATE_ID_PLAIN, "description": "e.g. buyer-login ([A-Za-z0-9._-])"}
_STATE_VIEW: Schema = obj(
    {"stateId": string(), "createdAt": string()}, ["stateId", "createdAt"], closed=False
)


async def state_save(call: ToolCall) -> dict[str, Any]:
    op_id, view = await call.runtime.save_state(
        call.principal, call.session_id(), call.args.get("stateId")
    )
    return {"operationId": op_id, "sessionId": call.args["sessionId"], "state": view}


async def state_list(call: ToolCall) -> dict[str, Any]:
    op_id, views = await call.runtime.list_states(call.principal)
    return {"operationId": op_id, "states": views}


async def state_remove(call: ToolCall) -> dict[str, Any]:
    op_id, state_id = await call.runtime.remove_state(call.principal, call.args.get("stateId"))
    return {"operationId": op_id, "stateId": state_id, "removed": True}


def specs() -> list[ToolSpec]:
    return [
        ToolSpec(
            name="browser_state_save",
            title="Save browser state",
            description=(
                "Save cookies and localStorage as stateId (replaces); restore: "
                "browser_session_create stateId."
            ),
            profile="persistence",
            hints=Hints(destructive=True),
            input_schema=(
                obj({"sessionId": SESSION_ID, "stateId": _STATE_ID}, ["sessionId", "stateId"])
            ),
            output_schema=output({"state": _STATE_VIEW}),
            handler=state_save,
        ),
        ToolSpec(
            name="browser_state_list",
            title="List saved browser states",
            description="Saved state ids.",
            profile="persistence",
            hints=Hints(read_only=True, idempotent=True),
            input_schema=EMPTY_INPUT,
            output_schema=output({"states": array(_STATE_VIEW)}),
            handler=state_list,
        ),
        ToolSpec(
            name="browser_state_remove",
            title="Remove saved browser state",
            description="Delete a saved state.",
            profile="persistence",
            hints=Hints(destructive=True),
            input_schema=obj({"stateId": _STATE_ID_PLAIN}, ["stateId"]),
            output_schema=output({"removed": {"const": True}}),
            handler=state_remove,
        ),
    ]
