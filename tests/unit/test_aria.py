"""Parsing, filtering and re-rendering Playwright ARIA YAML (reference §5.5, §6.1, §6.4)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from browsermesh.errors import BrowserMeshError, ErrorCode
from browsermesh.model.aria import (
    INTERACTIVE_ROLES,
    AriaNode,
    as_data,
    cap_children,
    filter_interactive,
    iter_nodes,
    json_literal,
    make_key,
    parse_aria,
    render_aria,
    strip_iframe_children,
    subtree_size,
)
from tests.support.examples import examples

DATA = Path(__file__).parent / "data" / "aria"
SAMPLES = sorted(p.name for p in DATA.glob("*.yaml"))
DEFAULT_SAMPLES = [name for name in SAMPLES if ".default" in name]
# AI-mode captures whose tree equals the default-mode tree once refs and iframe contents go.
SAME_TREE_PAGES = ["action-table", "big_n30", "iframes", "multibyte_n3", "password", "root"]

BRIEF_SAMPLE = """\
- main [ref=e2]:
  - heading "Action table" [level=1] [ref=e3]
  - paragraph [ref=e4]:
    - link "Home" [ref=e5] [cursor=pointer]:
      - /url: /
  - paragraph [ref=e6]:
    - text: Item
    - textbox "Item" [ref=e7]: Blue teapot
  - paragraph [ref=e10]:
    - text: Quantity
    - combobox "Quantity" [ref=e11]:
      - option "1" [selected]
      - option "2"
  - paragraph [ref=e12]:
    - checkbox "Gift wrap" [checked] [ref=e13]
    - text: Gift wrap
  - paragraph [ref=e16]:
    - button "Place order" [ref=e17]
    - button "Cancel" [disabled] [ref=e18]
  - paragraph
  - iframe [ref=f2e4]:
    - generic [ref=f3e1]:
      - button "Inside frame" [ref=f3e4]"""


def sample(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


def no_refs(node: AriaNode) -> str | None:
    return None


def own_refs(node: AriaNode) -> str | None:
    return node.pw_ref


def test_interactive_roles_are_the_seventeen() -> None:
    assert len(INTERACTIVE_ROLES) == 17
    assert {"button", "link", "option", "treeitem", "gridcell", "slider"} <= INTERACTIVE_ROLES
    assert "listbox" not in INTERACTIVE_ROLES and "menu" not in INTERACTIVE_ROLES


# --------------------------------------------------------------------------------------------
# Parsing
# --------------------------------------------------------------------------------------------


def test_parse_brief_sample_fields() -> None:
    nodes = parse_aria(BRIEF_SAMPLE)
    assert len(nodes) == 1
    main = nodes[0]
    assert (main.role, main.name, main.key, main.pw_ref) == ("main", None, "main", "e2")
    heading, para = main.children[0], main.children[1]
    assert heading.role == "heading" and heading.name == "Action table"
    assert heading.key == 'heading "Action table" [level=1]'
    assert heading.attrs == ["level=1"] and heading.pw_ref == "e3"
    link = para.children[0]
    assert link.key == 'link "Home"' and link.pw_ref == "e5" and link.attrs == []
    assert link.props == [("url", "/")] and link.children == []
    text, textbox = main.children[2].children
    assert (text.role, text.key, text.value, text.name) == ("text", "text", "Item", None)
    assert (textbox.role, textbox.value, textbox.pw_ref) == ("textbox", "Blue teapot", "e7")
    options = main.children[3].children[1].children
    assert [(o.name, o.pw_ref, o.attrs) for o in options] == [
        ("1", None, ["selected"]),
        ("2", None, []),
    ]
    checkbox = main.children[4].children[0]
    assert checkbox.attrs == ["checked"] and checkbox.key == 'checkbox "Gift wrap" [checked]'
    cancel = main.children[5].children[1]
    assert cancel.attrs == ["disabled"] and cancel.pw_ref == "e18"
    empty_paragraph = main.children[6]
    assert empty_paragraph.key == "paragraph" and empty_paragraph.pw_ref is None
    frame = main.children[7]
    assert frame.pw_ref == "f2e4" and frame.children[0].children[0].pw_ref == "f3e4"


def test_parse_decodes_quoted_keys_names_and_values() -> None:
    nodes = parse_aria(sample("tricky.ai.yaml"))
    main = nodes[0]
    heading = main.children[0]
    assert heading.name == "Quote \"double\" and 'single' : colon # hash"
    assert heading.attrs == ["level=1"] and heading.pw_ref is not None
    by_name = {n.name: n for n in iter_nodes(nodes) if n.name is not None}
    assert by_name['Say "hi": now'].role == "button"
    assert by_name["Field:"].value == 'val "q" : # x'
    assert by_name["link: with colon"].props == [("url", "/a?b=c#frag")]
    assert by_name["- starts with dash"].props == [("url", "#")]
    assert by_name["mixed one"].role == "checkbox"
    values = [n.value for n in main.children if n.role == "paragraph" and n.value]
    assert "yes" in values and "null" in values and "0x1F" in values and "~" in values
    assert "emoji 😀 and 日本語 and tab here" in values


def test_parse_keeps_unquoted_scalars_as_text() -> None:
    nodes = parse_aria(
        "- paragraph: 2024-01-15\n- paragraph: 1_000\n- paragraph: 0b101\n- paragraph: :colon\n"
        "- '<<': x"
    )
    assert [n.value for n in nodes] == ["2024-01-15", "1_000", "0b101", ":colon", "x"]


def test_parse_box_and_cursor_attributes() -> None:
    nodes = parse_aria(sample("action-table.ai-boxes.yaml"))
    link = next(n for n in iter_nodes(nodes) if n.role == "link")
    assert link.key == 'link "Home" [box=16,80,43,17]'
    assert link.attrs == ["box=16,80,43,17"] and link.pw_ref is not None
    rendered = render_aria(nodes, own_refs)
    assert f'- link "Home" [box=16,80,43,17] [ref={link.pw_ref}]:' in rendered
    assert "cursor=" not in rendered


def test_name_containing_ref_text_is_not_an_attribute() -> None:
    (node,) = parse_aria('- button "see [ref=e9] here" [ref=e3]')
    assert node.name == "see [ref=e9] here" and node.pw_ref == "e3"
    assert node.key == 'button "see [ref=e9] here"'


def test_role_is_first_lowercase_token() -> None:
    (a, b, c, d) = parse_aria('- heading2 "x"\n- Button "y"\n- text: hi\n- \'"quoted"\'')
    assert (a.role, b.role, c.role, d.role) == ("heading2", "", "text", "")
    assert d.name == "quoted"


def test_non_json_escapes_in_names_fall_back_to_playwright_rules() -> None:
    (node,) = parse_aria('- \'button "a\\q\\"b" [ref=e1]\'')
    assert node.name == 'aq"b' and node.pw_ref == "e1"


def test_attribute_spacing_and_ref_without_cursor() -> None:
    (node,) = parse_aria('- checkbox "x" [checked=mixed]  [ ref = e4 ] [cursor=pointer]')
    assert node.attrs == ["checked=mixed"] and node.pw_ref == "e4"
    assert node.key == 'checkbox "x" [checked=mixed]'


def test_empty_snapshot_is_empty_list() -> None:
    assert parse_aria("") == []
    assert parse_aria("[]") == []
    assert render_aria([], no_refs) == ""


@pytest.mark.parametrize(
    "text",
    [
        "- a: b: c",
        "- button:\n  bad",
        "key: value",
        "just text",
        "- a: &x b\n- c: *x",
        "- paragraph:",
        "- /url: /",
        "- a\n---\n- b",
        '- button "unterminated',
        '- button "x" trailing',
        "- [nested]",
        "- a: {b: c}",
        "- a: b\n  a: c",
        "- 'bad \x01 char'",
        "- ? [a]\n  : b",
        "- a: !!binary x\n- *y",
    ],
)
def test_invalid_yaml_or_shape_is_browser_error(text: str) -> None:
    with pytest.raises(BrowserMeshError) as info:
        parse_aria(text)
    assert info.value.code is ErrorCode.BROWSER_ERROR
    assert info.value.cause


def test_deep_trees_do_not_recurse() -> None:
    depth = sys.getrecursionlimit() + 500  # recursion would fail; deeper only costs time
    lines = ["  " * i + "- generic:" for i in range(depth)]
    lines.append("  " * depth + '- button "deep" [ref=e1]')
    text = "\n".join(lines)
    nodes = parse_aria(text)
    assert sum(1 for _ in iter_nodes(nodes)) == depth + 1
    assert render_aria(nodes, own_refs) == text
    kept, dropped = filter_interactive(nodes)
    assert dropped == 0 and subtree_size(kept[0]) == depth + 1
    capped, removed = cap_children(nodes, 1)
    assert removed == 0 and render_aria(capped, own_refs) == text


# --------------------------------------------------------------------------------------------
# Rendering and round trips on real samples
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", DEFAULT_SAMPLES)
def test_render_reproduces_playwright_default_mode_byte_for_byte(name: str) -> None:
    text = sample(name)
    assert render_aria(parse_aria(text), no_refs) == text


@pytest.mark.parametrize("page", SAME_TREE_PAGES)
def test_ai_mode_without_refs_renders_as_default_mode(page: str) -> None:
    nodes = parse_aria(sample(f"{page}.ai.yaml"))
    strip_iframe_children(nodes)
    assert render_aria(nodes, no_refs) == sample(f"{page}.default.yaml")


@pytest.mark.parametrize("name", [n for n in SAMPLES if ".ai" in n and "boxes" not in n])
def test_ai_mode_with_own_refs_drops_only_cursor(name: str) -> None:
    text = sample(name)
    assert render_aria(parse_aria(text), own_refs) == text.replace(" [cursor=pointer]", "")


@pytest.mark.parametrize("name", SAMPLES)
def test_real_samples_round_trip(name: str) -> None:
    nodes = parse_aria(sample(name))
    assert as_data(parse_aria(render_aria(nodes, own_refs))) == as_data(nodes)


def test_ref_tokens_are_placed_at_end_of_key() -> None:
    nodes = parse_aria(BRIEF_SAMPLE)
    tokens = {id(n): f"s3e{i}" for i, n in enumerate(iter_nodes(nodes), 1) if n.pw_ref}
    out = render_aria(nodes, lambda n: tokens.get(id(n)))
    assert '  - heading "Action table" [level=1] [ref=s3e2]' in out
    assert '    - checkbox "Gift wrap" [checked] [ref=s3e' in out
    assert '      - option "1" [selected]\n' in out
    assert "  - paragraph\n" in out
    assert all(re.search(r"\[ref=e\d+\]", line) is None for line in out.splitlines())


def test_render_quotes_like_playwright() -> None:
    nodes = [
        AriaNode(role="paragraph", name=None, key="paragraph", value=value)
        for value in ["", "yes", "12", " x", "a: b", "a #b", "-x", "{x}", "plain text", "x\ty"]
    ]
    nodes.append(AriaNode(role="button", name='a "b": c', key=make_key("button", 'a "b": c')))
    out = render_aria(nodes, no_refs).splitlines()
    assert out == [
        '- paragraph: ""',
        '- paragraph: "yes"',
        '- paragraph: "12"',
        '- paragraph: " x"',
        '- paragraph: "a: b"',
        '- paragraph: "a #b"',
        '- paragraph: "-x"',
        '- paragraph: "{x}"',
        "- paragraph: plain text",
        '- paragraph: "x\\ty"',
        '- \'button "a \\"b\\": c"\'',
    ]


def test_value_with_props_renders_as_text_child() -> None:
    node = AriaNode(
        role="textbox", name="Name", key='textbox "Name"', value="v", props=[("placeholder", "p")]
    )
    assert render_aria([node], no_refs) == '- textbox "Name":\n  - /placeholder: p\n  - text: v'


def test_json_literal_matches_json_stringify() -> None:
    assert json_literal('a"\\\n\x01é😀') == '"a\\"\\\\\\n\\u0001é😀"'
    assert json_literal("x\ud800") == '"x\\ud800"'


# --------------------------------------------------------------------------------------------
# Tree operations
# --------------------------------------------------------------------------------------------


def test_strip_iframe_children() -> None:
    nodes = parse_aria(sample("iframes.ai.yaml"))
    strip_iframe_children(nodes)
    frames = [n for n in iter_nodes(nodes) if n.role == "iframe"]
    assert len(frames) == 4 and all(f.children == [] for f in frames)
    assert not any(n.name == "Level one button" for n in iter_nodes(nodes))
    assert render_aria(nodes, no_refs) == sample("iframes.default.yaml")


def test_iter_nodes_document_order() -> None:
    nodes = parse_aria("- a:\n  - b:\n    - c\n  - d\n- e")
    assert [n.role for n in iter_nodes(nodes)] == ["a", "b", "c", "d", "e"]


FILTER_SAMPLE = """\
- main:
  - heading "Title" [level=1]
  - paragraph:
    - text: Intro
    - link "Home":
      - /url: /
      - img "logo"
  - list:
    - listitem: one
    - listitem: two
  - textbox "Name": Ada
  - paragraph: trailing"""


def test_filter_interactive_counts_dropped_nodes() -> None:
    nodes = parse_aria(FILTER_SAMPLE)
    kept, dropped = filter_interactive(nodes)
    # heading, text, img, list + 2 listitems, trailing paragraph
    assert dropped == 7
    assert render_aria(kept, no_refs) == (
        '- main:\n  - paragraph:\n    - link "Home":\n      - /url: /\n  - textbox "Name": Ada'
    )
    assert render_aria(nodes, no_refs) == FILTER_SAMPLE  # input untouched


def test_filter_interactive_fully_non_interactive_tree_is_empty() -> None:
    nodes = parse_aria('- main:\n  - heading "x"\n  - paragraph: y\n- contentinfo')
    assert filter_interactive(nodes) == ([], 4)


def test_filter_interactive_real_sample_counts_add_up() -> None:
    nodes = parse_aria(sample("action-table.ai.yaml"))
    total = sum(1 for _ in iter_nodes(nodes))
    kept, dropped = filter_interactive(nodes)
    kept_count = sum(1 for _ in iter_nodes(kept))
    assert kept_count + dropped == total
    roles = [n.role for n in iter_nodes(kept)]
    assert roles.count("option") == 30 and "text" not in roles and "heading" not in roles
    assert all(n.role in INTERACTIVE_ROLES or n.children for n in iter_nodes(kept))


def test_cap_children_every_list_including_top_level() -> None:
    nodes = parse_aria("- a:\n  - b\n  - c:\n    - p\n    - q\n  - d\n- e:\n  - f\n- g:\n  - h")
    capped, removed = cap_children(nodes, 2)
    # top level drops g (+h); a drops d; no other list exceeds 2
    assert removed == 3
    assert render_aria(capped, no_refs) == "- a:\n  - b\n  - c:\n    - p\n    - q\n- e:\n  - f"
    capped1, removed1 = cap_children(nodes, 1)
    assert render_aria(capped1, no_refs) == "- a:\n  - b"
    assert removed1 == subtree_size(nodes[0]) - 2 + subtree_size(nodes[1]) + subtree_size(nodes[2])


def test_cap_children_keeps_props_and_counts_removed_subtrees() -> None:
    nodes = parse_aria(sample("action-table.ai.yaml"))
    capped, removed = cap_children(nodes, 3)
    total = sum(1 for _ in iter_nodes(nodes))
    assert sum(1 for _ in iter_nodes(capped)) + removed == total
    link = next(n for n in iter_nodes(capped) if n.role == "link")
    assert link.props == [("url", "/")]
    with pytest.raises(ValueError):
        cap_children(nodes, 0)


def test_filter_then_cap_on_options() -> None:
    kept, _ = filter_interactive(parse_aria(sample("action-table.ai.yaml")))
    capped, removed = cap_children(kept, 25)
    combobox = next(n for n in iter_nodes(capped) if n.name == "Quantity")
    assert len(combobox.children) == 25 and removed == 5


# --------------------------------------------------------------------------------------------
# Property: render -> parse is the identity on generated trees
# --------------------------------------------------------------------------------------------

_TEXT = st.one_of(
    st.text(st.characters(codec="utf-8"), max_size=20),
    st.sampled_from(
        [
            "",
            " ",
            "yes",
            "No",
            "null",
            "~",
            "1e5",
            "0x1F",
            "-1",
            ".inf",
            "Infinity",
            "2024-01-15",
            "a: b",
            "a #b",
            "ends:",
            "-dash",
            "[x]",
            "{x}",
            "`x`",
            "'q'",
            '"q"',
            "x\ty",
            "\t",
            "\x85",
            "\u2028",
            "\ufeff",
            "\x00",
            "\uffff",
            "a\nb",
            "\r\n",
            "😀 日本語",
            "[ref=e1]",
        ]
    ),
)
_ROLES = st.one_of(
    st.sampled_from([*sorted(INTERACTIVE_ROLES), "generic", "text", "main", "iframe", "list"]),
    st.from_regex(r"[a-z][a-z0-9]{0,8}", fullmatch=True),
)
_ATTRS = st.lists(
    st.from_regex(r"[a-z]{1,8}(=[a-z0-9,.]{1,8})?", fullmatch=True).filter(
        lambda a: a.partition("=")[0] not in ("ref", "cursor")
    ),
    max_size=3,
)


@st.composite
def _nodes(draw: st.DrawFn, depth: int = 0) -> AriaNode:
    role = draw(_ROLES)
    name = draw(st.none() | _TEXT)
    attrs = draw(_ATTRS)
    pw_ref = draw(st.none() | st.from_regex(r"(f[0-9]{1,2})?e[0-9]{1,4}", fullmatch=True))
    props = draw(
        st.lists(st.tuples(st.from_regex(r"[a-z]{1,10}", fullmatch=True), _TEXT), max_size=2)
    )
    children: list[AriaNode] = []
    if depth < 3:
        children = draw(st.lists(_nodes(depth + 1), max_size=3))
    value = None if children or props else draw(st.none() | _TEXT)
    return AriaNode(
        role=role,
        name=name,
        key=make_key(role, name, attrs),
        pw_ref=pw_ref,
        value=value,
        props=props,
        children=children,
        attrs=attrs,
    )


@settings(max_examples=examples(100), deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(_nodes(), max_size=4))
def test_round_trip_property(nodes: list[AriaNode]) -> None:
    text = render_aria(nodes, own_refs)
    assert "\n\n" not in text
    assert as_data(parse_aria(text)) == as_data(nodes)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=list(HealthCheck))
@given(_TEXT, _TEXT)
def test_round_trip_of_any_name_and_value(name: str, value: str) -> None:
    node = AriaNode(role="textbox", name=name, key=make_key("textbox", name), value=value)
    text = render_aria([node], lambda n: "s1e1")
    assert "\n" not in text and "\r" not in text
    (back,) = parse_aria(text)
    assert (back.name, back.value, back.pw_ref, back.key) == (name, value, "s1e1", node.key)
