"""Parse and filter Playwright ARIA snapshot YAML (reference §6.1, §6.4, §5.5).

Playwright renders an ARIA tree as a YAML sequence. Every item is either a plain key
(``- button "OK" [disabled]``) or a one-entry mapping whose value is a scalar
(``- textbox "Item": Blue teapot``, ``- text: Hello``) or a nested sequence of children.
Children sequences may also hold property entries (``- /url: /``). In AI mode each key
additionally carries ``[ref=e12]`` (and ``[cursor=pointer]`` after it).

`parse_aria` reads that text with ruamel.yaml's YAML 1.2 event parser and builds `AriaNode`
trees; the tree operations below filter, cap and redact them. `render_aria` writes them back in
Playwright's exact style (same quoting rules, 2-space indents, no line wrapping), optionally
appending BrowserMesh ref tokens: it lives in `browsermesh.model.aria_render` and is importable
from here too. Everything here is pure: no Playwright, no I/O.

Parsing notes:

- Scalars are never given implicit types (``2024-01-15``, ``1_000`` or ``0b1`` stay text), so
  any page text Playwright leaves unquoted reads back verbatim.
- The tree is built iteratively from parser events (no recursion), so very deep DOMs parse.
- Anything that is not valid YAML or not the shape above (aliases, null or mapping values, several
  documents, properties at the top level, malformed keys) raises `BROWSER_ERROR`.
"""

from __future__ import annotations

import dataclasses
import json
import re
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from browsermesh.errors import BrowserMeshError, ErrorCode
from browsermesh.model.aria_render import render_aria
from browsermesh.model.text import SURROGATE_RE, well_formed
from browsermesh.redact import SecretValues, cut_chars

__all__ = [
    "INTERACTIVE_ROLES",
    "AriaNode",
    "as_data",
    "cap_children",
    "filter_interactive",
    "iter_nodes",
    "json_literal",
    "make_key",
    "parse_aria",
    "redact_tree",
    "render_aria",
    "strip_iframe_children",
    "subtree_size",
]

INTERACTIVE_ROLES: frozenset[str] = frozenset(
    {
        "button",
        "checkbox",
        "combobox",
        "gridcell",
        "link",
        "menuitem",
        "menuitemcheckbox",
        "menuitemradio",
        "option",
        "radio",
        "searchbox",
        "slider",
        "spinbutton",
        "switch",
        "tab",
        "textbox",
        "treeitem",
    }
)
"""The 17 interactive roles of reference §6.4."""


@dataclass(eq=False)
class AriaNode:
    """One node of a Playwright ARIA snapshot.

    Attributes:
        role: The first lowercase token (``[a-z][a-z0-9]*``) at the start of the key; ``"text"``
            for ``text: ...`` entries; ``""`` when the key does not start with one.
        name: The accessible name (the quoted string after the role), decoded; None when absent.
        key: The key text without any ``[ref=...]`` / ``[cursor=...]`` attribute (and without YAML
            quoting), e.g. ``heading "Title" [level=1]``.
        pw_ref: Playwright's ref value from ``[ref=...]``, if any.
        value: The scalar after ``key: `` (a textbox value, text content), decoded.
        props: Property entries such as ``("url", "/")`` for ``- /url: /`` (name without ``/``),
            in document order.
        children: Child nodes in document order.
        attrs: Bracketed attributes other than ref/cursor, e.g. ``["level=1"]``, ``["checked"]``,
            ``["box=16,21,1248,37"]``.
    """

    role: str
    name: str | None
    key: str
    pw_ref: str | None = None
    value: str | None = None
    props: list[tuple[str, str]] = field(default_factory=list)
    children: list[AriaNode] = field(default_factory=list)
    attrs: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------------------------
# Keys
# --------------------------------------------------------------------------------------------

_ROLE_RE = re.compile(r"[a-z][a-z0-9]*")
_IDENT_RE = re.compile(r"\s*[^\s\"\[]*")
_SPACE_RE = re.compile(r"\s*")
_ATTR_RE = re.compile(r"\s*\[([^\[\]]*)\]")
_TRAILING_WS_RE = re.compile(r"\s*")
_STRIPPED_ATTRS = frozenset({"ref", "cursor"})


