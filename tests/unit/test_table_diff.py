"""``snapshot: "diff"`` on interactions (issue 15): multiset line diffs with fresh refs."""

from __future__ import annotations

import pytest

from browsermesh.errors import BrowserMeshError, ErrorCode
from browsermesh.model.table_diff import MAX_DIFF_LINES, TableLines, parse_follow, table_diff


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
