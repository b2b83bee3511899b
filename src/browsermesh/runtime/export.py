"""browser_test_export and browser_recording (issue 20): the caller's recorded sessions as one
runnable test, and control over a session's recording.

The export reads the sessions' logs as they are at the call (no queue slot: it never touches a
page, so it does not wait behind a long operation), and works on a closed session as long as
its record is kept.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from browsermesh.errors import Bound, BrowserMeshError, ErrorCode, invalid_argument
from browsermesh.model.arguments import one_of, optional_bool
from browsermesh.model.ids import short_id
from browsermesh.model.recording import Recording
from browsermesh.persistence.states import LOCAL_PRINCIPAL
from browsermesh.runtime.core import RuntimeCore
from browsermesh.runtime.recording import session_label
from browsermesh.runtime.session import SessionRecord

if TYPE_CHECKING:
    from browsermesh.model.test_export import SessionExport

MAX_EXPORT_SESSIONS: Final = 10
"""Sessions one export replays together."""
EXPORT_MAX_CHARS: Final = 200_000
"""The exported module's bound (a tool result, read by a model)."""
RECORDING_ACTIONS: Final = ("pause", "resume", "clear")


class TestExports:
    """The export and the recording switch (a service on the core)."""

    def __init__(self, core: RuntimeCore) -> None:
        self.core = core

    def _recorded(self, principal: str, session_id: object, field: str) -> SessionRecord:
        """The caller's session (live or closed), which must have a log."""
        rec = self.core.lookup(principal, session_id)
        if rec.recording is None:
            raise invalid_argument(
                field, "a session recorded (server run with the testing profile)"
            )
        return rec

    def test_export(
        self, principal: str, session_ids: object, tracing: object = None
    ) -> tuple[str, dict[str, Any]]:
        """A pytest-playwright module replaying `session_ids` (the caller's), interleaved in
        the order their operations were accepted; with `tracing`, traced as pytest-playwright's
        `--tracing` option says."""
        traced = optional_bool(tracing, "tracing", False)
        if not isinstance(session_ids, list) or not session_ids:
            raise invalid_argument("sessionIds", "a non-empty array of session ids")
        if len(session_ids) > MAX_EXPORT_SESSIONS:
            raise BrowserMeshError(
                ErrorCode.LIMIT_EXCEEDED,
                bound=Bound("sessionIds", "<=", MAX_EXPORT_SESSIONS),
            )
        if len(set(map(str, session_ids))) != len(session_ids):
            raise invalid_argument("sessionIds", "each session once")
        records = [
            self._recorded(principal, sid, f"sessionIds[{k}]") for k, sid in enumerate(session_ids)
        ]
        # The renderer is imported on the first export, not at start-up (issue 33).
        from browsermesh.model.test_export import export_pytest

        exported = export_pytest(
            [self._session_export(rec) for rec in records],
            max_chars=EXPORT_MAX_CHARS,
            tracing=traced,
        )
        out: dict[str, Any] = {
            "language": "python",
            "code": exported.text,
            "steps": exported.steps,
            "truncated": exported.truncated,
            "secrets": list(exported.secrets),
        }
        op_id = short_id("o")
        # The log's fields are the reference's (§22): which call, never what it exported.
        self.core.log.info(
            "test.exported", operationId=op_id, principal=principal, tool="browser_test_export"
        )
        return op_id, out

    def _session_export(self, rec: SessionRecord) -> SessionExport:
        log = rec.recording
        assert log is not None
        label = session_label(rec)
        from browsermesh.model.test_export import SessionExport

        return SessionExport(
            session_id=rec.session_id,
            label=label,
            settings=rec.context_settings,
            storage_state_path=self._state_path(rec),
            # Scrubbed again (issue 30): a secret learned after a step was kept is not in it.
            steps=tuple(rec.step_secrets.scrub(step, label) for step in log.steps),
            truncated=log.truncated,
        )

    def _state_path(self, rec: SessionRecord) -> str | None:
        """Where the saved state a session started from is read at replay: the file itself for
        the local principal (same machine, same user); for a remote principal only its file
        name, since the server's paths are not the caller's (the export's environment variable
        points at a copy)."""
        state_id = rec.restored_from_state_id
        if state_id is None:
            return None
        path = self.core.states.file_of(rec.principal, state_id)
        return str(path) if rec.principal == LOCAL_PRINCIPAL else path.name

    def set_recording(
        self, principal: str, session_id: object, action: object
    ) -> tuple[str, dict[str, Any]]:
        """Pause, resume or clear a session's recording; the log's state after it."""
        one_of(action, "action", RECORDING_ACTIONS)
        rec = self._recorded(principal, session_id, "sessionId")
        log = rec.recording
        assert log is not None
        if action == "clear":
            log.clear()
        else:
            log.enabled = action == "resume"
        return short_id("o"), {"sessionId": rec.session_id, **recording_view(log)}


def recording_view(log: Recording) -> dict[str, Any]:
    """A log's state as the client sees it (no step content)."""
    return {
        "recording": log.enabled and not log.truncated,
        "steps": len(log.steps),
        "truncated": log.truncated,
    }
