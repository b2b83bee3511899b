"""The runtime's core: registry, page bookkeeping, queue execution, engine events, inspection.

`RuntimeCore` is an ordinary object that the runtime's services receive in their constructor
(runtime.runtime builds them). Every public coroutine of the runtime either returns
`(operationId, result)` or raises `BrowserMeshError` carrying the operationId; `run_queued` is
where that happens."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from browsermesh.config import Config
from browsermesh.engine.protocol import Engine, EnginePage
from browsermesh.engine.snapshot import Capture
from browsermesh.errors import BrowserMeshError, ErrorCode, internal_error
from browsermesh.log import EventLog
from browsermesh.model import progress
from browsermesh.model.clock import Clock, iso_from_epoch
from browsermesh.model.deadline import Deadline, OperationContext
from browsermesh.model.ids import short_id
from browsermesh.model.observe import ObserveLimits, PageObservations
from browsermesh.model.paging import Page, SnapshotOptions, SnapshotStore
from browsermesh.model.tasks import TaskOwner, all_of
from browsermesh.persistence.artifacts import ArtifactLimits, ArtifactStore, artifacts_root
from browsermesh.persistence.states import LOCAL_PRINCIPAL as LOCAL_PRINCIPAL  # mcp imports it
from browsermesh.runtime.calls import PageCall
from browsermesh.runtime.checks import validate_timeout
from browsermesh.runtime.files import SessionFiles
from browsermesh.runtime.handover import hold_gate
from browsermesh.runtime.queue import await_job
from browsermesh.runtime.secrets import SecretBook
from browsermesh.runtime.session import (
    ACTIVE_STATUSES,
    TERMINAL_STATUSES,
    PageRecord,
    SessionRecord,
)
from browsermesh.runtime.steps import StepWatch, watched
from browsermesh.runtime.watchers import ChangeKind, SessionChange, SessionWatcher, fingerprint

if TYPE_CHECKING:
    from browsermesh.runtime.fleet import FleetMember

T = TypeVar("T")
PageJob = Callable[[SessionRecord, PageRecord, OperationContext], Awaitable[T]]
SessionJob = Callable[[SessionRecord, OperationContext], Awaitable[T]]
TITLE_PEEK_MS = 1_000
"""How long reading one page's title for a view may take (a busy or hung page shows none)."""
CRASHED_PAGE_TOOLS = frozenset({"browser_reload", "browser_get_url"})
"""What a page whose renderer crashed still answers (reload replaces it; see engine/crash.py)."""


