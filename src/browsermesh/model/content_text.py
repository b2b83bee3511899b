"""The page text an action table shows besides its controls (issue 31 items 3 and 10).

- key text lines (`key_lines`, the header of an unscoped table and of a navigation result):
  alerts and notices, headings of every level with the first paragraph under each, counts
  ("42 results"), table sizes, empty-state messages ("No products found");
- value texts beside a control (`value_units`: the "$12.00" between a product's link and its
  "Add to cart"), listed among the element lines;
- a table row as one line of cells (`row_text`: ``Teapot | 12.50``) for ``tables: "rows"``.

Every text is whitespace-collapsed and bounded. Pure model: no Playwright, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from browsermesh.model.action_nodes import TABLE_ROLES, is_candidate, is_row, listing_order, walk
from browsermesh.model.aria import INTERACTIVE_ROLES, AriaNode, json_literal
from browsermesh.redact import cut_chars

__all__ = [
    "CELL_MAX_CHARS",
    "MAX_HEADING_LINES",
    "MAX_KEY_LINES",
    "MAX_VALUE_LINES",
    "ROW_MAX_CHARS",
    "VALUE_TEXT_MAX_CHARS",
    "collapse",
    "flat_text",
    "is_header_row",
    "key_lines",
    "key_lines_of",
    "quoted",
    "row_text",
    "tab_rows",
    "value_units",
    "with_controls",
]

MAX_KEY_LINES = 14
MAX_HEADING_LINES = 6
"""Headings below ``h1`` in the key text (every ``h1`` is kept, within `MAX_KEY_LINES`)."""
KEY_TEXT_MAX_CHARS = 120
PARAGRAPH_MAX_CHARS = 100
SUMMARY_MAX_CHARS = 60
MAX_VALUE_LINES = 20
"""Value texts next to controls (a price beside its "Add to cart") listed per table."""
VALUE_TEXT_MAX_CHARS = 60
CELL_MAX_CHARS = 80
ROW_MAX_CHARS = 300

_LIVE_ROLES = frozenset({"alert", "status", "log"})
TEXT_ROLES = frozenset({"text", "paragraph", "generic", "strong", "emphasis", "caption"})
# "4 results", "0 of 50 selected", "1 result (3 total)": a number, then a few words.
_SUMMARY_RE = re.compile(r"\(?\d[\d,.]*\)?\s+(?:of\s+\d[\d,.]*\s+)?[^\W\d_][^\n]*")
# "No products found", "Nothing to show", "Your cart is empty", "There are no items yet".
_EMPTY_RE = re.compile(
    r"(?:no|nothing|none|sorry|there (?:are|is) no)\b"
    r"|.{0,60}\b(?:not found|no (?:\w+ ){0,3}(?:found|results?|matches|available|yet)|is empty)\b",
    re.IGNORECASE,
)
_VALUE_ROLES_TEXT = TEXT_ROLES | {"time"}
_DIGIT_RE = re.compile(r"\d")
# Roles whose name is their visible content (a link's text), read into a row's cell text; a
# form control's name is its label, not what the cell shows.
_CONTENT_NAME_ROLES = frozenset(
    {"link", "button", "img", "heading", "cell", "gridcell", "columnheader", "rowheader"}
)
_HEADER_CELLS = frozenset({"columnheader"})
_NO_CELLTEXT_ROLES = frozenset(INTERACTIVE_ROLES)
_LIVE_ROLES = frozenset({"alert", "status", "log"})
TEXT_ROLES = frozenset({"text", "paragraph", "generic", "strong", "emphasis", "caption"})
# "4 results", "0 of 50 selected", "1 result (3 total)": a number, then a few words.
_SUMMARY_RE = re.compile(r"\(?\d[\d,.]*\)?\s+(?:of\s+\d[\d,.]*\s+)?[^\W\d_][^\n]*")


def quoted(text: str, limit: int) -> str:
    """`text` cut to `limit` code points, as a JSON string literal."""
    return json_literal(cut_chars(text, limit))


def flat_text(node: AriaNode, limit: int = KEY_TEXT_MAX_CHARS * 2) -> str:
    """The node's name, value and descendant texts, space-joined and whitespace-collapsed."""
    parts: list[str] = []
    size = 0
    for each in walk([node]):
        for piece in (each.name if each is node or each.role in TEXT_ROLES else None, each.value):
            if piece:
                parts.append(piece)
                size += len(piece) + 1
        if size > limit:
            break
    return " ".join(" ".join(parts).split())


