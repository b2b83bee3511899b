"""browser_wait and browser_action_and_wait."""

from __future__ import annotations

from typing import Any

from browsermesh.mcp.registry import Hints, ToolCall, ToolSpec
from browsermesh.mcp.schemas import (
    FLAG_OUTPUT,
    Schema,
    page_address,
    page_output,
)
from browsermesh.model.action_kinds import ACTION_KINDS

# The tagged unions (condition, action, wait) are validated field by field at runtime and
# published as plain objects whose descriptions spell out their shapes: discovery bytes are
# paid by every client on every connection. Notation: `|` separates alternatives, `?` marks an
# optional key, a bare key stands for a value described elsewhere (matcher, locator, target).
_MATCHER = "matcher:{kind:exact|glob,value}"
_CONDITION: Schema = {
    "type": "object",
    "description": "{kind:url,"
    + _MATCHER
    + "}|{kind:load,state:load|domcontentloaded}|{kind:locator,locator,state:visible|hidden|"
    "attached|detached|enabled|disabled}|{kind:text,text,exact?,state:present|absent} (text: "
    "any-case substring, shown or DOM text; exact: whole element text)|{kind:handback} (a "
    "person in the live view hands the session back)",
}


def action_shapes() -> str:
    """The published shapes of ``action``, one per argument the kinds take, each naming its
    kinds in catalogue order (`model.action_kinds`): ``{kind:click|hover,target}|{kind:press,
    target,key}``. Kinds sharing a shape share its braces, which keeps tools/list small."""
    shapes: dict[str | None, list[str]] = {}
    for entry in ACTION_KINDS.values():
        field = entry.argument.field if entry.argument is not None else None
        shapes.setdefault(field, []).append(entry.kind)
    return "|".join(
        "{kind:" + "|".join(kinds) + ",target" + ("" if field is None else f",{field}") + "}"
        for field, kinds in shapes.items()
    )


_ACTION: Schema = {
    "type": "object",
    "description": action_shapes() + "; target: locator or {ref}",
}
_WAIT: Schema = {
    "type": "object",
    "description": "{kind:navigation,matcher?,loadState?:load|domcontentloaded}|{kind:response,"
    "matcher,method?,status?}|{kind:popup}|{kind:dialog,dialogType:alert|confirm|prompt|"
    "beforeunload,action:accept|dismiss,promptText?}|{kind:download}|{kind:fileChooser,files}; "
    + _MATCHER,
}


async def wait(call: ToolCall) -> dict[str, Any]:
    op_id, data = await call.runtime.wait(call.page(), call.args.get("condition"))
    return call.page_result(op_id, satisfied=True, **data)


async def request_help(call: ToolCall) -> dict[str, Any]:
    op_id, data = await call.runtime.request_help(call.page(), call.args.get("reason"))
    return call.page_result(op_id, **data)


async def action_and_wait(call: ToolCall) -> dict[str, Any]:
    op_id, data = await call.runtime.action_and_wait(
        call.page(),
        call.args.get("action"),
        call.args.get("wait"),
        call.args.get("snapshot"),
    )
    return call.page_result(op_id, **data)


def specs() -> list[ToolSpec]:
    return [
        ToolSpec(
            name="browser_wait",
            title="Wait for browser condition",
            description=("Wait for condition (own click's effect: browser_action_and_wait)."),
            profile="core",
            hints=Hints(read_only=True, idempotent=True, open_world=True),
            input_schema=page_address({"condition": _CONDITION}, ("condition",)),
            output_schema=FLAG_OUTPUT,
            handler=wait,
        ),
        ToolSpec(
            name="browser_action_and_wait",
            title="Perform browser action and wait",
            description=(
                "Act, then wait for navigation, response, popup (own pageId), dialog (handled "
                "atomically), download or file chooser. changes, snapshot: as browser_click."
            ),
            profile="core",
            hints=Hints(destructive=True, open_world=True),
            input_schema=(
                page_address({"action": _ACTION, "wait": _WAIT, "snapshot": {}}, ("action", "wait"))
            ),
            output_schema=page_output({"event": {}}),
            handler=action_and_wait,
        ),
        ToolSpec(
            name="browser_request_help",
            title="Ask a person to take over",
            description=(
                "Ask a person to take this page over in the live view (a CAPTCHA, a one-time "
                "code, a consent screen); answers after the hand-back with url, title and the "
                "person's steps. timeoutMs up to 1,800,000."
            ),
            profile="core",
            hints=Hints(open_world=True),
            input_schema=page_address({"reason": {"type": "string"}}, ("reason",)),
            output_schema=FLAG_OUTPUT,
            handler=request_help,
        ),
    ]
