"""Element actions, scrolling, drag and drop, and visible text."""

from __future__ import annotations

from typing import Any

from browsermesh.mcp.registry import Handler, Hints, ToolCall, ToolSpec
from browsermesh.mcp.schemas import (
    FLAG_OUTPUT,
    FOLLOW,
    FOLLOW_HINT,
    LOCATOR,
    REF,
    Schema,
    enum,
    integer,
    locator,
    output,
    page_address,
    page_output,
    string,
)
from browsermesh.model.element_ops import ELEMENT_OPERATIONS, ElementOp, ElementOpEntry
from browsermesh.model.options import SELECT_MODES
from browsermesh.model.snapshot_options import TABLES_MODES

_COMPLETED = FLAG_OUTPUT
# select_option's value/label/index: one item or an array; typed by the description and
# checked by model.options (structured INVALID_ARGUMENT), schema bytes kept for issue 31.
_ANY: Schema = {}
# What select_option selected, [{value, label}] (issue 31).
_SELECTED: Schema = output({"selected": {}})
_CLICK_HINT = (
    "ref or locator (all element tools), e.g. {strategy:role,value:button,name:Save}; "
    "names/text: exactly by default (exact:false: any-case substring); >1 match: "
    "LOCATOR_AMBIGUOUS, 0 on a quiet page: ELEMENT_NOT_FOUND, blocked: ELEMENT_NOT_ACTIONABLE; "
    "iframes: locator.frame."
)


def _action(op: ElementOp, arg_field: str | None = None) -> Handler:
    async def handler(call: ToolCall) -> dict[str, Any]:
        arg = call.args.get(arg_field) if arg_field else None
        op_id, data = await call.runtime.element_action(call.page(), op, call.args, arg)
        return call.page_result(op_id, **data)

    return handler


async def scroll(call: ToolCall) -> dict[str, Any]:
    op_id = await call.runtime.scroll(call.page(), call.args.get("deltaX"), call.args.get("deltaY"))
    return call.page_result(op_id, completed=True)


async def drag(call: ToolCall) -> dict[str, Any]:
    op_id = await call.runtime.drag(call.page(), call.args.get("source"), call.args.get("target"))
    return call.page_result(op_id, completed=True)


async def visible_text(call: ToolCall) -> dict[str, Any]:
    op_id, data = await call.runtime.visible_text(call.page(), call.args.get("locator"), call.args)
    return call.page_result(op_id, **data)


def _target_input(
    extra: dict[str, Schema] | None = None,
    required: tuple[str, ...] = (),
    target: Schema = LOCATOR,
    follow: Schema = FOLLOW,
) -> Schema:
    return page_address(
        {"locator": target, "ref": REF, **(extra or {}), "snapshot": follow}, required
    )


def _arguments(entry: ElementOpEntry) -> tuple[dict[str, Schema], tuple[str, ...], str | None]:
    """The tool's extra input, its required keys and the field its handler passes on, from
    the entry's `argument` (a choice is read from the arguments by the runtime itself)."""
    arg = entry.argument
    if arg is None:
        return {}, (), None
    if arg.choice:
        return dict.fromkeys(SELECT_MODES, _ANY), (), None
    schema = string(arg.min_chars, arg.max_chars) if arg.published else string()
    if arg.by_name:  # or {secret: NAME} (§36), checked by model.secret_refs
        schema = {"type": ["string", "object"]}
    return {arg.field: schema}, (arg.field,), arg.field


def _element_tool(entry: ElementOpEntry) -> ToolSpec:
    """The tool of one element operation (model.element_ops)."""
    extra, required, arg_field = _arguments(entry)
    documented = entry.documents_locator
    return ToolSpec(
        name=entry.tool,
        title=entry.title,
        description=(
            f"{entry.description} {_CLICK_HINT} {FOLLOW_HINT}" if documented else entry.description
        ),
        profile="core",
        hints=entry.hints,
        input_schema=_target_input(
            extra, required, locator(documented=documented), FOLLOW if documented else {}
        ),
        output_schema=_SELECTED if entry.chooses else _COMPLETED,
        handler=_action(entry.op, arg_field),
    )


def specs() -> list[ToolSpec]:
    """Interaction tools (profile `core`): one per element operation, then the others."""
    out = [_element_tool(entry) for entry in ELEMENT_OPERATIONS.values()]
    # The ±1,000,000 px bound is the runtime's (scroll_delta): schema bytes paid for issue 19.
    delta = integer()
    out += [
        ToolSpec(
            name="browser_scroll",
            title="Scroll browser page",
            description="Mouse-wheel scroll by pixel deltas.",
            profile="core",
            hints=Hints(open_world=True),
            input_schema=page_address({"deltaX": delta, "deltaY": delta}, ("deltaX", "deltaY")),
            output_schema=_COMPLETED,
            handler=scroll,
        ),
        ToolSpec(
            name="browser_drag_and_drop",
            title="Drag and drop page element",
            description="Drag source onto target (locators).",
            profile="core",
            hints=Hints(destructive=True, open_world=True),
            input_schema=page_address({"source": LOCATOR, "target": LOCATOR}, ("source", "target")),
            output_schema=_COMPLETED,
            handler=drag,
        ),
        ToolSpec(
            name="browser_visible_text",
            title="Get visible page text",
            description=(
                'innerText of one element, e.g. {strategy:css,value:main}; tables:"rows" joins '
                "a row's cells with |."
            ),
            profile="core",
            hints=Hints(read_only=True, idempotent=True, open_world=True),
            input_schema=page_address(
                {"locator": LOCATOR, "tables": enum(*TABLES_MODES)}, ("locator",)
            ),
            output_schema=page_output({"text": string(), "truncation": {"type": "object"}}),
            handler=visible_text,
        ),
    ]
    return out
