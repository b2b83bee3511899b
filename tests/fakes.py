"""FakeEngine: an in-memory engine for fast, deterministic runtime tests (never proof that a
tool works against a browser; the integration suite does that).

It implements the whole engine port (`browsermesh.engine.protocol.Engine`; tests/unit/
test_fake_engine.py fails when a method is missing or its signature differs), so the runtime's
rules (queue, deadline, cancellation, lifecycle, limits) are unit-tested on every operation.
Every call is recorded in `calls`, takes `delay` seconds, and honours the operation's deadline
and cancellation the way an engine step does.
"""

from __future__ import annotations

import asyncio
import json
import struct
import zipfile
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from browsermesh.engine.capture import Screenshot
from browsermesh.engine.highlight import Box, Mark
from browsermesh.engine.protocol import ContextOptions, EngineEvents, HistoryStep
from browsermesh.engine.snapshot import Capture
from browsermesh.errors import BrowserMeshError, ErrorCode
from browsermesh.model.deadline import OperationContext
from browsermesh.model.element_ops import ElementOp
from browsermesh.model.find import FindQuery
from browsermesh.model.locators import Locator, RefTarget, Selector, Target
from browsermesh.model.matchers import (
    ActionSpec,
    Condition,
    NavigationWait,
    PopupWait,
    UrlCondition,
    WaitSpec,
)
from browsermesh.model.mouse import MouseGesture, Viewport
from browsermesh.model.navigation import Landing
from browsermesh.model.observe import PageObservations
from browsermesh.model.page_tools import ToolResult, tool_listing
from browsermesh.model.paging import SnapshotOptions
from browsermesh.model.png import PNG_SIGNATURE, ScreenshotLimits
from browsermesh.model.tracing import TraceOptions

FAKE_PDF = b"%PDF-1.7\n% a fake engine's page\n%%EOF\n"


