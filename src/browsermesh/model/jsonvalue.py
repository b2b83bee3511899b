"""Bounding evaluation results (reference §10): JSON-safe conversion and a byte budget.

The page converts the value itself (engine/evaluate.py) and hands back at most a little more
than `MAX_JSON_BYTES` of compact JSON text; `bound_page_json` turns that text into the result.
`bound_result` is the bound for a value already in Python.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from browsermesh.model.text import fit_prefix, well_formed

MAX_JSON_BYTES = 65_536


MAX_JSON_NODES = MAX_JSON_BYTES + 1
"""Past this many values the compact JSON surely exceeds MAX_JSON_BYTES: stop converting."""

CIRCULAR = "[Circular]"

MAX_JSON_DEPTH = 64
"""Containers nested deeper than this become null and the result is marked truncated (issue
30): well below what MCP clients parse (the Python SDK's client fails from about 198 levels of
a result, which the structured content wraps in a few levels of its own)."""


@dataclass
class _Walk:
    """Conversion state: values converted so far and the containers on the current path."""

    nodes: int = 0
    path: set[int] = field(default_factory=set)
    too_deep: bool = False

    @property
    def exhausted(self) -> bool:
        return self.nodes > MAX_JSON_NODES


def to_json_value(value: Any, walk: _Walk | None = None, depth: int = 0) -> Any:
    """undefined/NaN/±Infinity → null, dates → ISO strings, other non-JSON → their string;
    lone surrogates in strings and keys → U+FFFD; a container inside itself → "[Circular]".

    Bounded work: Playwright hands back shared and cyclic references as shared Python objects,
    and expanding ``a.x = a; a.y = a`` naively doubles at every level (found by fuzzing: it
    froze the server). At most `MAX_JSON_NODES` values are converted; the rest become null,
    and `bound_result` reports the result as truncated; so are containers deeper than
    `MAX_JSON_DEPTH`.
    """
    walk = walk if walk is not None else _Walk()
    walk.nodes += 1
    if walk.exhausted:
        return None
    if depth > MAX_JSON_DEPTH:
        walk.too_deep = True
        return None
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return well_formed(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, datetime | date):
        text = value.isoformat()
        return text.replace("+00:00", "Z")
    if isinstance(value, list | tuple | dict):
        if id(value) in walk.path:
            return CIRCULAR
        walk.path.add(id(value))
        try:
            if isinstance(value, dict):
                return {
                    well_formed(str(k)): to_json_value(v, walk, depth + 1) for k, v in value.items()
                }
            return [to_json_value(v, walk, depth + 1) for v in value]
        finally:
            walk.path.discard(id(value))
    return well_formed(str(value))


def compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def bound_page_json(text: str, cut: bool, too_deep: bool = False) -> tuple[Any, bool]:
    """(result, truncated) from the page's compact JSON text of a value.

    `cut`: the page stopped converting because the text passed `MAX_JSON_BYTES`, so the text is
    the start of the value's JSON and its prefix is the result. Otherwise the text is parsed and
    bounded like any value (it may still pass the budget where Python writes a number longer
    than JavaScript does, e.g. ``1e-07``). `too_deep`: the page replaced containers deeper than
    `MAX_JSON_DEPTH` by null, so the result is truncated.

    Raises:
        ValueError: the text is not JSON (a page that replaced the builtins the conversion uses).
    """
    if cut:
        return fit_prefix(text, len(text), MAX_JSON_BYTES), True
    result, truncated = bound_result(json.loads(text))
    return result, truncated or too_deep


def bound_result(value: Any) -> tuple[Any, bool]:
    """(result, truncated): over 65,536 bytes the result becomes the longest JSON prefix."""
    walk = _Walk()
    converted = to_json_value(value, walk)
    text = compact(converted)
    if not walk.exhausted and len(text.encode("utf-8")) <= MAX_JSON_BYTES:
        return converted, walk.too_deep
    return fit_prefix(text, len(text), MAX_JSON_BYTES), True
