"""Bounding evaluation results (contract §10): JSON-safe conversion and a byte budget."""

from __future__ import annotations

import json
import math
from datetime import date, datetime
from typing import Any

from browsermesh.model.text import fit_prefix, well_formed

MAX_JSON_BYTES = 65_536


def to_json_value(value: Any, depth: int = 0) -> Any:
    """undefined/NaN/±Infinity → null, dates → ISO strings, other non-JSON → their string;
    lone surrogates in strings and keys → U+FFFD."""
    if depth > 200:
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
    if isinstance(value, list | tuple):
        return [to_json_value(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {well_formed(str(k)): to_json_value(v, depth + 1) for k, v in value.items()}
    return well_formed(str(value))


def compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def bound_result(value: Any) -> tuple[Any, bool]:
    """(result, truncated): over 65,536 bytes the result becomes the longest JSON prefix."""
    converted = to_json_value(value)
    text = compact(converted)
    if len(text.encode("utf-8")) <= MAX_JSON_BYTES:
        return converted, False
    return fit_prefix(text, len(text), MAX_JSON_BYTES), True
