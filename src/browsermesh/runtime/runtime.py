"""The multi-session runtime: registry, per-session queues, deadlines, limits, lifecycle.

Business rules live here; browser details live behind the `Engine` port. Every public coroutine
either returns `(operationId, result)` or raises `BrowserMeshError` carrying the operationId.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal, TypeVar
from urllib.parse import urlsplit

from browsermesh.config import Config
from browsermesh.engine.protocol import ContextOptions, Engine, EnginePage, HistoryStep
from browsermesh.engine.snapshot import Capture
from browsermesh.errors import Bound, BrowserMeshError, ErrorCode, internal_error, invalid_argument
from browsermesh.log import EventLog
from browsermesh.model import progress
from browsermesh.model.arguments import action_argument, bounded_int, bounded_string
from browsermesh.model.clock import Clock, iso_from_epoch
from browsermesh.model.deadline import Deadline, OperationCancelled, OperationContext
from browsermesh.model.forms import parse_fields
from browsermesh.model.ids import short_id
from browsermesh.model.jsonvalue import MAX_JSON_BYTES
from browsermesh.model.jsonvalue import compact as compact_json
from browsermesh.model.limits import MAX_TIMEOUT_MS
from browsermesh.model.locators import (
    Locator,
    RefTarget,
    parse_element_target,
    parse_locator,
    parse_target,
)
from browsermesh.model.matchers import (
    ActionSpec,
    FileChooserWait,
    WaitSpec,
    parse_action,
    parse_condition,
    parse_wait,
)
from browsermesh.model.observe import ObserveLimits, PageObservations
from browsermesh.model.observe_query import parse_query
from browsermesh.model.paging import (
    SNAPSHOT_OPTION_KEYS,
    Page,
    SnapshotOptions,
    SnapshotStore,
    normalize_snapshot_options,
    snapshot_result,
)
from browsermesh.model.png import ScreenshotLimits
from browsermesh.model.table_diff import FollowMode, TableLines, parse_follow, table_diff
from browsermesh.model.text import bound_text
from browsermesh.persistence.artifacts import (
    READ_DEFAULT_BYTES,
    READ_MAX_BYTES,
    ArtifactLimits,
    ArtifactStore,
)
from browsermesh.persistence.states import LOCAL_PRINCIPAL as LOCAL_PRINCIPAL  # mcp imports it
from browsermesh.runtime.files import SessionFiles
from browsermesh.runtime.forms import fill_fields
from browsermesh.runtime.queue import await_job
from browsermesh.runtime.session import (
    ACTIVE_STATUSES,
    TERMINAL_STATUSES,
    PageRecord,
    SessionRecord,
)
from browsermesh.runtime.watchers import ChangeKind, SessionChange, SessionWatcher, fingerprint

T = TypeVar("T")
MAX_SCROLL_DELTA = 1_000_000
MAX_EXPRESSION_CHARS = 10_000
# Session close must always run once queued; it gets a generous budget of its own.
_CLOSE_BUDGET_MS = MAX_TIMEOUT_MS

PageJob = Callable[[SessionRecord, PageRecord, OperationContext], Awaitable[T]]
SessionJob = Callable[[SessionRecord, OperationContext], Awaitable[T]]


def validate_timeout(timeout_ms: object, default: int) -> int:
    """`timeoutMs`: integer 1..300,000 (runtime re-check of the schema)."""
    if timeout_ms is None:
        return default
    if isinstance(timeout_ms, bool) or not isinstance(timeout_ms, int):
        raise invalid_argument("timeoutMs", "integer")
    if timeout_ms < 1:
        raise invalid_argument("timeoutMs", "at least 1", bound=Bound("timeoutMs", ">=", 1))
    if timeout_ms > MAX_TIMEOUT_MS:
        raise invalid_argument(
            "timeoutMs",
            f"at most {MAX_TIMEOUT_MS}",
            bound=Bound("timeoutMs", "<=", MAX_TIMEOUT_MS),
        )
    return timeout_ms


def _delta(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise invalid_argument(name, "integer")
    if abs(value) > MAX_SCROLL_DELTA:
        op: Literal["<=", ">="] = "<=" if value > 0 else ">="
        limit = MAX_SCROLL_DELTA if value > 0 else -MAX_SCROLL_DELTA
        rule = f"at most {limit}" if value > 0 else f"at least {limit}"
        raise invalid_argument(name, rule, bound=Bound(name, op, limit))
    return value


_CAPTURE_KINDS = ("viewport", "fullPage", "element")


def _parse_capture(capture: object) -> tuple[str, Locator | None]:
    if capture is None:
        return "viewport", None
    if not isinstance(capture, dict):
        raise invalid_argument("capture", "object")
    kind = capture.get("kind")
    if not isinstance(kind, str) or kind not in _CAPTURE_KINDS:
        raise invalid_argument("capture.kind", "one of: " + ", ".join(_CAPTURE_KINDS))
    if kind != "element":
        if set(capture) != {"kind"}:
            raise invalid_argument("capture", f'only the key kind with kind "{kind}"')
        return kind, None
    if set(capture) - {"kind", "locator"}:
        raise invalid_argument("capture", "only the keys kind, locator")
    if "locator" not in capture:
        raise invalid_argument("capture.locator", 'required with kind "element"')
    return "element", parse_locator(capture["locator"], "capture.locator")


MAX_URL_CHARS = 8192
_URL_RULE = "an absolute http or https URL with a host"


def validate_http_url(url: object) -> str:
    """Navigation accepts absolute http(s) URLs only (loopback allowed), of 1..8192 characters.

    Every refusal keeps `reason: invalid_url` (the earlier payload); field and rule say more."""
    if not isinstance(url, str):
        raise invalid_argument("url", "string", reason="invalid_url")
    if not 1 <= len(url) <= MAX_URL_CHARS:
        over = len(url) > MAX_URL_CHARS
        raise invalid_argument(
            "url",
            f"at most {MAX_URL_CHARS} characters" if over else "at least 1 character",
            bound=Bound("url", "<=", MAX_URL_CHARS) if over else Bound("url", ">=", 1),
            reason="invalid_url",
        )
    try:
        parts = urlsplit(url)
        _ = parts.port  # a port that is not a number of 0..65535 raises ValueError
        if parts.scheme.lower() in ("http", "https") and parts.hostname:
            return url
    except ValueError:
        pass
    raise invalid_argument("url", _URL_RULE, reason="invalid_url")


POPUP_CLOSE_GRACE_MS = 1_000
TITLE_PEEK_MS = 1_000
"""How long reading one page's title for a view may take (a busy or hung page shows none)."""
_CRASHED_PAGE_TOOLS = frozenset({"browser_reload", "browser_get_url"})
"""What a page whose renderer crashed still answers (reload replaces it; see engine/crash.py)."""
CLOSE_OVERRUN_S = 2.0
"""How long a session close waits past the latest deadline of the work queued before it."""
"""How long closing a popup over the page limit may take past the call's deadline."""


