"""``snapshot: "diff"`` on interactions (issue 15): what changed in the action table.

The page keeps the key-text lines and element lines (without refs) of its latest action table;
after an interaction a new table is captured and compared line by line, as multisets, so a
repeated line ("Add" links) counts once per occurrence. Added element lines carry their fresh
refs (the new capture's generation: every older ref is stale); removed lines carry none.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from browsermesh.errors import invalid_argument

__all__ = ["MAX_DIFF_LINES", "FollowMode", "TableLines", "parse_follow", "table_diff"]

MAX_DIFF_LINES = 80
"""At most this many +/- lines; the rest are counted on a last line."""


@dataclass(frozen=True)
class TableLines:
    """One action table as compared: key-text lines and element lines, both without refs."""

    keys: tuple[str, ...] = ()
    lines: tuple[str, ...] = ()


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
    out: list[str] = []
    out += [f"- {base.keys[i]}" for i in _minus(base.keys, new.keys)]
    out += [f"+ {new.keys[i]}" for i in _minus(new.keys, base.keys)]
    out += [f"- {base.lines[i]}" for i in _minus(base.lines, new.lines)]
    out += [f"+ [{refs[i]}] {new.lines[i]}" for i in _minus(new.lines, base.lines)]
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
