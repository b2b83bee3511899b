"""Playwright traces of sessions (issue 35; reference §33.1): `browser_trace` and
`--trace-sessions`.

A trace records the session's context (every page) from `start` to `stop`; each tool call on
the session is a named group in it (`step_began`/`step_ended`, called by the core around the
call in its queue slot, so groups never interleave), with the call's outcome as a child group.
`stop` writes Playwright's zip next to the session's artifacts, scrubs it
(persistence.trace_scrub: password values, credentials, cookies) into the artifact's part file,
and completes the artifact under the store's quotas: an oversized trace is `LIMIT_EXCEEDED` and
the session's earlier artifacts stay. A trace is a kept kind: it outlives its session
(persistence.artifact_record.KEPT_KINDS).

With `--trace-sessions on|retain-on-failure` every new session is traced from its creation, and
its close saves the trace (always, or when one of its calls failed) or discards it. A close
always ends a running trace cleanly: saved or discarded, never a half-written file.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
from pathlib import Path
from typing import Any, Final

from browsermesh.errors import BrowserMeshError, invalid_argument
from browsermesh.model import call_label
from browsermesh.model.arguments import one_of, optional_bool
from browsermesh.model.deadline import Deadline, OperationContext
from browsermesh.model.ids import short_id
from browsermesh.model.tracing import MAX_GROUPS, TraceOptions, TracePolicy, TraceRun, keeps
from browsermesh.persistence.artifacts import Artifact
from browsermesh.persistence.trace_scrub import scrub_trace
from browsermesh.runtime.core import RuntimeCore
from browsermesh.runtime.session import SessionRecord

__all__ = ["TRACE_ACTIONS", "SessionTraces"]

TRACE_ACTIONS: Final = ("start", "stop", "discard")
SAVE_BUDGET_MS: Final = 60_000
"""Stopping and saving a trace at a session's close may take this long (a big trace)."""
_RAW_SUFFIX: Final = ".raw"


