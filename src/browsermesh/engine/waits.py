"""Passive waits and action-and-wait (reference §7).

A wait checks its condition, then sleeps min(25 ms, remaining) until satisfied; an
action-and-wait registers its listeners before acting and always removes them afterwards.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, assert_never

from browsermesh.engine import elements, text_match
from browsermesh.engine.bounded import first_done, quietly
from browsermesh.engine.failures import (
    as_browser_error,
    classify_reason,
    is_operation_timeout,
    name_failed_response,
    operation_timeout,
    raw_cause,
    translated,
    within,
)
from browsermesh.engine.landing import document_status, landing
from browsermesh.errors import BrowserMeshError, ErrorCode, invalid_argument
from browsermesh.model import progress
from browsermesh.model.action_kinds import ACTION_KINDS
from browsermesh.model.deadline import OperationCancelled, OperationContext
from browsermesh.model.element_ops import ElementOp
from browsermesh.model.matchers import (
    ActionSpec,
    Condition,
    DialogWait,
    DownloadWait,
    FileChooserWait,
    LoadCondition,
    LocatorCondition,
    NavigationWait,
    PopupWait,
    ResponseWait,
    TextCondition,
    UrlCondition,
    WaitSpec,
)
from browsermesh.model.progress import condition_phase, event_phase
from browsermesh.model.tasks import TaskOwner
from browsermesh.model.text import well_formed
from browsermesh.redact import cut_chars, sanitize_url

if TYPE_CHECKING:
    from playwright.async_api import Page

    from browsermesh.engine.playwright_engine import PwPage

POLL_MS = 25
EVENT_URL_CHARS = 2000
_READY_STATE = "() => document.readyState"


async def _locator_state(page: Page, cond: LocatorCondition, ctx: OperationContext) -> bool:
    root: Any = page
    for index, step in enumerate(cond.locator.frames):
        frame_el = elements.build(root, step)
        count = await within(frame_el.count(), ctx.deadline)
        if count > 1:
            raise elements._ambiguous(cond.locator, "", frameIndex=index)
        if count == 0:
            return cond.state in ("detached", "hidden")
        root = frame_el.content_frame
    loc = elements.build_locator(root, cond.locator)
    count = await within(loc.count(), ctx.deadline)
    if count > 1:
        raise elements._ambiguous(cond.locator, "")
    if cond.state == "detached":
        return bool(count == 0)
    if count == 0:
        return cond.state == "hidden"
    if cond.state == "attached":
        return True
    if cond.state in ("visible", "hidden"):
        visible = await within(loc.is_visible(), ctx.deadline)
        return bool(visible) == (cond.state == "visible")
    enabled = await within(
        loc.is_enabled(timeout=max(ctx.deadline.remaining_ms(), 1)), ctx.deadline
    )
    return bool(enabled) == (cond.state == "enabled")


async def _satisfied(page: Page, cond: Condition, ctx: OperationContext) -> bool:
    if isinstance(cond, UrlCondition):
        return cond.matcher.matches(page.url)
    if isinstance(cond, LoadCondition):
        state = await within(page.evaluate(_READY_STATE), ctx.deadline)
        return state == "complete" or (cond.state == "domcontentloaded" and state == "interactive")
    if isinstance(cond, LocatorCondition):
        return await _locator_state(page, cond, ctx)
    return await text_match.present(page, cond, ctx) == cond.present


async def wait_for(page: Page, cond: Condition, ctx: OperationContext) -> None:
    """Poll `cond` until satisfied; the deadline gives OPERATION_TIMEOUT for every kind (a
    text that never appeared names the nearest text shown, `details.nearest`)."""
    if progress.active():
        progress.report(condition_phase(cond), total_ms=ctx.deadline.remaining_ms())
    try:
        await _poll(page, cond, ctx)
    except BrowserMeshError as error:
        if not is_operation_timeout(error) or not isinstance(cond, TextCondition):
            raise
        near = await text_match.nearest(page, cond) if cond.present else None
        if near:
            error.details["nearest"] = near
        raise


async def _poll(page: Page, cond: Condition, ctx: OperationContext) -> None:
    while True:
        with translated(as_browser_error()):
            try:
                if await _satisfied(page, cond, ctx):
                    return
            except BrowserMeshError:
                raise
            except Exception as exc:
                # A navigation may destroy the execution context mid-check, and Playwright's own
                # timeout may answer just before ours: check again (the deadline decides).
                text = str(exc)
                destroyed = "context was destroyed" in text or "navigat" in text.lower()
                if not destroyed and classify_reason(exc) != "timeout":
                    raise  # translated: BROWSER_ERROR
        if ctx.deadline.remaining_ms() < 1:
            raise operation_timeout(ctx.deadline.timeout_ms)
        await ctx.sleep(POLL_MS)


# ---------------------------------------------------------------- action and wait


@dataclass(eq=False)
class DialogRouter:
    """A managed page's one `dialog` listener, registered when the page is adopted (issue 33).

    A listener added and removed around every action made Playwright subscribe to the page's
    dialogs and unsubscribe again, two protocol messages per action. The router stays; the
    watch or waiter of the moment adds its handler here (`Listeners.on`); a dialog that comes
    while none is there is dismissed, as Playwright does for a page nobody listens to."""

    owner: TaskOwner
    handlers: list[Callable[[Any], None]] = field(default_factory=list)

    def dispatch(self, dialog: Any) -> None:
        if not self.handlers:
            self.owner.spawn(quietly(dialog.dismiss()))
            return
        for handler in list(self.handlers):
            handler(dialog)


@dataclass(eq=False)
class Listeners:
    """Registers Playwright page listeners and guarantees their removal (tests count them).
    Dialog handlers go to the page's `DialogRouter` when it has one."""

    page: PwPage

    def __post_init__(self) -> None:
        self._registered: list[tuple[str, Callable[[Any], None]]] = []

    def on(self, event: str, fn: Callable[[Any], None]) -> None:
        router = self.page.dialogs
        if event == "dialog" and router is not None:
            router.handlers.append(fn)
        else:
            self.page.page.on(event, fn)  # type: ignore[call-overload]
        self._registered.append((event, fn))
        self.page.listener_count += 1

    def remove_all(self) -> None:
        router = self.page.dialogs
        for event, fn in self._registered:
            if event == "dialog" and router is not None and fn in router.handlers:
                router.handlers.remove(fn)
            else:
                with contextlib.suppress(Exception):  # a closed page has no listeners left
                    self.page.page.remove_listener(event, fn)
            self.page.listener_count -= 1
        self._registered.clear()


