"""``snapshot: "diff"`` on interactions (issue 15): multiset line diffs with fresh refs."""

from __future__ import annotations

import pytest

from browsermesh.errors import BrowserMeshError, ErrorCode
from browsermesh.model.table_diff import (
    MAX_DIFF_LINES,
    TableLines,
    parse_follow,
    shown_lines,
    table_diff,
)


def test_added_lines_carry_fresh_refs_removed_lines_none() -> None:
    old = TableLines(
        ('h1 "Orders"', "table · 2 rows"), ('link "Add" — click', 'button "Go" — click')
    )
    new = TableLines(
        ('h1 "Orders"', "table · 3 rows", 'status "Saved"'),
        ('link "Add" — click', 'link "Add" — click', 'button "Delete" — click'),
    )
    assert table_diff(old, new, ["s9e1", "s9e2", "s9e3"]).splitlines() == [
        "- table · 2 rows",
        "+ table · 3 rows",
        '+ status "Saved"',
        '- button "Go" — click',
        '+ [s9e2] link "Add" — click',  # the second "Add" is new: counted per occurrence
        '+ [s9e3] button "Delete" — click',
    ]


def test_no_previous_table_lists_everything_and_equal_tables_say_so() -> None:
    new = TableLines((), ('button "A" — click',))
    assert table_diff(None, new, ["s1e1"]) == '+ [s1e1] button "A" — click'
    assert table_diff(new, new, ["s2e1"]) == "no change in the action table"


def test_long_diffs_are_cut_with_a_count() -> None:
    new = TableLines((), tuple(f'link "L{i}" — click' for i in range(200)))
    lines = table_diff(None, new, [f"s1e{i}" for i in range(200)]).splitlines()
    assert len(lines) == MAX_DIFF_LINES + 1
    assert lines[-1] == f"more: {200 - MAX_DIFF_LINES} changed lines — take browser_snapshot"


@pytest.mark.parametrize("value", ["full", "", 1, True, ["diff"]])
def test_follow_mode_is_checked(value: object) -> None:
    with pytest.raises(BrowserMeshError) as info:
        parse_follow(value)
    assert info.value.code is ErrorCode.INVALID_ARGUMENT
    assert info.value.details == {"field": "snapshot", "rule": "one of: diff, actions"}
    assert parse_follow(None) is None and parse_follow("diff") == "diff"


ARIA = """- banner:
  - link "Home":
    - /url: /
- main:
  - heading "Orders" [level=1]
  - button "Save"
  - textbox "Note": hello
  - combobox "Size":
    - option "S" [selected]
    - option "M"
"""


def test_an_aria_snapshot_keeps_role_and_name_lines_by_the_table_rules() -> None:
    from browsermesh.model.aria import parse_aria

    nodes = parse_aria(ARIA)
    shown = shown_lines(nodes)
    assert shown.by_name
    assert shown.keys == ('h1 "Orders"',)
    # Main first, as the table orders it; a native select's options are not lines.
    assert shown.lines == ('button "Save"', 'textbox "Note"', 'combobox "Size"', 'link "Home"')
    assert all(n.pw_ref is None for n in nodes)  # the tree given is left as it was


def test_a_diff_after_an_aria_snapshot_compares_by_role_and_name() -> None:
    old = TableLines(('h1 "Orders"',), ('button "Save"', 'textbox "Note"'), by_name=True)
    new = TableLines(
        ('h1 "Orders"',),
        (
            'button "Save" · disabled — click',
            'textbox "Note" = "hello" — fill',
            'link "Undo" — click',
        ),
    )
    assert table_diff(old, new, ["s2e1", "s2e2", "s2e3"]) == '+ [s2e3] link "Undo" — click'
