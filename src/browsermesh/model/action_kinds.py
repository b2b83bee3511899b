"""The action-and-wait kinds, declared once (issue 32): one entry per kind, read by every layer.

An action-and-wait kind is the ``action.kind`` of browser_action_and_wait (reference §7.2): what
the call does to its target before awaiting the event. Each kind performs one element operation
of `model.element_ops` (same actionability checks, same ``operation`` error detail, same
Playwright method) and takes that operation's extra argument, if any, as a field of ``action``
(press: ``key``, 1..`model.limits.MAX_KEY_CHARS` code points). Each layer reads the entry and
nothing else lists the kinds:

| reads | what |
|---|---|
| `mcp.tools.waits` | the published ``action`` shapes (``{kind:click|hover,target}|...``) |
| `model.matchers.parse_action` | the kind names, the argument's field and bounds |
| `engine.waits.action_call` | the element operation and its Playwright call |
| `model.recording.ActAndWait` | `ActionKind` (``op``) and the argument (``key``) |
| `model.export_python.act_and_wait_call` | the Playwright method and the argument |

How the Playwright method is called (with the argument or without) is code, so
`engine.waits.action_call` and `model.export_python.act_and_wait_call` dispatch with ``match``
ending in ``assert_never``: a kind added here and forgotten there is a mypy error.
tests/unit/test_action_kinds_catalogue.py checks that every entry has what each layer needs.

This module is a leaf: it imports only `model.element_ops` (itself a leaf), so every layer may
import it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal, get_args

from browsermesh.model.element_ops import ELEMENT_OPERATIONS, Argument, ElementOp, ElementOpEntry

__all__ = [
    "ACTION_KINDS",
    "ACTION_KIND_NAMES",
    "ActionKind",
    "ActionKindEntry",
    "action_kind",
]

ActionKind = Literal["click", "press", "hover"]
"""The action-and-wait kinds, in the order they are published and named in errors."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ActionKindEntry:
    """Everything every layer needs to know about one action-and-wait kind.

    Attributes:
        kind: The kind's name (``action.kind``; the ``op`` of its recorded step).
        op: The element operation it performs: its actionability checks
            (`engine.actionability`), its ``operation`` error detail, its Playwright method
            and its extra argument are that operation's entry in `model.element_ops`.
    """

    kind: ActionKind
    op: ElementOp

    @property
    def element(self) -> ElementOpEntry:
        """The entry of the element operation this kind performs."""
        return ELEMENT_OPERATIONS[self.op]

    @property
    def playwright_method(self) -> str:
        """The Playwright method the engine calls (async Locator or ElementHandle) and the
        exported test writes (sync Locator)."""
        return self.element.playwright_method

    @property
    def argument(self) -> Argument | None:
        """The extra string field of ``action`` and its bounds (press: ``key``), None when the
        kind takes only ``target``. Recorded as the step's ``key``."""
        return self.element.argument


ACTION_KINDS: Final[Mapping[ActionKind, ActionKindEntry]] = {
    entry.kind: entry
    for entry in (
        ActionKindEntry(kind="click", op="click"),
        ActionKindEntry(kind="press", op="press"),
        # issue 32: hover, then wait (a submenu or tooltip that loads on hover).
        ActionKindEntry(kind="hover", op="hover"),
    )
}
"""One entry per `ActionKind`, in publication order (the catalogue test checks it is total)."""

ACTION_KIND_NAMES: Final[tuple[ActionKind, ...]] = get_args(ActionKind)
"""The kinds' names, in publication order (the ``one of:`` rule of ``action.kind``)."""

_BY_NAME: Final[Mapping[str, ActionKindEntry]] = {k: e for k, e in ACTION_KINDS.items()}


def action_kind(name: object) -> ActionKindEntry | None:
    """The entry of the kind called `name`, None when `name` is no kind (caller input)."""
    return _BY_NAME.get(name) if isinstance(name, str) else None
