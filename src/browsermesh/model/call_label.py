"""The tool call being served, and its one-line label (issue 35): the group a trace shows for
each call and the caption a video shows.

The MCP layer sets the current call (`serving`) around each handler; the runtime reads it
(`current`) only while a trace or a video runs, so a call pays nothing otherwise. The label is
the tool name and the call's target as the client gave it (`ref`, `locator`, `url`, `key`,
a wait's `kind`), never a typed value, a file or a script: those may be secrets, and a label
goes into a trace's group names and is burnt into a video's pixels.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Final

from browsermesh.redact import cut_chars, sanitize_url

__all__ = ["LABEL_MAX_CHARS", "CallNote", "current", "serving", "step_label"]

LABEL_MAX_CHARS: Final = 160


@dataclass(frozen=True, slots=True)
class CallNote:
    """One tool call as the client sent it (its arguments already validated)."""

    tool: str
    args: Mapping[str, Any]

    def label(self) -> str:
        return step_label(self.tool, self.args)


_CURRENT: ContextVar[CallNote | None] = ContextVar("browsermesh_call", default=None)


@contextmanager
def serving(tool: str, args: Mapping[str, Any]) -> Iterator[None]:
    """Mark the tool call being served for the code it runs (tasks it starts inherit it)."""
    token = _CURRENT.set(CallNote(tool, args))
    try:
        yield
    finally:
        _CURRENT.reset(token)


def current() -> CallNote | None:
    """The call being served, or None outside a tool call (a close at shutdown)."""
    return _CURRENT.get()


def _printable(text: str) -> str:
    return "".join(" " if unicodedata.category(ch)[0] == "C" else ch for ch in text)


def _locator(raw: object) -> str:
    """`strategy=value name=...` of a locator as given; `within`/`frame` noted, not spelled."""
    if not isinstance(raw, Mapping):
        return "locator"
    text = f"{raw.get('strategy')}={json.dumps(raw.get('value'), ensure_ascii=False)}"
    if "name" in raw:
        text += f" name={json.dumps(raw.get('name'), ensure_ascii=False)}"
    if "within" in raw:
        text += " within=" + _locator(raw.get("within"))
    if "frame" in raw:
        text += " in frame"
    return text


def _target(args: Mapping[str, Any]) -> str:
    if isinstance(args.get("ref"), str):
        return f"ref={args['ref']}"
    if "locator" in args:
        return _locator(args["locator"])
    if isinstance(args.get("url"), str):
        return sanitize_url(args["url"], max_chars=LABEL_MAX_CHARS)
    if isinstance(args.get("key"), str):
        return f"key={args['key']}"
    for field in ("condition", "wait", "action"):
        inner = args.get(field)
        if isinstance(inner, Mapping):
            kind = inner.get("kind") or inner.get("tool")
            detail = _target(inner)
            return " ".join(str(part) for part in (field, kind, detail) if part)
    return ""


def step_label(tool: str, args: Mapping[str, Any]) -> str:
    """`tool target`, printable and at most `LABEL_MAX_CHARS` characters."""
    target = _target(args)
    text = f"{tool} {target}" if target else tool
    return cut_chars(_printable(text), LABEL_MAX_CHARS)
