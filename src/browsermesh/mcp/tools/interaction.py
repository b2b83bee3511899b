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


def _action(op: str, arg_field: str | None = None) -> Handler:
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


# (name, op, title, description, R, D, I, O, extra input, required extras, arg field)
_ACTIONS: list[tuple[str, str, str, str, str, dict[str, Schema], tuple[str, ...], str | None]] = [
    (
        "browser_click",
        "click",
        "Click page element",
        "Click " + _CLICK_HINT + " " + FOLLOW_HINT,
        "FTFT",
        {},
        (),
        None,
    ),
    (
        "browser_double_click",
        "double_click",
        "Double-click page element",
        "Double-click.",
        "FTFT",
        {},
        (),
        None,
    ),
    (
        "browser_hover",
        "hover",
        "Hover over page element",
        "Hover (menus, tooltips).",
        "FFTT",
        {},
        (),
        None,
    ),
    (
        "browser_focus",
        "focus",
        "Focus page element",
        "Focus.",
        "FFTT",
        {},
        (),
        None,
    ),
    (
        "browser_check",
        "check",
        "Check page control",
        "Ensure checked.",
        "FFTT",
        {},
        (),
        None,
    ),
    (
        "browser_uncheck",
        "uncheck",
        "Uncheck page control",
        "Ensure unchecked.",
        "FFTT",
        {},
        (),
        None,
    ),
    (
        "browser_scroll_into_view",
        "scroll_into_view",
        "Scroll page element into view",
        "Scroll into view.",
        "FFTT",
        {},
        (),
        None,
    ),
    (
        "browser_fill",
        "fill",
        "Fill page field",
        "Set a field's text to value.",
        "FFFT",
        {"value": string()},
        ("value",),
        "value",
    ),
    (
        "browser_press",
        "press",
        "Press key on page element",
        "Press a key, e.g. Enter or Control+A.",
        "FTFT",
        {"key": string(1, 64)},
        ("key",),
        "key",
    ),
    (
        "browser_select_option",
        "select_option",
        "Select page option",
        "One of value (or label), label: string; index: 0-based; array: many.",
        "FFFT",
        {"value": _ANY, "label": _ANY, "index": _ANY},
        (),
        None,  # the runtime reads value, label or index itself (model.options)
    ),
]


def specs() -> list[ToolSpec]:
    """Interaction tools (profile `core`)."""
    out = []
    for name, op, title, desc, flags, extra, required, arg_field in _ACTIONS:
        r, d, i, o = (f == "T" for f in flags)
        out.append(
            ToolSpec(
                name=name,
                title=title,
                description=desc,
                profile="core",
                hints=Hints(read_only=r, destructive=d, idempotent=i, open_world=o),
                input_schema=(
                    _target_input(
                        extra,
                        required,
                        locator(documented=name == "browser_click"),
                        FOLLOW if name == "browser_click" else {},
                    )
                ),
                output_schema=_SELECTED if op == "select_option" else _COMPLETED,
                handler=_action(op, arg_field),
            )
        )
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
