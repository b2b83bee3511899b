"""What a session records for a test export (issue 20), in the runtime.

A session records only while the `testing` tool profile is published (the export tool exists)
and its own recording is on (`browser_recording`). The page operations call the `Recorder`'s
helpers from inside their jobs: `replayable` before an action (a ref is turned into the locator
that finds the same element while the element is still there), `record` after it succeeded, so
a failed operation never reaches the log. A step's `seq` is the operation's accept order
(`OperationContext.accepted`), one counter for the whole runtime, which is the order the export
interleaves the sessions in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from browsermesh.config import Config
from browsermesh.engine.files import FilePayload
from browsermesh.engine.protocol import Engine, EnginePage
from browsermesh.model.deadline import OperationContext
from browsermesh.model.locators import Target
from browsermesh.model.matchers import (
    DialogWait,
    DownloadWait,
    NavigationWait,
    PopupWait,
    ResponseWait,
    WaitSpec,
)
from browsermesh.model.recording import (
    Expectation,
    ExpectDialog,
    ExpectDownload,
    ExpectFileChooser,
    ExpectNavigation,
    ExpectPopup,
    ExpectResponse,
    Recording,
    Step,
    UploadFile,
    Value,
)
from browsermesh.runtime.session import PageRecord, SessionRecord


@dataclass(frozen=True, slots=True, kw_only=True)
class Replay:
    """How a recorded step finds its element again: the `locator` (wire form), whether the
    element is a `password` field, and whether it was `resolved` when described."""

    locator: dict[str, Any]
    password: bool
    resolved: bool


def session_label(rec: SessionRecord) -> str:
    """What the export calls a session (and names its secrets after): its `role` label, else
    its name, else its id."""
    return rec.metadata.get("role") or rec.name or rec.session_id


def taking_steps(rec: SessionRecord) -> Recording | None:
    """`rec`'s log when it is taking steps (on, not full); else None (nothing to compute)."""
    log = rec.recording
    return log if log is not None and log.enabled and not log.truncated else None


class Recorder:
    """The recording helpers every page operation shares (one per runtime, given to the
    services whose operations are recorded)."""

    def __init__(self, config: Config, engine: Engine[Any, Any]) -> None:
        self.config = config
        self.engine = engine

    def new_recording(self) -> Recording | None:
        """A fresh log for a new session, or None when no export tool is published."""
        return Recording() if "testing" in self.config.tools else None

    async def replayable(
        self, rec: SessionRecord, handle: EnginePage, target: Target, ctx: OperationContext
    ) -> Replay | None:
        """The locator (wire form) that replays `target` and whether it is a password field;
        None when `rec` is not recording (or a ref no longer names an element: the action then
        fails and is not recorded). Runs before the action: afterwards the element (and the
        ref) may be gone. A locator whose element is not there yet is described again after
        the action, so that a password typed through it is still known as one."""
        if taking_steps(rec) is None:
            return None
        described = await self.engine.describe_target(handle, target, ctx)
        rec.step_secrets.learn(described.get("secrets") or ())
        if described.get("locator") is None:
            return None
        return Replay(
            locator=dict(described["locator"]),
            password=bool(described.get("isPassword")),
            resolved=bool(described.get("resolved", True)),
        )

    async def is_password(
        self, handle: EnginePage, target: Target, ctx: OperationContext, replay: Replay
    ) -> bool:
        """Whether `target` is a password field, asked again after the action when its
        element was not there before it."""
        if replay.resolved:
            return replay.password
        described = await self.engine.describe_target(handle, target, ctx)
        return bool(described.get("isPassword"))

    def record(self, rec: SessionRecord, step: Step) -> None:
        """Keep `step` (an operation that succeeded) if `rec` is recording."""
        log = taking_steps(rec)
        if log is not None:
            # The last guard (issue 30): no secret the recording knows is kept in a step.
            log.append(rec.step_secrets.scrub(step, session_label(rec)))

    @staticmethod
    def value(rec: SessionRecord, locator: dict[str, Any], text: str, *, secret: bool) -> Value:
        """`text` as recorded: a reference to an environment variable when it is secret (a
        password field, marked by the client, or a value that contains a password the page
        held), else the literal text (model.step_secrets)."""
        return rec.step_secrets.value(session_label(rec), locator, text, secret=secret)


def step_at(rec: SessionRecord, page: PageRecord, ctx: OperationContext) -> dict[str, Any]:
    """Where and when a recorded step happened: its session, page and accept order."""
    return {"seq": ctx.accepted, "session_id": rec.session_id, "page_id": page.page_id}


def upload_files(payloads: Sequence[FilePayload]) -> tuple[UploadFile, ...]:
    """The files of an upload as a replay provides them."""
    return tuple(UploadFile(name=p.name, mime_type=p.mime_type, data=p.data) for p in payloads)


def expectation(spec: WaitSpec, event: Mapping[str, Any]) -> Expectation:
    """What an action-and-wait waited for, as its replay expects it: `spec` as the client gave
    it, with what happened (`event`, the tool's result) where the replay checks that instead:
    the popup's page, the download's file name."""
    if isinstance(spec, NavigationWait):
        return ExpectNavigation(matcher=spec.matcher, load_state=spec.load_state)
    if isinstance(spec, ResponseWait):
        return ExpectResponse(matcher=spec.matcher, method=spec.method, status=spec.status)
    if isinstance(spec, PopupWait):
        return ExpectPopup(page_id=str(event["page"]["pageId"]))
    if isinstance(spec, DialogWait):
        text = None if spec.prompt_text is None else Value.literal(spec.prompt_text)
        return ExpectDialog(dialog_type=spec.dialog_type, accept=spec.accept, prompt_text=text)
    if isinstance(spec, DownloadWait):
        return ExpectDownload(suggested_filename=str(event["artifact"]["name"]))
    return ExpectFileChooser(files=upload_files(spec.files))
