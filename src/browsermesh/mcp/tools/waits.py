"""browser_wait and browser_action_and_wait."""

from __future__ import annotations

from typing import Any

from browsermesh.mcp.registry import ToolCall, ToolSpec
from browsermesh.mcp.schemas import (
    Schema,
    page_address,
    page_output,
)

# The tagged unions (condition, action, wait) are validated field by field at runtime and
# published as plain objects whose shapes the tool descriptions spell out: discovery bytes are
# paid by every client on every connection.
_CONDITION: Schema = {"type": "object"}
_ACTION: Schema = {"type": "object"}
_WAIT: Schema = {"type": "object"}


async def wait(call: ToolCall) -> dict[str, Any]:
    op_id = await call.runtime.wait(
        call.principal,
        call.session_id(),
        call.page_id(),
        call.args.get("condition"),
        call.timeout(),
    )
    return call.page_result(
        op_id,
        satisfied=True,
    )


async def action_and_wait(call: ToolCall) -> dict[str, Any]:
    op_id, event = await call.runtime.action_and_wait(
        call.principal,
        call.session_id(),
        call.page_id(),
        call.args.get("action"),
        call.args.get("wait"),
        call.timeout(),
    )
    return call.page_result(
        op_id,
        event=event,
    )


def specs() -> list[ToolSpec]:
    return [
        ToolSpec(
            "browser_wait",
            "Wait for browser condition",
            "Wait until a condition holds: {kind:url,matcher:{kind:exact|glob,value}}, "
            "{kind:load,state}, {kind:locator,locator,state:visible|hidden|attached|detached|"
            "enabled|disabled} or {kind:text,text,state:present|absent}. For your own click's "
            "effect use browser_action_and_wait.",
            "core",
            True,
            False,
            True,
            True,
            page_address({"condition": _CONDITION}, ("condition",)),
            page_output({"satisfied": {"const": True}}),
            wait,
        ),
        ToolSpec(
            "browser_action_and_wait",
            "Perform browser action and wait",
            "Click/press (action {kind,target,key?}) and wait for its navigation {matcher?,"
            "loadState?}, response {matcher,method?,status?}, popup (gets its own pageId) or "
            "dialog {dialogType,action,promptText?} (handled atomically). Unexpected "
            "dialogs/popups fail the call.",
            "core",
            False,
            True,
            False,
            True,
            page_address({"action": _ACTION, "wait": _WAIT}, ("action", "wait")),
            page_output({"event": {}}),
            action_and_wait,
        ),
    ]
