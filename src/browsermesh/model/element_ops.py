"""The element operations, declared once (issue 32): one entry per operation, read by every layer.

An element operation is one of the ten ``browser_<op>`` tools that act on a single element named
by a ref or a locator (click, fill, ...). Each layer reads the field of `ElementOpEntry` it needs,
and nothing else lists the operations:

| field | read by |
|---|---|
| `tool`, `title`, `description`, `hints`, `argument`, `documents_locator` | `mcp.tools` |
| `argument` bounds | `model.arguments.action_argument` (before any work starts) |
| `detail` (the ``operation`` error detail) | `engine.blocked`, `engine.elements`, `errors` |
| `checks` (Playwright's actionability table) | `engine.actionability` |
| `settles` | `engine.playwright_engine` (`engine.changes`) |
| `playwright_method` | `engine.elements.element_call`, `model.export_python` |
| `records` | `runtime.actions`, `model.export_python` |
| `form_field` | `model.forms` (what a browser_fill_form field may become) |

How the Playwright method is called (its arguments, a bound of its own) is code, so
`engine.elements.element_call` and `model.export_python` dispatch with ``match`` ending in
``assert_never``: an operation added here and forgotten there is a mypy error, never a silent
fallback. `OTHER_OPERATIONS` names the operations that
are not tools of their own but resolve an element the same way and so name themselves in
errors (``drag``, ``snapshot``, ...).

This module is a leaf: it imports only `model.limits` and `model.tool_hints` (which import
nothing), so every layer may import it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal, get_args

from browsermesh.model.limits import MAX_FILL_CHARS, MAX_KEY_CHARS, MAX_OPTION_CHARS
from browsermesh.model.tool_hints import Hints

__all__ = [
    "ELEMENT_OPERATIONS",
    "ELEMENT_OPS",
    "FORM_OPS",
    "OPERATION_DETAILS",
    "OTHER_OPERATIONS",
    "Argument",
    "Check",
    "ElementOp",
    "ElementOpEntry",
    "Recorded",
    "element_op",
    "operation_detail",
]

ElementOp = Literal[
    "click",
    "double_click",
    "hover",
    "focus",
    "check",
    "uncheck",
    "scroll_into_view",
    "fill",
    "press",
    "select_option",
]
"""The element operations, in the order their tools are published."""

Check = Literal["visible", "enabled", "editable", "pointer"]
"""An actionability check (Playwright's table): the single match must be visible, enabled,
editable (takes text: not read-only, not a file input), or reachable by the pointer (not
covered at its centre)."""

Recorded = Literal["target", "text", "option"]
"""What a recorded step keeps besides the locator: nothing, the typed text or key (a `Value`,
secret when it went into a password field or was marked secret), or select_option's choice."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Argument:
    """The operation's one extra string argument and its bounds (code points), checked at parse
    time (`model.arguments.action_argument`).

    Attributes:
        field: The argument's name in the tool's input (``value``, ``key``).
        min_chars: The shortest accepted string.
        max_chars: The longest accepted string (a `model.limits` constant).
        published: The published schema states the bounds (``minLength``/``maxLength``); the
            others are enforced without being published, to keep tools/list small.
        choice: The tool takes ``value``, ``label`` or ``index`` (one or an array), read by
            `model.options`; `field` and the bounds then apply to each string item and to a
            form field's value (select_option).
        by_name: The value may be a secret given by name, ``{"secret": NAME}`` (issue 36,
            reference §36), filled without the client ever sending it.
    """

    field: str
    min_chars: int
    max_chars: int
    published: bool = False
    choice: bool = False
    by_name: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class ElementOpEntry:
    """Everything every layer needs to know about one element operation.

    Attributes:
        op: The operation's name (the ``op`` of a recorded step, the fake engine's log).
        tool: The published tool name.
        title: The tool's title.
        description: The tool's description (click's is followed by the locator hint).
        hints: The tool's annotations.
        argument: Its extra argument, None when it takes none.
        documents_locator: This tool's schema documents the locator and the ``snapshot``
            follow-up (once, on click, to keep tools/list small).
        detail: The ``operation`` error detail (§16.4 allowlist), words a person reads.
        checks: The actionability checks read before the call (`engine.actionability`).
        settles: Its effects usually come later (handlers that fetch, timers): the result waits
            for the page to be quiet (`engine.changes`).
        records: What its recorded step keeps besides the locator.
        playwright_method: The Playwright method that performs it: the engine calls it on the
            async API's Locator or ElementHandle, the exported test on the sync API's Locator
            (the same name in all three).
        form_field: A browser_fill_form field may take this operation.
    """

    op: ElementOp
    tool: str
    title: str
    description: str
    hints: Hints
    argument: Argument | None = None
    documents_locator: bool = False
    detail: str
    checks: frozenset[Check] = frozenset()
    settles: bool = False
    records: Recorded = "target"
    playwright_method: str
    form_field: bool = False

    @property
    def chooses(self) -> bool:
        """It takes a choice among options (select_option): its tool answers ``selected``."""
        return self.argument is not None and self.argument.choice


_POINTER_CHECKS: Final[frozenset[Check]] = frozenset({"visible", "enabled", "pointer"})
# Every element tool acts on a page of the open web.
_ACTS: Final = Hints(destructive=True, open_world=True)
_SAFE: Final = Hints(idempotent=True, open_world=True)
_WRITES: Final = Hints(open_world=True)

ELEMENT_OPERATIONS: Final[Mapping[ElementOp, ElementOpEntry]] = {
    entry.op: entry
    for entry in (
        ElementOpEntry(
            op="click",
            tool="browser_click",
            title="Click page element",
            description="Click",
            hints=_ACTS,
            documents_locator=True,
            detail="click",
            checks=_POINTER_CHECKS,
            settles=True,
            playwright_method="click",
        ),
        ElementOpEntry(
            op="double_click",
            tool="browser_double_click",
            title="Double-click page element",
            description="Double-click.",
            hints=_ACTS,
            detail="double-click",
            checks=_POINTER_CHECKS,
            settles=True,
            playwright_method="dblclick",
        ),
        ElementOpEntry(
            op="hover",
            tool="browser_hover",
            title="Hover over page element",
            description="Hover (menus, tooltips).",
            hints=_SAFE,
            detail="hover over",
            checks=frozenset({"visible", "pointer"}),
            playwright_method="hover",
        ),
        ElementOpEntry(
            op="focus",
            tool="browser_focus",
            title="Focus page element",
            description="Focus.",
            hints=_SAFE,
            detail="focus",
            playwright_method="focus",
        ),
        ElementOpEntry(
            op="check",
            tool="browser_check",
            title="Check page control",
            description="Ensure checked.",
            hints=_SAFE,
            detail="check",
            checks=_POINTER_CHECKS,
            playwright_method="check",
            form_field=True,
        ),
        ElementOpEntry(
            op="uncheck",
            tool="browser_uncheck",
            title="Uncheck page control",
            description="Ensure unchecked.",
            hints=_SAFE,
            detail="uncheck",
            checks=_POINTER_CHECKS,
            playwright_method="uncheck",
            form_field=True,
        ),
        ElementOpEntry(
            op="scroll_into_view",
            tool="browser_scroll_into_view",
            title="Scroll page element into view",
            description="Scroll into view.",
            hints=_SAFE,
            detail="scroll into view",
            playwright_method="scroll_into_view_if_needed",
        ),
        ElementOpEntry(
            op="fill",
            tool="browser_fill",
            title="Fill page field",
            description="Set a field's text to value ({secret:NAME}: a secret by name).",
            hints=_WRITES,
            argument=Argument(field="value", min_chars=0, max_chars=MAX_FILL_CHARS, by_name=True),
            detail="fill",
            checks=frozenset({"visible", "enabled", "editable"}),
            records="text",
            playwright_method="fill",
            form_field=True,
        ),
        ElementOpEntry(
            op="press",
            tool="browser_press",
            title="Press key on page element",
            description="Press a key, e.g. Enter or Control+A.",
            hints=_ACTS,
            argument=Argument(field="key", min_chars=1, max_chars=MAX_KEY_CHARS, published=True),
            detail="press",
            settles=True,
            records="text",
            playwright_method="press",
        ),
        ElementOpEntry(
            op="select_option",
            tool="browser_select_option",
            title="Select page option",
            description="One of value (or label), label: string; index: 0-based; array: many.",
            hints=_WRITES,
            argument=Argument(field="value", min_chars=0, max_chars=MAX_OPTION_CHARS, choice=True),
            detail="select option",
            checks=frozenset({"visible", "enabled"}),
            records="option",
            playwright_method="select_option",
            form_field=True,
        ),
    )
}
"""One entry per `ElementOp`, in publication order (the catalogue test checks it is total)."""

ELEMENT_OPS: Final[tuple[ElementOp, ...]] = get_args(ElementOp)
"""The element operations' names, in publication order."""
FORM_OPS: Final[tuple[ElementOp, ...]] = tuple(
    op for op in ELEMENT_OPS if ELEMENT_OPERATIONS[op].form_field
)
"""What one browser_fill_form field may become (model.forms.field_operation)."""

OTHER_OPERATIONS: Final[Mapping[str, str]] = {
    "set_files": "set files",
    "visible_text": "read visible text",
    "find": "find text",
    "drag": "drag",
    "snapshot": "capture snapshot",
    "screenshot": "capture screenshot",
    "evaluate": "evaluate",
}
"""The ``operation`` error detail of the operations that are not element tools but name
themselves in errors (most resolve an element through `engine.elements` too)."""

OPERATION_DETAILS: Final[frozenset[str]] = frozenset(
    {entry.detail for entry in ELEMENT_OPERATIONS.values()} | set(OTHER_OPERATIONS.values())
)
"""Every ``operation`` error detail the §16.4 allowlist keeps (`errors.OPERATIONS`)."""


_BY_NAME: Final[Mapping[str, ElementOpEntry]] = {op: e for op, e in ELEMENT_OPERATIONS.items()}


def element_op(op: str) -> ElementOpEntry | None:
    """The entry of `op` when it is an element operation (the engine's element code also runs
    ``drag``, ``snapshot``, ``set_files``..., which have none)."""
    return _BY_NAME.get(op)


def operation_detail(op: str) -> str | None:
    """The ``operation`` error detail of `op`, None for an operation that names none (a
    browser_fill_form field before its element chose)."""
    entry = element_op(op)
    return entry.detail if entry is not None else OTHER_OPERATIONS.get(op)
