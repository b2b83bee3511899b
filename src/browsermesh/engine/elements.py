"""Locating elements (frame chains, strictness, deadline classification) and acting on them.

Implements contract §5.3–5.5 for every element-resolving operation: a locator is resolved afresh
each call; a ref is looked up in the page's registry and never re-resolved to another element.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from browsermesh.engine.bounded import quietly, within
from browsermesh.engine.failures import classify_reason, raw_cause
from browsermesh.errors import BrowserMeshError, ErrorCode
from browsermesh.model.clock import Clock
from browsermesh.model.deadline import Deadline, OperationContext
from browsermesh.model.locators import Locator, RefTarget, Selector, Target
from browsermesh.model.text import well_formed

if TYPE_CHECKING:
    from playwright.async_api import ElementHandle, Page
    from playwright.async_api import Locator as PwLocator

REF_TTL_S = 30.0
FRAME_POLL_MS = 25
PROBE_RESERVE_MS = 250

# The `operation` error detail of each element operation (§16.4 allowlist).
OPERATION_DETAIL = {
    "click": "click",
    "double_click": "double-click",
    "hover": "hover over",
    "focus": "focus",
    "check": "check",
    "uncheck": "uncheck",
    "scroll_into_view": "scroll into view",
    "fill": "fill",
    "press": "press",
    "select_option": "select option",
    "visible_text": "read visible text",
    "drag": "drag",
    "snapshot": "capture snapshot",
    "screenshot": "capture screenshot",
}


@dataclass(eq=False)
class RefEntry:
    """A live ref: the element's handle, captured by one snapshot, valid until `expires_at`."""

    handle: ElementHandle
    expires_at: float
    region: bool = False


@dataclass(eq=False)
class RefRegistry:
    """One page's refs. A new capture or a main-frame navigation replaces them all."""

    clock: Clock
    ttl_s: float = REF_TTL_S
    generation: int = 0
    entries: dict[str, RefEntry] = field(default_factory=dict)

    def advance(self, generation: int) -> list[RefEntry]:
        """Start a new generation; returns the old entries so their handles can be released."""
        old = list(self.entries.values())
        self.generation = generation
        self.entries = {}
        return old

    def lookup(self, token: str, *, region: bool = False) -> RefEntry:
        entry = self.entries.get(token)
        if entry is None or entry.region != region:
            raise BrowserMeshError(ErrorCode.STALE_ELEMENT_REFERENCE)
        if entry.expires_at <= self.clock.monotonic():
            self.entries.pop(token, None)
            raise BrowserMeshError(ErrorCode.STALE_ELEMENT_REFERENCE)
        return entry


async def release(entries: list[RefEntry]) -> None:
    """Dispose handles of replaced refs. Best effort and bounded: a handle that cannot be
    released (its page is busy or gone) is freed with its document or context anyway."""
    await asyncio.gather(*(quietly(e.handle.dispose()) for e in entries))


Root = Any  # Page or FrameLocator: both offer get_by_role/locator/...


def build(root: Root, sel: Selector) -> PwLocator:
    """A Playwright locator for one selector under `root` (page or frame)."""
    if sel.strategy == "role":
        if sel.name is None:
            return root.get_by_role(sel.value)  # type: ignore[no-any-return]
        return root.get_by_role(sel.value, name=sel.name, exact=sel.exact)  # type: ignore[no-any-return]
    if sel.strategy == "text":
        return root.get_by_text(sel.value, exact=True)  # type: ignore[no-any-return]
    if sel.strategy == "label":
        return root.get_by_label(sel.value, exact=True)  # type: ignore[no-any-return]
    if sel.strategy == "placeholder":
        return root.get_by_placeholder(sel.value, exact=True)  # type: ignore[no-any-return]
    if sel.strategy == "testId":
        return root.get_by_test_id(sel.value)  # type: ignore[no-any-return]
    return root.locator(sel.value)  # type: ignore[no-any-return]


def _not_found(
    locator: Locator, ctx: OperationContext, op: str, cause: str | None = None
) -> BrowserMeshError:
    return BrowserMeshError(
        ErrorCode.ELEMENT_NOT_FOUND,
        details={
            "reason": "element_not_found",
            "timeoutMs": ctx.deadline.timeout_ms,
            "operation": OPERATION_DETAIL.get(op),
            "locator": locator.detail(),
        },
        cause=cause,
        internal={"locator": locator.describe()},
    )


def _ambiguous(locator: Locator, op: str, **internal: Any) -> BrowserMeshError:
    return BrowserMeshError(
        ErrorCode.LOCATOR_AMBIGUOUS,
        details={
            "reason": "locator_ambiguous",
            "locator": locator.detail(),
            "operation": OPERATION_DETAIL.get(op),
        },
        internal={"locator": locator.describe(), **internal},
    )


def _timeout(ctx: OperationContext, op: str, cause: str | None = None) -> BrowserMeshError:
    return BrowserMeshError(
        ErrorCode.OPERATION_TIMEOUT,
        details={
            "reason": "timeout",
            "timeoutMs": ctx.deadline.timeout_ms,
            "operation": OPERATION_DETAIL.get(op),
        },
        cause=cause or f"exceeded {ctx.deadline.timeout_ms} ms",
    )