def _unexpected(expected: str, actual: str, **extra: Any) -> BrowserMeshError:
    return BrowserMeshError(
        ErrorCode.BROWSER_ERROR,
        internal={"expectedEvent": expected, "actualEvent": actual, **extra},
    )


@dataclass(eq=False)
class WaitOutcome:
    """The matched event: a result object, or a popup page the runtime must register."""

    event: dict[str, Any]
    popup: Any = None
    download: Any = None


async def _handle(
    kind: str, payload: Any, wait: WaitSpec, page: PwPage, ctx: OperationContext
) -> WaitOutcome | None:
    expected = type(wait).__name__.removesuffix("Wait").lower()
    if kind == "dialog":
        dialog = payload
        if not isinstance(wait, DialogWait):
            await quietly(dialog.dismiss())
            raise _unexpected(expected, "dialog", actualDialogType=dialog.type)
        if dialog.type != wait.dialog_type:
            await quietly(dialog.dismiss())
            raise BrowserMeshError(
                ErrorCode.BROWSER_ERROR,
                internal={"expectedDialogType": wait.dialog_type, "actualDialogType": dialog.type},
            )
        event = {
            "kind": "dialog",
            "dialogType": dialog.type,
            "action": "accept" if wait.accept else "dismiss",
            "message": cut_chars(well_formed(dialog.message), 2000) if dialog.message else "",
            "defaultValue": cut_chars(well_formed(dialog.default_value or ""), 2000)
            if dialog.default_value
            else "",
        }
        with translated(as_browser_error()):
            try:
                if wait.accept:
                    if wait.prompt_text is not None:
                        await dialog.accept(wait.prompt_text)
                    else:
                        await dialog.accept()
                else:
                    await dialog.dismiss()
            except Exception:
                await quietly(dialog.dismiss())
                raise
        return WaitOutcome(event)
    if kind == "refused" and isinstance(wait, DownloadWait):
        # The link's document came back 4xx/5xx: this click's download cannot come any more.
        raise BrowserMeshError(
            ErrorCode.NAVIGATION_FAILED,
            details={"reason": "http_status", "status": payload.status, "url": payload.url},
        )
    if kind == "popup":
        if not isinstance(wait, PopupWait):
            await quietly(payload.close())
            raise _unexpected(expected, "popup")
        return WaitOutcome({"kind": "popup"}, popup=payload)
    if kind == "download" and isinstance(wait, DownloadWait):
        # The page's own download handler has made it an artifact; the runtime awaits it.
        return WaitOutcome({"kind": "download"}, download=payload)
    if kind == "filechooser" and isinstance(wait, FileChooserWait):
        if len(wait.files) > 1 and not payload.is_multiple():
            raise invalid_argument(
                "wait.files", "one file: the chooser takes one (its input has no multiple)"
            )
        with translated(as_browser_error(ctx.deadline.timeout_ms)):
            await payload.set_files(
                [f.playwright() for f in wait.files], timeout=ctx.deadline.budget_ms()
            )
        return WaitOutcome({"kind": "fileChooser", "files": len(wait.files)})
    if kind == "navigation" and isinstance(wait, NavigationWait):
        url, documents = payload
        if wait.matcher is not None and not wait.matcher.matches(url):
            return None
        try:
            await page.page.wait_for_load_state(wait.load_state, timeout=ctx.deadline.budget_ms())
        except BrowserMeshError:
            raise
        except Exception as exc:
            # The navigation committed but did not reach its load state: the wait timed out,
            # whatever Playwright's reason.
            raise operation_timeout(ctx.deadline.timeout_ms, raw_cause(exc)) from None
        # The last main-frame document response seen is the one this navigation loaded (none
        # for a same-document step); title and key text as browser_navigate answers them.
        status = document_status(page.page, documents[-1]) if documents else None
        landed = (await landing(page.page, status, ctx.deadline, settle=False)).fields()
        landed["url"] = sanitize_url(page.page.url, max_chars=EVENT_URL_CHARS)
        return WaitOutcome({"kind": "navigation", **landed})
    if kind == "response" and isinstance(wait, ResponseWait):
        response = payload
        if not wait.matcher.matches(response.url):
            return None
        method = response.request.method
        if wait.method is not None and method != wait.method:
            return None
        if wait.status is not None and response.status != wait.status:
            return None
        return WaitOutcome(
            {
                "kind": "response",
                "url": sanitize_url(response.url, max_chars=EVENT_URL_CHARS),
                "method": method,
                "status": response.status,
            }
        )
    return None


