"""Which nodes of an ARIA tree the action table lists, and in what order (§5.5, §6.5).

Nodes qualify for a ref when they have one of the 17 interactive roles and a Playwright ref,
outside iframes (`qualifying_nodes`). Large regions collapse into one line: site chrome outside
``main`` from `CHROME_MIN_ELEMENTS` interactive elements on, other regions (navigation, lists and
tables outside ``main``, trees) from `REGION_MIN_ELEMENTS` (`collapsed_regions`); the first
``main`` landmark is listed first (`main_first`). An open popup (`POPUP_ROLES`: a dialog,
listbox or menu) never collapses with its region: those outside ``main`` are listed before
everything (`lifted_popups`), the others in place (issue 31 item 10). With table rows asked for
(issue 31 item 3), tables never collapse and their rows are listed. `table_candidates` names
the nodes whose `ElementInfo` the engine must read before
`browsermesh.model.action_table.build_action_table` renders the table; the engine also asks
`qualifying_nodes` for an aria snapshot's refs.

Pure model: no Playwright, no I/O.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator

from browsermesh.model.aria import INTERACTIVE_ROLES, AriaNode

__all__ = [
    "CHROME_MIN_ELEMENTS",
    "POPUP_ROLES",
    "REGION_MIN_ELEMENTS",
    "TABLE_ROLES",
    "collapsed_regions",
    "is_candidate",
    "is_row",
    "lifted_popups",
    "listing_order",
    "main_first",
    "popup_roots",
    "qualifying_nodes",
    "table_candidates",
    "walk",
]


REGION_MIN_ELEMENTS = 16
"""A region is collapsed when it holds more than 15 interactive elements."""
CHROME_MIN_ELEMENTS = 4
"""Site chrome outside ``main`` (banner, navigation, contentinfo, complementary) is collapsed
from this many interactive elements on (issue 15): it repeats on every page of a site."""

_REGION_ROLES = frozenset({"navigation", "complementary", "contentinfo", "tree"})
_CHROME_ROLES = frozenset({"banner", "navigation", "contentinfo", "complementary"})
_OUTSIDE_MAIN_REGION_ROLES = frozenset({"list", "table"})
POPUP_ROLES = frozenset({"dialog", "alertdialog", "listbox", "menu"})
"""What a person opens: the ARIA tree holds them only while shown (see `popup_roots`)."""
TABLE_ROLES = frozenset({"table", "grid", "treegrid"})


def walk(nodes: Iterable[AriaNode]) -> Iterator[AriaNode]:
    """Document order (depth-first, pre-order), not descending into iframes."""
    stack = list(reversed(list(nodes)))
    while stack:
        node = stack.pop()
        yield node
        if node.role != "iframe":
            stack.extend(reversed(node.children))


def is_candidate(node: AriaNode) -> bool:
    """An interactive-role node with a Playwright ref (one that can get an element handle)."""
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
    for node in walk(nodes):
        if not is_candidate(node):
            continue
        if node.role == "option" and in_native_select is not None and in_native_select(node):
            continue
        out.append(node)
    return out


def _threshold(node: AriaNode, in_main: bool, table_rows: bool) -> int | None:
    """How many interactive elements collapse `node`; None when it never collapses."""
    if node.role in _CHROME_ROLES and not in_main:
        return CHROME_MIN_ELEMENTS
    if table_rows and node.role in TABLE_ROLES:
        return None  # the client asked for the rows
    if node.role in _REGION_ROLES or (node.role in _OUTSIDE_MAIN_REGION_ROLES and not in_main):
        return REGION_MIN_ELEMENTS
    return None


def _opener(nodes: list[AriaNode], index: int) -> bool:
    """The node before ``nodes[index]`` is an ``[expanded]`` control (what opened it)."""
    return index > 0 and "expanded" in nodes[index - 1].attrs


def popup_roots(nodes: Iterable[AriaNode]) -> list[AriaNode]:
    """The outermost open popups in `nodes` and below, in document order (not in iframes).

    A dialog is a popup wherever it is; a listbox or menu only right after the control that
    opened it (an ``[expanded]`` node just before it or before its parent, or its parent): a
    site's permanent menu stays site chrome and may collapse."""
    top = list(nodes)
    out: list[AriaNode] = []
    # (node, opened by the node before its parent, or by its parent)
    stack: list[tuple[AriaNode, bool]] = [(n, False) for n in reversed(top)]
    starts = {id(n): (top, i) for i, n in enumerate(top)}
    while stack:
        node, near_opener = stack.pop()
        siblings, index = starts.pop(id(node), ([], 0))
        by_opener = near_opener or _opener(siblings, index)
        if node.role in ("dialog", "alertdialog") or (node.role in POPUP_ROLES and by_opener):
            out.append(node)
            continue
        if node.role == "iframe":
            continue
        kids = node.children
        for i, kid in enumerate(kids):
            starts[id(kid)] = (kids, i)
        opened_here = _opener(siblings, index) or "expanded" in node.attrs  # one level down
        stack.extend((kid, opened_here) for kid in reversed(kids))
    return out