class RuntimeCore:
    """The registry and how work runs: sessions and pages by id, acceptance checks, the
    queue execution every operation goes through (deadline, logging, classification), engine
    events, change notification and inspection. The operations are in the services that
    receive it (runtime.lifecycle, runtime.actions, runtime.reads, ...); `runtime.Runtime` is
    the facade over them."""

    def __init__(
        self,
        config: Config,
        engine: Engine[Any, Any],
        log: EventLog | None = None,
        *,
        states: Any = None,
        clock: Clock | None = None,
    ) -> None:
        self.config = config
        self.engine = engine
        self.log = log or EventLog("silent")
        self.states = states
        self.clock = clock or Clock()
        self.transport = "stdio"
        self._observe_limits = ObserveLimits.from_config(config)
        self._sessions: dict[str, SessionRecord] = {}
        self._page_owner: dict[int, tuple[str, str]] = {}
        self._shutting_down = False
        self._accepted = itertools.count(1)  # OperationContext.accepted
        # Tools that run while a person holds the session (the read-only tools, set by the MCP
        # layer from their hints); every other call waits for the hand-back (issue 34).
        self.hold_exempt: frozenset[str] = frozenset()
        # Every task the runtime starts (bounded closes, the shutdown); `async with` awaits them.
        self.tasks = TaskOwner()
        # Told about every session change (runtime.watchers); empty: nothing is computed.
        self.watchers: list[SessionWatcher] = []
        self.fleet: FleetMember | None = None  # with --fleet-redis (issue 37; runtime.runtime)
        self.step_watches: list[StepWatch] = []  # traces, videos (runtime.steps)
        engine.events.on_disconnect = self._on_disconnect
        engine.events.on_page_closed = self._on_page_closed
        engine.events.on_download = self._on_download
        # No session survives a restart, so no artifact does either (issue 14).
        store = ArtifactStore(artifacts_root(config.data_dir), ArtifactLimits.from_config(config))
        store.clear_all()
        self.files = SessionFiles(store, self.log, config.upload_root)
        self.secrets = SecretBook(config.secrets_file, self.log)
        self.files.on_change = self._artifacts_changed
        engine.events.page_limit = lambda _page: self.config.max_pages

    def next_accepted(self) -> int:
        """The next place in the runtime's accept order (a step recorded outside any call)."""
        return next(self._accepted)

    def start(self) -> None:
        """Start what runs beside the calls: the fleet directory's writer, when configured (it
        also starts with the first session)."""
        if self.fleet is not None:
            self.fleet.start()

    def now(self) -> str:
        """The wall clock as the views show times (ISO 8601)."""
        return iso_from_epoch(self.clock.wall())

    def check_running(self) -> None:
        """`RUNTIME_SHUTTING_DOWN` once the shutdown began (every entry checks it first)."""
        if self._shutting_down:
            raise BrowserMeshError(ErrorCode.RUNTIME_SHUTTING_DOWN)

    def begin_shutdown(self) -> None:
        """From now on no call is accepted (the lifecycle's shutdown, before it drains)."""
        self._shutting_down = True

    def add_session(self, rec: SessionRecord) -> None:
        """Register a new (`creating`) record and tell the watchers."""
        self._sessions[rec.session_id] = rec
        self.changed(rec, "created")

    def records(self) -> list[SessionRecord]:
        """Every record in registry order (live ones and kept tombstones), as of now."""
        return list(self._sessions.values())

    def lookup(self, principal: str, session_id: object) -> SessionRecord:
        self.check_running()
        rec = self._sessions.get(session_id) if isinstance(session_id, str) else None
        if rec is None or rec.principal != principal:
            raise BrowserMeshError(ErrorCode.SESSION_NOT_FOUND)
        rec.last_touch = self.clock.monotonic()
        return rec

    def accept(self, principal: str, session_id: object) -> SessionRecord:
        """The §13.3 state checks, in order, for work on a session."""
        rec = self.lookup(principal, session_id)
        if rec.status == "closing" or (rec.status == "ready" and not rec.accepting):
            raise BrowserMeshError(ErrorCode.SESSION_CLOSING)
        if rec.status == "closed":
            raise BrowserMeshError(ErrorCode.SESSION_CLOSED)
        if rec.status == "failed" and rec.disconnected:
            raise BrowserMeshError(ErrorCode.BROWSER_DISCONNECTED)
        if rec.status != "ready":
            raise BrowserMeshError(ErrorCode.SESSION_NOT_READY)
        return rec

    def page_of(self, rec: SessionRecord, page_id: object) -> PageRecord:
        """`rec`'s page `page_id`, else `PAGE_NOT_FOUND`."""
        page = rec.pages.get(page_id) if isinstance(page_id, str) else None
        if page is None:
            raise BrowserMeshError(ErrorCode.PAGE_NOT_FOUND)
        return page

    def owner_of(self, session_id: str) -> str | None:
        """The principal owning `session_id` (live or a kept tombstone); None if unknown."""
        rec = self._sessions.get(session_id)
        return None if rec is None else rec.principal

    def changed(self, rec: SessionRecord, kind: ChangeKind) -> None:
        """Tell every watcher that `rec` changed (a raising watcher is logged and skipped)."""
        if not self.watchers:
            return
        change = SessionChange(rec.principal, rec.session_id, kind)
        for watcher in list(self.watchers):
            try:
                watcher.session_changed(change)
            except Exception:
                self.log.warn("watcher.failed", sessionId=rec.session_id)

    def _artifacts_changed(self, session_id: str) -> None:
        rec = self._sessions.get(session_id)
        if rec is not None:
            self.changed(rec, "artifacts")

    def _pages_watched(self, rec: SessionRecord) -> bool:
        return any(w.watches_pages(rec.principal) for w in list(self.watchers))

    async def title_peek(self, page: PageRecord) -> str | None:
        """The page's title as browser_get_title shows it, or None when the page cannot say
        within `TITLE_PEEK_MS` (crashed, busy, navigating, closed)."""
        if page.handle.crashed:
            return None
        try:
            # Not a queued operation: a context of its own (the peek's budget, never cancelled).
            peek = OperationContext(short_id("o"), Deadline(TITLE_PEEK_MS))
            return await self.engine.title(page.handle, peek)
        except (asyncio.CancelledError, KeyboardInterrupt, SystemExit):
            raise
        except Exception:
            return None

    async def page_views(self, rec: SessionRecord) -> list[dict[str, Any]]:
        """Every page of `rec` as a PageView plus its `title` (read at once, not queued)."""
        pages = list(rec.pages.values())
        titles = await all_of(*(self.title_peek(p) for p in pages))
        return [
            {**rec.page_view(p, self.engine.current_url(p.handle)), "title": title}
            for p, title in zip(pages, titles, strict=True)
        ]

    async def _note_pages(self, rec: SessionRecord) -> None:
        """After an operation: tell the watchers when the session's pages show something new.
        Only when someone watches this principal's pages; otherwise the kept fingerprint is
        forgotten, so that the first watched operation reports (rather than misses) a change."""
        if not self.watchers or rec.status != "ready":
            return
        if not self._pages_watched(rec):
            rec.fingerprint = None
            return
        now = fingerprint(await self.page_views(rec))
        if now != rec.fingerprint:
            rec.fingerprint = now
            self.changed(rec, "pages")

    def make_terminal(self, rec: SessionRecord) -> None:
        """Move a record that just became terminal to the end and prune old tombstones; its
        artifacts go with it."""
        self.files.forget(rec.session_id)
        self._sessions.pop(rec.session_id, None)
        self._sessions[rec.session_id] = rec
        keep = max(1, self.config.max_sessions)
        terminal = [r for r in self._sessions.values() if r.status in TERMINAL_STATUSES]
        for old in terminal[: max(0, len(terminal) - keep)]:
            del self._sessions[old.session_id]
            self.files.drop(old.session_id)

    def drop_pages(self, rec: SessionRecord) -> None:
        """Forget every page of `rec` (its context is gone or going)."""
        for page in rec.pages.values():
            self._page_owner.pop(id(page.handle), None)
        rec.pages.clear()
        rec.default_page_id = None

    def register_page(self, rec: SessionRecord, handle: EnginePage) -> PageRecord:
        """A new managed page of `rec` for the engine's `handle` (the first is the default)."""
        page = PageRecord(
            short_id("p"),
            rec.session_id,
            self.now(),
            handle,
            snapshots=SnapshotStore(now=self.clock.monotonic, wall_now=self.clock.wall),
        )
        page.observations = PageObservations(
            rec.session_id, page.page_id, self._observe_limits, self.clock, rec.named_secrets
        )
        self.engine.observe(handle, page.observations)
        rec.pages[page.page_id] = page
        self._page_owner[id(handle)] = (rec.session_id, page.page_id)
        if rec.default_page_id is None:
            rec.default_page_id = page.page_id
        self.log.info(
            "page.created", sessionId=rec.session_id, pageId=page.page_id, principal=rec.principal
        )
        return page

    def remove_page(self, rec: SessionRecord, page: PageRecord) -> None:
        """Forget one page of `rec`; the oldest remaining becomes the default if it was."""
        rec.pages.pop(page.page_id, None)
        self._page_owner.pop(id(page.handle), None)
        if rec.default_page_id == page.page_id:
            # Closing the default page promotes the oldest remaining page.
            rec.default_page_id = next(iter(rec.pages), None)
        self.log.info("page.closed", sessionId=rec.session_id, pageId=page.page_id)

    def _on_disconnect(self, placement: str) -> None:
        """Fail every live session placed on a browser that went away."""
        self.log.warn("browser.disconnected", endpoint=placement)
        for rec in list(self._sessions.values()):
            if rec.placement != placement or rec.status not in ACTIVE_STATUSES:
                continue
            rec.status = "failed"
            rec.disconnected = True
            rec.failure_code = ErrorCode.BROWSER_DISCONNECTED
            rec.context = None
            rec.last_activity_at = self.now()
            self.drop_pages(rec)
            self.make_terminal(rec)
            self.log.warn(
                "session.failed",
                sessionId=rec.session_id,
                principal=rec.principal,
                code=ErrorCode.BROWSER_DISCONNECTED.value,
            )
            self.changed(rec, "closed")

    def _on_download(self, handle: EnginePage, download: Any) -> None:
        owner = self._page_owner.get(id(handle))
        rec = None if owner is None else self._sessions.get(owner[0])
        if owner is None or rec is None or rec.status != "ready":
            return  # the page's session is ending: the download dies with its context
        self.files.on_download(rec.session_id, rec.principal, owner[1], download)

    def _on_page_closed(self, handle: EnginePage) -> None:
        owner = self._page_owner.get(id(handle))
        if owner is None:
            return
        rec = self._sessions.get(owner[0])
        if rec is not None and owner[1] in rec.pages:
            self.remove_page(rec, rec.pages[owner[1]])
            # The page closed itself (window.close, a crash of its context): maybe between
            # operations, where no fingerprint would notice.
            self.changed(rec, "pages")

    async def run_queued(
        self,
        rec: SessionRecord,
        tool: str,
        deadline: Deadline,
        job: Callable[[OperationContext], Awaitable[T]],
        *,
        page_id: str | None = None,
        operation_id: str | None = None,
        touch: bool = True,
    ) -> tuple[str, T]:
        """Queue `job` on the session, wait for it on behalf of the caller, log and classify."""
        ctx = OperationContext(
            operation_id or short_id("o"), deadline, accepted=next(self._accepted)
        )
        started = time.monotonic()
        fields = {
            "operationId": ctx.operation_id,
            "sessionId": rec.session_id,
            "pageId": page_id,
            "principal": rec.principal,
            "tool": tool,
        }
        self.log.info("operation.started", **fields)

        async def guarded() -> T:
            if progress.active():  # every operation passes here: no work when nobody listens
                progress.report(f"running {tool}", total_ms=deadline.remaining_ms())
            try:
                return await job(ctx)
            except BrowserMeshError:
                if rec.disconnected:
                    raise BrowserMeshError(ErrorCode.BROWSER_DISCONNECTED) from None
                raise
            except (asyncio.CancelledError, KeyboardInterrupt, SystemExit):
                raise
            except Exception as exc:
                if rec.disconnected:
                    raise BrowserMeshError(ErrorCode.BROWSER_DISCONNECTED) from None
                raise internal_error(exc) from None

        async def observed() -> T:
            # In the queue slot, so that what it reads is what this operation left; a failed
            # operation may have changed the pages too (a navigation that timed out).
            try:
                result = await watched(self.step_watches, rec, page_id, tool, ctx, guarded)
            except BrowserMeshError:
                await self._note_pages(rec)
                raise
            await self._note_pages(rec)
            return result

        if rec.holds.hold is not None and tool not in self.hold_exempt:
            try:
                await hold_gate(rec, deadline)
            except BrowserMeshError as err:
                err.operation_id = ctx.operation_id
                self._ended(rec, err.code.value, started, fields)
                raise
        if rec.queue.pending and progress.active():
            ahead = rec.queue.pending
            progress.report(
                f"waiting in session queue ({ahead} ahead)", total_ms=deadline.remaining_ms()
            )
        try:
            result = await await_job(ctx, rec.queue.submit(ctx, observed))
            rec.last_touch = self.clock.monotonic()
        except asyncio.CancelledError:
            self._ended(rec, ErrorCode.OPERATION_CANCELLED.value, started, fields)
            raise
        except BrowserMeshError as err:
            rec.last_touch = self.clock.monotonic()
            err.operation_id = ctx.operation_id
            self._ended(rec, err.code.value, started, fields)
            raise
        if touch:
            rec.last_activity_at = self.now()
        self._ended(rec, None, started, fields)
        return ctx.operation_id, result

    def _ended(
        self, rec: SessionRecord, code: str | None, started: float, fields: dict[str, Any]
    ) -> None:
        """An operation's end: in the session's recent operations (the live view) and the log;
        `code` None for a success."""
        duration = ms_since(started)
        rec.note_operation(fields["tool"], code or "OK", duration, self.clock.wall())
        if code is None:
            self.log.info("operation.completed", durationMs=duration, **fields)
        else:
            self.log.info("operation.failed", code=code, durationMs=duration, **fields)

    async def run_page_op(self, call: PageCall, tool: str, job: PageJob[T]) -> tuple[str, T]:
        """Accept a page-addressed call and run `job(session, page, ctx)` in the queue."""
        rec = self.accept(call.principal, call.session_id)
        page_id = call.page_id
        self.page_of(rec, page_id)  # fail fast: PAGE_NOT_FOUND before queueing
        deadline = Deadline(validate_timeout(call.timeout_ms, self.config.timeout_ms))

        async def queued(ctx: OperationContext) -> T:
            self.recheck(rec)
            page = self.page_of(rec, page_id)
            if page.handle.crashed and tool not in CRASHED_PAGE_TOOLS:
                raise BrowserMeshError(
                    ErrorCode.BROWSER_ERROR,
                    variant="page_crashed",
                    details={"reason": "page_crashed"},
                )
            return await job(rec, page, ctx)

        return await self.run_queued(rec, tool, deadline, queued, page_id=str(page_id))

    async def run_session_op(
        self, principal: str, session_id: object, tool: str, job: SessionJob[T]
    ) -> tuple[str, T]:
        """Accept a session-level call (no `timeoutMs`: the configured default applies)."""
        rec = self.accept(principal, session_id)
        deadline = Deadline(self.config.timeout_ms)

        async def queued(ctx: OperationContext) -> T:
            self.recheck(rec)
            return await job(rec, ctx)

        return await self.run_queued(rec, tool, deadline, queued)

    def recheck(self, rec: SessionRecord) -> None:
        """In the queue slot: the session may have failed or closed while the job waited."""
        if rec.disconnected:
            raise BrowserMeshError(ErrorCode.BROWSER_DISCONNECTED)
        if rec.status != "ready" or rec.context is None:
            raise BrowserMeshError(ErrorCode.SESSION_NOT_READY)

    def active_count(self, principal: str | None = None) -> int:
        """Active sessions, server-wide or of `principal`."""
        return sum(
            1
            for r in self._sessions.values()
            if r.status in ACTIVE_STATUSES and (principal is None or r.principal == principal)
        )

    def clear_snapshots(self, page: PageRecord) -> None:
        """Drop the page's retained snapshots (cursors die)."""
        page.snapshots.clear()

    def info(self, principal: str = LOCAL_PRINCIPAL) -> dict[str, Any]:
        """browser_runtime_info: works during shutdown and never launches Chromium."""
        from browsermesh.runtime.info import runtime_info

        out = runtime_info(self, self.transport, principal)
        out["operationId"] = short_id("o")
        return out

    def counts(self) -> tuple[int, int]:
        """(active sessions, retained failed records), server-wide."""
        active = self.active_count()
        failed = sum(1 for r in self._sessions.values() if r.status == "failed")
        return active, failed

    def sessions_snapshot(self) -> Mapping[str, SessionRecord]:
        """Read-only view of the registry (tests, the resource, the fleet directory)."""
        return dict(self._sessions)

    @property
    def shutting_down(self) -> bool:
        """Whether the shutdown began."""
        return self._shutting_down


def first_page(
    page: PageRecord, opts: SnapshotOptions, scope_wire: dict[str, Any] | None, cap: Capture
) -> tuple[Page, dict[str, Any], dict[str, Any]]:
    """A fresh capture's first page (retained when more follows): the page, ``pagination`` and
    the bounds it was retained with (``appliedBounds`` plus ``_omissions`` and ``_pageRefs``)."""
    bounds = {
        **opts.applied_bounds(scope_wire),
        "_omissions": cap.omissions,
        "_pageRefs": cap.page_refs,
    }
    piece, pagination = page.snapshots.first_page(
        cap.content, bounds, opts.format, cap.clipped, cap.stops
    )
    return piece, pagination, bounds


def ms_since(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