async def _next_event(
    queue: asyncio.Queue[tuple[str, Any]], act: asyncio.Future[Any], ctx: OperationContext
) -> tuple[str, Any] | None:
    """The next queued event, or None when `act` finished (or a wait slice ended) first.

    Raises the deadline's timeout or `OperationCancelled`; an event taken just as the call
    was cancelled goes back to the queue, so the final drain still handles it.
    """
    remaining = ctx.deadline.remaining_ms()
    if remaining < 1:
        raise operation_timeout(ctx.deadline.timeout_ms)
    # The two waits are this call's own: whichever did not finish is cancelled and awaited
    # before the call returns (a getter cancelled before it took an item leaves it queued).
    children = TaskOwner()
    getter = children.spawn(queue.get())
    cancel_wait = children.spawn(ctx.cancelled.wait())
    waiting: set[asyncio.Future[Any]] = {getter, cancel_wait}
    if not act.done():
        waiting.add(act)
    try:
        await first_done(waiting, remaining)
    finally:
        await children.aclose()
    item = None if getter.cancelled() else getter.result()
    if ctx.cancelled.is_set():
        if item is not None:
            queue.put_nowait(item)
        raise OperationCancelled()
    return item


async def _settle_action(
    act: asyncio.Future[Any], queue: asyncio.Queue[tuple[str, Any]], ctx: OperationContext
) -> None:
    """Await the action itself (a click returns once dispatched) after the event matched.

    A dialog opened meanwhile (a second ``alert``) holds the click up until it is handled, so
    dialogs are dismissed as they come; other late events are left as after success. The
    deadline and cancellation apply as everywhere else; the action's own error is raised.
    """
    while not act.done():
        item = await _next_event(queue, act, ctx)
        if item is not None and item[0] == "dialog":
            await quietly(item[1].dismiss())
    act.result()


