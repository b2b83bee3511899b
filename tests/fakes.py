"""FakeEngine: an in-memory engine for fast, deterministic runtime tests (never proof that a
tool works against a browser; the integration suite does that)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from browsermesh.engine.protocol import ContextOptions, EngineEvents, HistoryStep
from browsermesh.errors import BrowserMeshError, ErrorCode


@dataclass(eq=False)
class FakeContext:
    placement: str
    options: ContextOptions
    pages: list[FakePage] = field(default_factory=list)
    closed: bool = False
    # `network` settings applied by update_network (browser_session_update), latest last.
    networks: list[dict[str, Any]] = field(default_factory=list)


@dataclass(eq=False)
class FakePage:
    context: FakeContext
    url: str = "about:blank"
    history: list[str] = field(default_factory=lambda: ["about:blank"])
    closed: bool = False
    crashed: bool = False
    sink: Any = None


class FakeEngine:
    """Implements the engine port in memory with delays, gates and failure switches."""

    def __init__(self, delay: float = 0.005) -> None:
        self.events = EngineEvents()
        self.delay = delay
        self.contexts: list[FakeContext] = []
        self.calls: list[str] = []
        self.active = 0
        self.max_active = 0
        self.gate: asyncio.Event | None = None
        self.fail_next_navigation: BrowserMeshError | None = None
        self.fail_next_context: BrowserMeshError | None = None
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

    def endpoints(self) -> list[dict[str, Any]]:
        return []

    async def _work(self, name: str, timeout_ms: float | None = None) -> None:
        self.calls.append(name)
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        try:
            if self.gate is not None and name == "navigate":
                await self.gate.wait()
            if timeout_ms is not None and self.delay * 1000 > timeout_ms:
                await asyncio.sleep(timeout_ms / 1000)
                raise BrowserMeshError(ErrorCode.OPERATION_TIMEOUT)
            await asyncio.sleep(self.delay)
        finally:
            self.active -= 1

    async def new_context(
        self, options: ContextOptions, timeout_ms: float, live_by_placement: dict[str, int]
    ) -> FakeContext:
        await self._work("new_context")
        if self.fail_next_context is not None:
            err, self.fail_next_context = self.fail_next_context, None
            raise err
        self._state = "ready"
        ctx = FakeContext("local", options)
        self.contexts.append(ctx)
        return ctx

    async def close_context(self, context: FakeContext) -> None:  # type: ignore[override]
        await self._work("close_context")
        context.closed = True
        for page in context.pages:
            page.closed = True
        self.contexts.remove(context)

    async def update_network(  # type: ignore[override]
        self, context: FakeContext, network: dict[str, Any], timeout_ms: float
    ) -> None:
        await self._work("update_network", timeout_ms)
        context.networks.append(network)

    async def new_page(self, context: FakeContext, timeout_ms: float) -> FakePage:  # type: ignore[override]
        await self._work("new_page")
        page = FakePage(context)
        context.pages.append(page)
        return page

    async def close_page(self, page: FakePage, timeout_ms: float) -> None:  # type: ignore[override]
        await self._work("close_page")
        page.closed = True
        page.context.pages.remove(page)

    async def navigate(self, page: FakePage, url: str, timeout_ms: float) -> str:  # type: ignore[override]
        await self._work("navigate", timeout_ms)
        if self.fail_next_navigation is not None:
            err, self.fail_next_navigation = self.fail_next_navigation, None
            raise err
        page.url = url
        page.history.append(url)
        return url

    async def history(self, page: FakePage, step: HistoryStep, timeout_ms: float) -> str:  # type: ignore[override]
        await self._work(step)
        return page.url

    def current_url(self, page: FakePage) -> str:  # type: ignore[override]
        return page.url

    async def title(self, page: FakePage, timeout_ms: float) -> str:  # type: ignore[override]
        await self._work("title")
        return f"Title of {page.url}"

    async def stop(self) -> None:
        self._state = "not_started"

    def disconnect(self, placement: str = "local") -> None:
        self._state = "failed"
        self.contexts.clear()
        self.events.on_disconnect(placement)

    def observe(self, page: FakePage, sink: Any) -> None:
        page.sink = sink  # tests emit console/network events through it

    def live_pages(self) -> int:
        return sum(len(c.pages) for c in self.contexts)