class SessionTraces:
    """Traces of every session of one runtime (see the module)."""

    def __init__(self, core: RuntimeCore) -> None:
        self.core = core
        self.engine = core.engine
        core.step_watches.append(self)

    # --------------------------------------------------------------------- the tool

    async def trace(
        self, principal: str, session_id: object, args: dict[str, Any]
    ) -> tuple[str, dict[str, Any]]:
        """`browser_trace`: start, stop (the artifact) or discard the session's trace."""
        action = one_of(args.get("action"), "action", TRACE_ACTIONS)
        options = TraceOptions(
            screenshots=optional_bool(args.get("screenshots"), "screenshots", True),
            snapshots=optional_bool(args.get("snapshots"), "snapshots", True),
            sources=optional_bool(args.get("sources"), "sources", False),
        )

        async def job(rec: SessionRecord, ctx: OperationContext) -> dict[str, Any]:
            if action == "start":
                if rec.trace is not None:
                    raise invalid_argument(
                        "action", "start when no trace runs (stop or discard the running one)"
                    )
                await self._start(rec, _titled(options, rec), None, ctx)
                return {"tracing": True}
            if rec.trace is None:
                raise invalid_argument("action", f"{action} while a trace runs (start one)")
            if action == "discard":
                await self._end(rec, None, ctx)
                return {"discarded": True}
            artifact = await self._end(rec, "trace", ctx)
            assert artifact is not None
            return {"artifact": artifact.view(), **self.core.files.where(artifact)}

        return await self.core.run_session_op(principal, session_id, "browser_trace", job)

    # ------------------------------------------------------------ steps and lifecycle

    def watching(self, rec: SessionRecord) -> bool:
        return rec.trace is not None

    async def step_began(
        self, rec: SessionRecord, page_id: str | None, tool: str, ctx: OperationContext
    ) -> None:
        if rec.trace is None or rec.context is None or tool == "browser_trace":
            return
        run = rec.trace
        note = call_label.current()
        label = note.label() if note is not None and note.tool == tool else tool
        run.open = await self._mark(rec, label, ctx)
        if run.open and len(run.groups) < MAX_GROUPS:
            run.groups.append([label, label])

    async def step_ended(
        self, rec: SessionRecord, page_id: str | None, code: str | None, ctx: OperationContext
    ) -> None:
        run = rec.trace
        if run is None or not run.open:  # no group opened for this call (browser_trace itself)
            return
        run.open = False
        if code is not None:
            run.failed = True
        if run.groups and run.groups[-1][0] == run.groups[-1][1]:
            # The saved trace names the group with its outcome (one rename at `stop`, rather
            # than two more driver round trips per call for a child group now).
            run.groups[-1][1] = f"{run.groups[-1][0]} → {code or 'ok'}"
        await self._mark(rec, None, ctx)

    async def session_started(self, rec: SessionRecord, ctx: OperationContext) -> None:
        """A new session's context exists: trace it when the server traces every session."""
        policy = self.core.config.trace_sessions
        if policy == "off" or rec.context is None:
            return
        try:
            await self._start(rec, _titled(TraceOptions(), rec), policy, ctx)
        except BrowserMeshError as err:  # the session works without its trace
            self.core.log.warn("trace.failed", sessionId=rec.session_id, code=err.code.value)

    async def session_ending(self, rec: SessionRecord, *, keep: bool) -> None:
        """The session closes (its context still open): save or discard its running trace."""
        run = rec.trace
        if run is None:
            return
        keep = keep and (run.policy is None or keeps(run.policy, run.failed))
        ctx = OperationContext(short_id("o"), Deadline(SAVE_BUDGET_MS))
        try:
            await self._end(rec, "trace" if keep else None, ctx)
        except BrowserMeshError as err:
            self.core.log.warn("trace.failed", sessionId=rec.session_id, code=err.code.value)

    # -------------------------------------------------------------------- internals

    async def _start(
        self,
        rec: SessionRecord,
        options: TraceOptions,
        policy: TracePolicy | None,
        ctx: OperationContext,
    ) -> None:
        assert rec.context is not None
        await self.engine.trace_start(rec.context, options, ctx)
        rec.trace = TraceRun(options, policy)
        self.core.log.info("trace.started", sessionId=rec.session_id, principal=rec.principal)

    async def _mark(self, rec: SessionRecord, name: str | None, ctx: OperationContext) -> bool:
        """One group mark; whether it was written (a failure is logged, never the call's)."""
        if rec.context is None:
            return False
        try:
            await self.engine.trace_group(rec.context, name, ctx)
        except BrowserMeshError as err:
            self.core.log.debug("trace.mark_failed", sessionId=rec.session_id, code=err.code.value)
            return False
        return True

    async def _end(
        self, rec: SessionRecord, kind: str | None, ctx: OperationContext
    ) -> Artifact | None:
        """Stop the trace: discarded (`kind` None) or saved as an artifact."""
        context, run = rec.context, rec.trace
        rec.trace = None
        if context is None or run is None:
            return None
        if kind is None:
            await self.engine.trace_stop(context, None, ctx)
            self.core.log.info("trace.discarded", sessionId=rec.session_id)
            return None
        store = self.core.files.store
        try:
            artifact = store.begin(
                rec.session_id, rec.principal, None, "trace",
                f"trace-{rec.name or rec.session_id}.zip", "application/zip", None,
            )  # fmt: skip
        except BrowserMeshError:
            await self.engine.trace_stop(context, None, ctx)  # over the count quota
            raise
        raw = artifact.path.with_name(artifact.artifact_id + _RAW_SUFFIX)
        try:
            await self.engine.trace_stop(context, raw, ctx)
            breach = store.progress(artifact, _size(raw))
            if breach is not None:
                raise breach
            secrets = rec.step_secrets.values()
            titles = [(old, new) for old, new in run.groups]
            await asyncio.to_thread(scrub_trace, raw, artifact.part_path, secrets, titles)
            await asyncio.to_thread(store.complete, artifact)
        except BaseException:
            store.fail(artifact)
            raise
        finally:
            with contextlib.suppress(OSError):
                os.unlink(raw)
        self.core.log.info("trace.saved", sessionId=rec.session_id, principal=rec.principal)
        self.core.changed(rec, "artifacts")
        return artifact


def _titled(options: TraceOptions, rec: SessionRecord) -> TraceOptions:
    """The options with the trace's title: the session's name, else its id."""
    return dataclasses.replace(options, title=rec.name or rec.session_id)


def _size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0
