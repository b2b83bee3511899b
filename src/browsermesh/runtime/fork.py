"""Forks and batches (issue 19 #4): `browser_session_create` with `fromSessionId` copies a ready
session's live storage into new, fully isolated sessions; `count` makes several at once.

Order of checks (every one before a context exists; docs/decisions.md, "Forks"):
shutdown → labels → contextSettings → `count` (integer 1..10, `INVALID_ARGUMENT`) →
`fromSessionId` with `stateId` (`INVALID_ARGUMENT`: a fork copies live storage, a restore a
saved one; pick one) → the source, with §13.3's codes (another principal's or unknown:
`SESSION_NOT_FOUND`; closing: `SESSION_CLOSING`; closed: `SESSION_CLOSED`; failed by disconnect:
`BROWSER_DISCONNECTED`; creating or failed otherwise: `SESSION_NOT_READY`) → capacity for all
`count` sessions (`LIMIT_EXCEEDED`) → the copy, in the source's queue (so it sees what the work
accepted before it left, and the source's own later work waits for it), bounded like a saved
state (`stateBytes`, `stateOrigins`: `LIMIT_EXCEEDED`) → capacity again (the copy awaited) →
the records → the contexts, in parallel.

What is copied: cookies, localStorage, IndexedDB and the open pages' sessionStorage
(engine/fork.py); nothing touches disk, so a fork works with persistence disabled. Not copied:
labels (`name`, `metadata`), `contextSettings` (pass them again, as for a `stateId` restore),
pages, history, permissions. The views carry `forkedFromSessionId`.

A batch (`count` > 1) is all or nothing: every session turns `ready` together, or, when one
fails, every one ends `failed` with that failure's code (contexts closed) and the call returns
the first failure. One call, one operationId: the copy and every creation log under it.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Final

from browsermesh.engine.protocol import ContextOptions
from browsermesh.errors import Bound, BrowserMeshError, ErrorCode, invalid_argument
from browsermesh.model.deadline import Deadline, OperationContext
from browsermesh.model.ids import short_id
from browsermesh.model.tasks import all_settled
from browsermesh.persistence.states import (
    LOCAL_PRINCIPAL,
    VAR_MAX_STATE_BYTES,
    VAR_MAX_STATE_ORIGINS,
    count_state_origins,
)
from browsermesh.runtime.core import RuntimeCore
from browsermesh.runtime.lifecycle import SessionLifecycle, session_args
from browsermesh.runtime.session import SessionRecord

MAX_COUNT: Final = 10
_SIBLING: Final = "another session of the batch failed"

Created = tuple[dict[str, Any], str]
"""A created session: its view and its initial pageId."""


def validate_count(value: object) -> int:
    """`count`: absent → 1, else an integer 1..10 (the schema says integer; bounds here)."""
    if value is None:
        return 1
    if isinstance(value, bool) or not isinstance(value, int):
        raise invalid_argument("count", "integer")
    if value < 1:
        raise invalid_argument("count", "at least 1", bound=Bound("count", ">=", 1))
    if value > MAX_COUNT:
        raise invalid_argument(
            "count", f"at most {MAX_COUNT}", bound=Bound("count", "<=", MAX_COUNT)
        )
    return value


class _Batch:
    """Sessions of one call that turn ready together or fail together."""

    def __init__(self, size: int, deadline: Deadline) -> None:
        self._size = size
        self._deadline = deadline
        self._built = 0
        self._settled = asyncio.Event()
        self.failure: ErrorCode | None = None

    def fail(self, exc: BaseException) -> None:
        if self.failure is None:
            code = exc.code if isinstance(exc, BrowserMeshError) else ErrorCode.INTERNAL_ERROR
            self.failure = code
        self._settled.set()

    async def hold(self) -> None:
        """One session is built: wait for the others (within the call's deadline)."""
        self._built += 1
        if self._built == self._size:
            self._settled.set()
        try:
            await asyncio.wait_for(self._settled.wait(), self._deadline.remaining_ms() / 1000)
        except TimeoutError:
            # A sibling that never started (its caller gave up at once) cannot report.
            raise self._deadline.timeout_error() from None
        if self.failure is not None:
            raise BrowserMeshError(self.failure, cause=_SIBLING)


class SessionForks:
    """`create_sessions`: one session, a batch, or forks of a live session (a service on the
    core, creating each session through the lifecycle's checked path)."""

    def __init__(self, core: RuntimeCore, sessions: SessionLifecycle) -> None:
        self.core = core
        self.sessions = sessions
        # The engine under the name its calls have always had here (call lines unchanged).
        self.engine = core.engine

    async def create_sessions(
        self,
        principal: str = LOCAL_PRINCIPAL,
        *,
        name: object = None,
        metadata: object = None,
        state_id: object = None,
        context_settings: object = None,
        from_session_id: object = None,
        count: object = None,
    ) -> tuple[str, list[Created]]:
        """Create `count` ready sessions (forks of `from_session_id` when given):
        `(operationId, [(view, pageId), ...])` in creation order."""
        self.core.check_running()
        args = session_args(
            principal, name, metadata, state_id, context_settings, self.core.config.tools
        )
        settings = args.settings
        wanted = validate_count(count)
        if from_session_id is not None and state_id is not None:
            raise invalid_argument("fromSessionId", "not together with stateId")
        if from_session_id is None and wanted == 1:
            op_id, view, page_id = await self.sessions.create_checked(args)
            return op_id, [(view, page_id)]
        op_id = short_id("o")
        deadline = Deadline(self.core.config.timeout_ms)
        seed: ContextOptions | None = None
        source: SessionRecord | None = None
        if from_session_id is not None:
            source = self.core.accept(principal, from_session_id)
            self.sessions.check_capacity(principal, wanted)
            seed = await self._copy_storage(source, deadline, op_id)
        self.sessions.check_capacity(principal, wanted)
        records = [self.sessions.new_record(args) for _ in range(wanted)]
        for rec in records:
            rec.forked_from_session_id = None if source is None else source.session_id
        batch = _Batch(wanted, deadline) if wanted > 1 else None

        async def create(rec: SessionRecord) -> str:
            async def job(ctx: OperationContext) -> str:
                try:
                    return await self.sessions.build_session(
                        rec, ctx, state_id, settings, seed, None if batch is None else batch.hold
                    )
                except BaseException as exc:
                    if batch is not None:
                        batch.fail(exc)
                    await self.sessions.fail_creation(rec, exc)
                    raise

            try:
                _, page_id = await self.core.run_queued(
                    rec, "browser_session_create", deadline, job, operation_id=op_id
                )
            except BaseException as exc:
                if batch is not None:
                    batch.fail(exc)  # also when the job never ran (skipped, timed out queued)
                raise
            self.core.log.info(
                "session.created",
                operationId=op_id,
                sessionId=rec.session_id,
                pageId=page_id,
                principal=principal,
            )
            return page_id

        results = await all_settled(*(create(rec) for rec in records))
        failures = [r for r in results if isinstance(r, BaseException)]
        if failures:
            first = [f for f in failures if getattr(f, "cause", None) != _SIBLING]
            raise (first or failures)[0]
        return op_id, [(rec.view(), str(page)) for rec, page in zip(records, results, strict=True)]

    async def _copy_storage(
        self, source: SessionRecord, deadline: Deadline, op_id: str
    ) -> ContextOptions:
        """The source's storage, read in its queue and bounded like a saved state."""

        async def job(ctx: OperationContext) -> ContextOptions:
            self.core.recheck(source)
            pages = sorted(source.pages.values(), key=lambda p: p.page_id != source.default_page_id)
            state, session = await self.engine.fork_storage(
                source.context, [p.handle for p in pages], ctx
            )
            size = len(json.dumps([state, session], separators=(",", ":")).encode())
            if size > self.core.config.max_state_bytes:
                raise BrowserMeshError(
                    ErrorCode.LIMIT_EXCEEDED,
                    bound=Bound(
                        "stateBytes", "<=", self.core.config.max_state_bytes, VAR_MAX_STATE_BYTES
                    ),
                )
            if count_state_origins(state) > self.core.config.max_state_origins:
                raise BrowserMeshError(
                    ErrorCode.LIMIT_EXCEEDED,
                    bound=Bound(
                        "stateOrigins",
                        "<=",
                        self.core.config.max_state_origins,
                        VAR_MAX_STATE_ORIGINS,
                    ),
                )
            return ContextOptions(storage_state=state, session_storage=session)

        _, seed = await self.core.run_queued(
            source, "browser_session_create", deadline, job, operation_id=op_id
        )
        return seed
