"""Session and page records, and the one place their client views are built."""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from browsermesh.engine.protocol import EngineContext, EnginePage
from browsermesh.errors import ErrorCode
from browsermesh.model.handover import HoldSlot
from browsermesh.model.observe import PageObservations
from browsermesh.model.paging import SnapshotStore
from browsermesh.model.recording import Recording
from browsermesh.model.settings import settings_view
from browsermesh.model.step_secrets import StepSecrets
from browsermesh.model.table_diff import TableLines
from browsermesh.model.tracing import TraceRun
from browsermesh.redact import SecretValues
from browsermesh.runtime.queue import SessionQueue

if TYPE_CHECKING:
    from browsermesh.runtime.videos import VideoRun

SessionStatus = Literal["creating", "ready", "closing", "closed", "failed"]
RECENT_OPERATIONS = 8
"""Finished operations a session record remembers for the live view (tool, code, duration)."""
ACTIVE_STATUSES: frozenset[str] = frozenset({"creating", "ready", "closing"})
TERMINAL_STATUSES: frozenset[str] = frozenset({"closed", "failed"})


@dataclass(frozen=True, slots=True)
class OperationNote:
    """One finished operation as the live view shows it: never an argument's value."""

    tool: str
    code: str  # "OK", or the error code it ended with
    duration_ms: int
    at: float  # wall-clock epoch seconds when it ended


@dataclass(eq=False)
class PageRecord:
    page_id: str
    session_id: str
    created_at: str
    handle: EnginePage
    observations: PageObservations | None = None
    # Retained snapshot contents for cursor pagination (§6.6); cleared on navigation etc.
    snapshots: SnapshotStore = field(default_factory=SnapshotStore)
    # The element lines (without refs) of the page's latest action table: the base of
    # `snapshot: "diff"` on interactions (issue 15).
    last_table: TableLines | None = None


@dataclass(eq=False)
class SessionRecord:
    session_id: str
    principal: str
    name: str | None
    metadata: Mapping[str, str]
    created_at: str
    last_activity_at: str
    context_settings: dict[str, Any]
    restored_from_state_id: str | None = None
    # The session a fork copied its storage from (issue 19); None for any other session.
    forked_from_session_id: str | None = None
    status: SessionStatus = "creating"
    failure_code: ErrorCode | None = None
    context: EngineContext | None = None
    placement: str | None = None
    pages: dict[str, PageRecord] = field(default_factory=dict)
    default_page_id: str | None = None
    queue: SessionQueue = field(default_factory=SessionQueue)
    accepting: bool = True
    disconnected: bool = False
    close_requested: bool = False
    # Monotonic time of the last touch (accepted call naming the session, or a finished queued
    # operation); the idle reaper compares it with BROWSERMESH_SESSION_IDLE_MS.
    last_touch: float = 0.0
    # `watchers.fingerprint` of the page views after the last operation someone watched (None:
    # unknown, so the next watched operation reports its pages as changed).
    fingerprint: str | None = None
    # What the session did, for a test export (issue 20); None while no export tool is published.
    recording: Recording | None = None
    # The secret values that recording knows and the variables they replay from (issue 30).
    step_secrets: StepSecrets = field(default_factory=StepSecrets)
    # The values of the secrets this session filled by name (§36): its observe events hide them.
    named_secrets: SecretValues = field(default_factory=SecretValues)
    # The last few finished operations, newest last (filled by core._run; the live view).
    recent_ops: deque[OperationNote] = field(
        default_factory=lambda: deque(maxlen=RECENT_OPERATIONS)
    )
    # A person's hold from the live view and the agent's request for help (issue 34).
    holds: HoldSlot = field(default_factory=HoldSlot)
    # The trace and the video being recorded (issue 35; runtime/traces.py, runtime/videos.py).
    trace: TraceRun | None = None
    video: VideoRun | None = None

    def note_operation(self, tool: str, code: str, duration_ms: int, at: float) -> None:
        """Remember one finished operation (bounded: the oldest falls out)."""
        self.recent_ops.append(OperationNote(tool, code, duration_ms, at))

    def page_view(self, page: PageRecord, url: str) -> dict[str, Any]:
        """PageView (reference §3.4)."""
        return {
            "pageId": page.page_id,
            "sessionId": self.session_id,
            "createdAt": page.created_at,
            "url": url,
            "isDefault": page.page_id == self.default_page_id,
            **({"crashed": True} if page.handle.crashed else {}),
        }

    def view(self) -> dict[str, Any]:
        """SessionView (reference §3.4)."""
        out: dict[str, Any] = {"sessionId": self.session_id}
        if self.name is not None:
            out["name"] = self.name
        out.update(
            {
                "status": self.status,
                "createdAt": self.created_at,
                "lastActivityAt": self.last_activity_at,
                "metadata": dict(self.metadata),
            }
        )
        if self.restored_from_state_id is not None:
            out["restoredFromStateId"] = self.restored_from_state_id
        if self.forked_from_session_id is not None:
            out["forkedFromSessionId"] = self.forked_from_session_id
        # Header values and proxy credentials never leave the record (model/network.py).
        out["contextSettings"] = settings_view(self.context_settings)
        if self.failure_code is not None:
            out["failureCode"] = self.failure_code.value
        hold = self.holds.hold
        if hold is not None:
            out["heldBy"] = hold.principal
        return out
