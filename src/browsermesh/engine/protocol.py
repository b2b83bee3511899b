"""The engine port: what the runtime may ask of a browser backend.

Handles are opaque to the runtime: it stores them and passes them back, never looks inside. Every
method raises `BrowserMeshError` (already classified) on failure, never a Playwright exception.

One calling convention: every method that does browser work for a call takes that call's
`OperationContext` (its deadline and its cancel signal) as `ctx`; only the clean-up methods
`close_context` and `stop` take none and bound themselves with the engine's own fixed budget
(tests/unit/test_engine_convention.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from browsermesh.engine.capture import Screenshot
from browsermesh.engine.highlight import Mark
from browsermesh.engine.snapshot import Capture
from browsermesh.model.deadline import OperationContext
from browsermesh.model.element_ops import ElementOp
from browsermesh.model.find import FindQuery
from browsermesh.model.locators import Locator, RefTarget, Selector, Target
from browsermesh.model.matchers import ActionSpec, Condition, WaitSpec
from browsermesh.model.mouse import MouseGesture, Viewport
from browsermesh.model.navigation import HistoryStep, Landing
from browsermesh.model.observe import PageObservations
from browsermesh.model.options import OptionChoice
from browsermesh.model.page_tools import ToolResult
from browsermesh.model.paging import SnapshotOptions
from browsermesh.model.png import ScreenshotLimits
from browsermesh.model.tracing import TraceOptions

__all__ = [
    "ChangeWatcher",
    "ContextOptions",
    "ContextT",
    "Engine",
    "EngineContext",
    "EngineEvents",
    "EnginePage",
    "HistoryStep",  # model.navigation's, named here too: it is part of the port
    "PageT",
]


class EngineContext(Protocol):
    """One BrowserContext (= one session). `placement` names the backend endpoint it lives on."""

    placement: str


class EnginePage(Protocol):
    """One managed page. `crashed`: its renderer crashed (only a reload can bring it back)."""

    closed: bool
    crashed: bool


@dataclass(frozen=True, slots=True)
class ContextOptions:
    """Everything a new context is created with."""

    settings: dict[str, Any] = field(default_factory=dict)
    storage_state: dict[str, Any] | None = None
    # A fork's sessionStorage (origin → items), put into the context's first page (issue 19).
    session_storage: dict[str, dict[str, str]] | None = None


@dataclass(slots=True)
class EngineEvents:
    """Callbacks the engine fires; the runtime installs them once."""

    on_disconnect: Callable[[str], None] = lambda placement: None
    on_page_closed: Callable[[EnginePage], None] = lambda page: None
    # A page started a download (an `engine.files.EngineDownload`); the runtime saves it.
    on_download: Callable[[EnginePage, Any], None] = lambda page, download: None
    # Not an event: asked when a page opens a popup nobody expects. Pages the page's session
    # may hold (managed or not); past it the popup is closed at once (engine/popups.py).
    page_limit: Callable[[EnginePage], int] = lambda page: 20


class ChangeWatcher(Protocol):
    """What `Engine.watch_changes` returns (engine.changes.ChangeWatch)."""

    async def finish(self, ctx: OperationContext, *, settle: bool) -> dict[str, Any]: ...
    async def close(self) -> None: ...


ContextT = TypeVar("ContextT", bound=EngineContext)
PageT = TypeVar("PageT", bound=EnginePage)


class Engine(Protocol[ContextT, PageT]):
    """A browser backend (local launch, CDP attach or a browser-server pool), generic in its
    context and page handle types (`PlaywrightEngine` is `Engine[PwContext, PwPage]`; the
    runtime, which never looks inside a handle, holds an `Engine[Any, Any]`)."""

    events: EngineEvents

    @property
    def backend(self) -> str: ...
    @property
    def launch_state(self) -> str: ...
    @property
    def browser_version(self) -> str | None: ...
    @property
    def sandbox(self) -> bool | None: ...
    @property
    def browser_binary(self) -> str | None: ...
    @property
    def webmcp(self) -> bool:
        """Whether pages can register WebMCP tools: the browser was started with
        `--enable-features=WebMCP` (never known for a browser attached over CDP)."""
        ...

    def endpoints(self) -> list[dict[str, Any]]: ...

    async def new_context(
        self, options: ContextOptions, ctx: OperationContext, live_by_placement: dict[str, int]
    ) -> ContextT:
        """Create a context on the backend endpoint the engine picks (fewest live sessions)."""
        ...

    async def close_context(self, context: ContextT) -> None: ...
    async def update_network(
        self, context: ContextT, network: dict[str, Any], ctx: OperationContext
    ) -> None:
        """Apply a session's new normalized `network` settings (issue 19) to its context."""
        ...

    def remember_secrets(self, context: ContextT, values: Iterable[str]) -> None:
        """Redact `values` from every later read of the context's pages, like a password
        field's value (a secret filled by name, §36)."""
        ...

    async def storage_state(self, context: ContextT, ctx: OperationContext) -> dict[str, Any]: ...
    async def fork_storage(
        self, context: ContextT, pages: list[PageT], ctx: OperationContext
    ) -> tuple[dict[str, Any], dict[str, dict[str, str]]]:
        """What a fork copies: the storage state (cookies, localStorage, IndexedDB) and the
        sessionStorage of `pages`' origins, the first page of an origin winning."""
        ...

    async def new_page(self, context: ContextT, ctx: OperationContext) -> PageT: ...
    async def close_page(self, page: PageT, ctx: OperationContext) -> None:
        """Close the page within `ctx`'s deadline; past it the page is left to its context."""
        ...

    async def navigate(self, page: PageT, url: str, ctx: OperationContext) -> Landing:
        """Load `url`; a cancelled call issues no further attempt (`ctx.check()`)."""
        ...

    async def history(self, page: PageT, step: HistoryStep, ctx: OperationContext) -> Landing: ...
    def current_url(self, page: PageT) -> str: ...
    async def title(self, page: PageT, ctx: OperationContext) -> str: ...
    async def act(
        self,
        page: PageT,
        target: Target,
        op: ElementOp,
        arg: str | OptionChoice | None,
        ctx: OperationContext,
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """One element action: what it changed (engine.changes) and the operation's own result
        fields (select_option: `selected`, issue 31; `{}` for the others)."""
        ...

    async def describe_target(
        self, page: PageT, target: Target, ctx: OperationContext
    ) -> dict[str, Any]:
        """The replayable form of an action's target, read before the action for the session's
        recording (issue 20, engine.describe): `{locator, isPassword, kind, resolved,
        secrets}` (`secrets`: the page's password values, which the recording keeps out of its
        steps, issue 30). Never raises; a small part of the call's budget at most."""
        ...

    async def watch_changes(self, page: PageT, ctx: OperationContext) -> ChangeWatcher:
        """A started watch of what the page changes (engine.changes) for an operation the
        runtime composes of several engine calls (browser_fill_form)."""
        ...

    async def fill_field(
        self, page: PageT, target: Target, value: str | bool, ctx: OperationContext
    ) -> ElementOp:
        """One browser_fill_form field: fill, select option, check or uncheck, as the
        element's kind (tag, type, role) takes `value`; returns which of the four it was."""
        ...

    async def visible_text(self, page: PageT, locator: Locator, ctx: OperationContext) -> str: ...
    async def find(self, page: PageT, query: FindQuery, ctx: OperationContext) -> dict[str, Any]:
        """browser_find (issue 31): the page's (or the scope's) matching lines, bounded and
        paged by `query`, with refs for the elements they lie in (engine.find)."""
        ...

    async def scroll(self, page: PageT, dx: int, dy: int, ctx: OperationContext) -> None: ...
    async def viewport(self, page: PageT, ctx: OperationContext) -> Viewport:
        """The page's viewport in CSS pixels and its device scale factor."""
        ...

    async def mouse(self, page: PageT, gesture: MouseGesture, ctx: OperationContext) -> None:
        """A mouse gesture at CSS pixels of the viewport (issue 36 item 3)."""
        ...

    async def page_tools(
        self, page: PageT, chain: tuple[Selector, ...] | None, ctx: OperationContext
    ) -> dict[str, Any]:
        """The page's WebMCP tools, of every frame or of the one `chain` addresses, bounded
        and redacted (issue 36 item 1, model.page_tools.tool_listing)."""
        ...

    async def page_tool_count(self, page: PageT, ctx: OperationContext) -> int | None:
        """How many WebMCP tools the page's frames register now; None when not counted in
        a small share of the budget."""
        ...

    async def page_tool_call(
        self,
        page: PageT,
        chain: tuple[Selector, ...],
        name: str,
        arguments: dict[str, Any],
        ctx: OperationContext,
    ) -> ToolResult:
        """Call one of the frame's WebMCP tools within the budget; its answer redacted and
        bounded (errors: engine.page_tools.call_tool)."""
        ...

    async def set_files(
        self, page: PageT, target: Target, payloads: list[Any], ctx: OperationContext
    ) -> str:
        """Set files (`engine.files.FilePayload`s) on a file input or answer the file chooser
        a click on the target opens; `input` or `chooser`."""
        ...

    async def pdf(self, page: PageT, ctx: OperationContext) -> bytes: ...
    async def drag(
        self, page: PageT, source: Locator, target: Locator, ctx: OperationContext
    ) -> None: ...
    async def screenshot(
        self,
        page: PageT,
        kind: str,
        locator: Locator | None,
        limits: ScreenshotLimits,
        ctx: OperationContext,
        highlight: Target | None = None,
    ) -> Screenshot: ...
    async def wait(self, page: PageT, condition: Condition, ctx: OperationContext) -> None: ...
    async def action_and_wait(
        self, page: PageT, action: ActionSpec, wait: WaitSpec, ctx: OperationContext
    ) -> tuple[dict[str, Any], PageT | None]: ...
    def observe(self, page: PageT, sink: PageObservations) -> None: ...
    async def snapshot(
        self,
        page: PageT,
        opts: SnapshotOptions,
        scope: Locator | RefTarget | None,
        ctx: OperationContext,
    ) -> Capture: ...
    async def evaluate(
        self, page: PageT, expression: str, arg: Any, ctx: OperationContext
    ) -> tuple[Any, bool]:
        """`(result, truncated)`: the value's JSON form within reference §10's byte bound."""
        ...

    async def element_mark(
        self, page: PageT, target: Target, ctx: OperationContext
    ) -> tuple[Mark, tuple[float, float]]:
        """Where `target` is now (CSS pixels of the viewport, not scrolled to) with its label,
        and the viewport's size: the box a session video draws around a call's element."""
        ...

    async def trace_start(
        self, context: ContextT, options: TraceOptions, ctx: OperationContext
    ) -> None:
        """Start Playwright tracing of the context (issue 35)."""
        ...

    async def trace_group(self, context: ContextT, name: str | None, ctx: OperationContext) -> None:
        """Open a named group in the context's trace, or close the innermost one (None); bound
        by the engine, not by `ctx` (an end mark is written after a timed-out call too)."""
        ...

    async def trace_stop(self, context: ContextT, path: Path | None, ctx: OperationContext) -> None:
        """Stop tracing; the raw zip goes to `path`, or nowhere (None: discarded)."""
        ...

    async def stop(self) -> None: ...
