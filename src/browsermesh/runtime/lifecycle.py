"""Session and page lifecycle: create (with saved state), list, get, close (drained, bounded),
saved states, pages, and shutdown of the whole runtime.

`SessionLifecycle` is a service on the `RuntimeCore` (and the `Recorder`, for pages opened and
closed); `SessionForks` (runtime/fork.py) builds on its public methods. A session's arguments
are checked once, at the entry (`session_args`); the inner path takes the checked value.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass, replace
from typing import Any

import anyio

from browsermesh.engine.protocol import ContextOptions
from browsermesh.errors import Bound, BrowserMeshError, ErrorCode
from browsermesh.model.deadline import Deadline, OperationCancelled, OperationContext
from browsermesh.model.ids import short_id
from browsermesh.model.limits import MAX_TIMEOUT_MS
from browsermesh.model.recording import PageClosed, PageOpened
from browsermesh.model.tasks import all_of, all_settled
from browsermesh.persistence.states import LOCAL_PRINCIPAL as LOCAL_PRINCIPAL  # mcp imports it
from browsermesh.runtime.core import RuntimeCore
from browsermesh.runtime.recording import Recorder, step_at
from browsermesh.runtime.session import (
    ACTIVE_STATUSES,
    TERMINAL_STATUSES,
    SessionRecord,
)

CLOSE_BUDGET_MS = MAX_TIMEOUT_MS
"""Session close must always run once queued; it gets a generous budget of its own."""
CLOSE_OVERRUN_S = 2.0
"""How long a session close waits past the latest deadline of the work queued before it."""


@dataclass(frozen=True, slots=True)
class SessionArgs:
    """A new session's arguments as checked at the entry: labels validated, `contextSettings`
    normalized; `state_id` as given (checked when the state is loaded)."""

    principal: str
    name: str | None
    metadata: Mapping[str, str]
    state_id: object
    settings: dict[str, Any]


def session_args(
    principal: str,
    name: object,
    metadata: object,
    state_id: object,
    context_settings: object,
    tools: Collection[str],
) -> SessionArgs:
    """Check a creation's arguments once, in the reference's order: labels, then settings
    (`tools`: the published profiles, which `contextSettings.initScripts` needs `eval` among)."""
    from browsermesh.model.init_scripts import check_eval_profile
    from browsermesh.model.labels import validate_labels
    from browsermesh.model.settings import normalize_context_settings

    clean_name, clean_metadata = validate_labels(name, metadata)
    settings = normalize_context_settings(context_settings)
    # Issue 36: init scripts are caller code in every page, as `browser_evaluate` is. The
    # catalogue's parsers see only the value (model/settings.py is pure, without the
    # configuration), so the profile rule lives here, the one entry of every creation and fork.
    check_eval_profile(settings, tools)
    return SessionArgs(principal, clean_name, clean_metadata, state_id, settings)


class SessionLifecycle:
    """Sessions (create, list, get, close), saved states, pages, and the runtime's shutdown."""

    def __init__(self, core: RuntimeCore, recorder: Recorder) -> None:
        self.core = core
        self.recorder = recorder
        # The engine under the name its calls have always had here (call lines unchanged).
        self.engine = core.engine
        self._close_tasks: dict[str, asyncio.Task[None]] = {}
        self._shutdown_task: asyncio.Task[None] | None = None
        # A second stop signal cuts the shutdown's grace short (issue 30 #10): the scope of the
        # grace while it runs, and whether the hurry came before it started.
        self._grace_scope: anyio.CancelScope | None = None
        self._hurried = False

    async def create_session(
        self,
        principal: str = LOCAL_PRINCIPAL,
        *,
        name: object = None,
        metadata: object = None,
        state_id: object = None,
        context_settings: object = None,
    ) -> tuple[str, dict[str, Any], str]:
        """Create a ready session with its default page: `(operationId, view, pageId)`."""
        self.core.check_running()
        args = session_args(
            principal, name, metadata, state_id, context_settings, self.core.config.tools
        )
        return await self.create_checked(args)

    async def create_checked(self, args: SessionArgs) -> tuple[str, dict[str, Any], str]:
        """`create_session` once its arguments are checked (`session_args`)."""
        principal = args.principal
        self.check_capacity(principal)
        rec = self.new_record(args)
        deadline = Deadline(self.core.config.timeout_ms)

        async def create(ctx: OperationContext) -> str:
            try:
                return await self.build_session(rec, ctx, args.state_id, args.settings)
            except BaseException as exc:
                await self.fail_creation(rec, exc)
                raise

        op_id, page_id = await self.core.run_queued(rec, "browser_session_create", deadline, create)
        self.core.log.info(
            "session.created",
            operationId=op_id,
            sessionId=rec.session_id,
            pageId=page_id,
            principal=principal,
        )
        return op_id, rec.view(), page_id

    def check_capacity(self, principal: str, wanted: int = 1) -> None:
        """`LIMIT_EXCEEDED` unless `wanted` more active sessions fit, server-wide and for the
        principal."""
        if self.core.active_count() + wanted > self.core.config.max_sessions:
            raise BrowserMeshError(
                ErrorCode.LIMIT_EXCEEDED,
                bound=Bound(
                    "sessions", "<=", self.core.config.max_sessions, "BROWSERMESH_MAX_SESSIONS"
                ),
            )
        per_principal = self.core.config.max_sessions_per_principal
        if per_principal is not None and self.core.active_count(principal) + wanted > per_principal:
            raise BrowserMeshError(
                ErrorCode.LIMIT_EXCEEDED,
                bound=Bound(
                    "sessions", "<=", per_principal, "BROWSERMESH_MAX_SESSIONS_PER_PRINCIPAL"
                ),
            )

    def new_record(self, args: SessionArgs) -> SessionRecord:
        """Allocate a `creating` record (checked labels and settings) and register it."""
        now = self.core.now()
        rec = SessionRecord(
            session_id=short_id("s"),
            principal=args.principal,
            name=args.name,
            metadata=args.metadata,
            created_at=now,
            last_activity_at=now,
            context_settings=args.settings,
            last_touch=self.core.clock.monotonic(),
            recording=self.recorder.new_recording(),
        )
        self.core.add_session(rec)
        return rec

    async def build_session(
        self,
        rec: SessionRecord,
        ctx: OperationContext,
        state_id: object,
        settings: dict[str, Any],
        seed: ContextOptions | None = None,
        hold: Callable[[], Awaitable[None]] | None = None,
    ) -> str:
        """Context and first page of `rec`, then `ready`. A fork (runtime/fork.py) passes the
        copied storage as `seed` and, for several at once, `hold`: awaited before `ready`, so
        a batch turns ready together or fails together."""
        storage_state = None
        if state_id is not None:
            storage_state = await self._load_state(rec.principal, state_id)
            rec.restored_from_state_id = str(state_id)
        live: dict[str, int] = {}
        for other in self.core.records():
            if other.placement and other.status in ACTIVE_STATUSES:
                live[other.placement] = live.get(other.placement, 0) + 1
        options = ContextOptions(settings=settings, storage_state=storage_state)
        if seed is not None:
            options = replace(
                options, storage_state=seed.storage_state, session_storage=seed.session_storage
            )
        context = await self.engine.new_context(options, ctx, live)
        rec.context = context
        rec.placement = context.placement
        if rec.disconnected:
            raise BrowserMeshError(ErrorCode.BROWSER_DISCONNECTED)
        for watch in self.core.step_watches:  # a server-wide trace starts before the first page
            await watch.session_started(rec, ctx)
        handle = await self.engine.new_page(context, ctx)
        if rec.disconnected:
            raise BrowserMeshError(ErrorCode.BROWSER_DISCONNECTED)
        page = self.core.register_page(rec, handle)
        if hold is not None:
            await hold()
        rec.status = "ready"
        self.core.changed(rec, "state")
        return page.page_id

    async def _load_state(self, principal: str, state_id: object) -> dict[str, Any]:
        repo = self._repository()
        from browsermesh.persistence.states import validate_state_id

        valid = validate_state_id(state_id)
        state: dict[str, Any] = await repo.load(principal, valid)
        return state

    async def fail_creation(self, rec: SessionRecord, exc: BaseException) -> None:
        code = exc.code if isinstance(exc, BrowserMeshError) else ErrorCode.INTERNAL_ERROR
        if isinstance(exc, OperationCancelled | asyncio.CancelledError):
            code = ErrorCode.OPERATION_CANCELLED
        if rec.disconnected:
            code = ErrorCode.BROWSER_DISCONNECTED
        context, rec.context = rec.context, None
        self.core.drop_pages(rec)
        await self.core.files.close(rec.session_id)
        if context is not None and not rec.disconnected:
            try:
                await self.engine.close_context(context)
            except BrowserMeshError:
                code = ErrorCode.BROWSER_ERROR
        if rec.status != "failed":
            rec.status = "failed"
            rec.failure_code = code
            rec.last_activity_at = self.core.now()
            self.core.make_terminal(rec)
            self.core.log.warn(
                "session.failed", sessionId=rec.session_id, principal=rec.principal, code=code.value
            )
            self.core.changed(rec, "closed")

    def list_sessions(self, principal: str = LOCAL_PRINCIPAL) -> tuple[str, list[dict[str, Any]]]:
        self.core.check_running()
        views = [r.view() for r in self.core.records() if r.principal == principal]
        return short_id("o"), views

    def get_session(self, principal: str, session_id: object) -> tuple[str, dict[str, Any]]:
        rec = self.core.lookup(principal, session_id)
        count, size = self.core.files.store.usage(rec.session_id)
        return short_id("o"), {**rec.view(), "artifacts": {"count": count, "bytes": size}}

    async def session_pages(
        self, principal: str, session_id: object
    ) -> tuple[str, list[dict[str, Any]]]:
        """The session's pages as PageViews plus `title`, read at once instead of queued (the
        session resource must not wait behind long work): a title that cannot be read within
        `TITLE_PEEK_MS` is null. A closed or failed record has no pages."""
        rec = self.core.lookup(principal, session_id)
        return short_id("o"), await self.core.page_views(rec)

    def page_urls(self, principal: str) -> dict[str, list[str]]:
        """The current URLs of the pages of `principal`'s live sessions, by session id (no
        queue, no browser round trip; completions)."""
        self.core.check_running()
        return {
            rec.session_id: [self.engine.current_url(p.handle) for p in rec.pages.values()]
            for rec in self.core.records()
            if rec.principal == principal and rec.status in ACTIVE_STATUSES
        }

    async def close_session(
        self, principal: str, session_id: object, reason: str = "request"
    ) -> tuple[str, dict[str, Any]]:
        """Idempotent close that drains the session's accepted work first (§13.5)."""
        rec = self.core.lookup(principal, session_id)
        op_id = short_id("o")
        await self._close(rec, reason, op_id)
        return op_id, rec.view()

    async def _close(self, rec: SessionRecord, reason: str, op_id: str | None = None) -> None:
        if rec.status == "closed":
            return
        if rec.status == "failed":
            rec.status = "closed"
            rec.last_activity_at = self.core.now()
            self.core.drop_pages(rec)
            self.core.make_terminal(rec)
            self.core.log.info("session.closed", sessionId=rec.session_id, reason=reason)
            self.core.changed(rec, "state")  # a failed record closed: it was not live before
            return
        task = self._close_tasks.get(rec.session_id)
        if task is None:
            rec.accepting = False
            rec.close_requested = True
            ctx = OperationContext(op_id or short_id("o"), Deadline(CLOSE_BUDGET_MS))

            async def close_job() -> None:
                await self._close_now(rec, reason, ctx.operation_id)

            queued = rec.queue.submit(ctx, close_job)
            task = self.core.tasks.spawn(self._bounded_close(rec, queued))
            self._close_tasks[rec.session_id] = task
            task.add_done_callback(lambda _t: self._close_tasks.pop(rec.session_id, None))
        await asyncio.shield(task)

    async def _bounded_close(self, rec: SessionRecord, queued: asyncio.Task[None]) -> None:
        """Let the close job drain the work accepted before it, but never past the latest of
        that work's deadlines plus a short overrun: a job that overruns its deadline (a page
        that never yields) is aborted so that the close, and shutdown behind it, go on."""
        while not queued.done():
            latest = rec.queue.latest_deadline(before=queued)
            wait_s = max(0.0, latest - time.monotonic()) + CLOSE_OVERRUN_S
            await asyncio.wait({queued}, timeout=wait_s)
            if queued.done():
                break
            if rec.queue.abort(ErrorCode.SESSION_CLOSED, keep=queued):
                self.core.log.warn("session.drain_aborted", sessionId=rec.session_id)
        await _settle(queued)

    async def _close_now(self, rec: SessionRecord, reason: str, op_id: str) -> None:
        failure: BrowserMeshError | None = None
        if rec.status in ACTIVE_STATUSES:
            rec.status = "closing"
            self.core.changed(rec, "state")
        if rec.context is not None and not rec.disconnected:
            for watch in self.core.step_watches:  # a running trace or video is saved first
                await watch.session_ending(rec, keep=reason != "shutdown")
        context, rec.context = rec.context, None
        self.core.drop_pages(rec)
        if context is not None and not rec.disconnected:
            try:
                await self.engine.close_context(context)
            except BrowserMeshError as err:
                failure = err
        rec.status = "closed"
        rec.last_activity_at = self.core.now()
        self.core.make_terminal(rec)
        self.core.log.info(
            "session.closed",
            operationId=op_id,
            sessionId=rec.session_id,
            reason=reason,
            principal=rec.principal,
        )
        self.core.changed(rec, "closed")
        if failure is not None:
            self.core.log.warn(
                "operation.failed", sessionId=rec.session_id, code=failure.code.value
            )

    def _repository(self) -> Any:
        """The saved-state store, else `PERSISTENCE_DISABLED`."""
        if not self.core.config.persistence or self.core.states is None:
            raise BrowserMeshError(ErrorCode.PERSISTENCE_DISABLED)
        return self.core.states

    async def save_state(
        self, principal: str, session_id: object, state_id: object
    ) -> tuple[str, dict[str, str]]:
        """Capture the session's storage state after the work queued before it."""
        self.core.check_running()
        repo = self._repository()
        from browsermesh.persistence.states import validate_state_id

        valid = validate_state_id(state_id)

        async def job(rec: SessionRecord, ctx: OperationContext) -> dict[str, str]:
            assert rec.context is not None
            state = await self.engine.storage_state(rec.context, ctx)
            view: dict[str, str] = await repo.save(rec.principal, valid, state)
            return view

        return await self.core.run_session_op(principal, session_id, "browser_state_save", job)

    async def list_states(self, principal: str) -> tuple[str, list[dict[str, str]]]:
        self.core.check_running()
        views: list[dict[str, str]] = await self._repository().list(principal)
        return short_id("o"), views

    async def remove_state(self, principal: str, state_id: object) -> tuple[str, str]:
        self.core.check_running()
        repo = self._repository()
        from browsermesh.persistence.states import validate_state_id

        valid = validate_state_id(state_id)
        await repo.remove(principal, valid)
        return short_id("o"), valid

    async def create_page(self, principal: str, session_id: object) -> tuple[str, dict[str, Any]]:
        async def job(rec: SessionRecord, ctx: OperationContext) -> dict[str, Any]:
            limit = self.core.config.max_pages
            if len(rec.pages) >= limit:
                raise BrowserMeshError(
                    ErrorCode.LIMIT_EXCEEDED,
                    bound=Bound("pages", "<=", limit, "BROWSERMESH_MAX_PAGES"),
                )
            assert rec.context is not None
            handle = await self.engine.new_page(rec.context, ctx)
            page = self.core.register_page(rec, handle)
            self.recorder.record(rec, PageOpened(**step_at(rec, page, ctx)))
            return rec.page_view(page, self.engine.current_url(handle))

        return await self.core.run_session_op(principal, session_id, "browser_page_create", job)

    async def list_pages(
        self, principal: str, session_id: object
    ) -> tuple[str, list[dict[str, Any]]]:
        async def job(rec: SessionRecord, ctx: OperationContext) -> list[dict[str, Any]]:
            return [rec.page_view(p, self.engine.current_url(p.handle)) for p in rec.pages.values()]

        return await self.core.run_session_op(principal, session_id, "browser_page_list", job)

    async def close_page(self, principal: str, session_id: object, page_id: object) -> str:
        rec = self.core.accept(principal, session_id)
        self.core.page_of(rec, page_id)

        async def job(rec: SessionRecord, ctx: OperationContext) -> None:
            page = self.core.page_of(rec, page_id)
            self.core.remove_page(rec, page)
            await self.engine.close_page(page.handle, ctx)
            self.recorder.record(rec, PageClosed(**step_at(rec, page, ctx)))

        op_id, _ = await self.core.run_session_op(principal, session_id, "browser_page_close", job)
        return op_id

    async def shutdown(self) -> None:
        """Stop accepting, close every session (each drains first), stop the browser.

        Idempotent: a second call awaits the same shutdown."""
        if self._shutdown_task is None:
            self.core.begin_shutdown()
            self._shutdown_task = self.core.tasks.spawn(self._shutdown())
        await asyncio.shield(self._shutdown_task)

    def hurry_shutdown(self) -> None:
        """End the shutdown's grace now (or before it starts): work still running is cancelled
        and its callers answered RUNTIME_SHUTTING_DOWN at once instead of after the grace."""
        self._hurried = True
        if self._grace_scope is not None:
            self._grace_scope.cancel()

    async def _shutdown(self) -> None:
        try:
            await self._close_all()
        finally:
            if self.core.fleet is not None:  # the sessions' last records (reference §37.3)
                await self.core.fleet.stop()

    async def _close_all(self) -> None:
        live = [r for r in self.core.records() if r.status not in TERMINAL_STATUSES]
        for rec in live:
            rec.accepting = False
        # In-flight work gets a short grace to finish; what is still running is then cancelled
        # (its callers get RUNTIME_SHUTTING_DOWN), so exit never waits for a call's whole budget.
        # `hurry_shutdown` (a second stop signal) ends the grace at once.
        with anyio.move_on_after(self.core.config.shutdown_grace_ms / 1000) as grace:
            self._grace_scope = grace
            if self._hurried:
                grace.cancel()
            await all_of(*(r.queue.drain() for r in live))
        self._grace_scope = None
        aborted = sum(rec.queue.abort() for rec in live)
        if aborted:
            self.core.log.info("runtime.shutdown_aborted", operations=aborted)
        results = await all_settled(*(self._close(rec, "shutdown") for rec in live))
        errors = [r for r in results if isinstance(r, BaseException)]
        await self.core.files.stop()
        try:
            await self.engine.stop()
        except BrowserMeshError as err:
            errors.append(err)
        if errors:
            raise BrowserMeshError(ErrorCode.BROWSER_ERROR, cause=f"{len(errors)} shutdown errors")


async def _settle(task: asyncio.Task[None]) -> None:
    """Wait for a queued close job; its failure is already logged."""
    with contextlib.suppress(BrowserMeshError):
        await task