def json_literal(text: str) -> str:
    """``JSON.stringify(text)``: a JSON string literal, non-ASCII kept, lone surrogates escaped."""
    return SURROGATE_RE.sub(
        lambda m: f"\\u{ord(m.group(0)):04x}", json.dumps(text, ensure_ascii=False)
    )


def make_key(role: str, name: str | None = None, attrs: Iterable[str] = ()) -> str:
    """Build a key the way Playwright does: ``role "json-name" [attr] [attr]``."""
    key = role
    if name is not None:
        key += " " + json_literal(name)
    for attr in attrs:
        key += f" [{attr}]"
    return key


def _shape_error(cause: str) -> BrowserMeshError:
    return BrowserMeshError(
        ErrorCode.BROWSER_ERROR,
        cause=cut_chars(f"invalid ARIA snapshot: {cause}", 2000),
        internal={"stage": "aria-parse"},
    )


def _string_end(text: str, start: int) -> int:
    """Index of the closing quote of the string whose opening quote is at ``start``."""
    pos = start + 1
    while pos < len(text):
        ch = text[pos]
        if ch == "\\":
            pos += 2
            continue
        if ch == '"':
            return pos
        pos += 1
    raise _shape_error("unterminated name string in key")


def _decode_name(raw: str) -> str:
    """Decode the body of a quoted name: JSON first, Playwright's lenient escapes as fallback."""
    try:
        decoded = json.loads('"' + raw + '"')
    except ValueError:
        return re.sub(r"\\(.)", r"\1", raw, flags=re.DOTALL)
    return decoded if isinstance(decoded, str) else raw


def _node_from_key(text: str) -> AriaNode:
    """Split a key into role, name, ref and attributes (ref/cursor removed from the key)."""
    match = _ROLE_RE.match(text.lstrip())
    role = match.group(0) if match else ""
    pos = _IDENT_RE.match(text).end()  # type: ignore[union-attr]  # always matches
    name: str | None = None
    quote = _SPACE_RE.match(text, pos).end()  # type: ignore[union-attr]  # always matches
    if quote < len(text) and text[quote] == '"':
        end = _string_end(text, quote)
        name = _decode_name(text[quote + 1 : end])
        pos = end + 1
    head = text[:pos]
    kept: list[str] = []
    attrs: list[str] = []
    pw_ref: str | None = None
    while True:
        attr_match = _ATTR_RE.match(text, pos)
        if attr_match is None:
            break
        inner = attr_match.group(1).strip()
        attr_name, _, attr_value = inner.partition("=")
        attr_name = attr_name.strip()
        if attr_name in _STRIPPED_ATTRS:
            if attr_name == "ref":
                pw_ref = attr_value.strip() or None
        else:
            kept.append(attr_match.group(0))
            attrs.append(inner)
        pos = attr_match.end()
    tail = text[pos:]
    if _TRAILING_WS_RE.fullmatch(tail) is None:
        raise _shape_error("unexpected text after the attributes of a key")
    return AriaNode(
        role=role,
        # A JSON-escaped name can decode to a lone surrogate; names leave the server as refs.
        name=well_formed(name) if name is not None else None,
        key=head + "".join(kept) + tail,
        pw_ref=pw_ref,
        attrs=attrs,
    )


# --------------------------------------------------------------------------------------------
# Parsing
# --------------------------------------------------------------------------------------------


class _Map:
    """A YAML mapping as ordered (key, value) pairs."""

    __slots__ = ("pairs", "pending")

    def __init__(self) -> None:
        self.pairs: list[tuple[str, object]] = []
        self.pending: str | None = None


_NO_ROOT = object()


_PARSERS = threading.local()
"""The YAML parser of each thread that parses snapshots (`asyncio.to_thread` workers)."""


