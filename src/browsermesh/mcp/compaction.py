"""Schema compaction for the outgoing ``tools/list`` message (reference §23).

Tool schemas are kept in their canonical, fully expanded form (§23.1): no ``$ref``, no ``$defs``,
no recursion.  That form is what input validation uses, but it repeats large subschemas (locators,
frames, conditions, …) many times, which inflates ``tools/list``.  :func:`compact_schema` hoists
structurally identical repeated subschemas into root ``$defs`` entries named ``shared0``,
``shared1``, … and replaces every occurrence with ``{"$ref": "#/$defs/sharedN"}`` (§23.3).  The
result is semantically identical under the 2020-12 dialect (§23.2); :func:`dereference` undoes it
(and also expands library-generated schemas that use local ``$defs`` into canonical form).

Everything here is pure and stdlib-only: inputs are never mutated and outputs never alias inputs
(except that :func:`compact_schema` returns its argument itself when it declines to compact).
"""

from __future__ import annotations

import json
from collections.abc import Callable, MutableMapping
from typing import Any, Final
from urllib.parse import unquote

__all__ = [
    "MAX_SHARED_DEFINITIONS",
    "SCHEMA_DIALECT",
    "JsonSchema",
    "canonical_json",
    "compact_schema",
    "dereference",
]

JsonSchema = dict[str, Any]
"""A JSON Schema object (boolean schemas only ever appear as subschemas)."""

SCHEMA_DIALECT: Final = "https://json-schema.org/draft/2020-12/schema"
"""The dialect every published schema root declares (§23.2)."""

MAX_SHARED_DEFINITIONS: Final = 64
"""Upper bound on the number of ``sharedN`` definitions one compaction may create (§23.3)."""

# Applicator keywords whose value is a single subschema.
_SINGLE_SCHEMA_KEYWORDS: Final = frozenset(
    {
        "additionalItems",
        "additionalProperties",
        "contains",
        "contentSchema",
        "else",
        "if",
        "items",
        "not",
        "propertyNames",
        "then",
        "unevaluatedItems",
        "unevaluatedProperties",
    }
)
# Applicator keywords whose value is an array of subschemas.
_SCHEMA_LIST_KEYWORDS: Final = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
# Applicator keywords whose value is an object mapping names (not schemas) to subschemas.
_SCHEMA_MAP_KEYWORDS: Final = frozenset(
    {"$defs", "definitions", "dependentSchemas", "patternProperties", "properties"}
)

# Keywords that make a schema ineligible for compaction wherever they occur (§23.3).
_REFUSING_KEYWORDS: Final = frozenset(
    {
        "$ref",
        "$id",
        "$anchor",
        "$dynamicAnchor",
        "$dynamicRef",
        "$recursiveAnchor",
        "$recursiveRef",
    }
)

# Keywords that only annotate; when a ``$ref`` with siblings is inlined, a sibling annotation
# overrides the referenced schema's one instead of forcing an ``allOf``.
_ANNOTATION_KEYWORDS: Final = frozenset(
    {
        "$comment",
        "default",
        "deprecated",
        "description",
        "examples",
        "readOnly",
        "title",
        "writeOnly",
    }
)

_DEFS: Final = "$defs"
_REF: Final = "$ref"
_REF_PREFIX: Final = "#/$defs/"
_SHARED_PREFIX: Final = "shared"

# A position in the document: the container holding a subschema and the key/index under which.
_Container = MutableMapping[str, Any] | list[Any]
_Position = tuple[_Container, Any]


def canonical_json(value: Any) -> str:
    """Return the key-order-independent canonical JSON text of ``value``.

    Keys are sorted, separators are compact and non-ASCII characters are kept verbatim, so two
    values have the same canonical text exactly when they are structurally identical JSON
    (``1`` and ``1.0`` stay distinct).  This text is the compaction signature (§23.3).
    """
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _compact_size(value: Any) -> int:
    """Size in UTF-8 bytes of the compact JSON serialization of ``value``."""
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))


