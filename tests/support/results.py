"""Checks on a tool's result that every client applies: lean (no empty value) and clean (no
secret)."""

from __future__ import annotations

import json
from typing import Any

VERBATIM = {"browser_evaluate": {"result"}}
"""Result fields that carry the page's own JSON (nulls and empty lists there are data)."""


def assert_lean(name: str, data: dict[str, Any], args: dict[str, Any], required: Any) -> None:
    """Issue 31 item 9: no null, no empty list or object at any depth (a required top-level
    field excepted), no top-level id that repeats the one the client sent."""

    def walk(value: Any, where: str) -> None:
        assert value is not None, f"{name}: null at {where}"
        if isinstance(value, dict | list):
            assert value, f"{name}: empty {type(value).__name__} at {where}"
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, item in items:
                walk(item, f"{where}.{key}")

    for key, value in data.items():
        if key in VERBATIM.get(name, ()):
            continue
        if key.endswith("Id") and key in args:
            assert args[key] != value, f"{name}: {key} repeats the request"
        if key not in required:
            walk(value, key)


def assert_clean(data: Any, *secrets: str) -> None:
    """No secret in `data`'s JSON form, not even JSON-escaped (the redaction canaries)."""
    blob = json.dumps(data, ensure_ascii=False)
    for secret in secrets:
        assert secret not in blob
        assert json.dumps(secret)[1:-1] not in blob


def ref_named(table: str, role: str, name: str) -> str:
    """The ref of the action-table line for `role` "name" (a snapshot with `format: "actions"`)."""
    for line in table.splitlines():
        if f'{role} "{name}"' in line and "[" in line:
            return line.split("[", 1)[1].split("]", 1)[0]
    raise AssertionError(f"no {role} {name!r} in {table}")