def _load(text: str) -> object:
    """Build lists, `_Map`s and strings from ruamel's YAML 1.2 event stream, iteratively."""
    # ruamel.yaml is imported on the first snapshot, not at start-up (issue 33).
    from ruamel.yaml import YAML
    from ruamel.yaml.events import (
        AliasEvent,
        CollectionEndEvent,
        DocumentStartEvent,
        MappingStartEvent,
        ScalarEvent,
        SequenceStartEvent,
    )

    parser = getattr(_PARSERS, "yaml", None)
    if parser is None:  # one per thread (a YAML object is not thread-safe; building one lists
        parser = _PARSERS.yaml = YAML(typ="base", pure=True)  # its plug-in directory)
    root: object = _NO_ROOT
    stack: list[object] = []
    documents = 0

    def add(value: object) -> None:
        nonlocal root
        if not stack:
            if root is not _NO_ROOT:
                raise _shape_error("more than one root node")
            root = value
            return
        top = stack[-1]
        if isinstance(top, list):
            top.append(value)
            return
        assert isinstance(top, _Map)
        if top.pending is None:
            if not isinstance(value, str):
                raise _shape_error("mapping keys must be scalars")
            if any(existing == value for existing, _ in top.pairs):
                raise _shape_error("duplicate mapping key")
            top.pending = value
        else:
            top.pairs.append((top.pending, value))
            top.pending = None

    for event in parser.parse(text):
        if isinstance(event, ScalarEvent):
            plain = event.style is None or event.style == ""
            add(None if plain and event.value == "" else well_formed(str(event.value)))
        elif isinstance(event, SequenceStartEvent):
            seq: list[object] = []
            add(seq)
            stack.append(seq)
        elif isinstance(event, MappingStartEvent):
            mapping = _Map()
            add(mapping)
            stack.append(mapping)
        elif isinstance(event, CollectionEndEvent):
            stack.pop()
        elif isinstance(event, AliasEvent):
            raise _shape_error("aliases are not allowed")
        elif isinstance(event, DocumentStartEvent):
            documents += 1
            if documents > 1:
                raise _shape_error("more than one document")
    return None if root is _NO_ROOT else root


def parse_aria(text: str) -> list[AriaNode]:
    """Parse Playwright ARIA snapshot YAML into a list of top-level nodes.

    Empty text (an empty snapshot) gives ``[]``. Raises `BrowserMeshError` with
    `ErrorCode.BROWSER_ERROR` for invalid YAML or an unexpected shape.
    """
    try:
        root = _load(text)
    except BrowserMeshError:
        raise
    except Exception as exc:  # ruamel raises many error types; all mean "invalid YAML"
        raise BrowserMeshError(
            ErrorCode.BROWSER_ERROR,
            cause=cut_chars(f"invalid ARIA snapshot YAML: {type(exc).__name__}: {exc}", 2000),
            internal={"stage": "aria-parse"},
        ) from None
    if root is None:
        return []
    if not isinstance(root, list):
        raise _shape_error("the snapshot must be a YAML sequence")
    top: list[AriaNode] = []
    work: list[tuple[list[object], list[AriaNode], AriaNode | None]] = [(root, top, None)]
    while work:
        items, target, owner = work.pop()
        for item in items:
            if isinstance(item, str):
                target.append(_node_from_key(item))
                continue
            if not isinstance(item, _Map):
                raise _shape_error("sequence items must be keys or one-entry mappings")
            for key, value in item.pairs:
                if key.startswith("/"):
                    if owner is None:
                        raise _shape_error("a property outside a node")
                    if not isinstance(value, str):
                        raise _shape_error("property values must be strings")
                    owner.props.append((key[1:], value))
                    continue
                node = _node_from_key(key)
                if isinstance(value, str):
                    node.value = value
                elif isinstance(value, list):
                    work.append((value, node.children, node))
                else:
                    raise _shape_error("node values must be strings or sequences")
                target.append(node)
    return top


# --------------------------------------------------------------------------------------------
# Tree operations
# --------------------------------------------------------------------------------------------


def iter_nodes(nodes: Iterable[AriaNode]) -> Iterator[AriaNode]:
    """All nodes in document order (depth-first, pre-order)."""
    stack = list(reversed(list(nodes)))
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(node.children))


