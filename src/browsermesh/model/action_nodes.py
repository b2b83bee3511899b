"""Which nodes of an ARIA tree the action table lists, and in what order (§5.5, §6.5).

Nodes qualify for a ref when they have one of the 17 interactive roles and a Playwright ref,
outside iframes (`qualifying_nodes`). Large regions collapse into one line: site chrome outside
``main`` from `CHROME_MIN_ELEMENTS` interactive elements on, other regions (navigation, lists and
tables outside ``main``, trees) from `REGION_MIN_ELEMENTS` (`collapsed_regions`); the first
``main`` landmark is listed first (`main_first`). `table_candidates` names the nodes whose
`ElementInfo` the engine must read before `browsermesh.model.action_table.build_action_table`
renders the table; the engine also asks `qualifying_nodes` for an aria snapshot's refs.

Pure model: no Playwright, no I/O.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator

from browsermesh.model.aria import INTERACTIVE_ROLES, AriaNode

__all__ = [
    "CHROME_MIN_ELEMENTS",
    "REGION_MIN_ELEMENTS",
    "collapsed_regions",
    "is_candidate",
    "main_first",
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


def _threshold(node: AriaNode, in_main: bool) -> int | None:
    """How many interactive elements collapse `node`; None when it never collapses."""
    if node.role in _CHROME_ROLES and not in_main:
        return CHROME_MIN_ELEMENTS
    if node.role in _REGION_ROLES or (node.role in _OUTSIDE_MAIN_REGION_ROLES and not in_main):
        return REGION_MIN_ELEMENTS
    return None


def collapsed_regions(
    nodes: Iterable[AriaNode], scope_in_region: bool, keep_roots: bool = False
) -> dict[int, list[AriaNode]]:
    """id(region) -> its candidate elements, for the outermost regions that collapse.

    With `keep_roots` (a scoped snapshot) the scope's own top nodes never collapse: the client
    asked for them.
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
        threshold = None if is_kept else _threshold(node, in_main)
        if threshold is not None:
            inside = qualifying_nodes(node.children)
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
    nodes: Iterable[AriaNode], *, scope_in_region: bool, keep_roots: bool = False
) -> list[AriaNode]:
    """The nodes whose `ElementInfo` `build_action_table` needs (outside collapsed regions)."""
    node_list = list(nodes)
    regions = collapsed_regions(node_list, scope_in_region, keep_roots)
    out: list[AriaNode] = []
    stack = list(reversed(node_list))
    while stack:
        node = stack.pop()
        if id(node) in regions:
            continue
        if is_candidate(node):
            out.append(node)
        if node.role != "iframe":
            stack.extend(reversed(node.children))
    return out
