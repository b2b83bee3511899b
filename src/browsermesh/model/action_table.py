"""The compact action table of reference §6.5 (``browser_snapshot`` with ``format: "actions"``).

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
``<select>``. Iframe contents are never enumerated. That choice, the collapsed regions and the
main-first order live in `browsermesh.model.action_nodes` (its public names are importable from
here too); this module renders the table: element lines, key text, pages.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from browsermesh.model.action_nodes import (
    CHROME_MIN_ELEMENTS,
    REGION_MIN_ELEMENTS,
    TABLE_ROLES,
    is_candidate,
    is_row,
    listing_order,
    popup_roots,
    qualifying_nodes,
    table_candidates,
)
from browsermesh.model.aria import AriaNode
from browsermesh.model.content_text import (
    MAX_KEY_LINES,
    MAX_VALUE_LINES,
    VALUE_TEXT_MAX_CHARS,
    collapse,
    flat_text,
    is_header_row,
    key_lines,
    key_lines_of,
    row_text,
    value_units,
    with_controls,
)
from browsermesh.model.content_text import quoted as _string
from browsermesh.redact import cut_chars

__all__ = [
    "CHROME_MIN_ELEMENTS",
    "MAX_KEY_LINES",
    "MAX_OPTION_LINES",
    "MAX_TABLE_REFS",
    "REGION_MIN_ELEMENTS",
    "ElementInfo",
    "TableResult",
    "build_action_table",
    "key_lines",
    "qualifying_nodes",
    "table_candidates",
    "table_refs",
]

NAME_MAX_CHARS = 120
VALUE_MAX_CHARS = 80
TITLE_MAX_CHARS = 120
URL_MAX_CHARS = 2000
ROLE_MAX_CHARS = 64
TAG_MAX_CHARS = 32
MAX_OPTION_LINES = 25
MAX_TABLE_REFS = 500
"""At most this many element refs per capture; the response pages them ``maxRefs`` at a time."""
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

    The table is cut into pages of ``maxRefs`` element lines; the first page also holds the
    header and the key text. Every page but the last ends with ``more: N — pass nextCursor``.

    Attributes:
        text: The whole table, every page (no trailing newline).
        stops: Offsets (code points) in ``text`` where the 2nd, 3rd... page starts.
        page_refs: Element lines per page.
        refs: ``{ref, role, name?, tag}`` per element line (§5.5), every page.
        element_nodes: ``(token, node)`` per element line, in order.
        region_nodes: ``(regionToken, node)`` per collapsed region, in order.
        max_refs_nodes: Qualifying elements beyond `MAX_TABLE_REFS` (never listed).
        collapsed_nodes: Qualifying elements inside collapsed regions.
        lines: The element lines without their ref token (``role "name" · state — ops``), for
            diffs between captures.
        keys: The key-text lines (after the ``page:`` header).
    """

    text: str
    stops: list[int] = field(default_factory=list)
    page_refs: list[int] = field(default_factory=list)
    refs: list[dict[str, str]] = field(default_factory=list)
    element_nodes: list[tuple[str, AriaNode]] = field(default_factory=list)
    region_nodes: list[tuple[str, AriaNode]] = field(default_factory=list)
    max_refs_nodes: int = 0
    collapsed_nodes: int = 0
    lines: list[str] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)


def _region_kind(roles: Counter[str], total: int) -> str:
    role, count = roles.most_common(1)[0]
    if count * 2 > total:
        if role == "link":
            return "links"
        if role == "button":
            return "buttons"
    return "controls"


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


