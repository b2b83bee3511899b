"""``snapshot: "diff"`` on interactions (issue 15): what changed in the action table.

The page keeps the key-text lines and element lines (without refs) of its latest action table;
after an interaction a new table is captured and compared line by line, as multisets, so a
repeated line ("Add" links) counts once per occurrence. Added element lines carry their fresh
refs (the new capture's generation: every older ref is stale); removed lines carry none.

An ARIA snapshot is a capture too (issue 31 item 13): it keeps the same key lines and, for its
elements, what it knows of them without reading each element (role and name, by the action
table's own rules, `shown_lines`). A diff after it compares elements by role and name, so it
lists what appeared or went, not every control as new; a changed value or state shows only
against an earlier action table.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from browsermesh.errors import invalid_argument
from browsermesh.model.action_table import ElementInfo, build_action_table
from browsermesh.model.aria import INTERACTIVE_ROLES, AriaNode

__all__ = [
    "MAX_DIFF_LINES",
    "FollowMode",
    "TableLines",
    "parse_follow",
    "shown_lines",
    "table_diff",
]

MAX_DIFF_LINES = 80
"""At most this many +/- lines; the rest are counted on a last line."""


@dataclass(frozen=True)
class TableLines:
    """One capture as compared: key-text lines and element lines, both without refs; `by_name`:
    the element lines are only `role "name"` (an ARIA snapshot's, see `shown_lines`)."""

    keys: tuple[str, ...] = ()
    lines: tuple[str, ...] = ()
    by_name: bool = False


_IDENTITY = re.compile(r'^[a-z]+ "(?:[^"\\]|\\.)*"')


def identity(line: str) -> str:
    """An element line's role and quoted name (`button "Save" · disabled — click` → its
    `button "Save"`)."""
    match = _IDENTITY.match(line)
    return match.group(0) if match else line


def shown_lines(nodes: list[AriaNode], notices: Sequence[str] = ()) -> TableLines:
    """The key lines and the elements' `role "name"` lines an action table of `nodes` (a parsed
    ARIA tree, refs or not) would list, without reading any element: every interactive node
    counts as readable, a combobox with options as a native select. `nodes` are not changed."""
    info: dict[str, ElementInfo] = {}
    counter = iter(range(1 << 62))

    def stand_in(node: AriaNode) -> AriaNode:
        children = [stand_in(c) for c in node.children]
        if node.role not in INTERACTIVE_ROLES:
            return dataclasses.replace(node, children=children)
        ref = f"shown{next(counter)}"
        native = node.role == "combobox" and any(c.role == "option" for c in node.children)
        tag = "select" if native else ("option" if node.role == "option" else node.role)
        info[ref] = ElementInfo(tag=tag, native_select=native)
        return dataclasses.replace(node, pw_ref=ref, children=children)

    table = build_action_table(
        [stand_in(n) for n in nodes],
        title="",
        url="",
        info=info,
        element_token=lambda i: f"e{i}",
        region_token=lambda i: f"r{i}",
        max_refs=1_000_000,
        scope_in_region=False,
        notices=notices,
    )
    lines = tuple(identity(line) for line in table.lines)
    return TableLines(tuple(table.keys), lines, by_name=True)


def _minus(left: Sequence[str], right: Sequence[str]) -> list[int]:
    """Indexes of `left` items that `right` does not account for (multiset difference)."""
    budget = Counter(right)
    out: list[int] = []
    for index, item in enumerate(left):
        if budget[item]:
            budget[item] -= 1
        else:
            out.append(index)
    return out


def table_diff(old: TableLines | None, new: TableLines, refs: Sequence[str]) -> str:
    """``+``/``-`` lines from `old` to `new` (``refs[i]`` is the ref of ``new.lines[i]``)."""
    base = old if old is not None else TableLines()
    # Against an ARIA snapshot's lines, the new table's elements compare by role and name.
    compared = tuple(identity(line) for line in new.lines) if base.by_name else new.lines
    out: list[str] = []
    out += [f"- {base.keys[i]}" for i in _minus(base.keys, new.keys)]
    out += [f"+ {new.keys[i]}" for i in _minus(new.keys, base.keys)]
    out += [f"- {base.lines[i]}" for i in _minus(base.lines, compared)]
    out += [f"+ [{refs[i]}] {new.lines[i]}" for i in _minus(compared, base.lines)]
    if not out:
        return "no change in the action table"
    if len(out) > MAX_DIFF_LINES:
        rest = len(out) - MAX_DIFF_LINES
        out = [*out[:MAX_DIFF_LINES], f"more: {rest} changed lines — take browser_snapshot"]
    return "\n".join(out)


FollowMode = Literal["diff", "actions"]


def parse_follow(value: object) -> FollowMode | None:
    """The ``snapshot`` option of an interaction: absent, ``"diff"`` or ``"actions"``."""
    if value is None:
        return None
    if value == "diff" or value == "actions":
        return value
    raise invalid_argument("snapshot", "one of: diff, actions")
