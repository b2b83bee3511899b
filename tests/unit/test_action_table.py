"""The compact action table (reference §6.5, §6.7) and ref-qualifying nodes (§5.5)."""

from __future__ import annotations

from pathlib import Path

from browsermesh.model.action_table import (
    ElementInfo,
    TableResult,
    build_action_table,
    qualifying_nodes,
    table_candidates,
)
from browsermesh.model.aria import AriaNode, iter_nodes, parse_aria

DATA = Path(__file__).parent / "data" / "aria"
BASE = "http://127.0.0.1:43121"


def sample(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


def build(
    yaml_text: str | list[AriaNode],
    info: dict[str, ElementInfo],
    *,
    gen: str = "7",
    max_refs: int = 50,
    title: str = "T",
    url: str = BASE + "/",
    scope_in_region: bool = False,
) -> TableResult:
    nodes = parse_aria(yaml_text) if isinstance(yaml_text, str) else yaml_text
    return build_action_table(
        nodes,
        title=title,
        url=url,
        info=info,
        element_token=lambda i: f"s{gen}e{i}",
        region_token=lambda i: f"s{gen}r{i}",
        max_refs=max_refs,
        scope_in_region=scope_in_region,
    )


DEMO_SHOP = """\
- main [ref=e2]:
  - heading "Demo shop" [level=1] [ref=e3]
  - paragraph [ref=e4]:
    - link "Home" [ref=e5] [cursor=pointer]:
      - /url: /
  - paragraph [ref=e6]:
    - text: Item
    - textbox "Item" [ref=e7]: Blue teapot
  - paragraph [ref=e8]:
    - text: Password
    - textbox "Password" [ref=e9]: "[REDACTED]"
  - paragraph [ref=e10]:
    - text: Quantity
    - combobox "Quantity" [ref=e11]:
      - option "1" [selected]
      - option "2"
  - paragraph [ref=e12]:
    - checkbox "Gift wrap" [ref=e13]
    - text: Gift wrap
  - paragraph [ref=e16]:
    - button "Place order" [ref=e17]
    - button "Cancel" [disabled] [ref=e18]
  - paragraph [ref=e19]:
    - link "Help" [ref=e20] [cursor=pointer]
    - link "Terms" [ref=e21] [cursor=pointer]
    - link "Privacy" [ref=e22] [cursor=pointer]
    - link "Contact" [ref=e23] [cursor=pointer]"""

DEMO_INFO = {
    "e5": ElementInfo(tag="a"),
    "e7": ElementInfo(tag="input", value="Blue teapot"),
    "e9": ElementInfo(tag="input", value="hunter2", password=True),
    "e11": ElementInfo(
        tag="select",
        native_select=True,
        selected_label="1",
        options=(("1", True, False), ("2", False, False)),
    ),
    "e13": ElementInfo(tag="input", checked="unchecked"),
    "e17": ElementInfo(tag="button"),
    "e18": ElementInfo(tag="button", disabled=True),
    **{f"e{n}": ElementInfo(tag="a") for n in range(20, 24)},
}

DEMO_TABLE = """\
page: "Demo shop" http://127.0.0.1:43121/
h1 "Demo shop"
[s7e1] link "Home" — click
[s7e2] textbox "Item" · value "Blue teapot" — fill, press
[s7e3] textbox "Password" · value [REDACTED] — fill, press
[s7e4] combobox "Quantity" · selected "1" — select_option
    option "1" · selected
    option "2"
[s7e5] checkbox "Gift wrap" · unchecked — check, uncheck
[s7e6] button "Place order" — click
[s7e7] button "Cancel" · disabled — none
more: 4 — pass nextCursor"""


def first_page(result: TableResult) -> str:
    """The text of the table's first page (what the first response shows)."""
    return result.text[: result.stops[0] - 1] if result.stops else result.text


def test_contract_demo_shop_example() -> None:
    result = build(DEMO_SHOP, DEMO_INFO, max_refs=7, title="Demo shop")
    assert first_page(result) == DEMO_TABLE
    assert result.page_refs == [7, 4] and result.text[result.stops[0] :].startswith("[s7e8] ")
    assert result.max_refs_nodes == 0 and result.collapsed_nodes == 0
    assert result.refs[:4] == [
        {"ref": "s7e1", "role": "link", "name": "Home", "tag": "a"},
        {"ref": "s7e2", "role": "textbox", "name": "Item", "tag": "input"},
        {"ref": "s7e3", "role": "textbox", "name": "Password", "tag": "input"},
        {"ref": "s7e4", "role": "combobox", "name": "Quantity", "tag": "select"},
    ]
    assert len(result.refs) == 11
    assert [(t, n.pw_ref) for t, n in result.element_nodes][6] == ("s7e7", "e18")
    assert result.region_nodes == []
    assert "hunter2" not in result.text


def test_contract_worked_example_max_refs_two() -> None:
    text = "\n".join(f'- button "B{i}" [ref=e{i}]' for i in range(1, 6))
    info = {f"e{i}": ElementInfo(tag="button") for i in range(1, 6)}
    result = build(text, info, gen="a", max_refs=2, title="Five")
    assert result.text.splitlines() == [
        'page: "Five" http://127.0.0.1:43121/',
        '[sae1] button "B1" — click',
        '[sae2] button "B2" — click',
        "more: 3 — pass nextCursor",
        '[sae3] button "B3" — click',
        '[sae4] button "B4" — click',
        "more: 1 — pass nextCursor",
        '[sae5] button "B5" — click',
    ]
    assert result.page_refs == [2, 2, 1] and len(result.refs) == 5
    pages = [
        result.text[a : b - 1]
        for a, b in zip([0, *result.stops], [*result.stops, 10**6], strict=True)
    ]
    assert [p.splitlines()[0] for p in pages] == [
        'page: "Five" http://127.0.0.1:43121/',
        '[sae3] button "B3" — click',
        '[sae5] button "B5" — click',
    ]


def action_table_info() -> dict[str, ElementInfo]:
    options = tuple((str(n), n == 1, False) for n in range(1, 31))
    return {
        "e5": ElementInfo(tag="a"),
        "e7": ElementInfo(tag="input", value="Blue teapot"),
        "e9": ElementInfo(tag="input", value="s3cret-pass", password=True),
        "e11": ElementInfo(tag="select", native_select=True, selected_label="1", options=options),
        "e13": ElementInfo(tag="input", checked="checked"),
        "e15": ElementInfo(tag="input", editable_combobox=True, value="", expanded=False),
        "e17": ElementInfo(tag="button"),
        "e18": ElementInfo(tag="button", disabled=True),
    }


def test_real_action_table_page_caps_options_at_25() -> None:
    result = build(
        sample("action-table.ai.yaml"),
        action_table_info(),
        gen="1",
        title="Action table",
        url=BASE + "/action-table",
    )
    expected = [
        'page: "Action table" http://127.0.0.1:43121/action-table',
        'h1 "Action table"',
        '[s1e1] link "Home" — click',
        '[s1e2] textbox "Item" · value "Blue teapot" — fill, press',
        '[s1e3] textbox "Password" · value [REDACTED] — fill, press',
        '[s1e4] combobox "Quantity" · selected "1" — select_option',
        '    option "1" · selected',
        *[f'    option "{n}"' for n in range(2, 26)],
        "    more options: 5",
        '[s1e5] checkbox "Gift wrap" · checked — check, uncheck',
        '[s1e6] combobox "City" · collapsed — fill, press, click',
        '[s1e7] button "Place order" — click',
        '[s1e8] button "Cancel" · disabled — none',
    ]
    assert result.text.splitlines() == expected
    assert "s3cret" not in result.text
    assert result.max_refs_nodes == 0 and len(result.refs) == 8


def test_native_select_options_fall_back_to_tree_children() -> None:
    info = action_table_info()
    info["e11"] = ElementInfo(tag="select", native_select=True, selected_label="1")
    lines = build(sample("action-table.ai.yaml"), info).text.splitlines()
    assert lines[1] == 'h1 "Action table"'
    start = lines.index('[s7e4] combobox "Quantity" · selected "1" — select_option')
    assert lines[start + 1] == '    option "1" · selected'
    assert lines[start + 25] == '    option "25"'
    assert lines[start + 26] == "    more options: 5"


def test_option_lines_show_selected_and_disabled() -> None:
    info = {
        "e1": ElementInfo(
            tag="select",
            native_select=True,
            selected_label="B",
            options=(("A", False, True), ("B", True, False), ("C", True, True)),
            disabled=True,
        )
    }
    assert build('- combobox "Pick" [disabled] [ref=e1]', info).text.splitlines()[1:] == [
        '[s7e1] combobox "Pick" · selected "B", disabled — none',
        '    option "A" · disabled',
        '    option "B" · selected',
        '    option "C" · selected · disabled',
    ]


# --------------------------------------------------------------------------------------------
# Region collapsing
# --------------------------------------------------------------------------------------------


def docs_info(nodes: list[AriaNode]) -> dict[str, ElementInfo]:
    info: dict[str, ElementInfo] = {}
    for node in table_candidates(nodes, scope_in_region=False):
        assert node.pw_ref is not None
        tag = {"link": "a", "button": "button", "searchbox": "input"}[node.role]
        expanded = False if node.name == "Change theme" else None
        info[node.pw_ref] = ElementInfo(tag=tag, expanded=expanded)
    return info


def test_real_docs_page_collapses_the_table_of_contents() -> None:
    nodes = parse_aria(sample("docs-large.ai.yaml"))
    info = docs_info(nodes)
    assert len(info) == 6  # the 480 TOC links need no DOM reads
    result = build(
        nodes,
        info,
        gen="9",
        max_refs=4,
        title="Data Types - The Rust Programming Language",
        url=BASE + "/book/ch03-02-data-types.html",
    )
    assert result.text.splitlines() == [
        'page: "Data Types - The Rust Programming Language" '
        "http://127.0.0.1:43121/book/ch03-02-data-types.html",
        'h1 "Data Types"',
        'p "Every value in the language is of a certain data type."',
        'h2 "Section 1"',
        'p "Paragraph 1 explains scalar and compound types in some detail."',
        'h2 "Section 2"',
        'p "Paragraph 2 explains scalar and compound types in some detail."',
        'h2 "Section 3"',
        'p "Paragraph 3 explains scalar and compound types in some detail."',
        'h2 "Section 4"',
        'p "Paragraph 4 explains scalar and compound types in some detail."',
        '[s9r1] navigation "Table of contents" · 480 links — snapshot',
        '[s9e1] button "Toggle Table of Contents" — click',
        '[s9e2] button "Change theme" · collapsed — click',
        '[s9e3] button "Toggle Searchbar" — click',
        '[s9e4] link "Previous chapter" — click',
        "more: 2 — pass nextCursor",
        '[s9e5] link "Next chapter" — click',
        '[s9e6] searchbox "Search this book" — fill, press',
    ]
    assert result.collapsed_nodes == 480 and result.page_refs == [4, 2]
    (token, region), *_ = result.region_nodes
    assert token == "s9r1" and region.role == "navigation" and region.pw_ref is not None
    assert len(result.refs) == 6


def test_real_docs_page_inside_region_scope_is_not_collapsed() -> None:
    nodes = parse_aria(sample("docs-large.ai.yaml"))
    navigation = next(n for n in iter_nodes(nodes) if n.name == "Table of contents")
    info = {n.pw_ref: ElementInfo(tag="a") for n in qualifying_nodes([navigation]) if n.pw_ref}
    result = build([navigation], info, gen="b", max_refs=100, scope_in_region=True)
    lines = result.text.splitlines()
    assert lines[1] == '[sbe1] link "1. Chapter 1" — click'
    assert len(result.refs) == 480 and result.page_refs == [100, 100, 100, 100, 80]
    assert result.region_nodes == [] and result.collapsed_nodes == 0
    assert (
        lines[101] == "more: 380 — pass nextCursor"
        and lines[-1] == '[sbe480] link "480. Chapter 480" — click'
    )
    # Beyond the capture ceiling elements are counted, never listed.
    capped = build_action_table(
        [navigation],
        title="T",
        url=BASE,
        info=info,
        element_token=lambda i: f"e{i}",
        region_token=lambda i: f"r{i}",
        max_refs=100,
        scope_in_region=True,
        ceiling=250,
    )
    assert capped.max_refs_nodes == 230 and len(capped.refs) == 250
    assert capped.text.splitlines()[-1] == "more: 230 not listed — scope the snapshot"


def links(n: int, prefix: str = "l", role: str = "link") -> str:
    return "\n".join(f'    - {role} "{prefix}{i}" [ref={prefix}{i}]' for i in range(n))


def all_info(nodes: list[AriaNode]) -> dict[str, ElementInfo]:
    return {n.pw_ref: ElementInfo(tag="x") for n in iter_nodes(nodes) if n.pw_ref}


def test_region_threshold_kinds_and_names() -> None:
    text = "\n".join(
        [
            '- navigation "Fifteen" [ref=n1]:',
            links(15, "a"),
            "- complementary [ref=n2]:",
            links(16, "b", "button"),
            '- contentinfo "Mixed" [ref=n3]:',
            links(8, "c"),
            links(8, "d", "button"),
            "- list [ref=n4]:",
            links(20, "e"),
            "- main [ref=n5]:",
            "  - list [ref=n6]:",
            links(17, "f").replace("    - ", "      - "),
            "- tree [ref=n7]:",
            links(16, "g", "treeitem"),
            '- table "Grid" [ref=n8]:',
            links(9, "h", "textbox"),
            links(9, "i", "checkbox"),
        ]
    )
    nodes = parse_aria(text)
    result = build(nodes, all_info(nodes), max_refs=100)
    region_lines = [line for line in result.text.splitlines() if "— snapshot" in line]
    # Chrome outside main collapses from 4 elements on (the 15 navigation links too); tree,
    # lists and tables outside main from 16; the list inside main never.
    assert region_lines == [
        '[s7r1] navigation "Fifteen" · 15 links — snapshot',
        '[s7r2] complementary "" · 16 buttons — snapshot',
        '[s7r3] contentinfo "Mixed" · 16 controls — snapshot',
        '[s7r4] list "" · 20 links — snapshot',
        '[s7r5] tree "" · 16 controls — snapshot',
        '[s7r6] table "Grid" · 18 controls — snapshot',
    ]
    assert result.collapsed_nodes == 15 + 16 + 16 + 20 + 16 + 18
    assert len(result.refs) == 17
    assert [t for t, _ in result.region_nodes] == [f"s7r{i}" for i in range(1, 7)]
    # main comes first, then the rest in document order
    lines = result.text.splitlines()
    assert lines[1] == '[s7e1] link "f0" — click' and lines[17] == '[s7e17] link "f16" — click'
    assert lines[18] == '[s7r1] navigation "Fifteen" · 15 links — snapshot'


def test_outermost_region_wins_and_regions_do_not_use_max_refs() -> None:
    text = "\n".join(
        [
            '- button "first" [ref=b1]',
            '- navigation "Outer" [ref=n1]:',
            "  - list [ref=n2]:",
            links(30, "a").replace("    - ", "      - "),
            '- button "second" [ref=b2]',
        ]
    )
    nodes = parse_aria(text)
    result = build(nodes, all_info(nodes), max_refs=1)
    assert result.text.splitlines()[1:] == [
        '[s7e1] button "first" — click',
        '[s7r1] navigation "Outer" · 30 links — snapshot',
        "more: 1 — pass nextCursor",
        '[s7e2] button "second" — click',
    ]
    assert result.collapsed_nodes == 30 and result.page_refs == [1, 1]
    assert [n.pw_ref for n in table_candidates(nodes, scope_in_region=False)] == ["b1", "b2"]
    assert len(table_candidates(nodes, scope_in_region=True)) == 32


# --------------------------------------------------------------------------------------------
# Lines, states, operations, refs
# --------------------------------------------------------------------------------------------


def test_state_tokens_in_contract_order() -> None:
    text = '- textbox "T" [ref=e1]: x\n- combobox "S" [ref=e2]\n- button "B" [ref=e3]'
    info = {
        "e1": ElementInfo(
            tag="input", value="v", expanded=True, pressed=True, disabled=True, readonly=True
        ),
        "e2": ElementInfo(
            tag="select",
            native_select=True,
            selected_label="a",
            checked="mixed",
            expanded=False,
            pressed=True,
            readonly=True,
        ),
        "e3": ElementInfo(tag="button", pressed=True, expanded=True),
    }
    assert build(text, info).text.splitlines()[1:] == [
        '[s7e1] textbox "T" · value "v", expanded, pressed, disabled, readonly — none',
        '[s7e2] combobox "S" · selected "a", mixed, collapsed, pressed, readonly — select_option',
        '[s7e3] button "B" · expanded, pressed — click',
    ]


def test_operations_per_role() -> None:
    roles = [
        ("button", "click"),
        ("link", "click"),
        ("tab", "click"),
        ("menuitem", "click"),
        ("treeitem", "click"),
        ("gridcell", "click"),
        ("option", "click"),
        ("checkbox", "check, uncheck"),
        ("switch", "check, uncheck"),
        ("menuitemcheckbox", "check, uncheck"),
        ("radio", "check"),
        ("menuitemradio", "check"),
        ("textbox", "fill, press"),
        ("searchbox", "fill, press"),
        ("spinbutton", "fill, press"),
        ("combobox", "fill, press, click"),
        ("slider", "press"),
    ]
    text = "\n".join(f'- {role} "{role}" [ref=e{i}]' for i, (role, _) in enumerate(roles))
    info = {f"e{i}": ElementInfo(tag="div") for i in range(len(roles))}
    lines = build(text, info).text.splitlines()[1:]
    assert [line.rsplit(" — ", 1)[1] for line in lines] == [ops for _, ops in roles]


def test_values_names_title_and_url_are_cut_and_escaped() -> None:
    long_name = "N" * 200
    text = (
        f'- textbox "{long_name}" [ref=e1]\n'
        '- button "say \\"hi\\"\\nnow" [ref=e2]\n'
        "- link [ref=e3]\n"
        '- searchbox "S" [ref=e4]\n'
        '- spinbutton "Qty" [ref=e5]'
    )
    info = {
        "e1": ElementInfo(tag="input", value="v" * 100),
        "e2": ElementInfo(tag="BUTTON"),
        "e3": ElementInfo(tag="a"),
        "e4": ElementInfo(tag="input", value=""),
        "e5": ElementInfo(tag="input", value='1"\n'),
    }
    result = build(text, info, title="T" * 150, url="http://h/" + "p" * 3000)
    lines = result.text.splitlines()
    assert lines[0] == 'page: "' + "T" * 119 + '…" http://h/' + "p" * (2000 - 10) + "…"
    assert lines[1] == (
        '[s7e1] textbox "' + "N" * 119 + '…" · value "' + "v" * 79 + '…" — fill, press'
    )
    assert lines[2] == '[s7e2] button "say \\"hi\\"\\nnow" — click'
    assert lines[3] == '[s7e3] link "" — click'
    assert lines[4] == '[s7e4] searchbox "S" — fill, press'
    assert lines[5] == '[s7e5] spinbutton "Qty" · value "1\\"\\n" — fill, press'
    assert result.refs[0]["name"] == "N" * 119 + "…"
    assert result.refs[1] == {
        "ref": "s7e2",
        "role": "button",
        "name": 'say "hi"\nnow',
        "tag": "button",
    }
    assert result.refs[2] == {"ref": "s7e3", "role": "link", "tag": "a"}


def test_password_value_is_never_shown() -> None:
    info = {
        "e1": ElementInfo(tag="input", value="hunter2", password=True),
        "e2": ElementInfo(tag="input", value="", password=True),
    }
    result = build('- textbox "P" [ref=e1]: hunter2\n- textbox "Q" [ref=e2]', info)
    assert result.text.splitlines()[1:] == [
        '[s7e1] textbox "P" · value [REDACTED] — fill, press',
        '[s7e2] textbox "Q" — fill, press',
    ]
    assert "hunter2" not in result.text


def test_which_nodes_qualify() -> None:
    text = """\
- main [ref=e1]:
  - slider "No ref"
  - button "Gone" [ref=e2]
  - combobox "Native" [ref=e3]:
    - option "a" [selected]
  - listbox "Multi" [ref=e4]:
    - option "m1" [selected] [ref=e5]
    - option "m2" [ref=e6]
  - listbox "Custom" [ref=e7]:
    - option "c1" [ref=e8]
  - iframe [ref=e9]:
    - button "Inside frame" [ref=f1e1]
  - button "Last" [ref=e10]"""
    info = {
        "e3": ElementInfo(tag="select", native_select=True, selected_label="a"),
        "e5": ElementInfo(tag="option"),
        "e6": ElementInfo(tag="option"),
        "e8": ElementInfo(tag="div"),
        "f1e1": ElementInfo(tag="button"),
        "e10": ElementInfo(tag="button"),
    }
    result = build(text, info)
    assert result.text.splitlines()[1:] == [
        '[s7e1] combobox "Native" · selected "a" — select_option',
        '    option "a" · selected',
        '[s7e2] option "c1" — click',
        '[s7e3] button "Last" — click',
    ]
    nodes = parse_aria(text)
    plain = [n.pw_ref for n in qualifying_nodes(nodes)]
    assert plain == ["e2", "e3", "e5", "e6", "e8", "e10"]

    def native(node: AriaNode) -> bool:
        return node.pw_ref in ("e5", "e6")

    assert [n.pw_ref for n in qualifying_nodes(nodes, in_native_select=native)] == [
        "e2",
        "e3",
        "e8",
        "e10",
    ]


def test_options_inside_a_native_select_container_are_skipped_without_option_info() -> None:
    text = '- listbox "Multi" [ref=e1]:\n  - option "x" [ref=e2]\n- button "B" [ref=e3]'
    info = {
        "e1": ElementInfo(tag="select", native_select=True),
        "e2": ElementInfo(tag="div"),
        "e3": ElementInfo(tag="button"),
    }
    assert build(text, info).text.splitlines()[1:] == ['[s7e1] button "B" — click']


def test_empty_page_has_only_the_header() -> None:
    result = build([], {}, title="", url="about:blank")
    assert result.text == 'page: "" about:blank'
    assert result.refs == [] and result.max_refs_nodes == 0