@dataclass
class _Entry:
    lines: list[str]
    element: bool
    header: str | None = None  # repeated at the top of a page this entry starts (a row's columns)


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
    keep_roots: bool = False,
    notices: Sequence[str] = (),
    ceiling: int = MAX_TABLE_REFS,
    table_rows: bool = False,
) -> TableResult:
    """Render the action table (§6.5 as changed by issues 15 and 31).

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
        max_refs: Element lines per page; later pages continue through the cursor.
        scope_in_region: The snapshot scope lies inside a collapsible region: collapse nothing.
        keep_roots: The snapshot is scoped: its top nodes never collapse.
        notices: Message texts the engine read from the DOM (flash messages, live regions).
        ceiling: At most this many element lines in all; the rest are counted.
        table_rows: ``tables: "rows"``: a table's header row becomes a ``columns:`` line and
            each data row a ``[ref] row: cell | cell`` line (with an `info` entry, like an
            element) that counts as an element line; the row's controls follow it.

    Order: open popups outside ``main`` first, then the first ``main`` landmark, then
    everything else in document order. Key text lines (alerts, notices, headings, counts,
    table sizes, empty states) follow the header; short value texts beside controls
    (``text "$12.00"``) are listed among the element lines.
    """
    ordered, regions = listing_order(list(nodes), scope_in_region, keep_roots, table_rows)
    head = [f"page: {_string(title, TITLE_MAX_CHARS)} {cut_chars(url, URL_MAX_CHARS)}"]
    result = TableResult(text="", keys=key_lines_of(ordered, regions, notices))
    head.extend(result.keys)
    key_texts = set(result.keys)
    controls = with_controls(ordered)
    units: set[int] = set()
    values = 0
    entries: list[_Entry] = []
    native_boxes: set[int] = set()
    visited: set[int] = set()
    # (node, inside a native select box, its table's columns line cell: None outside tables)
    stack: list[tuple[AriaNode, bool, list[str | None] | None]] = [
        (n, False, None) for n in reversed(ordered)
    ]
    while stack:
        node, in_native_box, table = stack.pop()
        if id(node) in visited:
            continue  # a lifted popup, met again in place
        visited.add(id(node))
        inside = regions.get(id(node))
        if inside is not None:
            token = region_token(len(result.region_nodes) + 1)
            result.region_nodes.append((token, node))
            result.collapsed_nodes += len(inside)
            kind = _region_kind(Counter(n.role for n in inside), len(inside))
            name = _string(node.name or "", NAME_MAX_CHARS)
            entries.append(
                _Entry([f"[{token}] {node.role} {name} · {len(inside)} {kind} — snapshot"], False)
            )
            # An open popup inside is listed in full after its region's line.
            stack.extend((p, False, None) for p in reversed(popup_roots(node.children)))
            continue
        if id(node) in units:
            # "0 results (" before a "42 total" link reads as the key line "0 results".
            text = collapse(flat_text(node, VALUE_TEXT_MAX_CHARS * 2)).rstrip(" (")
            line = f"text {_string(text, VALUE_TEXT_MAX_CHARS)}"
            if text and len(text) <= VALUE_TEXT_MAX_CHARS and line not in key_texts:
                entries.append(_Entry([line], False))
                values += 1
            continue
        details = info.get(node.pw_ref) if node.pw_ref is not None else None
        if (
            node.role in _SELECT_CONTAINER_ROLES
            and details is not None
            and (details.native_select or details.tag == "select")
        ):
            native_boxes.add(id(node))
        # One cell per table, shared by its rows: the header row may sit in another rowgroup.
        fresh: list[str | None] = [None]
        child_table = fresh if node.role in TABLE_ROLES else table
        if table_rows and table is not None and node.role == "row" and is_header_row(node):
            columns = f"columns: {row_text(node)}"
            table[0] = columns
            entries.append(_Entry([columns], False))
        if node.role != "iframe":
            child_native = id(node) in native_boxes or (
                in_native_box and node.role not in _SELECT_CONTAINER_ROLES
            )
            if child_table is None and values < MAX_VALUE_LINES:
                units.update(id(u) for u in value_units(node, controls))
            stack.extend((c, child_native, child_table) for c in reversed(node.children))
        if table_rows and table is not None and is_row(node) and details is not None:
            if len(result.element_nodes) >= ceiling:
                result.max_refs_nodes += 1
                continue
            token = element_token(len(result.element_nodes) + 1)
            entries.append(_Entry(_row_lines(token, node, details, result), True, table[0]))
            continue
        if not is_candidate(node) or details is None:
            continue
        if node.role == "option" and (in_native_box or details.tag == "option"):
            continue
        if len(result.element_nodes) >= ceiling:
            result.max_refs_nodes += 1
            continue
        token = element_token(len(result.element_nodes) + 1)
        entries.append(_Entry(_element_lines(token, node, details, result), True))
    _paginate(result, head, entries, max_refs)
    return result