_BEHIND_ACTION = frozenset({"document", "fetch", "xhr"})


def action_call(action: ActionSpec) -> tuple[ElementOp, elements.ElementCall]:
    """The element operation `action` performs (its kind's `model.action_kinds` entry) and the
    Playwright call that performs it on the resolved target, with the kind's argument."""
    op = ACTION_KINDS[action.kind].op
    match action.kind:
        case "click" | "hover":
            return op, elements.element_call(op)
        case "press":
            return op, elements.element_call(op, action.key)
        case _:
            assert_never(action.kind)


async def action_and_wait(
    page: PwPage, action: ActionSpec, wait: WaitSpec, ctx: OperationContext
) -> WaitOutcome:
    """Register the waiter, act (the action's kind: click, press, hover...), then await the
    expected event."""
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    listeners = Listeners(page)
    main_frame = page.page.main_frame
    listeners.on("dialog", lambda d: queue.put_nowait(("dialog", d)))
    listeners.on("popup", lambda p: queue.put_nowait(("popup", p)))
    if isinstance(wait, NavigationWait):
        documents: list[Any] = []  # main-frame document responses, in order (their status)

        def document(response: Any) -> None:
            with contextlib.suppress(Exception):  # a service worker's response has no frame
                if response.frame == main_frame and response.request.is_navigation_request():
                    documents.append(response)

        listeners.on("response", document)
        listeners.on(
            "framenavigated",
            lambda f: (
                queue.put_nowait(("navigation", (f.url, documents))) if f == main_frame else None
            ),
        )
    if isinstance(wait, ResponseWait):
        listeners.on("response", lambda r: queue.put_nowait(("response", r)))
    failed: list[Any] = []  # 4xx/5xx documents, fetches and XHRs behind the action
    downloading = isinstance(wait, DownloadWait)

    def refused(response: Any) -> None:
        with contextlib.suppress(Exception):  # a response whose request or frame is gone
            kind = response.request.resource_type
            if response.status < 400 or kind not in _BEHIND_ACTION:
                return
            failed.append(response)
            if kind == "document" and response.frame == main_frame and downloading:
                queue.put_nowait(("refused", response))

    listeners.on("response", refused)
    if isinstance(wait, DownloadWait):
        listeners.on("download", lambda d: queue.put_nowait(("download", d)))
    if isinstance(wait, FileChooserWait):
        listeners.on("filechooser", lambda c: queue.put_nowait(("filechooser", c)))

    op, call = action_call(action)
    # The action is this call's child: awaited until done on success, cancelled and awaited
    # on any failure, so it never outlives the call.
    action_task = TaskOwner()
    act = action_task.spawn(elements.on_target(page.page, page.refs, action.target, ctx, op, call))
    outcome: WaitOutcome | None = None
    progress.report(event_phase(wait), total_ms=ctx.deadline.remaining_ms())
    try:
        while outcome is None:
            if act.done() and act.exception() is not None:
                raise act.exception()  # type: ignore[misc]
            item = await _next_event(queue, act, ctx)
            if item is not None:
                outcome = await _handle(*item, wait, page, ctx)
        await _settle_action(act, queue, ctx)
        return outcome
    except BaseException as exc:
        if outcome is not None and outcome.popup is not None:
            await quietly(outcome.popup.close())
        await action_task.aclose()
        name_failed_response(exc, failed)
        raise
    finally:
        listeners.remove_all()
        # Events that arrived too late: dialogs are dismissed, unregistered popups closed
        # (a second popup after success is left alone: it is simply not registered).
        while not queue.empty():
            kind, payload = queue.get_nowait()
            if kind == "dialog":
                await quietly(payload.dismiss())
            elif kind == "popup" and outcome is None:
                await quietly(payload.close())
