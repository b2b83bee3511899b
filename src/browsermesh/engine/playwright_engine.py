"""The Playwright engine: the only place Playwright objects live.

Playwright is imported lazily (first browser use) so that spawning the server and answering
`initialize`/`tools/list` does not pay for it.

Size: `PlaywrightEngine` is the one implementation of the engine port (`engine.protocol`, 32
methods) and the one holder of the Playwright objects; page and element work already lives in
its own modules (elements, snapshot, waits, files, capture, navigation, ...), and what is left,
the contexts' and pages' lifecycle, is the class itself: splitting it would split that one port.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, assert_never

from browsermesh.config import binary_kind
from browsermesh.engine import (
    capture,
    crash,
    describe,
    elements,
    files,
    find,
    forms,
    highlight,
    mouse,
    navigation,
    page_tools,
    quiet,
    select,
    snapshot,
    tracing,
    waits,
)
from browsermesh.engine.abandoned import AbandonedCreations
from browsermesh.engine.actionability import SETTLE_MS
from browsermesh.engine.backends import QUIET_FLAGS as QUIET_FLAGS
from browsermesh.engine.backends import (
    Backend,
    BrowserSlot,
    LocalBackend,
    LocalSlot,
    release,
)
from browsermesh.engine.backends import running_as_root as running_as_root
from browsermesh.engine.bounded import bounded
from browsermesh.engine.changes import ChangeWatch
from browsermesh.engine.evaluate import evaluate_in_page
from browsermesh.engine.failures import (
    as_browser_error,
    as_navigation_error,
    timed,
    translated,
    within,
)
from browsermesh.engine.fork import SessionStorageSeed, copy_storage
from browsermesh.engine.landing import document_status, landing
from browsermesh.engine.observers import observe_page, report_orphan
from browsermesh.engine.page_facts import page_facts
from browsermesh.engine.page_source import (
    FRAME_PASSWORDS_SCRIPT,
    MAX_SOURCE_CHARS,
    remember_secrets,
    with_other_frames,
)
from browsermesh.engine.policy import RequestRouter, apply_network, network_kwargs
from browsermesh.engine.popups import PopupGuard
from browsermesh.engine.protocol import ContextOptions, EngineEvents, HistoryStep
from browsermesh.engine.refs import REF_TTL_S, RefRegistry, release_retired
from browsermesh.engine.snapshot import Capture
from browsermesh.errors import BrowserMeshError, ErrorCode
from browsermesh.model.clock import Clock
from browsermesh.model.deadline import Deadline, OperationContext
from browsermesh.model.devices import emulated
from browsermesh.model.element_ops import ELEMENT_OPERATIONS, ElementOp
from browsermesh.model.find import FindQuery
from browsermesh.model.init_scripts import init_scripts
from browsermesh.model.locators import Locator, RefTarget, Selector, Target
from browsermesh.model.matchers import ActionSpec, Condition, WaitSpec
from browsermesh.model.mouse import MouseGesture, Viewport
from browsermesh.model.navigation import Landing
from browsermesh.model.observe import PageObservations
from browsermesh.model.options import OptionChoice
from browsermesh.model.page_tools import ToolResult
from browsermesh.model.paging import SnapshotOptions
from browsermesh.model.png import ScreenshotLimits
from browsermesh.model.settings import CONTEXT_SETTINGS, geolocation_grant_origins
from browsermesh.model.tasks import TaskOwner
from browsermesh.model.text import well_formed
from browsermesh.model.tracing import TraceOptions

if TYPE_CHECKING:
    from playwright.async_api import Browser, BrowserContext, Page, Playwright

CLOSE_STEP_MS = 5_000
"""Each step of closing (a context, the browser, the driver) may take this long, then the next
step goes ahead: a page that never yields must not hold up session close or shutdown."""
_TITLE_AND_SECRETS = f"maxChars => [document.title, ({FRAME_PASSWORDS_SCRIPT})(maxChars)]"
_INNER_SIZE = "() => [window.innerWidth, window.innerHeight]"
_TWO_FRAMES = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"


@dataclass(eq=False)
class PwContext:
    """A session's BrowserContext and where it lives."""

    placement: str
    context: BrowserContext
    slot: BrowserSlot
    # blockResources and network (engine/policy.py): the context's one route and its rules.
    router: RequestRouter = field(default_factory=RequestRouter)
    # A fork's sessionStorage, for the context's first page (engine/fork.py); then None.
    session_seed: dict[str, dict[str, str]] | None = None