def _rows(table: AriaNode) -> int:
    """Data rows of a table: rows holding a cell (header rows hold only column headers)."""
    return sum(1 for node in walk(table.children) if is_row(node))


def _level(node: AriaNode) -> int:
    for attr in node.attrs:
        if attr.startswith("level=") and attr[6:].isdigit():
            return min(max(int(attr[6:]), 1), 6)
    return 2  # a heading without a level reads as a section heading


def _is_empty_state(text: str) -> bool:
    """ "No products found": a short message that a list or a search came back empty."""
    return len(text) <= KEY_TEXT_MAX_CHARS and _EMPTY_RE.match(text) is not None


def _prose(node: AriaNode) -> bool:
    """A paragraph of text, not a form row (no control inside)."""
    return not any(is_candidate(n) for n in walk([node]))


@dataclass
class _Heading:
    level: int
    line: str
    paragraph: str | None = None


def key_lines_of(
    ordered: list[AriaNode], skip: Mapping[int, object], notices: Sequence[str]
) -> list[str]:
    """Bounded key text (issue 31 item 10): alerts and notices, ``h1`` headings, result
    summaries and table sizes, empty-state messages, then the other headings of every level,
    each heading followed by the first paragraph under it."""
    live: list[str] = []
    headings: list[_Heading] = []
    summaries: list[str] = []
    empties: list[str] = []
    open_heading: _Heading | None = None
    seen_nodes: set[int] = set()
    stack = list(reversed(ordered))
    while stack:
        node = stack.pop()
        if id(node) in skip or id(node) in seen_nodes or node.role == "iframe":
            continue
        seen_nodes.add(id(node))  # a lifted popup is met again in place
        if node.role in _LIVE_ROLES:
            text = flat_text(node)
            if text:
                live.append(f"{node.role} {quoted(text, KEY_TEXT_MAX_CHARS)}")
            continue
        if node.role == "heading":
            text = node.name or flat_text(node)
            if text:
                level = _level(node)
                open_heading = _Heading(level, f"h{level} {quoted(text, KEY_TEXT_MAX_CHARS)}")
                headings.append(open_heading)
            continue
        if node.role in TABLE_ROLES:
            rows = _rows(node)
            if rows:
                name = f" {quoted(node.name, KEY_TEXT_MAX_CHARS)}" if node.name else ""
                summaries.append(f"{node.role}{name} · {rows} row{'s' if rows != 1 else ''}")
        elif node.role in TEXT_ROLES:
            flat = node.value or (flat_text(node) if node.role == "paragraph" else "")
            # "4 results (" before a "43 total" link: the dangling bracket is not the count's.
            text = " ".join(flat.split()).rstrip(" (")
            if node.value and len(text) <= SUMMARY_MAX_CHARS and _SUMMARY_RE.fullmatch(text):
                summaries.append(f"text {quoted(text, SUMMARY_MAX_CHARS)}")
            elif text and _is_empty_state(text):
                empties.append(f"text {quoted(text, KEY_TEXT_MAX_CHARS)}")
            elif text and node.role == "paragraph" and open_heading is not None and _prose(node):
                if open_heading.paragraph is None:
                    open_heading.paragraph = f"p {quoted(text, PARAGRAPH_MAX_CHARS)}"
                open_heading = None
                continue  # its words are the paragraph's
        stack.extend(reversed(node.children))
    seen = {line.split(" ", 1)[1] for line in live}
    notes = [
        f"notice {quoted}"
        for quoted in (
            quoted(" ".join(n.split()), KEY_TEXT_MAX_CHARS) for n in notices if n.strip()
        )
        if quoted not in seen
    ]

    def lines(chosen: list[_Heading]) -> list[str]:
        return [line for h in chosen for line in (h.line, h.paragraph) if line is not None]

    top = lines([h for h in headings if h.level == 1])
    rest = lines([h for h in headings if h.level > 1][:MAX_HEADING_LINES])
    # dict.fromkeys: the first occurrence of each line, in this order.
    every = [*live, *notes, *top, *summaries, *empties, *rest]
    return list(dict.fromkeys(every))[:MAX_KEY_LINES]


