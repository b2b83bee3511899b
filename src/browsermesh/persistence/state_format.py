"""What a saved state is (reference §11): its id, its storage-state shape, its origins, its bytes.

The stateId rule; the Playwright storage-state shape a state must have (checked before a save,
so a saved state always loads again, and after a load; extra keys such as newer Playwright cookie
fields are kept); the origins a restore has to visit (issue 12 #5); and the compact UTF-8 JSON a
state is stored as. Used by the repository on every save and load and by the runtime to check a
stateId argument. No file system.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any, Final, NoReturn

from browsermesh.errors import BrowserMeshError, ErrorCode, invalid_argument

__all__ = [
    "SAME_SITE_VALUES",
    "STATE_ID_RE",
    "count_state_origins",
    "decode_state",
    "encode_state",
    "is_state_id",
    "validate_state_id",
    "validate_storage_state",
]

STATE_ID_RE: Final = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9._-]{0,127}$")
SAME_SITE_VALUES: Final = frozenset({"Strict", "Lax", "None"})


def is_state_id(value: object) -> bool:
    """Whether `value` is a valid stateId (full match: a trailing newline is not allowed)."""
    return isinstance(value, str) and STATE_ID_RE.fullmatch(value) is not None


def validate_state_id(state_id: object) -> str:
    """Return `state_id` if it matches `STATE_ID_RE`; otherwise raise `INVALID_ARGUMENT`."""
    if not is_state_id(state_id):
        raise invalid_argument(
            "stateId",
            "1..128 characters of A-Z, a-z, 0-9, '.', '_' or '-'; the first a letter or digit",
        )
    assert isinstance(state_id, str)
    return state_id


def _corrupted(where: str) -> NoReturn:
    raise BrowserMeshError(
        ErrorCode.BROWSER_ERROR,
        cause="saved state is corrupted: invalid storage-state shape",
        internal={"field": where, "requirement": "Playwright storage-state shape"},
    )


def _require_str(item: Mapping[str, Any], key: str, where: str) -> None:
    if not isinstance(item.get(key), str):
        _corrupted(f"{where}.{key}")


def _require_bool(item: Mapping[str, Any], key: str, where: str) -> None:
    if not isinstance(item.get(key), bool):
        _corrupted(f"{where}.{key}")


def validate_storage_state(data: object) -> dict[str, Any]:
    """Check the Playwright storage-state shape; failure → `BROWSER_ERROR` (corrupted state).

    Shape: ``{cookies: [{name, value, domain, path, expires (finite number), httpOnly, secure,
    sameSite ∈ Strict|Lax|None}], origins: [{origin, localStorage: [{name, value}]}]}``. Extra keys
    are allowed and kept. Returns `data` itself (typed). Error details name the failing field path
    only, never a value.
    """
    if not isinstance(data, dict):
        _corrupted("$")
    cookies = data.get("cookies")
    if not isinstance(cookies, list):
        _corrupted("cookies")
    for index, cookie in enumerate(cookies):
        where = f"cookies[{index}]"
        if not isinstance(cookie, dict):
            _corrupted(where)
        for key in ("name", "value", "domain", "path"):
            _require_str(cookie, key, where)
        expires = cookie.get("expires")
        if (
            isinstance(expires, bool)
            or not isinstance(expires, int | float)
            or (isinstance(expires, float) and not math.isfinite(expires))
        ):
            _corrupted(f"{where}.expires")
        _require_bool(cookie, "httpOnly", where)
        _require_bool(cookie, "secure", where)
        if cookie.get("sameSite") not in SAME_SITE_VALUES:
            _corrupted(f"{where}.sameSite")
    origins = data.get("origins")
    if not isinstance(origins, list):
        _corrupted("origins")
    for index, origin in enumerate(origins):
        where = f"origins[{index}]"
        if not isinstance(origin, dict):
            _corrupted(where)
        _require_str(origin, "origin", where)
        storage = origin.get("localStorage")
        if not isinstance(storage, list):
            _corrupted(f"{where}.localStorage")
        for item_index, item in enumerate(storage):
            item_where = f"{where}.localStorage[{item_index}]"
            if not isinstance(item, dict):
                _corrupted(item_where)
            _require_str(item, "name", item_where)
            _require_str(item, "value", item_where)
    return data


def count_state_origins(state: Mapping[str, Any]) -> int:
    """Distinct `origins[].origin` values plus distinct cookie domains (case-insensitive, a
    leading `.` ignored) of a shape-valid storage state: what a restore has to visit."""
    origins = {item["origin"] for item in state.get("origins", ())}
    domains = {cookie["domain"].lower().lstrip(".") for cookie in state.get("cookies", ())}
    return len(origins) + len(domains)


def _reject_constant(name: str) -> Any:
    raise ValueError("non-finite number")


def decode_state(raw: bytes) -> dict[str, Any]:
    """A stored state's bytes as a shape-checked storage state; `BROWSER_ERROR` (corrupted
    state) for bytes that are not UTF-8 JSON (non-finite numbers included) or not the shape."""
    try:
        data = json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise BrowserMeshError(
            ErrorCode.BROWSER_ERROR,
            cause="saved state is corrupted: not valid UTF-8 JSON",
            internal={"field": "$", "requirement": "UTF-8 JSON"},
        ) from None
    return validate_storage_state(data)


def encode_state(state: dict[str, Any]) -> bytes:
    """The compact UTF-8 JSON a state is stored as, after the shape check; `BROWSER_ERROR` for
    an engine capture of the wrong shape or not serializable as JSON."""
    validate_storage_state(state)
    try:
        text = json.dumps(state, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        return text.encode("utf-8")
    except (TypeError, ValueError, RecursionError, UnicodeEncodeError):
        raise BrowserMeshError(
            ErrorCode.BROWSER_ERROR,
            cause="captured storage state is not serializable as JSON",
            internal={"field": "$", "requirement": "JSON-serializable storage state"},
        ) from None