async def resolve_root(page: Page, locator: Locator, ctx: OperationContext, op: str) -> Root:
    """Walk the iframe chain afresh; each step must match exactly one `<iframe>`."""
    root: Root = page
    for index, step in enumerate(locator.frames):
        frame_el = build(root, step)
        while True:
            try:
                count = await asyncio.wait_for(
                    frame_el.count(), timeout=max(ctx.deadline.remaining_ms(), 1) / 1000
                )
            except TimeoutError:
                raise _not_found(locator, ctx, op) from None
            except Exception as exc:
                raise _not_found(locator, ctx, op, raw_cause(exc)) from None
            if count == 1:
                break
            if count > 1:
                raise _ambiguous(locator, op, frameIndex=index, selector=step.describe())
            if ctx.deadline.remaining_ms() < FRAME_POLL_MS:
                raise _not_found(locator, ctx, op)
            await ctx.sleep(FRAME_POLL_MS)
        root = frame_el.content_frame
    return root


async def resolve(page: Page, locator: Locator, ctx: OperationContext, op: str) -> PwLocator:
    root = await resolve_root(page, locator, ctx, op)
    return build(root, locator.selector)


async def _probe(loc: PwLocator, reserve_ms: float) -> int | None:
    try:
        return await asyncio.wait_for(loc.count(), timeout=max(reserve_ms, 1) / 1000)
    except Exception:
        return None


ElementCall = Callable[[Any, float], Awaitable[Any]]


async def on_locator(
    page: Page, locator: Locator, ctx: OperationContext, op: str, call: ElementCall
) -> Any:
    """Run `call(playwright_locator, timeout_ms)` with strictness and §5.3 classification."""
    loc = await resolve(page, locator, ctx, op)
    remaining = ctx.deadline.budget_ms()
    # The probe that classifies a miss needs a few round trips even on a loaded machine: half
    # of a small budget, at most 250 ms. A probe that cannot answer (a page that never yields)
    # leaves the miss unclassified: OPERATION_TIMEOUT.
    reserve = min(250.0, remaining / 2)
    try:
        return await call(loc, max(remaining - reserve, 1))
    except Exception as exc:
        reason = classify_reason(exc, element=True)
        cause = raw_cause(exc)
        if reason == "locator_ambiguous":
            raise _ambiguous(locator, op) from None
        if reason != "timeout":
            raise _not_found(locator, ctx, op, cause) from None
        count = await _probe(loc, reserve)
        if count == 0:
            raise _not_found(locator, ctx, op, cause) from None
        if count is not None and count > 1:
            raise _ambiguous(locator, op) from None
        raise _timeout(ctx, op, cause) from None


async def _connected(handle: ElementHandle, deadline: Deadline) -> bool:
    """Whether the handle's element is still in its document; OPERATION_TIMEOUT when the page
    cannot answer within the deadline (a busy page is not a stale ref)."""
    try:
        return bool(await within(handle.evaluate("e => e.isConnected"), deadline))
    except BrowserMeshError:
        raise
    except Exception:
        return False


async def on_ref(
    registry: RefRegistry, ref: RefTarget, ctx: OperationContext, op: str, call: ElementCall
) -> Any:
    """Run `call(element_handle, timeout_ms)` for a live ref; anything else is stale."""
    entry = registry.lookup(ref.token)
    if not await _connected(entry.handle, ctx.deadline):
        registry.entries.pop(ref.token, None)
        raise BrowserMeshError(ErrorCode.STALE_ELEMENT_REFERENCE)
    try:
        return await call(entry.handle, ctx.deadline.budget_ms())
    except BrowserMeshError:
        raise
    except Exception as exc:
        cause = raw_cause(exc)
        if classify_reason(exc) == "timeout":
            # Playwright gave up at the budget: stale only if the element has really gone.
            # The check gets a short reserve of its own, since the budget is spent.
            try:
                gone = not await _connected(entry.handle, Deadline(PROBE_RESERVE_MS))
            except BrowserMeshError:
                gone = False  # the page cannot answer: a timeout, not a stale ref
            if not gone:
                raise _timeout(ctx, op, cause) from None
        raise BrowserMeshError(ErrorCode.STALE_ELEMENT_REFERENCE, cause=cause) from None


async def on_target(
    page: Page,
    registry: RefRegistry,
    target: Target,
    ctx: OperationContext,
    op: str,
    call: ElementCall,
) -> Any:
    if isinstance(target, RefTarget):
        return await on_ref(registry, target, ctx, op, call)
    return await on_locator(page, target, ctx, op, call)


async def _bounded(awaitable: Awaitable[Any], timeout_ms: float) -> Any:
    return await asyncio.wait_for(awaitable, timeout=timeout_ms / 1000)


def element_call(op: str, arg: str | None = None) -> ElementCall:
    """The Playwright call for one element action; works on a Locator or an ElementHandle."""

    async def call(el: Any, timeout_ms: float) -> None:
        if op == "click":
            await el.click(timeout=timeout_ms)
        elif op == "double_click":
            await el.dblclick(timeout=timeout_ms)
        elif op == "hover":
            await el.hover(timeout=timeout_ms)
        elif op == "focus":
            # ElementHandle.focus takes no timeout; bound it ourselves.
            await _bounded(el.focus(), timeout_ms)
        elif op == "check":
            await el.check(timeout=timeout_ms)
        elif op == "uncheck":
            await el.uncheck(timeout=timeout_ms)
        elif op == "scroll_into_view":
            await el.scroll_into_view_if_needed(timeout=timeout_ms)
        elif op == "fill":
            await el.fill(arg or "", timeout=timeout_ms)
        elif op == "press":
            await el.press(arg or "", timeout=timeout_ms)
        elif op == "select_option":
            # A string matches an option's value or its label.
            await el.select_option(arg, timeout=timeout_ms)
        else:  # pragma: no cover - the tool layer only passes known operations
            raise BrowserMeshError(ErrorCode.INTERNAL_ERROR)

    return call


async def read_text(el: Any, timeout_ms: float) -> str:
    return well_formed(str(await el.inner_text(timeout=timeout_ms)))
