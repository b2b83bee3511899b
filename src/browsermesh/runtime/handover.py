"""A person in the loop (issue 34, reference §30.1): a person takes a session over from the live
view, drives its page and hands it back; the agent's calls wait meanwhile; the agent can ask for
help.

`Handover` is a service on the runtime's core (and a `SessionWatcher`: a session that closes or
fails is handed back). The live view's HTTP side calls `take`, `send` and `release` for the
viewer's own principal only; the tools call `request_help` and `wait_handback`; `core.run_queued`
calls `hold_gate` before it queues a call that is not a read (`core.hold_exempt`: the read-only
tools).

- **One holder per session**: the view tab (`viewer`) of the session's own principal that took
  it; another tab gets `HoldRefused` (who holds it). Input from anyone else is refused.
- **A hold that drops** (tab closed, network lost) ends `hold_drop_ms` after its last input (the
  view pings every few seconds while it holds).
- **What the person did** (`HumanStep`s from engine/human_input.py) goes to the page's observe
  ring (`kind: "human"`), to the hold (the request for help's answer) and, when the session
  records for a test export, into the recording (typed text as an environment variable
  reference, as a password is).
- Every take-over and hand-back is logged with ids and a reason, never content.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final, Protocol

from browsermesh.engine.human_input import HumanInputs, StepSink
from browsermesh.errors import BrowserMeshError, ErrorCode, invalid_argument
from browsermesh.model import progress
from browsermesh.model.arguments import bounded_int, bounded_string
from browsermesh.model.deadline import Deadline
from browsermesh.model.element_ops import ElementOp
from browsermesh.model.handover import (
    DEFAULT_HELP_TIMEOUT_MS,
    HELP_REASON_CHARS,
    MAX_HELP_TIMEOUT_MS,
    Hold,
    HumanInput,
    HumanStep,
    parse_inputs,
)
from browsermesh.model.ids import short_id
from browsermesh.model.recording import Action, Value
from browsermesh.runtime.calls import PageCall
from browsermesh.runtime.recording import Recorder
from browsermesh.runtime.session import PageRecord, SessionRecord
from browsermesh.runtime.watchers import SessionChange
from browsermesh.text_redact import redact_text

if TYPE_CHECKING:
    from browsermesh.runtime.core import RuntimeCore

__all__ = ["Handover", "HoldRefused", "InputPort", "InputSource", "NotHolder"]

_DROP_CHECK_MAX_S: Final = 1.0


class InputPort(Protocol):
    """A held page's input (engine/human_input.py's `PageInput`)."""

    async def send(self, events: Sequence[HumanInput]) -> None: ...
    async def close(self) -> None: ...


class InputSource(Protocol):
    """Opens a held page's input (engine/human_input.py's `HumanInputs`)."""

    async def open(self, handle: Any, on_step: StepSink) -> InputPort: ...


class HoldRefused(Exception):
    """Another view tab holds the session: `held_by` is its principal."""

    def __init__(self, held_by: str) -> None:
        super().__init__("the session is held")
        self.held_by = held_by


class NotHolder(Exception):
    """Input or a hand-back from a tab that does not hold the session (any more)."""


class Handover:
    """Holds, input, hand-backs and requests for help (see the module doc)."""

    def __init__(
        self,
        core: RuntimeCore,
        recorder: Recorder,
        inputs: InputSource | None = None,
    ) -> None:
        self.core = core
        self.recorder = recorder
        self.inputs: InputSource = inputs if inputs is not None else HumanInputs()
        self.drop_s = core.config.hold_drop_ms / 1000
        # The live view's address of a session (`/view/#s=<id>` on this server), set by the
        # HTTP transport when the view is on; None: nobody can take over (stdio, --no-view).
        self.view_link: Callable[[str], str] | None = None
        self._ports: dict[str, InputPort] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._dropper: asyncio.Task[None] | None = None
        self.tasks = core.tasks  # the runtime awaits them at shutdown
        core.watchers.append(self)

    # ------------------------------------------------------------------ SessionWatcher

    def session_changed(self, change: SessionChange) -> None:
        if change.kind not in ("closed", "state", "pages"):
            return
        rec = self.core.sessions_snapshot().get(change.session_id)
        if rec is None:
            return
        if rec.status != "ready":
            rec.holds.pulse()  # a request for help or a wait for the hand-back ends
        hold = rec.holds.hold
        if hold is None:
            return
        gone = rec.status != "ready" or hold.page_id not in rec.pages
        if gone:
            self.tasks.spawn(self._end(rec, "session_closed"), name="handover-end")

    def watches_pages(self, principal: str) -> bool:
        return False

    @property
    def ping_ms(self) -> int:
        """How often a holding view should ping: a quarter of the drop time (0.25-5 s), so an
        open view is never dropped, however short `hold_drop_ms` is configured."""
        return max(250, min(5_000, round(self.drop_s * 250)))

    # ------------------------------------------------------------------ the view's side

    async def take(self, principal: str, viewer: str, session_id: str, page_id: str) -> Hold:
        """`viewer` (a view tab of `principal`) takes the page over. SESSION_NOT_FOUND /
        PAGE_NOT_FOUND for what is not the principal's, `HoldRefused` when another tab holds
        the session; the same tab taking it again keeps its hold."""
        rec = self.core.accept(principal, session_id)
        page = self.core.page_of(rec, page_id)
        held = rec.holds.hold
        if held is not None:
            if held.viewer != viewer:
                raise HoldRefused(held.principal)
            held.last_input = self.core.clock.monotonic()
            return held
        hold = Hold(principal, viewer, page.page_id, self.core.clock.monotonic())
        rec.holds.take(hold)
        try:
            port = await self.inputs.open(page.handle, lambda step: self._step(rec, page, step))
        except Exception:
            rec.holds.withdraw(hold)
            raise BrowserMeshError(ErrorCode.BROWSER_ERROR) from None
        if rec.holds.hold is not hold:  # the session went away meanwhile
            await port.close()
            raise BrowserMeshError(ErrorCode.SESSION_CLOSED)
        self._ports[rec.session_id] = port
        self._step(rec, page, HumanStep(action="took_over"))
        self.core.log.info(
            "view.takeover", principal=principal, sessionId=rec.session_id, pageId=page.page_id
        )
        self.core.changed(rec, "state")
        if self._dropper is None or self._dropper.done():
            self._dropper = self.tasks.spawn(self._drop_idle(), name="handover-drop")
        return hold

    async def send(self, principal: str, viewer: str, session_id: str, events: object) -> None:
        """Play a batch of the holder's input (`model.handover.parse_inputs`: INVALID_ARGUMENT
        naming the field); `NotHolder` when `viewer` does not hold the session."""
        batch = parse_inputs(events)
        rec = self._held_by(principal, viewer, session_id)
        hold = rec.holds.hold
        assert hold is not None
        hold.last_input = self.core.clock.monotonic()
        port = self._ports.get(rec.session_id)
        if port is None:
            raise NotHolder()
        async with self._locks.setdefault(rec.session_id, asyncio.Lock()):  # in order
            await port.send(batch)

    async def release(self, principal: str, viewer: str, session_id: str) -> None:
        """The holder hands the session back; `NotHolder` for anyone else."""
        rec = self._held_by(principal, viewer, session_id)
        await self._end(rec, "person")

    def _held_by(self, principal: str, viewer: str, session_id: str) -> SessionRecord:
        rec = self.core.lookup(principal, session_id)
        hold = rec.holds.hold
        if hold is None or hold.viewer != viewer or hold.principal != principal:
            raise NotHolder()
        return rec

    async def _end(self, rec: SessionRecord, reason: str) -> None:
        hold = rec.holds.hold
        if hold is None:
            return
        port = self._ports.pop(rec.session_id, None)
        if port is not None:
            # Closing ends the typing run: its step is told before the hand-back's.
            with contextlib.suppress(Exception):
                await port.close()
        self._locks.pop(rec.session_id, None)
        if rec.holds.hold is not hold:
            return  # ended meanwhile
        page = rec.pages.get(hold.page_id)
        if page is not None:
            self._step(rec, page, HumanStep(action="handed_back", reason=reason))
        rec.holds.release()
        self.core.log.info(
            "view.handback",
            principal=hold.principal,
            sessionId=rec.session_id,
            pageId=hold.page_id,
            reason=reason,
        )
        self.core.changed(rec, "state")

    async def _drop_idle(self) -> None:
        """Hand back every hold whose view sent nothing for `drop_s`; runs while any is held."""
        while True:
            held = [r for r in self.core.sessions_snapshot().values() if r.holds.hold is not None]
            if not held:
                return
            now = self.core.clock.monotonic()
            for rec in held:
                hold = rec.holds.hold
                if hold is not None and now - hold.last_input >= self.drop_s:
                    await self._end(rec, "dropped")
            await asyncio.sleep(min(self.drop_s / 4, _DROP_CHECK_MAX_S))

    # ------------------------------------------------------------------ what the person did

    def _step(self, rec: SessionRecord, page: PageRecord, step: HumanStep) -> None:
        hold = rec.holds.hold
        if hold is not None:
            hold.add(step)
        if page.observations is not None:
            page.observations.human(step.view())
        self._record(rec, page, step)

    def _record(self, rec: SessionRecord, page: PageRecord, step: HumanStep) -> None:
        """The steps a replay can repeat (a click, typing, a named key on an element with a
        role and a name) enter the recording, typed text as a secret reference."""
        if rec.recording is None or not step.role or not step.name:
            return
        locator: dict[str, Any] = {"strategy": "role", "value": step.role, "name": step.name}
        op: ElementOp
        value: Value | None = None
        if step.action == "click":
            op = "double_click" if (step.clicks or 1) > 1 else "click"
        elif step.action == "type" and step.typed:
            op, value = "fill", Recorder.value(rec, locator, step.typed, secret=True)
        elif step.action == "press" and step.key:
            op, value = "press", Value.literal(step.key)
        else:
            return
        action = Action(
            seq=self.core.next_accepted(),
            session_id=rec.session_id,
            page_id=page.page_id,
            op=op,
            locator=locator,
            value=value,
        )
        self.recorder.record(rec, action)

    # ------------------------------------------------------------------ the agent's side

    async def wait_handback(self, call: PageCall, timeout_ms: float) -> dict[str, Any]:
        """browser_wait {kind: "handback"}: until nobody holds the session (at once when nobody
        does), within the call's budget; what the person did."""
        rec = self.core.accept(call.principal, call.session_id)
        self.core.page_of(rec, call.page_id)
        slot = rec.holds
        before = slot.handbacks
        if slot.hold is not None:
            if progress.active():
                progress.report("waiting for the hand-back", total_ms=timeout_ms)
            if not await slot.until(lambda: slot.hold is None or not _live(rec), timeout_ms / 1000):
                raise held_error(rec)
            self.core.accept(call.principal, call.session_id)  # closed meanwhile: its code
        return await self._after(rec, before)

    async def request_help(self, call: PageCall, reason: object) -> tuple[str, dict[str, Any]]:
        """browser_request_help: mark the card, tell the client where the view is, and answer
        when the person hands back (or OPERATION_TIMEOUT at the call's budget)."""
        text = bounded_string(reason, "reason", 2_000, min_chars=1)
        if not text.strip():
            raise invalid_argument("reason", "text other than whitespace")
        budget = DEFAULT_HELP_TIMEOUT_MS
        if call.timeout_ms is not None:
            budget = bounded_int(call.timeout_ms, "timeoutMs", 1, MAX_HELP_TIMEOUT_MS)
        rec = self.core.accept(call.principal, call.session_id)
        page = self.core.page_of(rec, call.page_id)
        if self.view_link is None:
            # Nobody can take over without the live view: ask the user in the conversation.
            raise invalid_argument(
                "sessionId",
                "a session of a server whose live view is on (HTTP, not --no-view)",
                reason="no_live_view",
            )
        shown = redact_text(" ".join(text.split()), max_chars=HELP_REASON_CHARS)
        slot = rec.holds
        slot.help_reason = shown
        slot.pulse()
        link = self.view_link(rec.session_id)
        self.core.log.info(
            "session.help_requested",
            principal=rec.principal,
            sessionId=rec.session_id,
            pageId=page.page_id,
            reason=shown,
            url=link,
        )
        self.core.changed(rec, "state")
        before = slot.handbacks
        if progress.active():
            progress.report(f"waiting for a person at {link}", total_ms=budget)
        try:
            helped = await slot.until(
                lambda: slot.handbacks > before or not _live(rec), budget / 1000
            )
            self.core.accept(call.principal, call.session_id)  # closed meanwhile: its code
        finally:
            if slot.help_reason == shown:
                slot.help_reason = None
                self.core.changed(rec, "state")
        if not helped:
            raise BrowserMeshError(
                ErrorCode.OPERATION_TIMEOUT, details={"reason": "no_handback", "timeoutMs": budget}
            )
        return short_id("o"), await self._after(rec, before)

    async def _after(self, rec: SessionRecord, before: int) -> dict[str, Any]:
        """What a hold that ended since `before` left: the held page's URL and title, and the
        person's steps (never what they typed)."""
        last = rec.holds.last if rec.holds.handbacks > before else None
        out: dict[str, Any] = {"handedBack": last is not None}
        if last is None:
            return out
        page = rec.pages.get(last.page_id)
        if page is not None:
            out["pageId"] = page.page_id
            out["url"] = self.core.engine.current_url(page.handle)
            out["title"] = await self.core.title_peek(page)
        out["steps"] = [step.summary() for step in last.steps]
        return out


def _live(rec: SessionRecord) -> bool:
    return rec.status == "ready" and rec.accepting


async def hold_gate(rec: SessionRecord, deadline: Deadline) -> None:
    """Before a call that is not a read is queued (`core.run_queued`): wait while a person
    holds the session, within the call's budget, then SESSION_HELD."""
    slot = rec.holds
    if slot.hold is None:
        return
    if progress.active():
        progress.report(
            "waiting for the person holding the session to hand it back",
            total_ms=deadline.remaining_ms(),
        )
    if not await slot.until(
        lambda: slot.hold is None or not _live(rec), deadline.remaining_ms() / 1000
    ):
        raise held_error(rec)


def held_error(rec: SessionRecord) -> BrowserMeshError:
    hold = rec.holds.hold
    held_by = hold.principal if hold is not None else None
    return BrowserMeshError(
        ErrorCode.SESSION_HELD,
        details={"heldBy": held_by} if held_by else {},
    )