def make_png(width: int, height: int) -> bytes:
    """The signature and IHDR chunk of a `width` x `height` PNG (all `png_size` reads)."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = struct.pack(">I", 13) + b"IHDR" + ihdr + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr))
    return PNG_SIGNATURE + chunk


@dataclass(eq=False)
class FakeContext:
    placement: str
    options: ContextOptions
    pages: list[FakePage] = field(default_factory=list)
    closed: bool = False
    # `network` settings applied by update_network (browser_session_update), latest last.
    networks: list[dict[str, Any]] = field(default_factory=list)
    # The open trace's marks (issue 35): group names, None for a group's end; None: not tracing.
    trace: list[str | None] | None = None
    # Values the runtime asked to redact (remember_secrets, §36).
    secrets: list[str] = field(default_factory=list)


@dataclass(eq=False)
class FakePage:
    context: FakeContext
    url: str = "about:blank"
    history: list[str] = field(default_factory=lambda: ["about:blank"])
    closed: bool = False
    crashed: bool = False
    sink: PageObservations | None = None
    actions: list[tuple[str, Any]] = field(default_factory=list)
    """What was done to the page, in order: ("click", target), ("fill_field", (target, value))..."""


class FakeChangeWatch:
    """What `FakeEngine.watch_changes` returns: nothing ever changes on a fake page."""

    def __init__(self) -> None:
        self.closed = False

    async def finish(self, ctx: OperationContext, *, settle: bool) -> dict[str, Any]:
        await self.close()
        return {}

    async def close(self) -> None:
        self.closed = True


class Gate:
    """Holds the engine calls it names (by the name `FakeEngine.calls` records: the port
    method's, or the operation's for `act`) until opened, and says when one arrives, so a test
    orders events on the arrival instead of a sleep: `await gate.arrivals(1)` returns once the
    first held call is inside the engine.

    Created inside the test's event loop (its events bind to it); `engine.gate = Gate()` holds
    `navigate` calls."""

    def __init__(self, *names: str) -> None:
        self.names = frozenset(names or ("navigate",))
        self.arrived: list[str] = []
        """The held calls that reached the gate, in arrival order (opened or not)."""
        self.reached = asyncio.Event()
        """Set when the first held call reaches the gate."""
        self._opened = asyncio.Event()
        self._next_arrival = asyncio.Event()

    def holds(self, name: str) -> bool:
        """Whether the gate holds a call named `name`."""
        return name in self.names

    async def pass_through(self, name: str) -> None:
        """Record the arrival of `name` and wait until the gate is opened."""
        self.arrived.append(name)
        self.reached.set()
        self._next_arrival.set()
        self._next_arrival = asyncio.Event()
        await self._opened.wait()

    async def arrivals(self, n: int) -> None:
        """Return once `n` held calls in all have reached the gate."""
        while len(self.arrived) < n:
            await self._next_arrival.wait()

    def open(self) -> None:
        """Let every held call, waiting or still to come, through."""
        self._opened.set()


class FakeEngine:
    """Implements the engine port in memory with delays, gates and failure switches."""

    def __init__(self, delay: float = 0.005) -> None:
        self.events = EngineEvents()
        self.delay = delay
        self.contexts: list[FakeContext] = []
        self.calls: list[str] = []
        self.active = 0
        self.max_active = 0
        self.gate: Gate | None = None
        self.fail_next_navigation: BrowserMeshError | None = None
        self.fail_next_context: BrowserMeshError | None = None
        # What fork_storage returns (issue 19): a storage state and sessionStorage by origin.
        self.fork_state: dict[str, Any] = {"cookies": [], "origins": []}
        self.fork_session: dict[str, dict[str, str]] = {}
        self._state = "not_started"

    @property
    def backend(self) -> str:
        return "local"

    @property
    def launch_state(self) -> str:
        return self._state

    @property
    def browser_version(self) -> str | None:
        return "fake" if self._state == "ready" else None

    @property
    def sandbox(self) -> bool | None:
        return False

    @property
    def browser_binary(self) -> str | None:
        return "headless-shell"

    @property
    def webmcp(self) -> bool:
        return True

    def endpoints(self) -> list[dict[str, Any]]:
        return []

    async def _work(self, name: str, timeout_ms: float | None = None) -> None:
        self.calls.append(name)
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        try:
            if self.gate is not None and self.gate.holds(name):
                await self.gate.pass_through(name)
            if timeout_ms is not None and self.delay * 1000 > timeout_ms:
                await asyncio.sleep(timeout_ms / 1000)
                raise BrowserMeshError(ErrorCode.OPERATION_TIMEOUT)
            await asyncio.sleep(self.delay)
        finally:
            self.active -= 1

    async def _step(self, name: str, ctx: OperationContext) -> None:
        """An engine step of an operation: refused when cancelled or out of budget."""
        ctx.check()
        await self._work(name, ctx.deadline.budget_ms())

    async def new_context(
        self, options: ContextOptions, ctx: OperationContext, live_by_placement: dict[str, int]
    ) -> FakeContext:
        await self._work("new_context")
        if self.fail_next_context is not None:
            err, self.fail_next_context = self.fail_next_context, None
            raise err
        self._state = "ready"
        context = FakeContext("local", options)
        self.contexts.append(context)
        return context

    async def fork_storage(
        self, context: FakeContext, pages: list[FakePage], ctx: OperationContext
    ) -> tuple[dict[str, Any], dict[str, dict[str, str]]]:
        await self._work("fork_storage", ctx.deadline.budget_ms())
        return self.fork_state, self.fork_session

    async def close_context(self, context: FakeContext) -> None:
        await self._work("close_context")
        context.closed = True
        for page in context.pages:
            page.closed = True
        self.contexts.remove(context)

    async def storage_state(self, context: FakeContext, ctx: OperationContext) -> dict[str, Any]:
        await self._work("storage_state", ctx.deadline.budget_ms())
        state = context.options.storage_state or {}
        return {
            "cookies": list(state.get("cookies", [])),
            "origins": list(state.get("origins", [])),
        }

    def remember_secrets(self, context: FakeContext, values: Iterable[str]) -> None:
        context.secrets.extend(values)

    async def update_network(
        self, context: FakeContext, network: dict[str, Any], ctx: OperationContext
    ) -> None:
        await self._work("update_network", ctx.deadline.budget_ms())
        context.networks.append(network)

    async def new_page(self, context: FakeContext, ctx: OperationContext) -> FakePage:
        await self._work("new_page")
        page = FakePage(context)
        context.pages.append(page)
        return page

    async def close_page(self, page: FakePage, ctx: OperationContext) -> None:
        await self._work("close_page")
        page.closed = True
        page.context.pages.remove(page)

    async def navigate(self, page: FakePage, url: str, ctx: OperationContext) -> Landing:
        await self._work("navigate", ctx.deadline.budget_ms())
        if self.fail_next_navigation is not None:
            err, self.fail_next_navigation = self.fail_next_navigation, None
            raise err
        page.url = url
        page.history.append(url)
        return Landing(url)

    async def history(self, page: FakePage, step: HistoryStep, ctx: OperationContext) -> Landing:
        await self._work(step)
        return Landing(page.url)

    def current_url(self, page: FakePage) -> str:
        return page.url

    async def title(self, page: FakePage, ctx: OperationContext) -> str:
        await self._work("title")
        return f"Title of {page.url}"

    async def act(
        self, page: FakePage, target: Target, op: str, arg: Any, ctx: OperationContext
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        await self._step(op, ctx)
        page.actions.append((op, target if arg is None else (target, arg)))
        return {}, {}

    async def describe_target(
        self, page: FakePage, target: Target, ctx: OperationContext
    ) -> dict[str, Any]:
        """A locator as given; a ref as the test id `ref-<token>`. A target whose value or name
        mentions "password" is a password field (so runtime tests can check secrets)."""
        self.calls.append("describe_target")
        if isinstance(target, Locator):
            locator = target.wire()
        else:
            locator = {"strategy": "testId", "value": f"ref-{target.token}"}
        said = f"{locator.get('value', '')} {locator.get('name', '')}".lower()
        return {
            "locator": locator,
            "isPassword": "password" in said,
            "kind": "text",
            "resolved": True,
        }

    async def watch_changes(self, page: FakePage, ctx: OperationContext) -> FakeChangeWatch:
        await self._step("watch_changes", ctx)
        return FakeChangeWatch()

    async def fill_field(
        self, page: FakePage, target: Target, value: str | bool, ctx: OperationContext
    ) -> ElementOp:
        await self._step("fill_field", ctx)
        page.actions.append(("fill_field", (target, value)))
        if isinstance(value, bool):
            return "check" if value else "uncheck"
        return "fill"

    async def visible_text(self, page: FakePage, locator: Locator, ctx: OperationContext) -> str:
        await self._step("visible_text", ctx)
        return f"Text of {page.url}"

    async def find(self, page: FakePage, query: FindQuery, ctx: OperationContext) -> dict[str, Any]:
        await self._step("find", ctx)
        return {"count": 1, "matches": [{"text": f"{query.text} on {page.url}"}]}

    async def scroll(self, page: FakePage, dx: int, dy: int, ctx: OperationContext) -> None:
        await self._step("scroll", ctx)
        page.actions.append(("scroll", (dx, dy)))

    async def viewport(self, page: FakePage, ctx: OperationContext) -> Viewport:
        await self._step("viewport", ctx)
        return Viewport(1280.0, 720.0, 1.0)

    async def mouse(self, page: FakePage, gesture: MouseGesture, ctx: OperationContext) -> None:
        await self._step("mouse", ctx)
        page.actions.append(("mouse", gesture))

    async def page_tools(
        self, page: FakePage, chain: tuple[Selector, ...] | None, ctx: OperationContext
    ) -> dict[str, Any]:
        await self._step("page_tools", ctx)
        return tool_listing([], 0, str)

    async def page_tool_count(self, page: FakePage, ctx: OperationContext) -> int | None:
        return 0

    async def page_tool_call(
        self,
        page: FakePage,
        chain: tuple[Selector, ...],
        name: str,
        arguments: dict[str, Any],
        ctx: OperationContext,
    ) -> ToolResult:
        await self._step("page_tool_call", ctx)
        page.actions.append(("page_tool_call", (name, arguments)))
        return ToolResult(None)

    async def set_files(
        self, page: FakePage, target: Target, payloads: list[Any], ctx: OperationContext
    ) -> str:
        await self._step("set_files", ctx)
        page.actions.append(("set_files", (target, len(payloads))))
        return "input"

    async def pdf(self, page: FakePage, ctx: OperationContext) -> bytes:
        await self._step("pdf", ctx)
        return FAKE_PDF

    async def element_mark(
        self, page: FakePage, target: Target, ctx: OperationContext
    ) -> tuple[Mark, tuple[float, float]]:
        """A fixed box (the fake has no layout) at the top left of a 1280x720 viewport."""
        await self._step("element_mark", ctx)
        return Mark(10.0, 20.0, 100.0, 30.0, "button"), (1280.0, 720.0)

    async def trace_start(
        self, context: FakeContext, options: TraceOptions, ctx: OperationContext
    ) -> None:
        await self._step("trace_start", ctx)
        if context.trace is not None:
            raise BrowserMeshError(ErrorCode.BROWSER_ERROR, cause="tracing already started")
        context.trace = []

    async def trace_group(
        self, context: FakeContext, name: str | None, ctx: OperationContext
    ) -> None:
        if context.trace is None:
            raise BrowserMeshError(ErrorCode.BROWSER_ERROR, cause="tracing not started")
        context.trace.append(name)

    async def trace_stop(
        self, context: FakeContext, path: Path | None, ctx: OperationContext
    ) -> None:
        """Writes a zip shaped like Playwright's: `trace.trace` JSON lines, one per mark."""
        await self._step("trace_stop", ctx)
        marks, context.trace = context.trace, None
        if marks is None:
            raise BrowserMeshError(ErrorCode.BROWSER_ERROR, cause="tracing not started")
        if path is None:
            return
        lines = [json.dumps({"type": "context-options", "version": 8})]
        lines += [
            json.dumps({"type": "before", "method": "tracingGroup", "title": m})
            if m is not None
            else json.dumps({"type": "after", "method": "tracingGroupEnd"})
            for m in marks
        ]
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr("trace.trace", "\n".join(lines) + "\n")
            archive.writestr("trace.network", "")

    async def drag(
        self, page: FakePage, source: Locator, target: Locator, ctx: OperationContext
    ) -> None:
        await self._step("drag", ctx)
        page.actions.append(("drag", (source, target)))

    async def screenshot(
        self,
        page: FakePage,
        kind: str,
        locator: Locator | None,
        limits: ScreenshotLimits,
        ctx: OperationContext,
        highlight: Target | None = None,
    ) -> Screenshot:
        """A viewport-sized PNG header; a highlight is boxed at a fixed place."""
        await self._step("screenshot", ctx)
        width, height = limits.check_size(1280, 720)
        box = None if highlight is None else Box(10, 20, 100, 40)
        return Screenshot(make_png(width, height), width, height, box)

    async def wait(self, page: FakePage, condition: Condition, ctx: OperationContext) -> None:
        """A URL condition holds once a navigation reaches a matching URL (polled, like the
        engine's waits: a deadline or a cancellation ends it); any other condition holds."""
        await self._step("wait", ctx)
        if isinstance(condition, UrlCondition):
            while not condition.matcher.matches(page.url):
                if ctx.deadline.remaining_ms() <= 0:
                    raise ctx.deadline.timeout_error()
                await ctx.sleep(5)

    async def action_and_wait(
        self, page: FakePage, action: ActionSpec, wait: WaitSpec, ctx: OperationContext
    ) -> tuple[dict[str, Any], FakePage | None]:
        """A navigation wait is met by the page as it is, a popup wait by a new page in the
        same context; what a fake page never does (dialogs, downloads...) times out."""
        await self._step("action_and_wait", ctx)
        page.actions.append((action.kind, action.target))
        if isinstance(wait, NavigationWait):
            return {"kind": "navigation", "url": page.url, "_changes": {}}, None
        if isinstance(wait, PopupWait):
            popup = FakePage(page.context)
            page.context.pages.append(popup)
            return {"kind": "popup", "_changes": {}}, popup
        await ctx.sleep(ctx.deadline.remaining_ms())
        raise ctx.deadline.timeout_error()

    def observe(self, page: FakePage, sink: PageObservations) -> None:
        page.sink = sink  # tests emit console/network events through it

    async def snapshot(
        self,
        page: FakePage,
        opts: SnapshotOptions,
        scope: Locator | RefTarget | None,
        ctx: OperationContext,
    ) -> Capture:
        await self._step("snapshot", ctx)
        return Capture(content=f'- document "Title of {page.url}"')

    async def evaluate(
        self, page: FakePage, expression: str, arg: Any, ctx: OperationContext
    ) -> tuple[Any, bool]:
        """`(arg, False)`: the fake's page script hands back its argument."""
        await self._step("evaluate", ctx)
        return arg, False

    async def stop(self) -> None:
        self._state = "not_started"

    def disconnect(self, placement: str = "local") -> None:
        self._state = "failed"
        self.contexts.clear()
        self.events.on_disconnect(placement)

    def live_pages(self) -> int:
        return sum(len(c.pages) for c in self.contexts)
