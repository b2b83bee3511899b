"""Locator arguments of the browser tools (reference §5.1), as the tests write them."""

from __future__ import annotations

from typing import Any


def role(value: str, name: str | None = None, **extra: Any) -> dict[str, Any]:
    """`{"strategy": "role", ...}`; `extra`: `exact`, `frame`... as the tool takes them."""
    locator: dict[str, Any] = {"strategy": "role", "value": value, **extra}
    if name is not None:
        locator["name"] = name
    return locator


def css(value: str) -> dict[str, Any]:
    return {"strategy": "css", "value": value}


def label(value: str, **extra: Any) -> dict[str, Any]:
    return {"strategy": "label", "value": value, **extra}


def by_test_id(value: str) -> dict[str, Any]:
    return {"strategy": "testId", "value": value}


def by_alt(value: str, **extra: Any) -> dict[str, Any]:
    """`{"strategy": "alt", ...}` (an image's alt text); `extra`: `exact`, `frame`..."""
    return {"strategy": "alt", "value": value, **extra}


def by_title(value: str, **extra: Any) -> dict[str, Any]:
    """`{"strategy": "title", ...}` (a `title` attribute); `extra`: `exact`, `frame`..."""
    return {"strategy": "title", "value": value, **extra}
