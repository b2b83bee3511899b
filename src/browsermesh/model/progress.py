"""What a long call is doing right now, for a person watching the client (issue 17).

Code anywhere below the MCP layer calls `report("launching Chromium")` at the start of a step
that may take a while. When the current call asked for progress (its request carried a
`progressToken`), the MCP layer has installed a sink with `reporting(sink)` and turns the phases
into rate-limited `notifications/progress`; otherwise `report` does nothing and costs one
context-variable read.

The sink lives in a context variable, so it follows the call into the tasks it starts (the
session queue's job task is created inside the call and copies the context). A phase message
is text a person can read: never page content, form values, URLs' paths or queries, or secrets.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from urllib.parse import urlsplit

from browsermesh.model.matchers import (
    Condition,
    DialogWait,
    DownloadWait,
    FileChooserWait,
    LoadCondition,
    NavigationWait,
    PopupWait,
    ResponseWait,
    TextCondition,
    UrlCondition,
    WaitSpec,
)

ProgressSink = Callable[[str, "float | None"], None]
"""`sink(message, total_s)`: a new phase started; `total_s` is its budget when it has one."""

_SINK: ContextVar[ProgressSink | None] = ContextVar("browsermesh_progress", default=None)

PHASE_TEXT_CHARS = 40
"""Caller-given text quoted in a phase (a waited-for text) is cut to this many characters."""


def report(message: str, *, total_ms: float | None = None) -> None:
    """A new phase of the current call started; `total_ms` is the phase's budget, if any."""
    sink = _SINK.get()
    if sink is not None:
        sink(message, None if total_ms is None else total_ms / 1000)


def active() -> bool:
    """True when the current call reports progress: hot paths (every operation, navigation
    and wait) check it before building a phase message nobody would read."""
    return _SINK.get() is not None


@contextlib.contextmanager
def reporting(sink: ProgressSink) -> Iterator[None]:
    """Route `report` calls made in this context (and tasks started in it) to `sink`."""
    token = _SINK.set(sink)
    try:
        yield
    finally:
        _SINK.reset(token)


def quoted(text: str) -> str:
    """`text` as a phase shows it: one line, cut to `PHASE_TEXT_CHARS`, in single quotes."""
    line = " ".join(text.split())
    if len(line) > PHASE_TEXT_CHARS:
        line = line[: PHASE_TEXT_CHARS - 1] + "…"
    return f"'{line}'"


def condition_phase(cond: Condition) -> str:
    """The phase a `browser_wait` on `cond` reports (the caller's own text, cut; never a URL)."""
    if isinstance(cond, TextCondition):
        suffix = "" if cond.present else " to disappear"
        return f"waiting for text {quoted(cond.text)}{suffix}"
    if isinstance(cond, UrlCondition):
        return "waiting for the URL to match"
    if isinstance(cond, LoadCondition):
        return f"waiting for the page's {cond.state} event"
    return f"waiting for the element to be {cond.state}"


_EVENT_NAMES: dict[type[object], str] = {
    NavigationWait: "a navigation",
    ResponseWait: "a response",
    PopupWait: "a popup",
    DialogWait: "a dialog",
    DownloadWait: "a download",
    FileChooserWait: "a file chooser",
}


def event_phase(wait: WaitSpec) -> str:
    """The phase an action-and-wait reports once it acted and waits for `wait`."""
    return f"waiting for {_EVENT_NAMES.get(type(wait), 'an event')}"


def loading_phase(url: str) -> str:
    """`loading https://host:port`: the origin only (paths, queries and user info may carry
    secrets); `loading the page` for anything that is not http(s)."""
    try:
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port
    except ValueError:
        return "loading the page"
    if parts.scheme not in ("http", "https") or not host:
        return "loading the page"
    if ":" in host:
        host = f"[{host}]"
    return f"loading {parts.scheme}://{host}" + ("" if port is None else f":{port}")