class Runtime:
    """Owns every session. One instance per server process (or per test)."""

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
        self._observe_limits = ObserveLimits(
            config.observability_events,
            config.observability_string_chars,
            config.observability_page_size,
            config.observability_response_bytes,
        )
        self._sessions: dict[str, SessionRecord] = {}
        self._page_owner: dict[int, tuple[str, str]] = {}
        self._shutting_down = False
        self._shutdown_task: asyncio.Task[None] | None = None
        self._close_tasks: dict[str, asyncio.Task[None]] = {}
        # Told about every session change (runtime.watchers); empty: nothing is computed.
        self.watchers: list[SessionWatcher] = []
        engine.events.on_disconnect = self._on_disconnect
        engine.events.on_page_closed = self._on_page_closed
        engine.events.on_download = self._on_download
        # No session survives a restart, so no artifact does either (issue 14).
        store = ArtifactStore(config.data_dir / "artifacts", ArtifactLimits.from_config(config))
        store.clear_all()
        self.files = SessionFiles(store, self.log, config.upload_root)
        self.files.on_change = self._artifacts_changed
        engine.events.page_limit = lambda _page: self.config.max_pages

    # ------------------------------------------------------------------ helpers

    def _now(self) -> str:
        return iso_from_epoch(self.clock.wall())

    def _check_running(self) -> None:
        if self._shutting_down:
            raise BrowserMeshError(ErrorCode.RUNTIME_SHUTTING_DOWN)

    def _lookup(self, principal: str, session_id: object) -> SessionRecord:
        self._check_running()
        rec = self._sessions.get(session_id) if isinstance(session_id, str) else None
        if rec is None or rec.principal != principal:
            raise BrowserMeshError(ErrorCode.SESSION_NOT_FOUND)
        rec.last_touch = self.clock.monotonic()
        return rec

    def _accept(self, principal: str, session_id: object) -> SessionRecord:
        """The §13.3 state checks, in order, for work on a session."""
        rec = self._lookup(principal, session_id)
        if rec.status == "closing" or (rec.status == "ready" and not rec.accepting):
            raise BrowserMeshError(ErrorCode.SESSION_CLOSING)
        if rec.status == "closed":
            raise BrowserMeshError(ErrorCode.SESSION_CLOSED)
        if rec.status == "failed" and rec.disconnected:
            raise BrowserMeshError(ErrorCode.BROWSER_DISCONNECTED)
        if rec.status != "ready":
            raise BrowserMeshError(ErrorCode.SESSION_NOT_READY)
        return rec

    def _page(self, rec: SessionRecord, page_id: object) -> PageRecord:
        page = rec.pages.get(page_id) if isinstance(page_id, str) else None
        if page is None:
            raise BrowserMeshError(ErrorCode.PAGE_NOT_FOUND)
        return page

    def owner_of(self, session_id: str) -> str | None:
        """The principal owning `session_id` (live or a kept tombstone); None if unknown."""
        rec = self._sessions.get(session_id)
        return None if rec is None else rec.principal

    # ------------------------------------------------------------------ watchers

    def _changed(self, rec: SessionRecord, kind: ChangeKind) -> None:
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
            self._changed(rec, "artifacts")

    def _pages_watched(self, rec: SessionRecord) -> bool:
        return any(w.watches_pages(rec.principal) for w in list(self.watchers))

    async def _title_peek(self, page: PageRecord) -> str | None:
        """The page's title as browser_get_title shows it, or None when the page cannot say
        within `TITLE_PEEK_MS` (crashed, busy, navigating, closed)."""
        if page.handle.crashed:
            return None
        try:
            return await self.engine.title(page.handle, TITLE_PEEK_MS)
        except (asyncio.CancelledError, KeyboardInterrupt, SystemExit):
            raise
        except Exception:
            return None

    async def _page_views(self, rec: SessionRecord) -> list[dict[str, Any]]:
        """Every page of `rec` as a PageView plus its `title` (read at once, not queued)."""
        pages = list(rec.pages.values())
        titles = await asyncio.gather(*(self._title_peek(p) for p in pages))
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
        now = fingerprint(await self._page_views(rec))
        if now != rec.fingerprint:
            rec.fingerprint = now
            self._changed(rec, "pages")

    def _make_terminal(self, rec: SessionRecord) -> None:
        """Move a record that just became terminal to the end and prune old tombstones; its
        artifacts go with it."""
        self.files.forget(rec.session_id)
        self._sessions.pop(rec.session_id, None)
        self._sessions[rec.session_id] = rec
        keep = max(1, self.config.max_sessions)
        terminal = [r for r in self._sessions.values() if r.status in TERMINAL_STATUSES]
        for old in terminal[: max(0, len(terminal) - keep)]:
            del self._sessions[old.session_id]

    def _drop_pages(self, rec: SessionRecord) -> None:
        for page in rec.pages.values():
            self._page_owner.pop(id(page.handle), None)
        rec.pages.clear()
        rec.default_page_id = None

    def _register_page(self, rec: SessionRecord, handle: EnginePage) -> PageRecord:
        page = PageRecord(
            short_id("p"),
            rec.session_id,
            self._now(),
            handle,
            snapshots=SnapshotStore(now=self.clock.monotonic, wall_now=self.clock.wall),
        )
        page.observations = PageObservations(
            rec.session_id, page.page_id, self._observe_limits, self.clock
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

    def _remove_page(self, rec: SessionRecord, page: PageRecord) -> None:
        rec.pages.pop(page.page_id, None)
        self._page_owner.pop(id(page.handle), None)
        if rec.default_page_id == page.page_id:
            # Closing the default page promotes the oldest remaining page.
            rec.default_page_id = next(iter(rec.pages), None)
        self.log.info("page.closed", sessionId=rec.session_id, pageId=page.page_id)

    # ------------------------------------------------------------ engine events

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
            rec.last_activity_at = self._now()
            self._drop_pages(rec)
            self._make_terminal(rec)
            self.log.warn(
                "session.failed",
                sessionId=rec.session_id,
                principal=rec.principal,
                code=ErrorCode.BROWSER_DISCONNECTED.value,
            )
            self._changed(rec, "closed")

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
            self._remove_page(rec, rec.pages[owner[1]])
            # The page closed itself (window.close, a crash of its context): maybe between
            # operations, where no fingerprint would notice.
            self._changed(rec, "pages")

    # --------------------------------------------------------------- operations

    async def _run(
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
        ctx = OperationContext(operation_id or short_id("o"), deadline)
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
                result = await guarded()
            except BrowserMeshError:
                await self._note_pages(rec)
                raise
            await self._note_pages(rec)
            return result

        if rec.queue.pending:
            ahead = rec.queue.pending
            progress.report(
                f"waiting in session queue ({ahead} ahead)", total_ms=deadline.remaining_ms()
            )
        try:
            result = await await_job(ctx, rec.queue.submit(ctx, observed))
            rec.last_touch = self.clock.monotonic()
        except asyncio.CancelledError:
            self.log.info(
                "operation.failed",
                code=ErrorCode.OPERATION_CANCELLED.value,
                durationMs=_ms_since(started),
                **fields,
            )
            raise
        except BrowserMeshError as err:
            rec.last_touch = self.clock.monotonic()
            err.operation_id = ctx.operation_id
            self.log.info(
                "operation.failed", code=err.code.value, durationMs=_ms_since(started), **fields
            )
            raise
        if touch:
            rec.last_activity_at = self._now()
        self.log.info("operation.completed", durationMs=_ms_since(started), **fields)
        return ctx.operation_id, result

    async def run_page_op(
        self,
        principal: str,
        session_id: object,
        page_id: object,
        tool: str,
        timeout_ms: object,
        job: PageJob[T],
    ) -> tuple[str, T]:
        """Accept a page-addressed call and run `job(session, page, ctx)` in the queue."""
        rec = self._accept(principal, session_id)
        self._page(rec, page_id)  # fail fast: PAGE_NOT_FOUND before queueing
        deadline = Deadline(validate_timeout(timeout_ms, self.config.timeout_ms))

        async def queued(ctx: OperationContext) -> T:
            self._recheck(rec)
            page = self._page(rec, page_id)
            if page.handle.crashed and tool not in _CRASHED_PAGE_TOOLS:
                raise BrowserMeshError(
                    ErrorCode.BROWSER_ERROR,
                    variant="page_crashed",
                    details={"reason": "page_crashed"},
                )
            return await job(rec, page, ctx)

        return await self._run(rec, tool, deadline, queued, page_id=str(page_id))

    async def run_session_op(
        self, principal: str, session_id: object, tool: str, job: SessionJob[T]
    ) -> tuple[str, T]:
        """Accept a session-level call (no `timeoutMs`: the configured default applies)."""
        rec = self._accept(principal, session_id)
        deadline = Deadline(self.config.timeout_ms)

        async def queued(ctx: OperationContext) -> T:
            self._recheck(rec)
            return await job(rec, ctx)

        return await self._run(rec, tool, deadline, queued)

    def _recheck(self, rec: SessionRecord) -> None:
        if rec.disconnected:
            raise BrowserMeshError(ErrorCode.BROWSER_DISCONNECTED)
        if rec.status != "ready" or rec.context is None:
            raise BrowserMeshError(ErrorCode.SESSION_NOT_READY)

    # ----------------------------------------------------------------- sessions

    def _active_count(self, principal: str | None = None) -> int:
        return sum(
            1
            for r in self._sessions.values()
            if r.status in ACTIVE_STATUSES and (principal is None or r.principal == principal)
        )

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
        from browsermesh.model.labels import validate_labels
        from browsermesh.model.settings import normalize_context_settings

        self._check_running()
        clean_name, clean_metadata = validate_labels(name, metadata)
        settings = normalize_context_settings(context_settings)
        if self._active_count() >= self.config.max_sessions:
            raise BrowserMeshError(
                ErrorCode.LIMIT_EXCEEDED,
                bound=Bound("sessions", "<=", self.config.max_sessions, "BROWSERMESH_MAX_SESSIONS"),
            )
        per_principal = self.config.max_sessions_per_principal
        if per_principal is not None and self._active_count(principal) >= per_principal:
            raise BrowserMeshError(
                ErrorCode.LIMIT_EXCEEDED,
                bound=Bound(
                    "sessions", "<=", per_principal, "BROWSERMESH_MAX_SESSIONS_PER_PRINCIPAL"
                ),
            )
        now = self._now()
        rec = SessionRecord(
            session_id=short_id("s"),
            principal=principal,
            name=clean_name,
            metadata=clean_metadata,
            created_at=now,
            last_activity_at=now,
            context_settings=settings,
            last_touch=self.clock.monotonic(),
        )
        self._sessions[rec.session_id] = rec
        self._changed(rec, "created")
        deadline = Deadline(self.config.timeout_ms)

        async def create(ctx: OperationContext) -> str:
            try:
                return await self._build_session(rec, ctx, state_id, settings)
            except BaseException as exc:
                await self._fail_creation(rec, exc)
                raise

        op_id, page_id = await self._run(rec, "browser_session_create", deadline, create)
        self.log.info(
            "session.created",
            operationId=op_id,
            sessionId=rec.session_id,
            pageId=page_id,
            principal=principal,
        )
        return op_id, rec.view(), page_id

    async def _build_session(
        self,
        rec: SessionRecord,
        ctx: OperationContext,
        state_id: object,
        settings: dict[str, Any],
    ) -> str:
        storage_state = None
        if state_id is not None:
            storage_state = await self._load_state(rec.principal, state_id)
            rec.restored_from_state_id = str(state_id)
        live: dict[str, int] = {}
        for other in self._sessions.values():
            if other.placement and other.status in ACTIVE_STATUSES:
                live[other.placement] = live.get(other.placement, 0) + 1
        context = await self.engine.new_context(
            ContextOptions(settings=settings, storage_state=storage_state),
            ctx.deadline.budget_ms(),
            live,
        )
        rec.context = context
        rec.placement = context.placement
        if rec.disconnected:
            raise BrowserMeshError(ErrorCode.BROWSER_DISCONNECTED)
        handle = await self.engine.new_page(context, ctx.deadline.budget_ms())
        if rec.disconnected:
            raise BrowserMeshError(ErrorCode.BROWSER_DISCONNECTED)
        page = self._register_page(rec, handle)
        rec.status = "ready"
        self._changed(rec, "state")
        return page.page_id

    async def _load_state(self, principal: str, state_id: object) -> dict[str, Any]:
        if not self.config.persistence or self.states is None:
            raise BrowserMeshError(ErrorCode.PERSISTENCE_DISABLED)
        from browsermesh.persistence.states import validate_state_id

        valid = validate_state_id(state_id)
        state: dict[str, Any] = await self.states.load(principal, valid)
        return state

    async def _fail_creation(self, rec: SessionRecord, exc: BaseException) -> None:
        code = exc.code if isinstance(exc, BrowserMeshError) else ErrorCode.INTERNAL_ERROR
        if isinstance(exc, OperationCancelled | asyncio.CancelledError):
            code = ErrorCode.OPERATION_CANCELLED
        if rec.disconnected:
            code = ErrorCode.BROWSER_DISCONNECTED
        context, rec.context = rec.context, None
        self._drop_pages(rec)
        await self.files.close(rec.session_id)
        if context is not None and not rec.disconnected:
            try:
                await self.engine.close_context(context)
            except BrowserMeshError:
                code = ErrorCode.BROWSER_ERROR
        if rec.status != "failed":
            rec.status = "failed"
            rec.failure_code = code
            rec.last_activity_at = self._now()
            self._make_terminal(rec)
            self.log.warn(
                "session.failed", sessionId=rec.session_id, principal=rec.principal, code=code.value
            )
            self._changed(rec, "closed")

    def list_sessions(self, principal: str = LOCAL_PRINCIPAL) -> tuple[str, list[dict[str, Any]]]:
        self._check_running()
        views = [r.view() for r in self._sessions.values() if r.principal == principal]
        return short_id("o"), views

    def get_session(self, principal: str, session_id: object) -> tuple[str, dict[str, Any]]:
        rec = self._lookup(principal, session_id)
        count, size = self.files.store.usage(rec.session_id)
        return short_id("o"), {**rec.view(), "artifacts": {"count": count, "bytes": size}}

    async def session_pages(
        self, principal: str, session_id: object
    ) -> tuple[str, list[dict[str, Any]]]:
        """The session's pages as PageViews plus `title`, read at once instead of queued (the
        session resource must not wait behind long work): a title that cannot be read within
        `TITLE_PEEK_MS` is null. A closed or failed record has no pages."""
        rec = self._lookup(principal, session_id)
        return short_id("o"), await self._page_views(rec)

    def page_urls(self, principal: str) -> dict[str, list[str]]:
        """The current URLs of the pages of `principal`'s live sessions, by session id (no
        queue, no browser round trip; completions)."""
        self._check_running()
        return {
            rec.session_id: [self.engine.current_url(p.handle) for p in rec.pages.values()]
            for rec in self._sessions.values()
            if rec.principal == principal and rec.status in ACTIVE_STATUSES
        }

    async def close_session(
        self, principal: str, session_id: object, reason: str = "request"
    ) -> tuple[str, dict[str, Any]]:
        """Idempotent close that drains the session's accepted work first (§13.5)."""
        rec = self._lookup(principal, session_id)
        op_id = short_id("o")
        await self._close(rec, reason, op_id)
        return op_id, rec.view()

    async def _close(self, rec: SessionRecord, reason: str, op_id: str | None = None) -> None:
        if rec.status == "closed":
            return
        if rec.status == "failed":
            rec.status = "closed"
            rec.last_activity_at = self._now()
            self._drop_pages(rec)
            self._make_terminal(rec)
            self.log.info("session.closed", sessionId=rec.session_id, reason=reason)
            self._changed(rec, "state")  # a failed record closed: it was not live before
            return
        task = self._close_tasks.get(rec.session_id)
        if task is None:
            rec.accepting = False
            rec.close_requested = True
            ctx = OperationContext(op_id or short_id("o"), Deadline(_CLOSE_BUDGET_MS))

            async def close_job() -> None:
                await self._close_now(rec, reason, ctx.operation_id)

            queued = rec.queue.submit(ctx, close_job)
            task = asyncio.get_running_loop().create_task(self._bounded_close(rec, queued))
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
                self.log.warn("session.drain_aborted", sessionId=rec.session_id)
        await _settle(queued)

    async def _close_now(self, rec: SessionRecord, reason: str, op_id: str) -> None:
        failure: BrowserMeshError | None = None
        if rec.status in ACTIVE_STATUSES:
            rec.status = "closing"
            self._changed(rec, "state")
        context, rec.context = rec.context, None
        self._drop_pages(rec)
        if context is not None and not rec.disconnected:
            try:
                await self.engine.close_context(context)
            except BrowserMeshError as err:
                failure = err
        rec.status = "closed"
        rec.last_activity_at = self._now()
        self._make_terminal(rec)
        self.log.info(
            "session.closed",
            operationId=op_id,
            sessionId=rec.session_id,
            reason=reason,
            principal=rec.principal,
        )
        self._changed(rec, "closed")
        if failure is not None:
            self.log.warn("operation.failed", sessionId=rec.session_id, code=failure.code.value)

    # ------------------------------------------------------------- saved states

    def _repository(self) -> Any:
        if not self.config.persistence or self.states is None:
            raise BrowserMeshError(ErrorCode.PERSISTENCE_DISABLED)
        return self.states

    async def save_state(
        self, principal: str, session_id: object, state_id: object
    ) -> tuple[str, dict[str, str]]:
        """Capture the session's storage state after the work queued before it."""
        self._check_running()
        repo = self._repository()
        from browsermesh.persistence.states import validate_state_id

        valid = validate_state_id(state_id)

        async def job(rec: SessionRecord, ctx: OperationContext) -> dict[str, str]:
            assert rec.context is not None
            state = await self.engine.storage_state(rec.context, ctx.deadline.budget_ms())
            view: dict[str, str] = await repo.save(rec.principal, valid, state)
            return view

        return await self.run_session_op(principal, session_id, "browser_state_save", job)

    async def list_states(self, principal: str) -> tuple[str, list[dict[str, str]]]:
        self._check_running()
        views: list[dict[str, str]] = await self._repository().list(principal)
        return short_id("o"), views

    async def remove_state(self, principal: str, state_id: object) -> tuple[str, str]:
        self._check_running()
        repo = self._repository()
        from browsermesh.persistence.states import validate_state_id

        valid = validate_state_id(state_id)
        await repo.remove(principal, valid)
        return short_id("o"), valid

    # -------------------------------------------------------------------- pages

    async def create_page(self, principal: str, session_id: object) -> tuple[str, dict[str, Any]]:
        async def job(rec: SessionRecord, ctx: OperationContext) -> dict[str, Any]:
            limit = self.config.max_pages
            if len(rec.pages) >= limit:
                raise BrowserMeshError(
                    ErrorCode.LIMIT_EXCEEDED,
                    bound=Bound("pages", "<=", limit, "BROWSERMESH_MAX_PAGES"),
                )
            assert rec.context is not None
            handle = await self.engine.new_page(rec.context, ctx.deadline.budget_ms())
            page = self._register_page(rec, handle)
            return rec.page_view(page, self.engine.current_url(handle))

        return await self.run_session_op(principal, session_id, "browser_page_create", job)

    async def list_pages(
        self, principal: str, session_id: object
    ) -> tuple[str, list[dict[str, Any]]]:
        async def job(rec: SessionRecord, ctx: OperationContext) -> list[dict[str, Any]]:
            return [rec.page_view(p, self.engine.current_url(p.handle)) for p in rec.pages.values()]

        return await self.run_session_op(principal, session_id, "browser_page_list", job)

    async def close_page(self, principal: str, session_id: object, page_id: object) -> str:
        rec = self._accept(principal, session_id)
        self._page(rec, page_id)

        async def job(rec: SessionRecord, ctx: OperationContext) -> None:
            page = self._page(rec, page_id)
            self._remove_page(rec, page)
            await self.engine.close_page(page.handle, ctx.deadline.remaining_ms())

        op_id, _ = await self.run_session_op(principal, session_id, "browser_page_close", job)
        return op_id

    # --------------------------------------------------------------- navigation

    async def navigate(
        self, principal: str, session_id: object, page_id: object, url: object, timeout_ms: object
    ) -> tuple[str, str]:
        target = validate_http_url(url)

        async def job(rec: SessionRecord, page: PageRecord, ctx: OperationContext) -> str:
            self._clear_snapshots(page)
            return await self.engine.navigate(page.handle, target, ctx.deadline.budget_ms())

        return await self.run_page_op(
            principal, session_id, page_id, "browser_navigate", timeout_ms, job
        )

    async def history(
        self,
        principal: str,
        session_id: object,
        page_id: object,
        step: HistoryStep,
        timeout_ms: object,
    ) -> tuple[str, str]:
        async def job(rec: SessionRecord, page: PageRecord, ctx: OperationContext) -> str:
            self._clear_snapshots(page)
            return await self.engine.history(page.handle, step, ctx.deadline.budget_ms())

        return await self.run_page_op(
            principal, session_id, page_id, f"browser_{step}", timeout_ms, job
        )

    async def get_url(
        self, principal: str, session_id: object, page_id: object, timeout_ms: object
    ) -> tuple[str, str]:
        async def job(rec: SessionRecord, page: PageRecord, ctx: OperationContext) -> str:
            return self.engine.current_url(page.handle)

        return await self.run_page_op(
            principal, session_id, page_id, "browser_get_url", timeout_ms, job
        )

    async def get_title(
        self, principal: str, session_id: object, page_id: object, timeout_ms: object
    ) -> tuple[str, str]:
        async def job(rec: SessionRecord, page: PageRecord, ctx: OperationContext) -> str:
            return await self.engine.title(page.handle, ctx.deadline.budget_ms())

        return await self.run_page_op(
            principal, session_id, page_id, "browser_get_title", timeout_ms, job
        )

    # ----------------------------------------------------------------- elements

    async def element_action(
        self,
        principal: str,
        session_id: object,
        page_id: object,
        op: str,
        args: dict[str, Any],
        arg: str | None,
        timeout_ms: object,
    ) -> tuple[str, dict[str, Any]]:
        """One of the 10 element actions on exactly one of `locator` / `ref`; returns the
        operation id and ``{changes, diff|snapshot?}`` (issue 15)."""
        target = parse_target(args)
        arg = action_argument(op, arg)
        follow = parse_follow(args.get("snapshot"))

        async def job(
            rec: SessionRecord, page: PageRecord, ctx: OperationContext
        ) -> dict[str, Any]:
            changes = await self.engine.act(page.handle, target, op, arg, ctx)
            return {"changes": changes, **await self._follow(page, follow, changes, ctx)}

        return await self.run_page_op(
            principal, session_id, page_id, f"browser_{op}", timeout_ms, job
        )

    async def _follow(
        self,
        page: PageRecord,
        mode: FollowMode | None,
        changes: dict[str, Any],
        ctx: OperationContext,
    ) -> dict[str, Any]:
        """The action table after an interaction: whole (``actions``, paged like
        browser_snapshot) or as lines added and removed since the page's last table (``diff``).
        Either way the page's refs become the new table's."""
        if mode is None or changes.get("pageClosed"):
            return {}
        opts = normalize_snapshot_options({"format": "actions"})
        assert not isinstance(opts, str)
        cap = await self.engine.snapshot(page.handle, opts, None, ctx)
        previous, page.last_table = page.last_table, TableLines(tuple(cap.keys), tuple(cap.lines))
        if mode == "diff":
            refs = [r["ref"] for r in cap.refs]
            return {"diff": table_diff(previous, page.last_table, refs)}
        piece, pagination, _ = _first_page(page, opts, None, cap)
        out = {"snapshot": piece.text}
        if pagination["nextCursor"] is not None:
            out["nextCursor"] = pagination["nextCursor"]
        return out

    async def fill_form(
        self,
        principal: str,
        session_id: object,
        page_id: object,
        fields: object,
        timeout_ms: object,
        follow_snapshot: object = None,
    ) -> tuple[str, dict[str, Any]]:
        """Several fields of one form, in order, in one queue slot under one deadline; stops at
        the first failing field (runtime/forms.py). `{filled, changes, diff|snapshot?}`."""
        parsed = parse_fields(fields)
        follow = parse_follow(follow_snapshot)

        async def job(
            rec: SessionRecord, page: PageRecord, ctx: OperationContext
        ) -> dict[str, Any]:
            watch = await self.engine.watch_changes(page.handle, ctx)
            try:
                filled = await fill_fields(self.engine, page.handle, parsed, ctx)
            except BaseException:
                await watch.close()
                raise
            changes = await watch.finish(ctx, settle=False)
            follow_up = await self._follow(page, follow, changes, ctx)
            return {"filled": filled, "changes": changes, **follow_up}

        return await self.run_page_op(
            principal, session_id, page_id, "browser_fill_form", timeout_ms, job
        )

    async def scroll(
        self,
        principal: str,
        session_id: object,
        page_id: object,
        delta_x: object,
        delta_y: object,
        timeout_ms: object,
    ) -> str:
        dx, dy = _delta(delta_x, "deltaX"), _delta(delta_y, "deltaY")

        async def job(rec: SessionRecord, page: PageRecord, ctx: OperationContext) -> None:
            await self.engine.scroll(page.handle, dx, dy, ctx)

        op_id, _ = await self.run_page_op(
            principal, session_id, page_id, "browser_scroll", timeout_ms, job
        )
        return op_id

    async def drag(
        self,
        principal: str,
        session_id: object,
        page_id: object,
        source: object,
        target: object,
        timeout_ms: object,
    ) -> str:
        src, dst = parse_locator(source, "source"), parse_locator(target, "target")

        async def job(rec: SessionRecord, page: PageRecord, ctx: OperationContext) -> None:
            await self.engine.drag(page.handle, src, dst, ctx)

        op_id, _ = await self.run_page_op(
            principal, session_id, page_id, "browser_drag_and_drop", timeout_ms, job
        )
        return op_id

    async def visible_text(
        self,
        principal: str,
        session_id: object,
        page_id: object,
        locator: object,
        timeout_ms: object,
    ) -> tuple[str, dict[str, Any]]:
        """The element's rendered innerText, cut to the configured chars then bytes."""
        loc = parse_locator(locator)
        max_chars = self.config.visible_text_max_chars
        max_bytes = self.config.visible_text_max_bytes

        async def job(
            rec: SessionRecord, page: PageRecord, ctx: OperationContext
        ) -> dict[str, Any]:
            text = await self.engine.visible_text(page.handle, loc, ctx)
            cut = bound_text(text, max_chars, max_bytes)
            return {
                "text": cut.text,
                "truncation": {
                    "truncated": cut.truncated,
                    "originalChars": cut.original_chars,
                    "originalBytes": cut.original_bytes,
                    "returnedChars": cut.returned_chars,
                    "returnedBytes": cut.returned_bytes,
                    "maxChars": max_chars,
                    "maxBytes": max_bytes,
                },
            }

        return await self.run_page_op(
            principal, session_id, page_id, "browser_visible_text", timeout_ms, job
        )

    async def wait(
        self,
        principal: str,
        session_id: object,
        page_id: object,
        condition: object,
        timeout_ms: object,
    ) -> str:
        """One passive condition, holding the session queue until satisfied or timed out."""
        cond = parse_condition(condition)

        async def job(rec: SessionRecord, page: PageRecord, ctx: OperationContext) -> None:
            await self.engine.wait(page.handle, cond, ctx)

        op_id, _ = await self.run_page_op(
            principal, session_id, page_id, "browser_wait", timeout_ms, job
        )
        return op_id

    async def action_and_wait(
        self,
        principal: str,
        session_id: object,
        page_id: object,
        action: object,
        wait: object,
        timeout_ms: object,
        follow_snapshot: object = None,
    ) -> tuple[str, dict[str, Any]]:
        """Register the waiter, act, await the event; a popup becomes a managed page. The result
        also carries ``changes`` and, with ``follow_snapshot``, the table or its diff."""
        act = parse_action(action)
        spec = parse_wait(wait)
        follow = parse_follow(follow_snapshot)
        if isinstance(spec, FileChooserWait):  # files resolved (and refused) before any work
            owner = self._lookup(principal, session_id)
            files = self.files.payloads(owner.session_id, list(spec.files), "wait.files")
            spec = FileChooserWait(tuple(files))

        async def job(
            rec: SessionRecord, page: PageRecord, ctx: OperationContext
        ) -> dict[str, Any]:
            try:
                result = await self._act_and_wait(rec, page, act, spec, ctx)
            finally:
                self._clear_snapshots(page)
            changes = result.pop("_changes", {})
            follow_up = await self._follow(page, follow, changes, ctx)
            return {"event": result, "changes": changes, **follow_up}

        return await self.run_page_op(
            principal, session_id, page_id, "browser_action_and_wait", timeout_ms, job
        )

    async def _act_and_wait(
        self,
        rec: SessionRecord,
        page: PageRecord,
        act: ActionSpec,
        spec: WaitSpec,
        ctx: OperationContext,
    ) -> dict[str, Any]:
        """The engine's action-and-wait; a download becomes its artifact, a popup a page."""
        event, popup = await self.engine.action_and_wait(page.handle, act, spec, ctx)
        raw_download = event.pop("_download", None)
        if raw_download is not None:
            try:
                artifact = await self.files.finished(
                    raw_download, ctx.deadline.remaining_ms() / 1000
                )
            except TimeoutError:
                raise ctx.deadline.timeout_error() from None
            return {
                "kind": "download",
                "artifact": artifact.view(),
                "_changes": event.get("_changes", {}),
            }
        if popup is None:
            return event
        if len(rec.pages) >= self.config.max_pages:
            # Cleanup of a page nobody may keep: a short grace past the deadline.
            await self.engine.close_page(
                popup, max(ctx.deadline.remaining_ms(), POPUP_CLOSE_GRACE_MS)
            )
            raise BrowserMeshError(
                ErrorCode.LIMIT_EXCEEDED,
                bound=Bound("pages", "<=", self.config.max_pages, "BROWSERMESH_MAX_PAGES"),
            )
        new_page = self._register_page(rec, popup)
        return {
            "kind": "popup",
            "page": rec.page_view(new_page, self.engine.current_url(popup)),
            "_changes": event.get("_changes", {}),
        }

    async def observe(
        self, principal: str, session_id: object, page_id: object, args: dict[str, Any]
    ) -> tuple[str, dict[str, Any]]:
        """Read one source's captured events (non-destructive, cursor-paged, optionally
        filtered or newest first), or one request's detail (`requestId`)."""

        async def job(
            rec: SessionRecord, page: PageRecord, ctx: OperationContext
        ) -> dict[str, Any]:
            assert page.observations is not None
            return page.observations.query(parse_query(args))

        return await self.run_page_op(
            principal, session_id, page_id, "browser_observe", args.get("timeoutMs"), job
        )

    async def evaluate(
        self,
        principal: str,
        session_id: object,
        page_id: object,
        expression: object,
        arg: object,
        timeout_ms: object,
    ) -> tuple[str, tuple[Any, bool]]:
        """Run caller JavaScript (eval profile); the result is JSON-bounded."""
        source = bounded_string(expression, "expression", MAX_EXPRESSION_CHARS, min_chars=1)
        try:
            arg_bytes = len(compact_json(arg).encode("utf-8"))
        except (TypeError, ValueError):
            raise invalid_argument("arg", "a JSON value (finite numbers, no cycles)") from None
        if arg_bytes > MAX_JSON_BYTES:
            raise BrowserMeshError(
                ErrorCode.LIMIT_EXCEEDED, bound=Bound("argBytes", "<=", MAX_JSON_BYTES)
            )

        async def job(
            rec: SessionRecord, page: PageRecord, ctx: OperationContext
        ) -> tuple[Any, bool]:
            return await self.engine.evaluate(page.handle, source, arg, ctx)

        return await self.run_page_op(
            principal, session_id, page_id, "browser_evaluate", timeout_ms, job
        )

    async def snapshot(
        self, principal: str, session_id: object, page_id: object, args: dict[str, Any]
    ) -> tuple[str, dict[str, Any]]:
        """A bounded ARIA snapshot or action table; continuations read retained text only."""
        parsed = normalize_snapshot_options(args)
        scope_wire: dict[str, Any] | None = None
        scope: Locator | RefTarget | None = None
        if not isinstance(parsed, str) and parsed.scope is not None:
            scope = parse_element_target(parsed.scope, "scope")
            scope_wire = {"ref": scope.token} if isinstance(scope, RefTarget) else scope.wire()

        async def job(
            rec: SessionRecord, page: PageRecord, ctx: OperationContext
        ) -> dict[str, Any]:
            if isinstance(parsed, str):
                entry, piece, pagination = page.snapshots.read(parsed)
                return snapshot_result(
                    piece,
                    pagination,
                    entry.format,
                    entry.bounds,
                    None,
                    given=False,
                    stops=entry.stops,
                )
            cap = await self.engine.snapshot(page.handle, parsed, scope, ctx)
            piece, pagination, bounds = _first_page(page, parsed, scope_wire, cap)
            if parsed.format == "actions" and scope is None:
                page.last_table = TableLines(tuple(cap.keys), tuple(cap.lines))
            given = any(key in args for key in SNAPSHOT_OPTION_KEYS if key != "format")
            return snapshot_result(
                piece, pagination, parsed.format, bounds, cap.refs, given=given, stops=cap.stops
            )

        timeout = args.get("timeoutMs")
        return await self.run_page_op(
            principal, session_id, page_id, "browser_snapshot", timeout, job
        )

    def _clear_snapshots(self, page: PageRecord) -> None:
        """Drop the page's retained snapshots (cursors die)."""
        page.snapshots.clear()

    async def screenshot(
        self,
        principal: str,
        session_id: object,
        page_id: object,
        capture: object,
        timeout_ms: object,
    ) -> tuple[str, tuple[bytes, int, int]]:
        """A PNG of the viewport, the full page or one element, within the configured limits."""
        kind, locator = _parse_capture(capture)
        cfg = self.config
        limits = ScreenshotLimits(
            cfg.screenshot_max_dimension, cfg.screenshot_max_pixels, cfg.screenshot_max_bytes
        )

        async def job(
            rec: SessionRecord, page: PageRecord, ctx: OperationContext
        ) -> tuple[bytes, int, int]:
            return await self.engine.screenshot(page.handle, kind, locator, limits, ctx)

        return await self.run_page_op(
            principal, session_id, page_id, "browser_screenshot", timeout_ms, job
        )

    # -------------------------------------------------------------------- files

    async def file_upload(
        self,
        principal: str,
        session_id: object,
        page_id: object,
        args: dict[str, Any],
        timeout_ms: object,
    ) -> tuple[str, dict[str, Any]]:
        """Set files on a file input, or answer the chooser a click on the target opens."""
        target = parse_target(args)
        rec = self._lookup(principal, session_id)
        payloads = self.files.payloads(rec.session_id, args.get("files"))

        async def job(
            rec: SessionRecord, page: PageRecord, ctx: OperationContext
        ) -> dict[str, Any]:
            via = await self.engine.set_files(page.handle, target, payloads, ctx)
            files = [
                {"name": p.name, "mimeType": p.mime_type, "size": len(p.data)} for p in payloads
            ]
            return {"via": via, "files": files}

        return await self.run_page_op(
            principal, session_id, page_id, "browser_file_upload", timeout_ms, job
        )

    def downloads(
        self, principal: str, session_id: object, limit: object, offset: object
    ) -> tuple[str, dict[str, Any]]:
        """The session's artifacts, newest first, `limit` (1..100, default 20) from `offset`."""
        rec = self._lookup(principal, session_id)
        count = 20 if limit is None else bounded_int(limit, "limit", 1, 100)
        start = 0 if offset is None else bounded_int(offset, "offset", 0, 1_000_000)
        artifacts = self.files.store.list(rec.session_id)
        page = [a.view() for a in artifacts[start : start + count]]
        out: dict[str, Any] = {"artifacts": page, "total": len(artifacts)}
        if start + count < len(artifacts):
            out["nextOffset"] = start + count
        return short_id("o"), out

    async def artifact_read(
        self,
        principal: str,
        session_id: object,
        artifact_id: object,
        encoding: object,
        offset: object,
        max_bytes: object,
    ) -> tuple[str, dict[str, Any]]:
        """Bounded content of one artifact of this session: UTF-8 text or base64, from `offset`."""
        rec = self._lookup(principal, session_id)
        mode = "text" if encoding is None else encoding
        if mode not in ("text", "base64"):
            raise invalid_argument("encoding", "one of: text, base64")
        # offset <= the artifact's size is checked by the store's read
        start = 0 if offset is None else bounded_int(offset, "offset", 0, 2**53)
        size = (
            READ_DEFAULT_BYTES
            if max_bytes is None
            else bounded_int(max_bytes, "maxBytes", 1, READ_MAX_BYTES)
        )
        artifact = self.files.store.get(rec.session_id, artifact_id)
        read = await asyncio.to_thread(self.files.store.read, artifact, mode, start, size)
        return short_id("o"), read

    async def pdf(
        self, principal: str, session_id: object, page_id: object, timeout_ms: object
    ) -> tuple[str, dict[str, Any]]:
        """The page printed to PDF, kept as an artifact of the session."""

        async def job(
            rec: SessionRecord, page: PageRecord, ctx: OperationContext
        ) -> dict[str, Any]:
            data = await self.engine.pdf(page.handle, ctx)
            artifact = await asyncio.to_thread(
                self.files.store.put,
                rec.session_id,
                rec.principal,
                page.page_id,
                "pdf",
                "page.pdf",
                "application/pdf",
                data,
            )
            self._changed(rec, "artifacts")
            return {"artifact": artifact.view()}

        return await self.run_page_op(
            principal, session_id, page_id, "browser_pdf", timeout_ms, job
        )

    # --------------------------------------------------------------- inspection

    def info(self) -> dict[str, Any]:
        """browser_runtime_info: works during shutdown and never launches Chromium."""
        from browsermesh.runtime.info import runtime_info

        out = runtime_info(self, self.transport)
        out["operationId"] = short_id("o")
        return out

    def counts(self) -> tuple[int, int]:
        """(active sessions, retained failed records), server-wide."""
        active = self._active_count()
        failed = sum(1 for r in self._sessions.values() if r.status == "failed")
        return active, failed

    def sessions_snapshot(self) -> Mapping[str, SessionRecord]:
        """Read-only view of the registry (tests and the resource)."""
        return dict(self._sessions)

    @property
    def shutting_down(self) -> bool:
        return self._shutting_down

    # ----------------------------------------------------------------- shutdown

    async def shutdown(self) -> None:
        """Stop accepting, close every session (each drains first), stop the browser.

        Idempotent: a second call awaits the same shutdown."""
        if self._shutdown_task is None:
            self._shutting_down = True
            self._shutdown_task = asyncio.get_running_loop().create_task(self._shutdown())
        await asyncio.shield(self._shutdown_task)

    async def _shutdown(self) -> None:
        live = [r for r in self._sessions.values() if r.status not in TERMINAL_STATUSES]
        for rec in live:
            rec.accepting = False
        # In-flight work gets a short grace to finish; what is still running is then cancelled
        # (its callers get RUNTIME_SHUTTING_DOWN), so exit never waits for a call's whole budget.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(
                asyncio.gather(*(r.queue.drain() for r in live)),
                timeout=self.config.shutdown_grace_ms / 1000,
            )
        aborted = sum(rec.queue.abort() for rec in live)
        if aborted:
            self.log.info("runtime.shutdown_aborted", operations=aborted)
        results = await asyncio.gather(
            *(self._close(rec, "shutdown") for rec in live), return_exceptions=True
        )
        errors = [r for r in results if isinstance(r, BaseException)]
        await self.files.stop()
        try:
            await self.engine.stop()
        except BrowserMeshError as err:
            errors.append(err)
        if errors:
            raise BrowserMeshError(ErrorCode.BROWSER_ERROR, cause=f"{len(errors)} shutdown errors")


def _first_page(
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


async def _settle(task: asyncio.Task[None]) -> None:
    """Wait for a queued close job; its failure is already logged."""
    with contextlib.suppress(BrowserMeshError):
        await task


def _ms_since(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