def _paginate(result: TableResult, head: list[str], entries: list[_Entry], max_refs: int) -> None:
    """Cut the entries into pages of `max_refs` element lines; set text, stops, page_refs. A
    page that starts inside a table repeats the table's ``columns:`` line."""
    pages: list[list[str]] = [list(head)]
    counts = [0]
    for entry in entries:
        if entry.element:
            if counts[-1] >= max_refs:
                pages.append([entry.header] if entry.header else [])
                counts.append(0)
            counts[-1] += 1
        pages[-1].extend(entry.lines)
    remaining = sum(counts)
    texts: list[str] = []
    for number, (lines, count) in enumerate(zip(pages, counts, strict=True)):
        remaining -= count
        if number < len(pages) - 1:
            lines.append(f"more: {remaining} — pass nextCursor")
        elif result.max_refs_nodes:
            lines.append(f"more: {result.max_refs_nodes} not listed — scope the snapshot")
        texts.append("\n".join(lines))
    offset = 0
    for text in texts[:-1]:
        offset += len(text) + 1
        result.stops.append(offset)
    result.text = "\n".join(texts)
    result.page_refs = counts


def _row_lines(token: str, node: AriaNode, details: ElementInfo, result: TableResult) -> list[str]:
    """The ``[ref] row: cell | cell`` line of one data row; registers it in `result`."""
    result.element_nodes.append((token, node))
    result.refs.append({"ref": token, "role": "row", "tag": details.tag.lower()[:TAG_MAX_CHARS]})
    body = f"row: {row_text(node)}"
    result.lines.append(body)
    return [f"[{token}] {body}"]


def _element_lines(
    token: str, node: AriaNode, details: ElementInfo, result: TableResult
) -> list[str]:
    """The line (and option sub-lines) of one element; registers it in `result`."""
    result.element_nodes.append((token, node))
    name = node.name or ""
    entry = {"ref": token, "role": node.role[:ROLE_MAX_CHARS]}
    if name:
        entry["name"] = cut_chars(name, NAME_MAX_CHARS)
    entry["tag"] = details.tag.lower()[:TAG_MAX_CHARS]
    result.refs.append(entry)
    state = _state(node.role, details)
    body = f"{node.role} {_string(name, NAME_MAX_CHARS)}"
    if state:
        body += " · " + ", ".join(state)
    body += " — " + _operations(node.role, details)
    result.lines.append(body)
    lines = [f"[{token}] {body}"]
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
    return lines


_LINE_RE = re.compile(
    r'\[(?P<ref>s[a-z0-9]+e[0-9]+)\] (?P<role>[a-z]+) (?P<name>"(?:[^"\\]|\\.)*")'
)


def table_refs(text: str) -> list[dict[str, str]]:
    """``{ref, role, name?}`` of every element line of an action table text, in order (what a
    client reads off the lines; the demo and tests use it)."""
    out: list[dict[str, str]] = []
    for line in text.splitlines():
        match = _LINE_RE.match(line)
        if match is None:
            continue
        entry = {"ref": match["ref"], "role": match["role"]}
        name = json.loads(match["name"])
        if name:
            entry["name"] = name
        out.append(entry)
    return out