@dataclass(eq=False)
class PwPage:
    """A managed page and its engine-side state (element refs)."""

    page: Page
    context: PwContext
    refs: RefRegistry
    closed: bool = False
    # The renderer crashed: calls are refused until a reload replaces the page (engine/crash.py).
    crashed: bool = False
    last_url: str = ""
    listener_count: int = 0
    extras: dict[str, Any] = field(default_factory=dict)
    # The page's one dialog listener (engine.waits.DialogRouter), set by `watch`.
    dialogs: waits.DialogRouter | None = None


class PlaywrightEngine:
    """The engine over one backend (§14): local launch (default), CDP attach or a pool of
    browser servers. Every session gets its own new BrowserContext on the backend's browser."""

    def __init__(
        self,
        backend: Backend | None = None,
        *,
        executable_path: str | None = None,
        headless: bool = False,
        no_sandbox: bool = False,
        ref_ttl_s: float = REF_TTL_S,
        settle_ms: float = SETTLE_MS,
        quiet_ms: float = quiet.SETTLE_MS,
        webmcp: bool = True,
    ) -> None:
        self.events = EngineEvents()
        # Whether the browsers we start get `--enable-features=WebMCP` (the backend's args).
        self._webmcp = webmcp
        self.ref_ttl_s = ref_ttl_s
        self.settle_ms = settle_ms
        self.quiet_ms = quiet_ms  # the page settle time (engine/quiet.py)
        if backend is None:
            sandbox = not (no_sandbox or running_as_root())
            binary = None if executable_path is None else binary_kind(executable_path)
            backend = LocalBackend(
                LocalSlot(executable_path, headless, sandbox, binary=binary, webmcp=webmcp)
            )
        self._backend = backend
        self._pw: Playwright | None = None
        self._pw_lock = asyncio.Lock()
        self.clock = Clock()
        # One runtime-wide counter: a generation value belongs to exactly one page.
        self._generations = itertools.count(1)
        self._abandoned = AbandonedCreations()
        # Closes of popups past the page limit (engine/popups.py): they may outlive the page
        # that opened them and its context, so the engine owns them and `stop` awaits them.
        self._cleanups = TaskOwner()
        # Small page-side cleanups that outlive the call that caused them (closing an unexpected
        # popup, removing a fork's used init script); awaited by `stop`.

    def next_generation(self) -> int:
        return int(next(self._generations))

    # ---------------------------------------------------------------- inspection

    @property
    def backend(self) -> str:
        return self._backend.kind

    @property
    def launch_state(self) -> str:
        return self._backend.launch_state

    @property
    def browser_version(self) -> str | None:
        return self._backend.browser_version

    @property
    def sandbox(self) -> bool | None:
        return self._backend.sandbox

    @property
    def browser_binary(self) -> str | None:
        return self._backend.browser_binary

    @property
    def webmcp(self) -> bool:
        return self._webmcp and self._backend.kind != "cdp"

    def endpoints(self) -> list[dict[str, Any]]:
        return self._backend.endpoints()

    @property
    def endpoint_backoff_s(self) -> float:
        """Seconds a failed browser-server endpoint is skipped (tests shorten it)."""
        return self._backend.backoff_s

    @endpoint_backoff_s.setter
    def endpoint_backoff_s(self, seconds: float) -> None:
        self._backend.backoff_s = seconds

    def live_contexts(self) -> int:
        """Contexts BrowserMesh has open, over every slot (tests check for leaks)."""
        return sum(len(slot.contexts) for slot in self._backend.slots)

    def abandoned_creations(self) -> int:
        """Context creations given up at their deadline whose context is not closed yet."""
        return len(self._abandoned)

    # ----------------------------------------------------------------- lifecycle

    async def playwright(self) -> Playwright:
        async with self._pw_lock:
            if self._pw is None:
                from playwright.async_api import async_playwright

                self._pw = await async_playwright().start()
            return self._pw

    def browser_gone(self, slot: BrowserSlot, browser: Browser) -> None:
        """A slot's browser disconnected: fail only the sessions placed on that slot."""
        if slot.browser is not browser:
            return  # our own stop, or an older connection of the slot
        slot.browser = None
        slot.contexts.clear()
        if slot.stopping:
            return
        slot.mark_failed()
        self.events.on_disconnect(slot.key)

    async def stop(self) -> None:
        error: BrowserMeshError | None = None
        await self._cleanups.aclose()  # their browser is about to close them anyway
        try:
            await self._backend.stop()
        except BrowserMeshError as err:
            error = err
        await self._abandoned.drain()  # their browser is gone: nothing left to create
        pw, self._pw = self._pw, None
        if pw is not None:
            try:
                # Stopping the driver ends the browsers it launched (their pipe closes); if it
                # does not answer, process exit closes that pipe anyway.
                await timed(pw.stop(), Deadline(CLOSE_STEP_MS))
            except BrowserMeshError as err:
                error = error or err
        if error is not None:
            raise error

    # ------------------------------------------------------------------ contexts

    async def new_context(
        self, options: ContextOptions, ctx: OperationContext, live_by_placement: dict[str, int]
    ) -> PwContext:
        """A new context within the call's deadline (launch or connect included).

        Restoring a saved state visits each of its origins and cannot be aborted, so past the
        budget the creation is abandoned (`OPERATION_TIMEOUT`) and the context it makes later
        is closed, never leaked (issue 12 #5)."""
        deadline = ctx.deadline
        slot, browser = await self._backend.acquire(self, deadline.budget_ms(), live_by_placement)
        try:  # the slot counts this creation as pending until the runtime records it
            # A failure of the creation itself happened within the deadline: BROWSER_ERROR.
            with translated(as_browser_error(deadline.timeout_ms)):
                context = await self._abandoned.within(
                    browser.new_context(**context_kwargs(options)), deadline, self._close_quietly
                )
            slot.track(context)
            router = RequestRouter.for_settings(options.settings)
            try:
                if self.quiet_ms > 0:  # every document keeps its last DOM change (engine/quiet)
                    await timed(context.add_init_script(quiet.INIT_SCRIPT), deadline)
                for script in init_scripts(options.settings):  # issue 36: before any page
                    await timed(context.add_init_script(script=script), deadline)
                for origin in geolocation_grant_origins(options.settings):
                    await timed(context.grant_permissions(["geolocation"], origin=origin), deadline)
                if router.routing:  # before any page: the first navigation is routed too
                    await timed(router.sync(context), deadline)
            except BaseException:
                slot.forget(context)
                await self._close_quietly(context)
                raise
        finally:
            release(slot)
            await self._backend.settle(slot)
        return PwContext(slot.key, context, slot, router, options.session_storage or None)

    async def _close_quietly(self, context: BrowserContext) -> None:
        # A context nobody will use (abandoned or half made): its close failing changes nothing.
        with contextlib.suppress(Exception):
            await context.close()

    async def close_context(self, context: PwContext) -> None:
        slot = context.slot

        async def closing() -> None:
            with translated(as_browser_error(CLOSE_STEP_MS)):
                await context.context.close()

        try:
            await bounded(closing(), CLOSE_STEP_MS)
        except TimeoutError:
            # Not closed in time: the context is left to the browser's own close at shutdown.
            raise BrowserMeshError(
                ErrorCode.BROWSER_ERROR, cause="context close timed out"
            ) from None
        except BrowserMeshError:
            owner = context.context.browser
            if owner is None or owner is not slot.browser or not owner.is_connected():
                return  # that browser is already gone: nothing left to close
            raise
        finally:
            slot.forget(context.context)
            await context.router.close()
            await self._backend.settle(slot)

    async def update_network(
        self, context: PwContext, network: dict[str, Any], ctx: OperationContext
    ) -> None:
        """Apply a session's new `network` settings (browser_session_update) to its context."""
        await timed(apply_network(context.context, context.router, network), ctx.deadline)

    def remember_secrets(self, context: PwContext, values: Iterable[str]) -> None:
        """Redact `values` from every later read of the context's pages (§36)."""
        remember_secrets(context.context, values)

    async def storage_state(self, context: PwContext, ctx: OperationContext) -> dict[str, Any]:
        """The context's cookies and every origin's storage, within the call's deadline: reading
        a busy page's localStorage never answers, so the wait is ours, not Playwright's."""
        raw = await timed(context.context.storage_state(), ctx.deadline)
        state: dict[str, Any] = dict(raw)
        return state

    # --------------------------------------------------------------------- pages

    async def fork_storage(
        self, context: PwContext, pages: list[PwPage], ctx: OperationContext
    ) -> tuple[dict[str, Any], dict[str, dict[str, str]]]:
        """What a fork copies out of `context` (engine/fork.py)."""
        live = [p.page for p in pages if not (p.closed or p.crashed)]
        return await copy_storage(context.context, live, ctx)

    async def new_page(self, context: PwContext, ctx: OperationContext) -> PwPage:
        deadline = ctx.deadline
        page = await timed(context.context.new_page(), deadline)
        await timed(context.router.prepare(page), deadline)  # armed before its first request
        seed, context.session_seed = context.session_seed, None
        if seed:  # a fork's first page: its sessionStorage goes in before any navigation
            await timed(SessionStorageSeed(self._cleanups).install(page, seed), deadline)
        return self.adopt_page(context, page)

    def adopt_page(self, context: PwContext, page: Page) -> PwPage:
        """Wrap a Playwright page as a managed page and watch for its closing."""
        handle = PwPage(
            page,
            context,
            RefRegistry(self.clock, self.ref_ttl_s, self.next_generation, settle_ms=self.settle_ms),
        )
        self.watch(handle, page)
        return handle

    def watch(self, handle: PwPage, page: Page) -> None:
        """Follow `page`'s close, main-frame navigations and renderer crash for `handle`. Events
        of a page that no longer backs the handle (replaced after a crash) are ignored."""

        def on_close(_p: Page) -> None:
            if handle.page is page and not handle.closed:
                handle.closed = True
                handle.refs.forget(self.next_generation())
                self.events.on_page_closed(handle)

        def on_navigated(frame: Any) -> None:
            # A main-frame navigation kills every ref of the page (the document is gone, so
            # the old handles die with it).
            if handle.page is page and frame == page.main_frame:
                handle.last_url = page.url
                handle.refs.advance(self.next_generation())

        def on_crash(_p: Page) -> None:
            if handle.page is page:
                handle.crashed = True
                handle.refs.forget(self.next_generation())

        def on_download(download: Any) -> None:
            if handle.page is page:
                self.events.on_download(handle, files.EngineDownload(download))

        quiet.track(page, self.quiet_ms)
        handle.dialogs = waits.DialogRouter(self._cleanups)  # the handlers of `page` only
        page.on("dialog", handle.dialogs.dispatch)
        page.on("close", on_close)
        page.on("framenavigated", on_navigated)
        page.on("crash", on_crash)
        page.on("download", on_download)

    async def close_page(self, page: PwPage, ctx: OperationContext) -> None:
        """Close the page within the call's deadline (a cancelled call closes it too: the page
        has already left the registry).

        Playwright's close can hang on a page that keeps reloading (a 30 ms reload loop did it
        about one time in seven here), which wedged the session's queue and, behind it, session
        close and shutdown. Past the budget the page is left to its context, which closes it with
        the session; the close still counts as done, since the page has already left the registry.
        """
        page.closed = True
        deadline = ctx.deadline
        with translated(as_browser_error(deadline.timeout_ms)):
            try:
                await within(page.page.close(), deadline)
            except BrowserMeshError:
                return  # past the budget: left to its context (above)

    async def navigate(self, page: PwPage, url: str, ctx: OperationContext) -> Landing:
        try:
            return await navigation.navigate(page.page, url, ctx)
        finally:
            await release_retired(page.refs)  # the refs the navigation replaced

    async def history(self, page: PwPage, step: HistoryStep, ctx: OperationContext) -> Landing:
        ctx.check()
        if page.crashed and step == "reload":
            return Landing(await crash.reopen(self, page, ctx))
        p = page.page
        deadline = ctx.deadline
        try:
            with translated(as_navigation_error(lambda: p.url, deadline.timeout_ms)):
                match step:
                    case "back":
                        response = await p.go_back(wait_until="load", timeout=deadline.budget_ms())
                    case "forward":
                        response = await p.go_forward(
                            wait_until="load", timeout=deadline.budget_ms()
                        )
                    case "reload":
                        response = await p.reload(wait_until="load", timeout=deadline.budget_ms())
                    case _:
                        assert_never(step)
        finally:
            await release_retired(page.refs)  # the refs the navigation replaced
        return await landing(p, document_status(p, response), deadline)  # once settled

    def current_url(self, page: PwPage) -> str:
        return page.page.url

    async def title(self, page: PwPage, ctx: OperationContext) -> str:
        """The document's title, redacted: read with the main frame's password values in one
        evaluation (the other frames' are read after it, when there are any)."""
        p, deadline = page.page, ctx.deadline
        title, values = await timed(p.evaluate(_TITLE_AND_SECRETS, MAX_SOURCE_CHARS), deadline)
        return (await with_other_frames(p, deadline, values)).text(well_formed(str(title)))

    # ------------------------------------------------------------------ elements

    async def act(
        self,
        page: PwPage,
        target: Target,
        op: ElementOp,
        arg: str | OptionChoice | None,
        ctx: OperationContext,
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """One element action (click, fill, check, ...) on a locator or a ref; returns what it
        changed (engine.changes) and its own result (select_option: what is selected)."""
        watch = ChangeWatch(page)
        watch.listen()
        try:
            answer = await elements.on_target(
                page.page,
                page.refs,
                target,
                ctx,
                op,
                elements.element_call(op, arg),
                companion=watch.companion(ctx),
            )
        except BaseException:
            await watch.close()
            raise
        own = await select.redact_selected(page.page, answer) if op == "select_option" else {}
        return await watch.finish(ctx, settle=ELEMENT_OPERATIONS[op].settles), own

    async def describe_target(
        self, page: PwPage, target: Target, ctx: OperationContext
    ) -> dict[str, Any]:
        """The target as a recording replays it (engine/describe.py)."""
        return await describe.describe_target(page.page, page.refs, target, ctx)

    async def fill_field(
        self, page: PwPage, target: Target, value: str | bool, ctx: OperationContext
    ) -> ElementOp:
        """One browser_fill_form field: the operation its element's kind takes (returned)."""
        return await forms.fill_field(page.page, page.refs, target, value, ctx)

    async def watch_changes(self, page: PwPage, ctx: OperationContext) -> ChangeWatch:
        watch = ChangeWatch(page)
        await watch.start(ctx)
        return watch

    async def visible_text(self, page: PwPage, locator: Locator, ctx: OperationContext) -> str:
        at_once = await elements.text_at_once(page.page, locator, ctx)
        if at_once is not None:
            text, secrets = at_once
            return secrets.text(text)
        text = await elements.on_locator(
            page.page, locator, ctx, "visible_text", elements.read_text, page.refs
        )
        return (await snapshot.page_secrets(page.page, ctx.deadline)).text(text)

    async def find(self, page: PwPage, query: FindQuery, ctx: OperationContext) -> dict[str, Any]:
        return await find.find(page, query, ctx)

    async def set_files(
        self, page: PwPage, target: Target, payloads: list[files.FilePayload], ctx: OperationContext
    ) -> str:
        return await files.set_files(page.page, page.refs, target, payloads, ctx)

    async def pdf(self, page: PwPage, ctx: OperationContext) -> bytes:
        return await files.pdf(page.page, ctx)

    async def element_mark(
        self, page: PwPage, target: Target, ctx: OperationContext
    ) -> tuple[highlight.Mark, tuple[float, float]]:
        mark = await highlight.locate(page.page, page.refs, target, ctx, scroll=False)
        size = page.page.viewport_size
        if size is None:
            width, height = await timed(page.page.evaluate(_INNER_SIZE), ctx.deadline)
            return mark, (float(width), float(height))
        return mark, (float(size["width"]), float(size["height"]))

    async def trace_start(
        self, context: PwContext, options: TraceOptions, ctx: OperationContext
    ) -> None:
        await tracing.start(context, options, ctx.deadline)

    async def trace_group(
        self, context: PwContext, name: str | None, ctx: OperationContext
    ) -> None:
        await tracing.group(context, name)

    async def trace_stop(
        self, context: PwContext, path: Path | None, ctx: OperationContext
    ) -> None:
        await tracing.stop(context, path, ctx.deadline)

    async def scroll(self, page: PwPage, dx: int, dy: int, ctx: OperationContext) -> None:
        await timed(self._wheel(page.page, dx, dy), ctx.deadline)

    async def viewport(self, page: PwPage, ctx: OperationContext) -> Viewport:
        return await timed(mouse.viewport(page.page), ctx.deadline)

    async def mouse(self, page: PwPage, gesture: MouseGesture, ctx: OperationContext) -> None:
        await timed(mouse.perform(page.page, gesture), ctx.deadline)

    async def page_tools(
        self, page: PwPage, chain: tuple[Selector, ...] | None, ctx: OperationContext
    ) -> dict[str, Any]:
        return await page_tools.list_tools(page.page, chain, ctx)

    async def page_tool_count(self, page: PwPage, ctx: OperationContext) -> int | None:
        return await page_tools.count_tools(page.page, ctx)

    async def page_tool_call(
        self,
        page: PwPage,
        chain: tuple[Selector, ...],
        name: str,
        arguments: dict[str, Any],
        ctx: OperationContext,
    ) -> ToolResult:
        return await page_tools.call_tool(page.page, chain, name, arguments, ctx)

    async def screenshot(
        self,
        page: PwPage,
        kind: str,
        locator: Locator | None,
        limits: ScreenshotLimits,
        ctx: OperationContext,
        highlight: Target | None = None,
    ) -> capture.Screenshot:
        return await capture.screenshot(page.page, page.refs, kind, locator, highlight, limits, ctx)

    async def wait(self, page: PwPage, condition: Condition, ctx: OperationContext) -> None:
        await waits.wait_for(page.page, condition, ctx)

    async def action_and_wait(
        self, page: PwPage, action: ActionSpec, wait: WaitSpec, ctx: OperationContext
    ) -> tuple[dict[str, Any], PwPage | None]:
        """Act, await the expected event; a popup comes back as a new managed page."""
        guard: PopupGuard | None = page.extras.get("popups")
        watch = ChangeWatch(page, handle_dialogs=False)  # the waiter handles dialogs
        await watch.start(ctx)
        try:
            # The page's next popup is the waiter's to register or close, never the guard's.
            with guard.expecting() if guard is not None else contextlib.nullcontext():
                outcome = await waits.action_and_wait(page, action, wait, ctx)
        except BaseException:
            await watch.close()
            raise
        outcome.event["_changes"] = await watch.finish(ctx, settle=False)
        if outcome.event.get("kind") == "dialog":
            # A dialog's text is page text: it may quote a password field. Read once the dialog
            # is handled (an open dialog blocks every evaluation in the page).
            secrets = await snapshot.page_secrets(page.page, ctx.deadline)
            outcome.event = {
                k: secrets.text(v) if isinstance(v, str) else v for k, v in outcome.event.items()
            }
        if outcome.download is not None:
            # The runtime finds the artifact this download became (see runtime.files).
            outcome.event["_download"] = outcome.download
        if outcome.popup is None:
            return outcome.event, None
        return outcome.event, self.adopt_page(page.context, outcome.popup)

    async def snapshot(
        self,
        page: PwPage,
        opts: SnapshotOptions,
        scope: Locator | RefTarget | None,
        ctx: OperationContext,
    ) -> Capture:
        """Capture a snapshot; a ref capture starts a new generation for the page."""
        with_refs = opts.format == "actions" or opts.include_refs
        generation = self.next_generation() if with_refs else page.refs.generation
        # Taken once the page has rendered (engine.quiet); a whole page's facts come with it.
        facts = None if scope is not None else await page_facts(page.page, ctx)
        if facts is None:
            await quiet.settle(page.page, ctx.deadline)
        now = self.clock.monotonic()
        return await snapshot.capture(page, opts, scope, generation, now, ctx, facts)

    async def evaluate(
        self, page: PwPage, expression: str, arg: Any, ctx: OperationContext
    ) -> tuple[Any, bool]:
        """Caller JavaScript in the page's main world (the `eval` profile only), converted to
        bounded JSON in the page: `(result, truncated)`."""
        return await evaluate_in_page(page.page, expression, arg, ctx)

    def observe(self, page: PwPage, sink: PageObservations) -> None:
        """Feed the page's console, error and network events into `sink` (metadata only:
        never headers, bodies, cookies, argument objects or stacks), at most the sink's
        per-second allowance per ring; popups nobody expects are reported there too."""
        page.extras["sink"] = sink  # wired again to a page that replaces a crashed one
        p = page.page
        router = page.context.router
        observe_page(p, sink, backs_handle=lambda: page.page is p, router=router)
        router.watch(p, sink)
        for request in router.orphans_of(p):  # a popup's first navigation, policy-blocked
            if not sink.tracks(request):  # else its listener saw it start: its failure follows
                report_orphan(sink, router, request)
        # Popups nobody expects are reported on the sink and bounded by the session's limit.
        guard = PopupGuard(sink, lambda: self.events.page_limit(page), self._cleanups)
        guard.watch(p, managed=True)
        page.extras["popups"] = guard

    @staticmethod
    async def _wheel(page: Page, dx: int, dy: int) -> None:
        await page.mouse.wheel(dx, dy)
        # The wheel scroll lands asynchronously; two animation frames later it has been applied
        # and its scroll events dispatched, so the next call sees the scrolled page.
        await page.evaluate(_TWO_FRAMES)

    async def drag(
        self, page: PwPage, source: Locator, target: Locator, ctx: OperationContext
    ) -> None:
        """Drag `source` onto `target`; both endpoints are strict single matches."""

        async def attached(el: Any, timeout_ms: float) -> None:
            await el.wait_for(state="attached", timeout=timeout_ms)  # strict, bounded

        # Each endpoint is checked with the same strictness, deadline and classification as
        # any element operation (invalid CSS -> ELEMENT_NOT_FOUND, >1 -> LOCATOR_AMBIGUOUS).
        await elements.on_locator(page.page, target, ctx, "drag", attached, page.refs)
        dst = await elements.resolve(page.page, target, ctx, "drag")

        async def call(src: Any, timeout_ms: float) -> None:
            await src.drag_to(dst, timeout=timeout_ms)

        await elements.on_locator(page.page, source, ctx, "drag", call, page.refs)


def context_kwargs(options: ContextOptions) -> dict[str, Any]:
    """Map normalized contextSettings (§12) onto Playwright's new_context arguments, one
    `CONTEXT_SETTINGS` entry at a time by its rule; a named `device` contributes its descriptor
    under the explicit settings (model/devices.py)."""
    s = emulated(options.settings)
    kwargs: dict[str, Any] = {}
    for setting in CONTEXT_SETTINGS:
        match setting.rule:
            case "keyword":
                assert setting.keyword is not None  # test_context_settings_catalogue.py
                value = s.get(setting.name, setting.default)
                if value is not None:
                    kwargs[setting.keyword] = value
            case "descriptor":  # its other fields are in `s` already; its screen has no setting
                if "screen" in s:
                    kwargs["screen"] = s["screen"]
            case "policy":  # network's and proxy's own options (engine/policy.py)
                if setting.name in s:
                    kwargs.update(network_kwargs({setting.name: s[setting.name]}))
            case "grant" | "route" | "init script":
                pass  # applied to the context once it exists (grants, RequestRouter, scripts)
            case _:
                assert_never(setting.rule)
    if options.storage_state is not None:
        kwargs["storage_state"] = options.storage_state
    return kwargs
