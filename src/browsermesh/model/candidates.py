"""Which elements of an ARIA tree a client probably meant, for ELEMENT_NOT_FOUND and
LOCATOR_AMBIGUOUS details (issue 13). Pure: the engine captures the tree and registers refs.

A candidate is a named node of the captured tree, with where it is and a ready-to-use locator:
`role` + exact `name` when that pair is unique in the tree, else the same scoped `within` the
nearest named container when that is unique, else none (the ref still works).

Where it is (issue 31 item 5), so that two candidates a client reads can be told apart: its row
(the row's name, else its cells' text), else the last heading above it inside its nearest named
container, else that container; a link's `path` (its sanitized href); and `nth`, its position
among the locator's matches, set by `distinguish` only where nothing else differs.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, assert_never

from browsermesh.model.aria import AriaNode
from browsermesh.model.content_text import row_text
from browsermesh.model.limits import MAX_CANDIDATES
from browsermesh.model.locators import LABELLED_ROLES, Selector, normalize_name
from browsermesh.model.strategies import entry
from browsermesh.redact import sanitize_url

PATH_MAX_CHARS = 256
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_PATH_BASE = "http://candidate.invalid"

# The roles a label, a placeholder or a form text names.
FORM_ROLES = frozenset(LABELLED_ROLES)
# Roles whose name tells a person where an element is.
CONTAINER_ROLES = frozenset(
    {
        "form",
        "dialog",
        "alertdialog",
        "region",
        "navigation",
        "group",
        "row",
        "listitem",
        "article",
        "table",
        "list",
        "tabpanel",
        "menu",
        "toolbar",
        "banner",
        "main",
        "complementary",
        "contentinfo",
        "search",
        "radiogroup",
        "treeitem",
    }
)
_UNNAMED = frozenset({"text", "generic", "none", "presentation", "paragraph", ""})
_MIN_SIMILARITY = 0.5


@dataclass(frozen=True, slots=True)
class Candidate:
    """One candidate node and where it is (`place`: ``{role, name}`` of its row, heading or
    container)."""

    node: AriaNode
    container: AriaNode | None
    locator: dict[str, Any] | None
    place: dict[str, str] | None = None

    def detail(self, ref: str | None) -> dict[str, Any]:
        """The `details.candidates[]` entry (the errors allowlist cleans it again)."""
        out: dict[str, Any] = {"role": self.node.role, "name": _label(self.node)}
        if ref is not None:
            out["ref"] = ref
        if self.locator is not None:
            out["locator"] = self.locator
        if self.place is not None:
            out["container"] = self.place
        path = link_path(dict(self.node.props).get("url")) if self.node.role == "link" else None
        if path:
            out["path"] = path
        return out


def link_path(href: str | None) -> str | None:
    """A link's href as a candidate shows it: path and query, sanitized (secrets in the query
    never reach the client), relative to its origin."""
    if not href or (_SCHEME.match(href) and not href.lower().startswith(("http:", "https:"))):
        return None  # no href, or javascript:, mailto:, data:...
    absolute = href if "://" in href else _PATH_BASE + ("" if href.startswith("/") else "/") + href
    clean = sanitize_url(absolute, max_chars=PATH_MAX_CHARS + len(_PATH_BASE))
    if clean.startswith(_PATH_BASE):
        clean = clean[len(_PATH_BASE) :] or "/"
    return clean[:PATH_MAX_CHARS] if clean.startswith(("/", "http")) else None


def distinguish(details: list[dict[str, Any]], positions: Sequence[int | None]) -> None:
    """Add `nth` (the position among the locator's matches) to every detail that equals
    another one in role, name, container and path: nothing else tells them apart."""
    keys = [(d.get("role"), d.get("name"), str(d.get("container")), d.get("path")) for d in details]
    counts = Counter(keys)
    for detail, key, position in zip(details, keys, positions, strict=True):
        if position is not None and (counts[key] > 1 or detail.get("hidden")):
            detail["nth"] = position


def _place(
    row: AriaNode | None, heading: str | None, container: AriaNode | None
) -> dict[str, str] | None:
    if row is not None:
        cells = (cell.strip() for cell in row_text(row).split(" | "))
        return {"role": "row", "name": row.name or " ".join(c for c in cells if c).strip("| ")}
    if heading:
        return {"role": "heading", "name": heading}
    if container is not None:
        return {"role": container.role, "name": container.name or ""}
    return None


_Walked = tuple[AriaNode, AriaNode | None, dict[str, str] | None]


def _walk(nodes: list[AriaNode]) -> Iterator[_Walked]:
    """(node, nearest named container, where it is) in document order. The last heading seen
    is kept per named container: a heading outside a container does not name what is in it."""
    # (node, container, row, the heading cell of the container)
    stack: list[tuple[AriaNode, AriaNode | None, AriaNode | None, list[str | None]]] = [
        (n, None, None, [None]) for n in reversed(nodes)
    ]
    while stack:
        node, container, row, cell = stack.pop()
        yield node, container, _place(row, cell[0], container)
        if node.role == "heading" and node.name:
            cell[0] = node.name
        named = node.role in CONTAINER_ROLES and bool(node.name)
        inner = node if named else container
        inner_cell: list[str | None] = [None] if named else cell
        inner_row = node if node.role == "row" else row
        stack.extend((c, inner, inner_row, inner_cell) for c in reversed(node.children))


def _label(node: AriaNode) -> str:
    """What a person reads as the node's name: its accessible name, else its text."""
    return node.name or node.value or ""


def _role_locator(node: AriaNode) -> dict[str, Any]:
    return {"strategy": "role", "value": node.role, "name": node.name or "", "exact": True}


def _wanted(selector: Selector) -> tuple[str | None, frozenset[str] | None]:
    """(the text a person meant, the roles it may name; None = any named role), by the
    strategy's candidate form (`model.strategies.CandidateForm`)."""
    form = entry(selector.strategy).candidates
    match form:
        case "role":
            return selector.name, frozenset({selector.value})
        case "form":
            return selector.value, FORM_ROLES
        case "text" | "name":
            return selector.value, None
        case "words":  # `save-button` may be the button "Save"
            return selector.value.replace("-", " ").replace("_", " "), None
        case "none":  # css: the value is no name, and no candidate is near
            return None, frozenset()
        case _:
            assert_never(form)


def _score(wanted: str | None, name: str) -> float:
    if wanted is None:
        return 0.0
    want, have = normalize_name(wanted).casefold(), normalize_name(name).casefold()
    if want == have:
        return 3.0
    if want in have or have in want:
        return 2.0
    return difflib.SequenceMatcher(None, want, have).ratio()


def _locator_for(
    node: AriaNode,
    container: AriaNode | None,
    pairs: Counter[tuple[str, str]],
    in_container: Counter[tuple[str, str, str, str]],
    texts: Counter[str],
) -> dict[str, Any] | None:
    if not node.name:  # text content only: a text locator when that text is unique
        text = normalize_name(node.value or "")
        if texts[text] == 1:
            return {"strategy": "text", "value": (node.value or "").strip(), "exact": True}
        return None
    name = normalize_name(node.name or "")
    if pairs[(node.role, name)] == 1:
        return _role_locator(node)
    if container is None:
        return None
    cname = normalize_name(container.name or "")
    unique_container = pairs[(container.role, cname)] == 1
    if unique_container and in_container[(container.role, cname, node.role, name)] == 1:
        return {**_role_locator(node), "within": _role_locator(container)}
    return None


def rank(
    tree: list[AriaNode], selector: Selector, *, matches_only: bool = False
) -> list[Candidate]:
    """Up to five candidates for `selector` in `tree`, best first.

    `matches_only` (LOCATOR_AMBIGUOUS): only nodes that equal the wanted name, in document
    order. Otherwise (ELEMENT_NOT_FOUND): nodes of the wanted roles whose name contains the
    wanted text case-insensitively, or is close to it; with no wanted text, the first named
    nodes of the wanted roles."""
    wanted, roles = _wanted(selector)
    by_text = entry(selector.strategy).candidates == "text"

    def eligible(node: AriaNode) -> bool:
        if by_text and not node.name and node.value and not node.children:
            return True  # `paragraph: Welcome back` (text content, as the text strategy reads)
        named = node.role not in _UNNAMED and bool(node.name)
        return named and (roles is None or node.role in roles)

    every = list(_walk(tree))
    walked = [item for item in every if eligible(item[0])]
    texts: Counter[str] = Counter(
        normalize_name(n.value or "") for n, _, _ in every if not n.name and n.value
    )
    pairs: Counter[tuple[str, str]] = Counter(
        (n.role, normalize_name(n.name or "")) for n, _, _ in every
    )
    in_container: Counter[tuple[str, str, str, str]] = Counter(
        (c.role, normalize_name(c.name or ""), n.role, normalize_name(n.name or ""))
        for n, c, _ in every
        if c is not None
    )
    scored: list[tuple[float, int, _Walked]] = []
    for index, item in enumerate(walked):
        score = _score(wanted, _label(item[0]))
        if matches_only and wanted is not None and score < 3.0:
            continue
        if not matches_only and wanted is not None and score < _MIN_SIMILARITY:
            continue
        scored.append((score, index, item))
    if not matches_only:
        scored.sort(key=lambda entry: (-entry[0], entry[1]))
    return [
        Candidate(node, container, _locator_for(node, container, pairs, in_container, texts), place)
        for _, _, (node, container, place) in scored[:MAX_CANDIDATES]
    ]