def lifted_popups(ordered: list[AriaNode]) -> list[AriaNode]:
    """The outermost open popups outside ``main`` of a `main_first` forest: an overlay the user
    just opened is listed first, before a large ``main`` pushes it to a later page."""
    return popup_roots(n for n in ordered if n.role != "main")


def listing_order(
    nodes: list[AriaNode],
    scope_in_region: bool,
    keep_roots: bool,
    table_rows: bool = False,
) -> tuple[list[AriaNode], dict[int, list[AriaNode]]]:
    """(the top nodes in listing order, the collapsed regions): lifted popups, then ``main``,
    then the rest (a lifted popup met again in place is skipped by the walkers)."""
    ordered = main_first(nodes)
    regions = collapsed_regions(ordered, scope_in_region, keep_roots, table_rows)
    return [*lifted_popups(ordered), *ordered], regions


def is_row(node: AriaNode) -> bool:
    """A table row that holds a data cell (header rows hold only column headers)."""
    return node.role == "row" and any(c.role in ("cell", "gridcell") for c in node.children)


def _outside_popups(nodes: Iterable[AriaNode]) -> list[AriaNode]:
    """`qualifying_nodes` of `nodes`, leaving out open popups (they never collapse)."""
    top = list(nodes)
    popups = {id(p) for p in popup_roots(top)}
    out: list[AriaNode] = []
    stack = list(reversed(top))
    while stack:
        node = stack.pop()
        if id(node) in popups or node.role == "iframe":
            continue
        if is_candidate(node):
            out.append(node)
        stack.extend(reversed(node.children))
    return out


def collapsed_regions(
    nodes: Iterable[AriaNode],
    scope_in_region: bool,
    keep_roots: bool = False,
    table_rows: bool = False,
) -> dict[int, list[AriaNode]]:
    """id(region) -> its candidate elements, for the outermost regions that collapse.

    With `keep_roots` (a scoped snapshot) the scope's own top nodes never collapse: the client
    asked for them. Open popups inside a region are neither counted nor collapsed with it;
    with `table_rows` tables never collapse.
    """
    regions: dict[int, list[AriaNode]] = {}
    if scope_in_region:
        return regions
    stack: list[tuple[AriaNode, bool, bool]] = [
        (n, False, keep_roots) for n in reversed(list(nodes))
    ]
    while stack:
        node, in_main, is_kept = stack.pop()
        if node.role == "iframe":
            continue
        threshold = None if is_kept else _threshold(node, in_main, table_rows)
        if threshold is not None:
            inside = _outside_popups(node.children)
            if len(inside) >= threshold:
                regions[id(node)] = inside
                continue
        child_main = in_main or node.role == "main"
        stack.extend((c, child_main, False) for c in reversed(node.children))
    return regions


def _main_path(nodes: list[AriaNode]) -> list[AriaNode]:
    """The nodes from a top node down to the first ``main`` landmark in document order (outside
    iframes), or [] when there is none. Iterative: real DOMs nest deeper than Python recurses."""
    stack: list[tuple[AriaNode, int]] = [(n, 0) for n in reversed(nodes)]
    path: list[AriaNode] = []
    while stack:
        node, depth = stack.pop()
        del path[depth:]
        path.append(node)
        if node.role == "main":
            return path
        if node.role != "iframe":
            stack.extend((c, depth + 1) for c in reversed(node.children))
    return []


def main_first(nodes: list[AriaNode]) -> list[AriaNode]:
    """The scope's top nodes with the first ``main`` landmark lifted out in front.

    The returned list is a new forest: the ``main`` node first, then the original top nodes
    with ``main`` removed from its parent (shallow copies of its ancestors only, so the parsed
    tree stays intact).
    """
    path = _main_path(nodes)
    if not path:
        return nodes
    main = path[-1]
    if len(path) == 1:
        return [main, *(n for n in nodes if n is not main)]
    below: AriaNode = path[-2]
    copy = dataclasses.replace(below, children=[c for c in below.children if c is not main])
    for ancestor in reversed(path[:-2]):
        original = below
        below = ancestor
        copy = dataclasses.replace(
            ancestor, children=[copy if c is original else c for c in ancestor.children]
        )
    top = path[0]
    return [main, *(copy if n is top else n for n in nodes)]


def table_candidates(
    nodes: Iterable[AriaNode],
    *,
    scope_in_region: bool,
    keep_roots: bool = False,
    table_rows: bool = False,
) -> list[AriaNode]:
    """The nodes whose `ElementInfo` `build_action_table` needs (outside collapsed regions,
    open popups included; the data rows of tables too with `table_rows`)."""
    ordered, regions = listing_order(list(nodes), scope_in_region, keep_roots, table_rows)
    out: list[AriaNode] = []
    seen: set[int] = set()
    stack = list(reversed(ordered))
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if id(node) in regions:
            stack.extend(reversed(popup_roots(node.children)))
            continue
        if is_candidate(node) or (table_rows and node.pw_ref is not None and is_row(node)):
            out.append(node)
        if node.role != "iframe":
            stack.extend(reversed(node.children))
    return out
