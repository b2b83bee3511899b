"""The compact action table of contract §6.5 (``browser_snapshot`` with ``format: "actions"``).

Built from a parsed Playwright AI-mode ARIA tree (`browsermesh.model.aria`) plus what the engine
reads from the DOM for each candidate element (`ElementInfo`, keyed by Playwright ref).

Intended engine flow::

    nodes = parse_aria(yaml_text)
    strip_iframe_children(nodes)
    wanted = table_candidates(nodes, scope_in_region=...)   # read ElementInfo for these
    result = build_action_table(nodes, title=..., url=..., info=infos, ...)
    # register result.element_nodes / result.region_nodes under their tokens

Which nodes qualify (§5.5): nodes with one of the 17 interactive roles, in document order, that
carry a Playwright ref (Playwright gives AI-mode refs exactly to the elements it can address;
a node without one cannot get an element handle), excluding ``option`` nodes of a native
``<select>``. Iframe contents are never enumerated.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Literal

from browsermesh.model.aria import INTERACTIVE_ROLES, AriaNode, json_literal
from browsermesh.redact import cut_chars

__all__ = [
    "MAX_OPTION_LINES",
    "REGION_MIN_ELEMENTS",
    "ElementInfo",
    "TableResult",
    "build_action_table",
    "qualifying_nodes",
    "table_candidates",
]

NAME_MAX_CHARS = 120
VALUE_MAX_CHARS = 80
TITLE_MAX_CHARS = 120
URL_MAX_CHARS = 2000
ROLE_MAX_CHARS = 64
TAG_MAX_CHARS = 32
MAX_OPTION_LINES = 25
REGION_MIN_ELEMENTS = 16
"""A region is collapsed when it holds more than 15 interactive elements."""

_REGION_ROLES = frozenset({"navigation", "complementary", "contentinfo", "tree"})
_OUTSIDE_MAIN_REGION_ROLES = frozenset({"list", "table"})
_SELECT_CONTAINER_ROLES = frozenset({"combobox", "listbox"})
_VALUE_ROLES = frozenset({"textbox", "searchbox", "spinbutton"})
_CLICK_ROLES = frozenset({"button", "link", "tab", "menuitem", "treeitem", "gridcell", "option"})
_CHECK_UNCHECK_ROLES = frozenset({"checkbox", "switch", "menuitemcheckbox"})
_CHECK_ROLES = frozenset({"radio", "menuitemradio"})


@dataclass(frozen=True)
class ElementInfo:
    """What the engine reads from the DOM for one Playwright-ref'd node.

    Attributes:
        tag: The lower-case tag name (``a``, ``input``, ``select``, ``option``...). An ``option``
            tag marks an option of a native ``<select>``.
        native_select: The element is a native ``<select>``.
        editable_combobox: A combobox the user types into (``<input role=combobox>``, an input
            with a ``list``).
        value: The current value of a textbox/searchbox/spinbutton/editable combobox.
        password: An ``input[type=password]`` (its value is never shown).
        selected_label: The selected option's label of a native select.
        options: A native select's options as ``(label, selected, disabled)``.
        checked: The checked state, for checkable elements.
        expanded: ``aria-expanded`` state (None when the element has none).
        pressed: ``aria-pressed="true"``.
        disabled: The element is disabled.
        readonly: The element is read-only.
    """

    tag: str
    native_select: bool = False
    editable_combobox: bool = False
    value: str | None = None
    password: bool = False
    selected_label: str | None = None
    options: tuple[tuple[str, bool, bool], ...] = ()
    checked: Literal["checked", "unchecked", "mixed"] | None = None
    expanded: bool | None = None
    pressed: bool = False
    disabled: bool = False
    readonly: bool = False


@dataclass
class TableResult:
    """A rendered action table and what the engine must register.

    Attributes:
        text: The table (no trailing newline).
        refs: ``{ref, role, name?, tag}`` per element line (§5.5).
        element_nodes: ``(token, node)`` per element line, in order.
        region_nodes: ``(regionToken, node)`` per collapsed region, in order.
        max_refs_nodes: Qualifying elements left out by ``maxRefs`` (``more: N``).
        collapsed_nodes: Qualifying elements inside collapsed regions.
    """

    text: str
    refs: list[dict[str, str]] = field(default_factory=list)
    element_nodes: list[tuple[str, AriaNode]] = field(default_factory=list)
    region_nodes: list[tuple[str, AriaNode]] = field(default_factory=list)
    max_refs_nodes: int = 0
    collapsed_nodes: int = 0


def _walk(nodes: Iterable[AriaNode]) -> Iterator[AriaNode]:
    """Document order (depth-first, pre-order), not descending into iframes."""
    stack = list(reversed(list(nodes)))
    while stack:
        node = stack.pop()
        yield node
        if node.role != "iframe":
            stack.extend(reversed(node.children))


def _is_candidate(node: AriaNode) -> bool:
    return node.role in INTERACTIVE_ROLES and node.pw_ref is not None


def qualifying_nodes(
    nodes: Iterable[AriaNode],
    *,
    in_native_select: Callable[[AriaNode], bool] | None = None,
) -> list[AriaNode]:
    """Nodes that get refs (§5.5), in document order, before the ``maxRefs`` cut.

    Interactive-role nodes with a Playwright ref, not inside an iframe. ``in_native_select`` is
    asked about each ``option`` node (with a ref) and returns True when the option belongs to
    a native ``<select>``; such options are skipped. (Options of a single-choice native select
    carry no Playwright ref at all; those of ``<select multiple>`` do.)
    """
    out: list[AriaNode] = []
    for node in _walk(nodes):
        if not _is_candidate(node):
            continue
        if node.role == "option" and in_native_select is not None and in_native_select(node):
            continue
        out.append(node)
    return out


def _region_kind(roles: Counter[str], total: int) -> str:
    role, count = roles.most_common(1)[0]
    if count * 2 > total:
        if role == "link":
            return "links"
        if role == "button":
            return "buttons"
    return "controls"


def _collapsible(node: AriaNode, in_main: bool) -> bool:
    return node.role in _REGION_ROLES or (node.role in _OUTSIDE_MAIN_REGION_ROLES and not in_main)


def _collapsed_regions(
    nodes: Iterable[AriaNode], scope_in_region: bool
) -> dict[int, list[AriaNode]]:
    """id(region) -> its candidate elements, for the outermost regions that collapse."""
    regions: dict[int, list[AriaNode]] = {}
    if scope_in_region:
        return regions
    stack: list[tuple[AriaNode, bool]] = [(n, False) for n in reversed(list(nodes))]
    while stack:
        node, in_main = stack.pop()
        if node.role == "iframe":
            continue
        if _collapsible(node, in_main):
            inside = qualifying_nodes(node.children)
            if len(inside) >= REGION_MIN_ELEMENTS:
                regions[id(node)] = inside
                continue
        child_main = in_main or node.role == "main"
        stack.extend((c, child_main) for c in reversed(node.children))
    return regions


def table_candidates(nodes: Iterable[AriaNode], *, scope_in_region: bool) -> list[AriaNode]:
    """The nodes whose `ElementInfo` `build_action_table` needs (outside collapsed regions)."""
    node_list = list(nodes)
    regions = _collapsed_regions(node_list, scope_in_region)
    out: list[AriaNode] = []
    stack = list(reversed(node_list))
    while stack:
        node = stack.pop()
        if id(node) in regions:
            continue
        if _is_candidate(node):
            out.append(node)
        if node.role != "iframe":
            stack.extend(reversed(node.children))
    return out


def _string(text: str, limit: int) -> str:
    return json_literal(cut_chars(text, limit))


def _options(node: AriaNode, info: ElementInfo) -> list[tuple[str, bool, bool]]:
    if info.options:
        return list(info.options)
    return [
        (child.name or "", "selected" in child.attrs, "disabled" in child.attrs)
        for child in node.children
        if child.role == "option"
    ]


def _operations(role: str, info: ElementInfo) -> str:
    if info.disabled:
        return "none"
    if role in _CLICK_ROLES:
        return "click"
    if role in _CHECK_UNCHECK_ROLES:
        return "check, uncheck"
    if role in _CHECK_ROLES:
        return "check"
    if role in _VALUE_ROLES:
        return "fill, press"
    if role == "combobox":
        return "select_option" if info.native_select else "fill, press, click"
    if role == "slider":
        return "press"
    return "click"  # unreachable for the 17 roles; a safe default


def _state(role: str, info: ElementInfo) -> list[str]:
    tokens: list[str] = []
    takes_value = role in _VALUE_ROLES or (role == "combobox" and info.editable_combobox)
    if takes_value and info.value:
        if info.password:
            tokens.append("value [REDACTED]")
        else:
            tokens.append("value " + _string(info.value, VALUE_MAX_CHARS))
    if info.native_select and info.selected_label is not None:
        tokens.append("selected " + _string(info.selected_label, NAME_MAX_CHARS))
    if info.checked is not None:
        tokens.append(info.checked)
    if info.expanded is not None:
        tokens.append("expanded" if info.expanded else "collapsed")
    if info.pressed:
        tokens.append("pressed")
    if info.disabled:
        tokens.append("disabled")
    if info.readonly:
        tokens.append("readonly")
    return tokens


def build_action_table(
    nodes: Iterable[AriaNode],
    *,
    title: str,
    url: str,
    info: Mapping[str, ElementInfo],
    element_token: Callable[[int], str],
    region_token: Callable[[int], str],
    max_refs: int,
    scope_in_region: bool,
) -> TableResult:
    """Render the §6.5 action table.

    Args:
        nodes: The parsed AI-mode tree of the scope (iframe contents are ignored).
        title: The page title (cut to 120 code points, JSON-quoted).
        url: The page URL as ``browser_get_url`` returns it (cut to 2,000 code points).
        info: `ElementInfo` per Playwright ref. A candidate without an entry (the engine could
            not read it, e.g. it detached) is left out entirely; an ``option`` whose info has
            tag ``option`` (or that sits in a native select) is a native-select option and is
            never a line of its own.
        element_token: ``i -> token`` for the i-th element line (1-based).
        region_token: ``i -> token`` for the i-th collapsed region (1-based).
        max_refs: At most this many element lines; the rest are counted in ``more: N``.
        scope_in_region: The snapshot scope lies inside a collapsible region: collapse nothing.
    """
    node_list = list(nodes)
    regions = _collapsed_regions(node_list, scope_in_region)
    lines = [f"page: {_string(title, TITLE_MAX_CHARS)} {cut_chars(url, URL_MAX_CHARS)}"]
    result = TableResult(text="")
    native_boxes: set[int] = set()
    stack: list[tuple[AriaNode, bool]] = [(n, False) for n in reversed(node_list)]
    while stack:
        node, in_native_box = stack.pop()
        inside = regions.get(id(node))
        if inside is not None:
            token = region_token(len(result.region_nodes) + 1)
            result.region_nodes.append((token, node))
            result.collapsed_nodes += len(inside)
            kind = _region_kind(Counter(n.role for n in inside), len(inside))
            name = _string(node.name or "", NAME_MAX_CHARS)
            lines.append(f"[{token}] {node.role} {name} · {len(inside)} {kind} — snapshot")
            continue
        details = info.get(node.pw_ref) if node.pw_ref is not None else None
        if (
            node.role in _SELECT_CONTAINER_ROLES
            and details is not None
            and (details.native_select or details.tag == "select")
        ):
            native_boxes.add(id(node))
        if node.role != "iframe":
            child_native = id(node) in native_boxes or (
                in_native_box and node.role not in _SELECT_CONTAINER_ROLES
            )
            stack.extend((c, child_native) for c in reversed(node.children))
        if not _is_candidate(node) or details is None:
            continue
        if node.role == "option" and (in_native_box or details.tag == "option"):
            continue
        if len(result.element_nodes) >= max_refs:
            result.max_refs_nodes += 1
            continue
        token = element_token(len(result.element_nodes) + 1)
        result.element_nodes.append((token, node))
        name = node.name or ""
        entry = {"ref": token, "role": node.role[:ROLE_MAX_CHARS]}
        if name:
            entry["name"] = cut_chars(name, NAME_MAX_CHARS)
        entry["tag"] = details.tag.lower()[:TAG_MAX_CHARS]
        result.refs.append(entry)
        state = _state(node.role, details)
        line = f"[{token}] {node.role} {_string(name, NAME_MAX_CHARS)}"
        if state:
            line += " · " + ", ".join(state)
        lines.append(line + " — " + _operations(node.role, details))
        if node.role == "combobox" and details.native_select:
            options = _options(node, details)
            for label, selected, disabled in options[:MAX_OPTION_LINES]:
                option_line = "    option " + _string(label, NAME_MAX_CHARS)
                if selected:
                    option_line += " · selected"
                if disabled:
                    option_line += " · disabled"
                lines.append(option_line)
            if len(options) > MAX_OPTION_LINES:
                lines.append(f"    more options: {len(options) - MAX_OPTION_LINES}")
    if result.max_refs_nodes:
        lines.append(f"more: {result.max_refs_nodes}")
    result.text = "\n".join(lines)
    return result