def _clone(value: Any) -> Any:
    """Deep-copy a JSON value without preserving object sharing (every dict/list is fresh)."""
    if isinstance(value, dict):
        return {key: _clone(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_clone(item) for item in value]
    return value


def _contains_refusing_keyword(value: Any) -> bool:
    """Whether any object anywhere in ``value`` has a key that forbids compaction.

    The scan is deliberately conservative: it looks at every object key in the document, not only
    at keyword positions, so e.g. a ``const`` holding ``{"$ref": …}`` also refuses compaction.
    """
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if not _REFUSING_KEYWORDS.isdisjoint(item):
                return True
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


class _Scanner:
    """One counting pass: computes signatures bottom-up and records candidate positions.

    Signatures are built from the children's signatures, so each node is serialized once per pass
    instead of once per ancestor.  The text produced is identical to :func:`canonical_json`.
    """

    def __init__(self, root: dict[str, Any], own_definitions: frozenset[str]) -> None:
        self._root_defs: Any = root.get(_DEFS)
        self._own_definitions = own_definitions
        self.positions: dict[str, list[_Position]] = {}
        self._schema_signature(root)

    def _visit(self, container: _Container, key: Any) -> str:
        """Signature of the subschema at ``container[key]``, recording it when eligible."""
        node: dict[str, Any] = container[key]
        signature = self._schema_signature(node)
        eligible = _REF not in node and not (
            container is self._root_defs and key in self._own_definitions
        )
        if eligible:
            self.positions.setdefault(signature, []).append((container, key))
        return signature

    def _schema_signature(self, node: dict[str, Any]) -> str:
        """Canonical JSON of the schema object ``node``, descending through applicators."""
        parts: list[str] = []
        for keyword in sorted(node):
            value = node[keyword]
            if keyword in _SINGLE_SCHEMA_KEYWORDS and isinstance(value, dict):
                text = self._visit(node, keyword)
            elif keyword in _SCHEMA_LIST_KEYWORDS and isinstance(value, list):
                items = [
                    self._visit(value, index) if isinstance(item, dict) else canonical_json(item)
                    for index, item in enumerate(value)
                ]
                text = "[" + ",".join(items) + "]"
            elif keyword in _SCHEMA_MAP_KEYWORDS and isinstance(value, dict):
                entries = [
                    canonical_json(name)
                    + ":"
                    + (
                        self._visit(value, name)
                        if isinstance(value[name], dict)
                        else canonical_json(value[name])
                    )
                    for name in sorted(value)
                ]
                text = "{" + ",".join(entries) + "}"
            else:
                text = canonical_json(value)
            parts.append(canonical_json(keyword) + ":" + text)
        return "{" + ",".join(parts) + "}"


def _ref_to(name: str) -> str:
    """The ``$ref`` value pointing at root definition ``name`` (names here need no escaping)."""
    return _REF_PREFIX + name


def _next_free_name(defs: dict[str, Any] | None, start: int) -> tuple[str, int]:
    """First ``sharedN`` with ``N >= start`` not already used in ``defs``; returns name and N."""
    index = start
    while defs is not None and f"{_SHARED_PREFIX}{index}" in defs:
        index += 1
    return f"{_SHARED_PREFIX}{index}", index


def _definition_overhead(defs: dict[str, Any] | None, name: str) -> int:
    """Bytes added to the document by a new ``"name":…`` entry, excluding the value itself."""
    entry = len(name) + 3  # "name":
    if defs is None:
        return entry + len(',"$defs":{}')  # the root always has other members, hence the comma
    return entry + (1 if defs else 0)


def compact_schema(schema: JsonSchema) -> JsonSchema:
    """Hoist repeated subschemas of a canonical tool schema into ``$defs`` (reference §23.3).

    Repeatedly picks the structurally identical subschema (signature = :func:`canonical_json`)
    that occurs at least twice and whose hoisting saves the most bytes of compact JSON, moves it
    to a new root definition ``sharedN`` (skipping names already present in ``$defs``) and replaces
    every occurrence with ``{"$ref": "#/$defs/sharedN"}``; counts are recomputed after each hoist
    so subschemas inside earlier definitions are candidates too.  Ties are broken by the smaller
    signature.  Only object subschemas reached through applicator keywords are candidates; the
    root and boolean schemas never are.  At most :data:`MAX_SHARED_DEFINITIONS` definitions are
    created.

    The original object is returned unchanged when it contains ``$ref``, ``$id``, ``$anchor``,
    ``$dynamicAnchor``, ``$dynamicRef``, ``$recursiveAnchor`` or ``$recursiveRef`` anywhere, when
    its root ``$defs`` is not an object, or when the result would not be strictly smaller.
    Otherwise a new object is returned; ``schema`` is never mutated.
    """
    if not isinstance(schema, dict) or _contains_refusing_keyword(schema):
        return schema
    existing_defs = schema.get(_DEFS)
    if existing_defs is not None and not isinstance(existing_defs, dict):
        return schema

    root: dict[str, Any] = _clone(schema)
    own_definitions: set[str] = set()
    next_index = 0
    while len(own_definitions) < MAX_SHARED_DEFINITIONS:
        defs: dict[str, Any] | None = root.get(_DEFS)
        name, index = _next_free_name(defs, next_index)
        ref_size = _compact_size({_REF: _ref_to(name)})
        overhead = _definition_overhead(defs, name)

        scanner = _Scanner(root, frozenset(own_definitions))
        best: tuple[int, str] | None = None
        for signature, positions in scanner.positions.items():
            count = len(positions)
            if count < 2:
                continue
            size = len(signature.encode("utf-8"))
            savings = (count - 1) * size - count * ref_size - overhead
            if savings <= 0:
                continue
            if best is None or savings > best[0] or (savings == best[0] and signature < best[1]):
                best = (savings, signature)
        if best is None:
            break

        positions = scanner.positions[best[1]]
        first_container, first_key = positions[0]
        hoisted = first_container[first_key]
        for container, key in positions:
            container[key] = {_REF: _ref_to(name)}
        if defs is None:
            defs = {}
            root[_DEFS] = defs
        defs[name] = hoisted
        own_definitions.add(name)
        next_index = index + 1

    if not own_definitions or _compact_size(root) >= _compact_size(schema):
        return schema
    return root


def _parse_local_ref(ref: Any) -> str:
    """Definition name targeted by a ``#/$defs/<name>`` reference; ValueError otherwise."""
    if not isinstance(ref, str) or not ref.startswith(_REF_PREFIX):
        raise ValueError(f"unsupported $ref {ref!r}: only local '#/$defs/<name>' is supported")
    token = unquote(ref[len(_REF_PREFIX) :])
    if "/" in token:
        raise ValueError(f"unsupported $ref {ref!r}: pointer must name a root definition")
    return token.replace("~1", "/").replace("~0", "~")


def _merge_ref_siblings(resolved: Any, siblings: dict[str, Any]) -> Any:
    """Combine an inlined ``$ref`` target with the keywords written next to the ``$ref``.

    Non-conflicting keywords are merged and sibling annotations override the target's; a
    conflicting assertion keeps both through ``allOf`` so the semantics (conjunction) hold.
    """
    if not siblings:
        return resolved
    if resolved is True:
        return siblings
    if isinstance(resolved, dict):
        merged = dict(resolved)
        conflict = False
        for keyword, value in siblings.items():
            if keyword not in merged or merged[keyword] == value or keyword in _ANNOTATION_KEYWORDS:
                merged[keyword] = value
            else:
                conflict = True
                break
        if not conflict:
            return merged
    combined = dict(siblings)
    combined["allOf"] = [resolved, *combined.get("allOf", [])]
    return combined


def dereference(schema: JsonSchema) -> JsonSchema:
    """Inline every local ``{"$ref": "#/$defs/<name>"}`` and drop the root ``$defs``.

    Produces the fully expanded canonical form of §23.1 from a compacted schema or from a
    library-generated one (pydantic emits ``$defs`` for nested models).  References are followed
    only at subschema positions (applicator keywords); ``const``/``enum``/``default`` data is
    copied verbatim.  Keywords written next to a ``$ref`` are merged into the inlined schema.

    Raises ValueError on recursive definitions, on references to missing definitions, on any
    other kind of ``$ref`` (remote, nested pointer, ``#``) and on a non-object root ``$defs``.
    The input is not mutated and the result shares no objects with it.
    """
    defs = schema.get(_DEFS, {})
    if not isinstance(defs, dict):
        raise ValueError("root $defs must be an object")
    expanded: dict[str, Any] = {}

    def resolve(name: str, active: tuple[str, ...]) -> Any:
        if name in active:
            chain = " -> ".join((*active, name))
            raise ValueError(f"recursive schema definition: {chain}")
        if name not in defs:
            raise ValueError(f"$ref to missing definition {name!r}")
        if name not in expanded:
            expanded[name] = expand(defs[name], (*active, name))
        return _clone(expanded[name])

    def expand(node: Any, active: tuple[str, ...], *, is_root: bool = False) -> Any:
        if not isinstance(node, dict):
            return _clone(node)
        result: dict[str, Any] = {}
        for keyword, value in node.items():
            if keyword == _REF or (is_root and keyword == _DEFS):
                continue
            result[keyword] = _expand_keyword(keyword, value, lambda child: expand(child, active))
        if _REF not in node:
            return result
        return _merge_ref_siblings(resolve(_parse_local_ref(node[_REF]), active), result)

    result = expand(schema, (), is_root=True)
    if not isinstance(result, dict):  # a root that was only a $ref to a boolean schema
        return {} if result else {"not": {}}
    return result


def _expand_keyword(keyword: str, value: Any, expand: Callable[[Any], Any]) -> Any:
    """Apply ``expand`` to the subschemas held by ``keyword``'s value; clone anything else."""
    if keyword in _SINGLE_SCHEMA_KEYWORDS and isinstance(value, dict):
        return expand(value)
    if keyword in _SCHEMA_LIST_KEYWORDS and isinstance(value, list):
        return [expand(item) for item in value]
    if keyword in _SCHEMA_MAP_KEYWORDS and isinstance(value, dict):
        return {name: expand(item) for name, item in value.items()}
    return _clone(value)
