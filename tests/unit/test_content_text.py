"""The page text an action table shows besides its controls (issue 31 items 3, 5, 10)."""

from __future__ import annotations

import pytest

from browsermesh.errors import BrowserMeshError
from browsermesh.model.action_nodes import popup_roots
from browsermesh.model.action_table import ElementInfo, build_action_table
from browsermesh.model.aria import AriaNode, parse_aria
from browsermesh.model.candidates import distinguish, link_path, rank
from browsermesh.model.content_text import key_lines, tab_rows
from browsermesh.model.locators import Selector
from browsermesh.model.snapshot_options import normalize_snapshot_options


def table(text: str, **kw: object) -> list[str]:
    nodes = parse_aria(text)
    info = {n.pw_ref: ElementInfo(tag="x") for n in _all(nodes) if n.pw_ref}
    result = build_action_table(
        nodes,
        title="T",
        url="http://h/",
        info=info,
        element_token=lambda i: f"s1e{i}",
        region_token=lambda i: f"s1r{i}",
        max_refs=50,
        scope_in_region=False,
        **kw,  # type: ignore[arg-type]
    )
    return result.text.splitlines()[1:]


def _all(nodes: list[AriaNode]) -> list[AriaNode]:
    out: list[AriaNode] = []
    stack = list(nodes)
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(node.children)
    return out


def test_headings_of_every_level_with_their_first_paragraph_and_empty_states() -> None:
    nodes = parse_aria(
        '- heading "Shop" [level=1] [ref=e1]\n'
        "- paragraph [ref=e2]: Everything for the kitchen.\n"
        "- paragraph [ref=e3]: A second paragraph is not shown.\n"
        '- heading "Sorry, you need credentials." [level=4] [ref=e4]\n'
        "- paragraph [ref=e5]: No products found\n"
    )
    assert key_lines(nodes) == [
        'h1 "Shop"',
        'p "Everything for the kitchen."',
        'text "No products found"',
        'h4 "Sorry, you need credentials."',
    ]


def test_a_value_beside_a_control_is_listed_but_not_one_inside_a_folded_table() -> None:
    lines = table(
        "- generic [ref=e1]:\n"
        '  - link "Blue teapot" [ref=e2]\n'
        "  - text: $12.00\n"
        '  - button "Add" [ref=e3]\n'
        "- text: Est. 1999\n"
    )
    assert lines == [
        '[s1e1] link "Blue teapot" — click',
        'text "$12.00"',
        '[s1e2] button "Add" — click',
    ]


def test_a_permanent_menu_is_no_popup_but_an_opened_one_is() -> None:
    nodes = parse_aria(
        "- banner [ref=b]:\n"
        '  - menu "Site" [ref=m]:\n'
        '    - menuitem "A" [ref=a]\n'
        '  - button "Account" [expanded] [ref=x]\n'
        '  - menu "Account" [ref=n]:\n'
        '    - menuitem "Sign out" [ref=o]\n'
        '- dialog "Hi" [ref=d]\n'
    )
    assert [n.name for n in popup_roots(nodes)] == ["Account", "Hi"]


def test_rows_with_their_columns() -> None:
    lines = table(
        '- table "T" [ref=t]:\n'
        "  - rowgroup [ref=g]:\n"
        "    - row [ref=r0]:\n"
        '      - columnheader "Name" [ref=h1]\n'
        '      - columnheader "Price" [ref=h2]\n'
        "  - rowgroup [ref=g2]:\n"
        "    - row [ref=r1]:\n"
        "      - cell [ref=c1]:\n"
        '        - checkbox "Select this object - Teapot" [ref=x1]\n'
        '        - link "Teapot" [ref=l1]\n'
        '      - cell "12.50" [ref=c2]\n',
        table_rows=True,
    )
    assert lines == [
        'table "T" · 1 row',
        "columns: Name | Price",
        "[s1e1] row: Teapot | 12.50",
        '[s1e2] checkbox "Select this object - Teapot" — check, uncheck',
        '[s1e3] link "Teapot" — click',
    ]


def test_tables_option_is_checked() -> None:
    opts = normalize_snapshot_options({"format": "actions", "tables": "rows"})
    assert not isinstance(opts, str) and opts.tables == "rows"
    for bad in ({"format": "actions", "tables": "all"}, {"tables": "rows"}):
        with pytest.raises(BrowserMeshError) as info:
            normalize_snapshot_options(bad)
        assert info.value.details["field"] == "tables"


def test_visible_text_rows_join_cells() -> None:
    assert tab_rows("Stock\nName\tPrice\nTeapot\t 12.50 \nend") == (
        "Stock\nName | Price\nTeapot | 12.50\nend"
    )


def test_link_paths_are_sanitized_and_relative() -> None:
    assert link_path("/a?category=1") == "/a?category=1"
    assert link_path("b/c") == "/b/c"
    assert link_path("https://x.test/p?q=1") == "https://x.test/p?q=1"
    assert "hunter2" not in (link_path("/reset?token=hunter2") or "")
    assert link_path("javascript:alert(1)") is None
    assert link_path(None) is None


def test_candidates_name_their_heading_and_get_nth_only_when_alike() -> None:
    nodes = parse_aria(
        '- navigation "Filter" [ref=n]:\n'
        '  - heading "By category" [level=3] [ref=h1]\n'
        '  - link "All" [ref=a1]:\n'
        "    - /url: ?category=all\n"
        '  - heading "By status" [level=3] [ref=h2]\n'
        '  - link "All" [ref=a2]:\n'
        "    - /url: ?status=all\n"
        '  - link "All" [ref=a3]:\n'
        "    - /url: ?status=all\n"
    )
    details = [
        c.detail(None) for c in rank(nodes, Selector("role", "link", "All"), matches_only=True)
    ]
    distinguish(details, [0, 1, 2])
    assert [(d["container"]["name"], d["path"], d.get("nth")) for d in details] == [
        ("By category", "/?category=all", None),
        ("By status", "/?status=all", 1),
        ("By status", "/?status=all", 2),
    ]
