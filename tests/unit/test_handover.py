"""A person in the loop (issue 34), the rules: the view's input checked field by field, the
steps as shown, and the runtime's holds over the fake engine (a fake input port records what
would be played). The real take-over through the view is tests/integration/test_takeover.py."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from browsermesh.config import default_config
from browsermesh.engine.human_input import StepSink
from browsermesh.errors import BrowserMeshError, ErrorCode
from browsermesh.log import EventLog
from browsermesh.mcp.server import create_server
from browsermesh.model.frame_pacing import HELD_BOUNDS
from browsermesh.model.handover import (
    MAX_INPUT_EVENTS,
    HumanInput,
    HumanStep,
    Key,
    Ping,
    Pointer,
    Text,
    Wheel,
    parse_inputs,
)
from browsermesh.runtime.calls import PageCall
from browsermesh.runtime.handover import HoldRefused, NotHolder
from browsermesh.runtime.runtime import Runtime
from tests.fakes import FakeEngine
from tests.support.eventually import eventually
from tests.support.loop import all_tasks_blocked

pytestmark = pytest.mark.anyio


def test_inputs_are_parsed_by_kind() -> None:
    events = parse_inputs(
        [
            {"type": "move", "x": 0.5, "y": 0},
            {"type": "down", "x": 1, "y": 1, "button": "right", "clicks": 2},
            {"type": "up", "x": 0.25, "y": 0.75},
            {"type": "wheel", "x": 0.1, "y": 0.2, "dx": 0, "dy": -120},
            {"type": "keydown", "key": "Enter"},
            {"type": "keyup", "key": "a"},
            {"type": "text", "text": "pasted"},
            {"type": "ping"},
        ]
    )
    assert events == [
        Pointer("move", 0.5, 0.0),
        Pointer("down", 1.0, 1.0, "right", 2),
        Pointer("up", 0.25, 0.75, "left", 1),
        Wheel(0.1, 0.2, 0.0, -120.0),
        Key("keydown", "Enter"),
        Key("keyup", "a"),
        Text("pasted"),
        Ping(),
    ]


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"events": 1}, "events"),
        ([{"type": "fly"}], "events[0].type"),
        ([{"type": "move", "x": 1.5, "y": 0}], "events[0].x"),
        ([{"type": "move", "x": 0, "y": float("nan")}], "events[0].y"),
        ([{"type": "move", "x": True, "y": 0}], "events[0].x"),
        (
            [{"type": "ping"}, {"type": "down", "x": 0, "y": 0, "button": "back"}],
            "events[1].button",
        ),
        ([{"type": "down", "x": 0, "y": 0, "clicks": 4}], "events[0].clicks"),
        ([{"type": "wheel", "x": 0, "y": 0, "dy": 10_001}], "events[0].dy"),
        ([{"type": "keydown", "key": ""}], "events[0].key"),
        ([{"type": "text", "text": "x" * 10_001}], "events[0].text"),
        ([{"type": "ping"}] * (MAX_INPUT_EVENTS + 1), "events"),
        (["move"], "events[0]"),
    ],
)
def test_bad_input_names_the_field(raw: Any, field: str) -> None:
    with pytest.raises(BrowserMeshError) as caught:
        parse_inputs(raw["events"] if isinstance(raw, dict) else raw)
    assert caught.value.code is ErrorCode.INVALID_ARGUMENT
    assert caught.value.details["field"] == field


def test_steps_never_show_what_was_typed() -> None:
    typed = HumanStep(action="type", role="textbox", name="Code", chars=6, typed="123456")
    assert typed.view() == {"action": "type", "role": "textbox", "name": "Code", "chars": 6}
    assert typed.summary() == 'typed 6 characters into textbox "Code"'
    assert "123456" not in repr(typed)
    secret = HumanStep(action="type", role="textbox", name="Password", password=True, typed="pw")
    assert secret.view() == {
        "action": "type",
        "role": "textbox",
        "name": "Password",
        "password": True,
    }
    assert secret.summary() == 'typed into textbox "Password"'
    double = HumanStep(action="click", role="button", name="Go", clicks=2)
    assert double.summary() == 'double-clicked button "Go"'
    assert HumanStep(action="press", key="Enter").summary() == "pressed Enter"
    assert HELD_BOUNDS.max_fps >= 5 and HELD_BOUNDS.continuous  # every change, >= 5 a second


class FakePort:
    def __init__(self, on_step: StepSink) -> None:
        self.on_step = on_step
        self.played: list[HumanInput] = []
        self.closed = False

    async def send(self, events: Sequence[HumanInput]) -> None:
        self.played.extend(events)
        for event in events:
            if isinstance(event, Text):
                step = HumanStep(action="type", role="textbox", name="Code", chars=len(event.text))
                self.on_step(step)

    async def close(self) -> None:
        self.closed = True


class FakeInputs:
    def __init__(self) -> None:
        self.ports: list[FakePort] = []

    async def open(self, handle: Any, on_step: StepSink) -> FakePort:
        port = FakePort(on_step)
        self.ports.append(port)
        return port


async def held_runtime(tmp_path: Path, **config: Any) -> tuple[Runtime, FakeInputs, PageCall]:
    runtime = Runtime(
        default_config(data_dir=tmp_path, **config), FakeEngine(0.001), EventLog("silent")
    )
    create_server(runtime)  # the MCP layer names the reads that run during a hold
    inputs = FakeInputs()
    runtime.handover.inputs = inputs
    _, session, page_id = await runtime.create_session("alice", name="buyer")
    return (
        runtime,
        inputs,
        PageCall(principal="alice", session_id=session["sessionId"], page_id=page_id),
    )


async def test_a_hold_gates_actions_not_reads_and_ends_at_hand_back(tmp_path: Path) -> None:
    runtime, inputs, call = await held_runtime(tmp_path)
    async with runtime:
        handover = runtime.handover
        sid, pid = str(call.session_id), str(call.page_id)
        with pytest.raises(BrowserMeshError) as missing:
            await handover.take("bob", "tab", sid, pid)  # not bob's session
        assert missing.value.code is ErrorCode.SESSION_NOT_FOUND
        await handover.take("alice", "tab-1", sid, pid)
        with pytest.raises(HoldRefused) as refused:
            await handover.take("alice", "tab-2", sid, pid)
        assert refused.value.held_by == "alice"
        with pytest.raises(NotHolder):
            await handover.send("alice", "tab-2", sid, [{"type": "ping"}])
        listed = runtime.list_sessions("alice")
        assert listed[1][0]["heldBy"] == "alice"
        # A read runs; an action waits its budget, then SESSION_HELD.
        await runtime.get_url(call)
        short = PageCall(principal="alice", session_id=sid, page_id=pid, timeout_ms=200)
        with pytest.raises(BrowserMeshError) as held:
            await runtime.navigate(short, "http://a.test/")
        assert held.value.code is ErrorCode.SESSION_HELD
        assert held.value.details == {"heldBy": "alice"}
        # An action with budget enough runs after the hand-back.
        waiting = asyncio.create_task(
            runtime.navigate(
                PageCall(principal="alice", session_id=sid, page_id=pid, timeout_ms=30_000),
                "http://a.test/",
            )
        )
        await handover.send("alice", "tab-1", sid, [{"type": "text", "text": "123456"}])
        assert inputs.ports[0].played == [Text("123456")]
        await all_tasks_blocked()
        assert not waiting.done()
        await handover.release("alice", "tab-1", sid)
        await asyncio.wait_for(waiting, 10)
        assert inputs.ports[0].closed
        page = runtime.core.lookup("alice", sid).pages[pid]
        assert page.observations is not None
        human = page.observations.read("console", None, 100, False)["events"]
        assert [e["action"] for e in human if e["kind"] == "human"] == [
            "took_over",
            "type",
            "handed_back",
        ]
        assert "123456" not in str(human)


async def test_request_help_answers_after_a_hand_back_and_needs_the_view(tmp_path: Path) -> None:
    runtime, _, call = await held_runtime(tmp_path)
    async with runtime:
        sid, pid = str(call.session_id), str(call.page_id)
        with pytest.raises(BrowserMeshError) as no_view:
            await runtime.request_help(call, "a CAPTCHA")
        assert no_view.value.details["field"] == "sessionId"
        assert no_view.value.details["reason"] == "no_live_view"
        assert "Ask the user in the conversation" in no_view.value.next_step
        runtime.handover.view_link = lambda s: f"http://127.0.0.1:1/view/#s={s}"
        with pytest.raises(BrowserMeshError) as late:
            await runtime.request_help(
                PageCall(principal="alice", session_id=sid, page_id=pid, timeout_ms=100),
                "a CAPTCHA",
            )
        assert late.value.code is ErrorCode.OPERATION_TIMEOUT
        assert late.value.details["reason"] == "no_handback"
        with pytest.raises(BrowserMeshError) as too_long:
            await runtime.request_help(
                PageCall(principal="alice", session_id=sid, page_id=pid, timeout_ms=1_800_001), "x"
            )
        assert too_long.value.details["field"] == "timeoutMs"
        asking = asyncio.create_task(runtime.request_help(call, "  a\nCAPTCHA  "))
        rec = runtime.core.lookup("alice", sid)
        await eventually(lambda: rec.holds.help_reason is not None, 10)
        assert rec.holds.help_reason == "a CAPTCHA"
        await runtime.handover.take("alice", "tab", sid, pid)
        await runtime.handover.release("alice", "tab", sid)
        _, answer = await asyncio.wait_for(asking, 10)
        assert answer["handedBack"] is True and answer["steps"] == [
            "took over",
            "handed back (person)",
        ]
        assert rec.holds.help_reason is None


async def test_a_silent_holder_is_dropped(tmp_path: Path) -> None:
    runtime, _, call = await held_runtime(tmp_path, hold_drop_ms=1_000)
    async with runtime:
        sid, pid = str(call.session_id), str(call.page_id)
        await runtime.handover.take("alice", "tab", sid, pid)
        assert runtime.handover.ping_ms == 250  # a quarter of 1 s
        _, waited = await runtime.wait(
            PageCall(principal="alice", session_id=sid, page_id=pid, timeout_ms=30_000),
            {"kind": "handback"},
        )
        assert waited["handedBack"] is True
        assert waited["steps"][-1] == "handed back (dropped)"


async def test_a_take_over_whose_input_cannot_open_is_no_hand_back(tmp_path: Path) -> None:
    runtime, inputs, call = await held_runtime(tmp_path)

    async def broken(handle: Any, on_step: StepSink) -> FakePort:
        raise RuntimeError("the page went away")

    inputs.open = broken  # type: ignore[method-assign]
    async with runtime:
        sid, pid = str(call.session_id), str(call.page_id)
        with pytest.raises(BrowserMeshError) as failed:
            await runtime.handover.take("alice", "tab", sid, pid)
        assert failed.value.code is ErrorCode.BROWSER_ERROR
        slot = runtime.core.lookup("alice", sid).holds
        assert slot.hold is None and slot.handbacks == 0
