"""Lean structured results (issue 31 item 9): the one place a success is trimmed.

Every success passes `lean_result` in the result envelope (`registry.ToolDispatcher`) before
its text is written, so structuredContent and its text (the compact JSON of it) stay equal and
a new tool is lean without doing anything. Left out, at every depth:

- `null` values (an absent field says the same, and a client need not test for both);
- empty lists and empty objects (`changes: {}`, `metadata: {}`);
- at the top level, an id the client just sent (`sessionId`, `pageId`, `stateId`, ... equal to
  the argument of the same name): the client knows the address it called. Ids the server made
  (session_create's session, page_create's `pageId`) and ids inside views and lists stay.

Two exceptions keep every output schema valid and data intact: a field the tool's output schema
requires stays even when empty (`sessions: []` says there are none), and a tool's `verbatim`
fields (browser_evaluate's `result`, the page's own JSON) are passed as they are.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, Final

ECHO_SUFFIX: Final = "Id"
"""Argument names ending so are ids; one echoed back at the top level is left out."""


class _Empty:
    """What a value that carries nothing prunes to (never stored)."""


_EMPTY: Final = _Empty()


def _prune(value: Any) -> Any:
    """`value` without nulls and empty containers inside; `_EMPTY` when nothing is left.

    List items are pruned but never removed (their positions may mean something)."""
    if value is None:
        return _EMPTY
    if isinstance(value, dict):
        kept = {k: v for k, v in ((k, _prune(v)) for k, v in value.items()) if v is not _EMPTY}
        return kept or _EMPTY
    if isinstance(value, list):
        if not value:
            return _EMPTY
        return [item if (item := _prune(raw)) is not _EMPTY else raw for raw in value]
    return value


def is_echo(key: str, value: Any, args: Mapping[str, Any]) -> bool:
    """Whether the top-level result field `key` repeats an id the client sent in `args`."""
    return key.endswith(ECHO_SUFFIX) and key in args and args[key] == value


def lean_result(
    structured: Mapping[str, Any],
    args: Mapping[str, Any],
    required: Collection[str] = (),
    verbatim: Collection[str] = (),
) -> dict[str, Any]:
    """`structured` as it is sent: see the module docstring for what is left out."""
    out: dict[str, Any] = {}
    for key, value in structured.items():
        if key in verbatim:
            out[key] = value
            continue
        if key not in required and is_echo(key, value, args):
            continue
        pruned = _prune(value)
        if pruned is not _EMPTY:
            out[key] = pruned
        elif key in required:
            out[key] = value
    return out
