"""One field of browser_fill_form (issue 15): the element decides the operation.

The field's element is resolved once, by the same code as every element action
(`elements.on_target`); the actionability read that precedes an action also reports the
control's tag, type, role and editability, from which `model.forms` picks fill, select option,
check or uncheck. That operation then runs with its own actionability checks and error
classification, exactly as browser_fill / browser_select_option / browser_check would.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from browsermesh.engine import elements
from browsermesh.engine.refs import RefRegistry
from browsermesh.model.deadline import OperationContext
from browsermesh.model.element_ops import ElementOp
from browsermesh.model.forms import field_kind, field_operation
from browsermesh.model.locators import Target

if TYPE_CHECKING:
    from playwright.async_api import Page

FIELD_OP = "fill_form"
"""The operation errors name until the element has decided it (no `operation` detail)."""


def _picker(value: str | bool) -> elements.Pick:
    def pick(state: dict[str, Any] | None) -> tuple[ElementOp, elements.ElementCall]:
        kind = (state or {}).get("kind") or {}
        op, arg = field_operation(field_kind(kind), value)
        return op, elements.element_call(op, arg)

    return pick


async def _never(el: Any, timeout_ms: float) -> None:  # pragma: no cover - pick always chooses
    raise AssertionError("a form field runs the operation its element picked")


async def fill_field(
    page: Page,
    registry: RefRegistry,
    target: Target,
    value: str | bool,
    ctx: OperationContext,
) -> ElementOp:
    """Apply `value` to the element `target` names, by the operation its kind takes; which
    operation that was (fill, select_option, check or uncheck)."""
    chosen: list[ElementOp] = []
    pick = _picker(value)

    def noted(state: dict[str, Any] | None) -> tuple[ElementOp, elements.ElementCall]:
        op, call = pick(state)
        chosen.append(op)
        return op, call

    await elements.on_target(page, registry, target, ctx, FIELD_OP, _never, noted)
    return chosen[-1]