def subtree_size(node: AriaNode) -> int:
    """The number of nodes in ``node``'s subtree, itself included."""
    return sum(1 for _ in iter_nodes([node]))


def strip_iframe_children(nodes: Iterable[AriaNode]) -> None:
    """Empty the children of every ``iframe`` node, in place (§6.1: frames are not descended)."""
    for node in iter_nodes(nodes):
        if node.role == "iframe":
            node.children = []


def _copy(node: AriaNode, children: list[AriaNode]) -> AriaNode:
    return dataclasses.replace(
        node, children=children, props=list(node.props), attrs=list(node.attrs)
    )


def filter_interactive(nodes: list[AriaNode]) -> tuple[list[AriaNode], int]:
    """The §6.4 ``interactiveOnly`` filter.

    Keeps interactive nodes (with their filtered children) and the ancestors leading to them;
    every other node is dropped. Returns new nodes (the input is not modified) and the number of
    dropped nodes. Properties (``/url``) and values belong to their node and are kept with it.
    """
    postorder: list[AriaNode] = []
    stack = list(nodes)
    while stack:
        node = stack.pop()
        postorder.append(node)
        stack.extend(node.children)
    kept: dict[int, AriaNode] = {}
    dropped = 0
    for node in reversed(postorder):
        children = [kept[id(c)] for c in node.children if id(c) in kept]
        if node.role in INTERACTIVE_ROLES or children:
            kept[id(node)] = _copy(node, children)
        else:
            dropped += 1
    return [kept[id(n)] for n in nodes if id(n) in kept], dropped


def cap_children(nodes: list[AriaNode], max_children: int) -> tuple[list[AriaNode], int]:
    """The §6.4 ``maxChildren`` cap, applied to every child list including the top level.

    Keeps the first ``max_children`` nodes of each list; returns new nodes and the number of
    removed nodes, each removed subtree counted in full. Properties are not nodes and stay.
    """
    if max_children < 1:
        raise ValueError("max_children must be >= 1")
    removed = 0
    top: list[AriaNode] = []
    work: list[tuple[list[AriaNode], list[AriaNode]]] = [(nodes, top)]
    while work:
        source, target = work.pop()
        for extra in source[max_children:]:
            removed += subtree_size(extra)
        for node in source[:max_children]:
            copy = _copy(node, [])
            target.append(copy)
            work.append((node.children, copy.children))
    return top, removed


def as_data(nodes: Iterable[AriaNode]) -> list[dict[str, Any]]:
    """A plain, comparable representation of a tree (for tests and debugging)."""
    out: list[dict[str, Any]] = []
    work: list[tuple[Iterable[AriaNode], list[dict[str, Any]]]] = [(nodes, out)]
    while work:
        source, target = work.pop()
        for node in source:
            children: list[dict[str, Any]] = []
            target.append(
                {
                    "role": node.role,
                    "name": node.name,
                    "key": node.key,
                    "pw_ref": node.pw_ref,
                    "value": node.value,
                    "props": [list(p) for p in node.props],
                    "attrs": list(node.attrs),
                    "children": children,
                }
            )
            work.append((node.children, children))
    return out


def redact_tree(nodes: Iterable[AriaNode], secrets: SecretValues) -> None:
    """Replace every secret value in every node's name, key, value, properties and attributes.

    Applied to a tree as soon as it is parsed, so nothing built from it afterwards (rendered
    YAML, action-table lines, ref names) can carry a secret. The key is rebuilt from the
    redacted name: the name sits in it JSON-quoted, which a plain replacement could miss.
    """
    if not secrets:
        return
    for node in iter_nodes(nodes):
        if node.name is not None:
            clean = secrets.text(node.name)
            if clean != node.name:
                node.key = node.key.replace(json_literal(node.name), json_literal(clean), 1)
                node.name = clean
        node.key = secrets.text(node.key)
        node.value = secrets.optional(node.value)
        node.props = [(k, secrets.text(v)) for k, v in node.props]
        node.attrs = [secrets.text(a) for a in node.attrs]
