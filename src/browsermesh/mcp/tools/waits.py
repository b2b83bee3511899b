"""browser_wait and browser_action_and_wait."""

from __future__ import annotations

from typing import Any

from browsermesh.mcp.registry import ToolCall, ToolSpec
from browsermesh.mcp.schemas import (
    ELEMENT_TARGET,
    LOCATOR,
    NO_CONTROL,
    PAGE_VIEW,
    Schema,
    const,
    enum,
    integer,
    obj,
    page_address,
    page_output,
    string,
)

MATCHER: Schema = obj(
    {"kind": enum("exact", "glob"), "value": string(1, 2048, pattern=NO_CONTROL)},
    ["kind", "value"],
    description='{"kind":"exact"|"glob","value":URL}; glob: ** any chars, * no "/".',
)
_LOAD = enum("domcontentloaded", "load")
_CONDITION: Schema = {
    "oneOf": [
        obj({"kind": const("url"), "matcher": MATCHER}, ["kind", "matcher"]),
        obj({"kind": const("load"), "state": _LOAD}, ["kind", "state"]),
        obj(
            {
                "kind": const("locator"),
                "locator": LOCATOR,
                "state": enum("visible", "hidden", "attached", "detached", "enabled", "disabled"),
            },
            ["kind", "locator", "state"],
        ),
        obj(
            {"kind": const("text"), "text": string(1, 2000), "state": enum("present", "absent")},
            ["kind", "text", "state"],
        ),
    ],
    "description": "One of {kind:url,matcher}, {kind:load,state}, {kind:locator,locator,state}, "
    "{kind:text,text,state}.",
}
_ACTION: Schema = {
    "oneOf": [
        obj({"kind": const("click"), "target": ELEMENT_TARGET}, ["kind", "target"]),
        obj(
            {"kind": const("press"), "target": ELEMENT_TARGET, "key": string(1, 64)},
            ["kind", "target", "key"],
        ),
    ],
    "description": '{"kind":"click","target":T} or {"kind":"press","target":T,"key":"Enter"}.',
}
_WAIT: Schema = {
    "oneOf": [
        obj({"kind": const("navigation"), "matcher": MATCHER, "loadState": _LOAD}, ["kind"]),
        obj(
            {
                "kind": const("response"),
                "matcher": MATCHER,
                "method": string(pattern="^[A-Z]{1,16}$"),
                "status": integer(100, 599),
            },
            ["kind", "matcher"],
        ),
        obj({"kind": const("popup")}, ["kind"]),
        obj(
            {
                "kind": const("dialog"),
                "dialogType": enum("alert", "beforeunload", "confirm", "prompt"),
                "action": enum("accept", "dismiss"),
                "promptText": string(max_length=2000, pattern=NO_CONTROL),
            },
            ["kind", "dialogType", "action"],
        ),
    ],
    "description": "One of {kind:navigation,matcher?,loadState?}, {kind:response,matcher,method?,"
    "status?}, {kind:popup}, {kind:dialog,dialogType,action,promptText?}.",
}
_EVENT: Schema = {
    "type": "object",
    "properties": {
        "kind": enum("navigation", "response", "popup", "dialog"),
        "url": string(),
        "method": string(),
        "status": integer(),
        "page": PAGE_VIEW,
        "dialogType": string(),
        "action": string(),
        "message": string(),
        "defaultValue": string(),
    },
    "required": ["kind"],
}


async def wait(call: ToolCall) -> dict[str, Any]:
    op_id = await call.runtime.wait(
        call.principal,
        call.session_id(),
        call.page_id(),
        call.args.get("condition"),
        call.timeout(),
    )
    return {
        "operationId": op_id,
        "sessionId": call.args["sessionId"],
        "pageId": call.args["pageId"],
        "satisfied": True,
    }


async def action_and_wait(call: ToolCall) -> dict[str, Any]:
    op_id, event = await call.runtime.action_and_wait(
        call.principal,
        call.session_id(),
        call.page_id(),
        call.args.get("action"),
        call.args.get("wait"),
        call.timeout(),
    )
    return {
        "operationId": op_id,
        "sessionId": call.args["sessionId"],
        "pageId": call.args["pageId"],
        "event": event,
    }


def specs() -> list[ToolSpec]:
    return [
        ToolSpec(
            "browser_wait",
            "Wait for browser condition",
            "Wait (in the session's queue) until a URL, load state, locator state or text "
            "condition holds; no sleeps or scripts. To wait for the effect of your own click, "
            "use browser_action_and_wait instead.",
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
            "Click or press and wait for the resulting navigation, response, popup or dialog, "
            "with the listener registered before acting. A popup becomes a new pageId of the "
            "same session; a dialog is accepted or dismissed atomically. Unexpected dialogs "
            "and popups are dismissed/closed and reported.",
            "core",
            False,
            True,
            False,
            True,
            page_address({"action": _ACTION, "wait": _WAIT}, ("action", "wait")),
            page_output({"event": _EVENT}),
            action_and_wait,
        ),
    ]