def key_lines(nodes: Iterable[AriaNode], notices: Sequence[str] = ()) -> list[str]:
    """The key text lines of an unscoped action table's header, for a page's whole tree
    (navigation results show them: issue 31 item 2)."""
    ordered, regions = listing_order(list(nodes), False, False)
    return key_lines_of(ordered, regions, notices)


def collapse(text: str) -> str:
    return " ".join(text.split())


def _cell_text(cell: AriaNode) -> str:
    """What a cell shows: its name, else its texts and the names of its links, buttons and
    images, space-joined (a checkbox's label is no cell text)."""
    if cell.name and not cell.children:
        return cut_chars(collapse(cell.name), CELL_MAX_CHARS)
    # With children the name is computed from them, a checkbox's label included: read them.
    parts: list[str] = [cell.value] if cell.value else []
    stack = list(reversed(cell.children))
    while stack and sum(len(p) for p in parts) <= CELL_MAX_CHARS:
        node = stack.pop()
        if node.role in _CONTENT_NAME_ROLES and node.name:
            parts.append(node.name)
            continue
        if node.value and (node.role in TEXT_ROLES or node.role not in _NO_CELLTEXT_ROLES):
            parts.append(node.value)
        if node.role != "iframe":
            stack.extend(reversed(node.children))
    return cut_chars(collapse(" ".join(parts)), CELL_MAX_CHARS)


def row_text(row: AriaNode) -> str:
    """A row's cells joined with `` | `` (an empty cell stays, so columns line up)."""
    return cut_chars(" | ".join(_cell_text(c) for c in row.children).strip(), ROW_MAX_CHARS)


def value_units(node: AriaNode, controls: set[int]) -> list[AriaNode]:
    """Children of `node` that are short value texts beside a control ("$12.00" between a
    product link and its "Add to cart"): no control inside, a digit, a direct neighbour that
    holds a control."""
    kids = node.children
    out: list[AriaNode] = []
    for index, kid in enumerate(kids):
        if id(kid) in controls or kid.role not in _VALUE_ROLES_TEXT:
            continue
        beside = (index > 0 and id(kids[index - 1]) in controls) or (
            index + 1 < len(kids) and id(kids[index + 1]) in controls
        )
        if beside and _DIGIT_RE.search(flat_text(kid, VALUE_TEXT_MAX_CHARS * 2)):
            out.append(kid)
    return out


def is_header_row(node: AriaNode) -> bool:
    """A row of column headers only (its cells become a table's ``columns:`` line)."""
    return bool(node.children) and all(c.role in _HEADER_CELLS for c in node.children)


def with_controls(nodes: list[AriaNode]) -> set[int]:
    """ids of the nodes whose subtree holds a candidate control."""
    order = list(walk(nodes))
    parent: dict[int, AriaNode] = {}
    for node in order:
        for child in node.children:
            parent[id(child)] = node
    out: set[int] = set()
    for node in order:
        if not is_candidate(node):
            continue
        up: AriaNode | None = node
        while up is not None and id(up) not in out:
            out.add(id(up))
            up = parent.get(id(up))
    return out


def tab_rows(text: str) -> str:
    """innerText with each table row's cells joined by `` | `` (innerText separates the cells
    of a row with tabs and ends the row with a newline)."""
    return "\n".join(
        " | ".join(cell.strip() for cell in line.split("\t")) if "\t" in line else line
        for line in text.split("\n")
    )
