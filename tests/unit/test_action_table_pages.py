"""Action tables that put the page's work first and never hide controls silently (issue 15):
main-first order, collapsed site chrome, key text lines, pages of refs with stops."""

from __future__ import annotations

from browsermesh.model.action_table import (
    MAX_KEY_LINES,
    ElementInfo,
    TableResult,
    build_action_table,
    table_candidates,
    table_refs,
)
from browsermesh.model.aria import AriaNode, iter_nodes, parse_aria
from browsermesh.model.content_text import MAX_HEADING_LINES
from browsermesh.model.paging import page_content
from tests.unit.test_action_table import BASE, sample


def info_for(nodes: list[AriaNode], *, scoped: bool = False) -> dict[str, ElementInfo]:
    out: dict[str, ElementInfo] = {}
    for node in table_candidates(nodes, scope_in_region=False, keep_roots=scoped):
        assert node.pw_ref is not None
        select = node.role == "combobox"
        out[node.pw_ref] = ElementInfo(
            tag="select" if select else "x",
            native_select=select,
            selected_label="---------" if select else None,
        )
    return out


def table(
    nodes: list[AriaNode],
    *,
    max_refs: int = 50,
    scoped: bool = False,
    notices: tuple[str, ...] = (),
) -> TableResult:
    return build_action_table(
        nodes,
        title="Select product to change | Django site admin",
        url=BASE + "/admin/shop/product/",
        info=info_for(nodes, scoped=scoped),
        element_token=lambda i: f"s5e{i}",
        region_token=lambda i: f"s5r{i}",
        max_refs=max_refs,
        scope_in_region=False,
        keep_roots=scoped,
        notices=notices,
    )


def test_real_django_list_page_puts_main_first_and_collapses_chrome() -> None:
    nodes = parse_aria(sample("django-changelist.ai.yaml"))
    result = table(nodes)
    lines = result.text.splitlines()
    assert lines[:4] == [
        'page: "Select product to change | Django site admin" '
        "http://127.0.0.1:43121/admin/shop/product/",
        'h1 "Select product to change"',
        'text "0 of 1 selected"',
        "table · 1 row",
    ] or lines[:5] == [
        'page: "Select product to change | Django site admin" '
        "http://127.0.0.1:43121/admin/shop/product/",
        'h1 "Select product to change"',
        'text "0 of 1 selected"',
        "table · 1 row",
        'text "1 product"',
        'h2 "Filter"',
    ]
    elements = [line for line in lines if line.startswith("[s5e")]
    assert elements[0] == '[s5e1] link "Add product" — click'
    names = [r.get("name") for r in result.refs]
    # The page's work (search, action, select-all, the row) precedes any chrome.
    for wanted in ("Search", "Action:", "Go", "Select all objects on this page for an action"):
        assert names.index(wanted) < names.index("Skip to main content")
    assert names.index("Select this object for an action - Watering can") < 20
    # The banner (5 controls) and the sidebar navigation (11) are one line each; the
    # two-link breadcrumbs stay listed, after main.
    regions = [line for line in lines if line.endswith("— snapshot")]
    assert regions == [
        '[s5r1] banner "" · 5 links — snapshot',
        '[s5r2] navigation "Sidebar" · 11 links — snapshot',
    ]
    assert names[-3:] == ["Home", "Shop", "Toggle navigation"]
    assert result.collapsed_nodes == 16
    assert table_refs(result.text) == [
        {k: v for k, v in r.items() if k != "tag"} for r in result.refs
    ]


def test_scoped_snapshot_never_collapses_its_own_root() -> None:
    nodes = parse_aria(sample("django-changelist.ai.yaml"))
    sidebar = next(n for n in iter_nodes(nodes) if n.name == "Sidebar")
    result = table([sidebar], scoped=True)
    assert result.region_nodes == [] and len(result.refs) == 11
    assert result.refs[0]["name"] == "Filter navigation items"


def test_sidebar_of_60_links_is_one_line_and_rows_come_first() -> None:
    sidebar = "\n".join(f'    - link "Nav {i}" [ref=n{i}]' for i in range(60))
    rows = "\n".join(
        f"      - row [ref=r{i}]:\n        - cell [ref=c{i}]:\n"
        f'          - checkbox "Select row {i}" [ref=x{i}]'
        for i in range(50)
    )
    text = (
        f'- navigation "Sidebar" [ref=nav]:\n{sidebar}\n'
        f'- main [ref=m]:\n  - table "Orders" [ref=t]:\n{rows}'
    )
    nodes = parse_aria(text)
    result = table(nodes, max_refs=20)
    lines = result.text.splitlines()
    assert lines[1] == 'table "Orders" · 50 rows'
    assert lines[2] == '[s5e1] checkbox "Select row 0" — check, uncheck'
    assert result.page_refs == [20, 20, 10]
    assert lines.count('[s5r1] navigation "Sidebar" · 60 links — snapshot') == 1
    # Every row checkbox is on some page, in order, once.
    assert [r["name"] for r in result.refs] == [f"Select row {i}" for i in range(50)]


def test_key_text_is_bounded_and_puts_outcomes_first() -> None:
    headings = "\n".join(f'  - heading "Part {i}" [level=2] [ref=h{i}]' for i in range(9))
    text = (
        "- main [ref=m]:\n"
        '  - heading "Orders" [level=1] [ref=h]\n'
        f"{headings}\n"
        "  - alert [ref=a]: Saved 3 orders.\n"
        "  - status [ref=s]:\n"
        "    - text: Export ready\n"
        "  - paragraph [ref=p]: 4 results\n"
        "  - paragraph [ref=q]: The weather is nice today and nothing here is a count\n"
        '  - button "OK" [ref=b]'
    )
    nodes = parse_aria(text)
    result = table(nodes, notices=("Saved 3 orders.", "  Product   deleted.  ", ""))
    head = result.text.splitlines()[1 : 1 + MAX_KEY_LINES]
    assert head[:6] == [
        'alert "Saved 3 orders."',
        'status "Export ready"',
        'notice "Product deleted."',
        'h1 "Orders"',
        'text "4 results"',
        'h2 "Part 0"',
    ]
    # at most MAX_HEADING_LINES of the 9 (issue 31 item 10: was 3 h2 lines)
    assert sum(line.startswith("h2 ") for line in head) == MAX_HEADING_LINES
    keys = [line for line in result.text.splitlines() if not line.startswith("[")]
    assert len(keys) == 1 + 5 + MAX_HEADING_LINES
    assert "weather" not in result.text


def test_stops_end_pages_and_cursor_offsets_land_on_the_next_page() -> None:
    text = "\n".join(f'- button "B{i}" [ref=e{i}]' for i in range(7))
    nodes = parse_aria(text)
    result = table(nodes, max_refs=3)
    pages: list[str] = []
    offset = 0
    while True:
        piece = page_content(result.text, offset, 50_000, 65_536, clipped=False, stops=result.stops)
        pages.append(piece.text)
        assert not piece.truncation["byMaxChars"] and not piece.truncation["byMaxBytes"]
        if piece.next_offset is None:
            break
        offset = piece.next_offset
    assert [p.splitlines()[-1] for p in pages] == [
        "more: 4 — pass nextCursor",
        "more: 1 — pass nextCursor",
        '[s5e7] button "B6" — click',
    ]
    assert "\n".join(pages) == result.text
    # A char bound smaller than a page still pages inside it, and then resumes at the stop.
    small = page_content(result.text, 0, 40, 65_536, clipped=False, stops=result.stops)
    assert small.truncation["byMaxChars"] and small.next_offset == 40
