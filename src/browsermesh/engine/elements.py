"""Locating elements (frame chains, strictness, deadline classification) and acting on them.

Implements reference §5.3–5.5 for every element-resolving operation: a locator is resolved afresh
each call; a ref is looked up in the page's registry (`engine.refs`) and never re-resolved to
another element.

Size: every strict resolution shares one single-match step (`_single`) and its not-found and
ambiguity errors: locators, their frame chains, and a frame addressed on its own (page tools'
`frame`, issue 36: `resolve_frame`), so they stay together.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, assert_never

from browsermesh.engine import actionability, candidates, quiet
from browsermesh.engine.blocked import (
    PROBE_RESERVE_MS,
    action_failure,
)
from browsermesh.engine.blocked import ElementCall as ElementCall
from browsermesh.engine.blocked import blocked as _blocked
from browsermesh.engine.blocked import first_try as _first_try
from browsermesh.engine.blocked import late as _late
from browsermesh.engine.blocked import timeout as _timeout
from browsermesh.engine.bounded import bounded
from browsermesh.engine.failures import classify_reason, raw_cause, within
from browsermesh.engine.locators import Root
from browsermesh.engine.locators import build as build  # re-exported for waits and snapshot
from browsermesh.engine.locators import build_locator as build_locator
from browsermesh.engine.page_source import (
    FRAME_PASSWORDS_SCRIPT,
    MAX_SOURCE_CHARS,
    page_secrets,
    with_other_frames,
)
from browsermesh.engine.refs import Expired, RefEntry, RefRegistry
from browsermesh.engine.select import select_options
from browsermesh.errors import BrowserMeshError, ErrorCode
from browsermesh.model.deadline import Deadline, OperationContext
from browsermesh.model.element_ops import ELEMENT_OPERATIONS, ElementOp, operation_detail
from browsermesh.model.locators import (
    Locator,
    RefTarget,
    Selector,
    Target,
)
from browsermesh.model.options import OptionChoice
from browsermesh.model.text import well_formed
from browsermesh.redact import SecretValues

if TYPE_CHECKING:
    from playwright.async_api import ElementHandle, Frame, Page
    from playwright.async_api import Locator as PwLocator

FRAME_POLL_MS = 25


def _not_found(
    locator: Locator,
    ctx: OperationContext,
    op: str,
    cause: str | None = None,
    *,
    quiet_page: bool = False,
) -> BrowserMeshError:
    # A miss on a quiet page did not run out of time: no budget in its details.
    details: dict[str, Any] = {
        "reason": "element_not_found",
        "operation": operation_detail(op),
        "locator": locator.detail(),
    }
    if not quiet_page:
        details["timeoutMs"] = ctx.deadline.timeout_ms
    return BrowserMeshError(
        ErrorCode.ELEMENT_NOT_FOUND,
        details=details,
        cause=cause,
        internal={"locator": locator.describe()},
    )


async def _quiet_miss(page: Page, el: PwLocator, ctx: OperationContext, reserve_ms: float) -> bool:
    """Whether `el` still matches nothing once the page is quiet (engine.quiet): polled while
    the page changes, False as soon as something matches or when only the reserve is left (the
    caller's own wait then runs into the budget as before)."""
    while True:
        try:
            count = await bounded(el.count(), max(ctx.deadline.remaining_ms() - reserve_ms, 1))
        except Exception:  # out of time or not countable: the caller's own path decides
            return False
        if count:
            return False
        state = await quiet.quiet_for(page, ctx.deadline, from_load=True)
        if state is None:
            return False  # the detector is off
        if state[0] >= state[1]:
            return True
        if ctx.deadline.remaining_ms() - reserve_ms < quiet.POLL_MS * 2:
            return False
        await ctx.sleep(quiet.POLL_MS * 2)


def _ambiguous(
    locator: Locator, op: str, matchCount: int | None = None, **internal: Any
) -> BrowserMeshError:
    details: dict[str, Any] = {
        "reason": "locator_ambiguous",
        "locator": locator.detail(),
        "operation": operation_detail(op),
    }
    if matchCount is not None:
        details["matchCount"] = matchCount
    return BrowserMeshError(
        ErrorCode.LOCATOR_AMBIGUOUS,
        details=details,
        internal={"locator": locator.describe(), **internal},
    )


def _reserve(remaining_ms: float) -> float:
    """The part of the budget kept for classifying a miss (a count, then candidates): half of a
    small budget, a quarter of a large one, at most 750 ms."""
    return min(750.0, max(remaining_ms / 4, min(250.0, remaining_ms / 2)))


async def _single(
    page: Page, el: PwLocator, locator: Locator, ctx: OperationContext, op: str, **where: Any
) -> None:
    """Poll `el` (a chain step: an iframe or the `within` container) every 25 ms until it
    matches exactly one element; several → LOCATOR_AMBIGUOUS at once, none by the deadline or
    on a quiet page → ELEMENT_NOT_FOUND."""
    while True:
        try:
            count = await bounded(el.count(), max(ctx.deadline.remaining_ms(), 1))
        except TimeoutError:
            raise _not_found(locator, ctx, op) from None
        except Exception as exc:
            raise _not_found(locator, ctx, op, raw_cause(exc)) from None
        if count == 1:
            return
        if count > 1:
            raise _ambiguous(locator, op, matchCount=count, **where)
        if ctx.deadline.remaining_ms() < FRAME_POLL_MS:
            raise _not_found(locator, ctx, op)
        if await _quiet_miss(page, el, ctx, FRAME_POLL_MS):
            raise _not_found(locator, ctx, op, "no match on a quiet page", quiet_page=True)
        await ctx.sleep(FRAME_POLL_MS)


async def resolve_root(page: Page, locator: Locator, ctx: OperationContext, op: str) -> Root:
    """Walk the iframe chain afresh; each step must match exactly one `<iframe>`."""
    root: Root = page
    for index, step in enumerate(locator.frames):
        frame_el = build(root, step)
        await _single(page, frame_el, locator, ctx, op, frameIndex=index, selector=step.describe())
        root = frame_el.content_frame
    return root


async def resolve_frame(
    page: Page, chain: tuple[Selector, ...], ctx: OperationContext, op: str
) -> Frame:
    """The frame a §5.2 `frame` chain addresses (the main frame for an empty chain), resolved
    strictly as locators resolve their chain: each step must match exactly one `<iframe>`; the
    last step's element that is no frame → ELEMENT_NOT_FOUND."""
    if not chain:
        return page.main_frame
    target = Locator(chain[-1], chain[:-1])
    element = build(await resolve_root(page, target, ctx, op), target.selector)
    await _single(page, element, target, ctx, op, frameIndex=len(chain) - 1)
    try:
        handle = await within(element.element_handle(), ctx.deadline)
        frame = await within(handle.content_frame(), ctx.deadline)
    except BrowserMeshError:
        raise
    except Exception as exc:
        raise _not_found(target, ctx, op, raw_cause(exc)) from None
    if frame is None:
        raise _not_found(target, ctx, op, "the element is not a frame")
    return frame


async def resolve(page: Page, locator: Locator, ctx: OperationContext, op: str) -> PwLocator:
    """The final locator: frame chain and `within` container resolved strictly, afresh."""
    root = await resolve_root(page, locator, ctx, op)
    if locator.within is not None:
        await _single(page, build(root, locator.within), locator, ctx, op, within=True)
    return build_locator(root, locator)


Pick = Callable[[dict[str, Any] | None], tuple[ElementOp, ElementCall]]
"""Chooses the operation from the element itself (browser_fill_form): given the single match's
actionability state (`kind`: the control's tag, type, role, editable), the operation and its
call, which then run with that operation's checks and classification; may raise (a value that
does not fit the element). Until it has chosen, errors carry the placeholder `op`."""


async def _with_candidates(
    error: BrowserMeshError,
    page: Page,
    root: Root,
    locator: Locator,
    registry: RefRegistry | None,
    ctx: OperationContext,
) -> BrowserMeshError:
    matches_only = error.code is ErrorCode.LOCATOR_AMBIGUOUS
    found = await candidates.near(
        page,
        root,
        locator.selector,
        registry,
        ctx.deadline.remaining_ms(),
        matches_only=matches_only,
        matches=build_locator(root, locator) if matches_only else None,
    )
    return candidates.with_details(error, candidates=found)


async def on_locator(
    page: Page,
    locator: Locator,
    ctx: OperationContext,
    op: str,
    call: ElementCall,
    registry: RefRegistry | None = None,
    pick: Pick | None = None,
    companion: actionability.Companion | None = None,
) -> Any:
    """Run `call(playwright_locator, timeout_ms)` with strictness and §5.3 classification.

    Before the call, one read of the matches answers at once for several matches and, after
    at most the settle time (`registry.settle_ms`), for a single match that is disabled,
    hidden or read-only (issue 13). Misses and ambiguity carry candidates (with refs in
    `registry` when given). With `pick`, that read also decides the operation (`Pick`). A
    `companion` rides along with that read, or runs on its own before the call."""
    root = await resolve_root(page, locator, ctx, op)
    if locator.within is not None:
        await _single(page, build(root, locator.within), locator, ctx, op, within=True)
    loc = build_locator(root, locator)
    reserve = _reserve(ctx.deadline.budget_ms())
    checked = pick is not None or actionability.checks(op)
    hit = pick is None and actionability.pointer(op)
    reading = (
        await actionability.read(loc, reserve, hit_test=hit, companion=companion)
        if checked
        else None
    )
    settle_ms = actionability.SETTLE_MS if registry is None else registry.settle_ms
    if (reading is None or reading.count == 0) and await _quiet_miss(page, loc, ctx, reserve):
        error = _not_found(locator, ctx, op, "no match on a quiet page", quiet_page=True)
        raise await _with_candidates(error, page, root, locator, registry, ctx)
    if reading is not None and reading.count == 0:  # it has appeared
        reading = await actionability.read(loc, reserve, hit_test=hit, companion=companion)
    if companion is not None:
        await companion.ensure()
    try:
        if pick is not None:
            reading = await _present(loc, locator, reading, ctx, op, reserve)
            if reading.count == 1:
                op, call = pick(reading.state)
        if reading is not None and reading.count > 1:
            error = _ambiguous(locator, op, reading.count)
            raise await _with_candidates(error, page, root, locator, registry, ctx)
        if reading is not None and reading.blocker(op) is not None:
            reading = await actionability.settle(loc, op, reading, ctx, settle_ms, reserve)
            blocked = reading.blocker(op)
            if blocked is not None:
                raise _blocked(op, blocked, f"{blocked} after settling", locator, reading)
        if reading is not None:
            budget = ctx.deadline.budget_ms() - reserve
            done, result = await _first_try(loc, op, call, reading, budget, settle_ms, locator)
            if done:
                return result
        return await call(loc, max(ctx.deadline.budget_ms() - reserve, 1))
    except BrowserMeshError:
        raise
    except Exception as exc:
        error = await _classify(exc, loc, locator, ctx, op, reserve)
    if error.code in (ErrorCode.ELEMENT_NOT_FOUND, ErrorCode.LOCATOR_AMBIGUOUS):
        error = await _with_candidates(error, page, root, locator, registry, ctx)
    raise error


async def _present(
    loc: PwLocator,
    locator: Locator,
    reading: actionability.Reading | None,
    ctx: OperationContext,
    op: str,
    reserve_ms: float,
) -> actionability.Reading:
    """A reading that sees the element, for a `pick`: when the first read saw none, wait for
    it (Playwright's strict attached wait, within the budget minus the reserve; its failure is
    classified by the caller like an action's) and read again."""
    if reading is not None and reading.count > 0:
        return reading
    await loc.wait_for(state="attached", timeout=max(ctx.deadline.budget_ms() - reserve_ms, 1))
    again = await actionability.read(loc, reserve_ms)
    if again is None or again.count == 0:  # gone again, or the page cannot answer
        raise _timeout(ctx, op, "no reading after the element appeared")
    return again


async def _classify(
    exc: Exception,
    loc: PwLocator,
    locator: Locator,
    ctx: OperationContext,
    op: str,
    reserve_ms: float,
) -> BrowserMeshError:
    """The error of a failed locator call (§5.3, §5.4), with the actionability reason."""
    reason = classify_reason(exc, element=True)
    cause = raw_cause(exc)
    if reason == "locator_ambiguous":
        return _ambiguous(locator, op)
    if reason != "timeout":
        blocked = action_failure(exc)
        if blocked is not None:
            return _blocked(op, blocked, cause, locator)
        return _not_found(locator, ctx, op, cause)
    # The probe that classifies a miss needs a few round trips even on a loaded machine. A
    # probe that cannot answer (a page that never yields) leaves the miss unclassified.
    probe_ms = min(reserve_ms, ctx.deadline.remaining_ms())
    late = await actionability.read(loc, probe_ms, hit_test=True)
    if late is None:
        return _timeout(ctx, op, cause)
    if late.count == 0:
        return _not_found(locator, ctx, op, cause)
    if late.count > 1:
        return _ambiguous(locator, op, late.count)
    return _late(op, cause, ctx, late, locator)


async def _connected(handle: ElementHandle, deadline: Deadline) -> bool:
    """Whether the handle's element is still in its document; OPERATION_TIMEOUT when the page
    cannot answer within the deadline (a busy page is not a stale ref)."""
    try:
        return bool(await within(handle.evaluate("e => e.isConnected"), deadline))
    except BrowserMeshError:
        raise
    except Exception:
        return False


async def _live_entry(registry: RefRegistry, ref: RefTarget, ctx: OperationContext) -> RefEntry:
    """The ref's entry; a ref that only expired gets its fresh ref in `details.freshRef`."""
    try:
        return registry.lookup(ref.token)
    except BrowserMeshError as error:
        expired = error.internal.get("expired")
        if isinstance(expired, Expired):
            fresh = await candidates.renew(registry, expired.entry, ctx.deadline.remaining_ms())
            candidates.with_details(error, freshRef=fresh)
        raise


async def on_ref(
    registry: RefRegistry,
    ref: RefTarget,
    ctx: OperationContext,
    op: str,
    call: ElementCall,
    pick: Pick | None = None,
    companion: actionability.Companion | None = None,
) -> Any:
    """Run `call(element_handle, timeout_ms)` for a live ref; anything else is stale. With
    `pick`, the actionability read also decides the operation (`Pick`); a `companion` rides
    along with that read (`on_locator`). The read says whether the element is still in its
    document; without one (no checks, or no answer) a read of its own does."""
    entry = await _live_entry(registry, ref, ctx)
    reserve = _reserve(ctx.deadline.budget_ms())
    checked = pick is not None or actionability.checks(op)
    hit = pick is None and actionability.pointer(op)
    reading = (
        await actionability.read(entry.handle, reserve, hit_test=hit, companion=companion)
        if checked
        else None
    )
    connected = (
        bool(reading.state.get("connected"))
        if reading is not None and reading.state is not None
        else await _connected(entry.handle, ctx.deadline)
    )
    if not connected:
        registry.entries.pop(ref.token, None)
        raise BrowserMeshError(ErrorCode.STALE_ELEMENT_REFERENCE)
    if companion is not None:
        await companion.ensure()
    if pick is not None:
        if reading is None:  # connected a moment ago: the page cannot answer
            raise _timeout(ctx, op, "no reading of the ref's element")
        op, call = pick(reading.state)
    if reading is not None and reading.blocker(op) is not None:
        reading = await actionability.settle(
            entry.handle, op, reading, ctx, registry.settle_ms, reserve
        )
        blocked = reading.blocker(op)
        if blocked is not None:
            raise _blocked(op, blocked, f"{blocked} after settling", None, reading)
    try:
        if reading is not None:
            budget = ctx.deadline.budget_ms()
            done, result = await _first_try(
                entry.handle, op, call, reading, budget, registry.settle_ms
            )
            if done:
                return result
        return await call(entry.handle, ctx.deadline.budget_ms())
    except BrowserMeshError:
        raise
    except Exception as exc:
        cause = raw_cause(exc)
        blocked = action_failure(exc)
        if blocked is not None and blocked != "detached":
            raise _blocked(op, blocked, cause) from None
        if classify_reason(exc) == "timeout":
            # Playwright gave up at the budget: stale only if the element has really gone.
            # The check gets a short reserve of its own, since the budget is spent.
            try:
                gone = not await _connected(entry.handle, Deadline(PROBE_RESERVE_MS))
            except BrowserMeshError:
                gone = False  # the page cannot answer: a timeout, not a stale ref
            if not gone:
                late = await actionability.read(entry.handle, PROBE_RESERVE_MS, hit_test=True)
                blocked = None if late is None else late.blocker(op, late=True)
                if blocked is None:
                    raise _timeout(ctx, op, cause) from None
                raise _blocked(op, blocked, cause, None, late) from None
        raise BrowserMeshError(ErrorCode.STALE_ELEMENT_REFERENCE, cause=cause) from None


async def on_target(
    page: Page,
    registry: RefRegistry,
    target: Target,
    ctx: OperationContext,
    op: str,
    call: ElementCall,
    pick: Pick | None = None,
    companion: actionability.Companion | None = None,
) -> Any:
    """Run an element operation on a ref or a locator (`pick`: see `Pick`; `companion`: see
    `on_locator`)."""
    try:
        if isinstance(target, RefTarget):
            return await on_ref(registry, target, ctx, op, call, pick, companion)
        return await on_locator(page, target, ctx, op, call, registry, pick, companion)
    except BrowserMeshError as error:
        await _redact_cover(page, error)
        raise


async def _redact_cover(page: Page, error: BrowserMeshError) -> None:
    """A covering element's name is page text: it may quote a password field (issue 12), so it
    passes the page's password values like every capture (dropped when they cannot be read)."""
    cover = error.details.get("coveredBy")
    if not isinstance(cover, dict) or not cover.get("name"):
        return
    try:
        secrets = await page_secrets(page, Deadline(PROBE_RESERVE_MS))
    except BrowserMeshError:
        cover["name"] = ""
        return
    cover["name"] = secrets.text(str(cover["name"]))


def element_call(op: ElementOp, arg: str | OptionChoice | None = None) -> ElementCall:
    """The Playwright call for one element action (its catalogue entry's `playwright_method`);
    works on a Locator or an ElementHandle. Only select_option answers something: the
    selection read back (engine.select)."""
    text = arg if isinstance(arg, str) else ""

    async def call(el: Any, timeout_ms: float) -> Any:
        method = getattr(el, ELEMENT_OPERATIONS[op].playwright_method)
        match op:
            case "click" | "double_click" | "hover" | "check" | "uncheck" | "scroll_into_view":
                await method(timeout=timeout_ms)
            case "focus":
                # ElementHandle.focus takes no timeout; bound it ourselves.
                await bounded(method(), timeout_ms)
            case "fill" | "press":
                await method(text, timeout=timeout_ms)
            case "select_option":
                return await select_options(el, arg, timeout_ms)
            case _:
                assert_never(op)

    return call


async def read_text(el: Any, timeout_ms: float) -> str:
    return well_formed(str(await el.inner_text(timeout=timeout_ms)))


# The single match's innerText (Playwright's `inner_text`) and the frame's password values in
# one evaluation; anything but one HTML match answers no text (the full path then decides).
_TEXT_AND_SECRETS = f"""(els, maxChars) => ({{
  count: els.length,
  text: els.length === 1 && els[0] instanceof HTMLElement ? els[0].innerText : null,
  secrets: els.length === 1 ? ({FRAME_PASSWORDS_SCRIPT})(maxChars) : null,
}})"""


async def text_at_once(
    page: Page, locator: Locator, ctx: OperationContext
) -> tuple[str, SecretValues] | None:
    """`read_text` of a top-frame locator (no `frames`, no `within`) that matches exactly one
    element now, with the page's password values, read together (issue 33); None when it
    does not (none yet, several, not HTML, a frame chain): `on_locator` then waits and
    classifies as usual."""
    if locator.frames or locator.within is not None:
        return None
    loc = build_locator(page, locator)
    try:
        raw = await bounded(
            loc.evaluate_all(_TEXT_AND_SECRETS, MAX_SOURCE_CHARS), ctx.deadline.remaining_ms()
        )
    except Exception:  # out of time or navigating: the full path answers
        return None
    if raw.get("count") != 1 or not isinstance(raw.get("text"), str):
        return None
    secrets = await with_other_frames(page, ctx.deadline, raw.get("secrets"))
    return well_formed(raw["text"]), secrets
