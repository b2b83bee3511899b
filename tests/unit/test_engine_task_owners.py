"""The engine's and persistence's tasks have owners that await them (issue 18): no child is left
running when the call (or the object) that owns it has finished."""

from __future__ import annotations

import ast
import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from browsermesh.engine.abandoned import AbandonedCreations
from browsermesh.engine.backends import LocalSlot
from browsermesh.engine.popups import PopupGuard
from browsermesh.engine.waits import _next_event
from browsermesh.errors import BrowserMeshError, ErrorCode
from browsermesh.model.deadline import Deadline, OperationCancelled, OperationContext
from browsermesh.model.tasks import TaskOwner
from browsermesh.persistence.states import _run_to_completion
from tests.support.loop import all_tasks_blocked

pytestmark = pytest.mark.anyio


def _running() -> set[asyncio.Task[Any]]:
    return {task for task in asyncio.all_tasks() if not task.done()}


def _ctx(timeout_ms: int = 5_000) -> OperationContext:
    return OperationContext("op", Deadline(timeout_ms))


# ------------------------------------------------ no fan-out without an owner (issue 32)

SRC = Path(__file__).resolve().parents[2] / "src" / "browsermesh"


def bare_gathers(source: str) -> list[str]:
    """`asyncio.gather` by attribute or imported by name: it leaves the other children running
    when one fails, and a cancelled one leaves them unawaited; every layer fans out with
    `model.tasks.all_of` / `all_settled`, which cancel and await them."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr == "gather":
            if isinstance(node.value, ast.Name) and node.value.id == "asyncio":
                found.append(f"line {node.lineno}: asyncio.gather")
        elif isinstance(node, ast.ImportFrom) and node.module == "asyncio":
            found += [f"line {node.lineno}: from asyncio import gather"] * sum(
                alias.name == "gather" for alias in node.names
            )
    return found


def test_every_fan_out_has_an_owner() -> None:
    found = {
        path.relative_to(SRC).as_posix(): hits
        for path in sorted(SRC.rglob("*.py"))
        if (hits := bare_gathers(path.read_text()))
    }
    assert found == {}


@pytest.mark.parametrize(
    "source",
    [
        "async def f(a, b):\n    return await asyncio.gather(a, b)\n",
        "from asyncio import gather, sleep\n",
    ],
)
def test_the_fan_out_rule_names_a_bare_gather(source: str) -> None:
    assert len(bare_gathers(source)) == 1


# ---------------------------------------------------------------- engine/waits.py


async def test_next_event_leaves_no_wait_running() -> None:
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    act: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    before = _running()
    queue.put_nowait(("dialog", "first"))
    assert await _next_event(queue, act, _ctx()) == ("dialog", "first")
    assert _running() == before
    asyncio.get_running_loop().call_later(0.01, act.set_result, None)
    assert await _next_event(queue, act, _ctx()) is None  # the action ended first
    assert _running() == before
    assert queue.empty()


async def test_next_event_on_cancellation_awaits_its_waits_and_keeps_the_event() -> None:
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    act: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    ctx = _ctx()
    before = _running()
    waiting = asyncio.get_running_loop().create_task(_next_event(queue, act, ctx))
    await all_tasks_blocked()  # it waits for an event, the action or the cancel
    queue.put_nowait(("popup", "late"))
    ctx.cancelled.set()
    with pytest.raises(OperationCancelled):
        await waiting
    assert _running() == before
    assert queue.get_nowait() == ("popup", "late")  # back in the queue for the final drain
    act.cancel()


async def test_next_event_cancelled_by_its_caller_awaits_its_waits() -> None:
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    act: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    before = _running()
    waiting = asyncio.get_running_loop().create_task(_next_event(queue, act, _ctx()))
    await all_tasks_blocked()  # it waits for an event, the action or the cancel
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert _running() == before
    act.cancel()


# ---------------------------------------------------------------- engine/abandoned.py


async def test_an_abandoned_creation_is_closed_when_it_arrives() -> None:
    creations = AbandonedCreations()
    made = asyncio.Event()
    closed: list[str] = []

    async def create() -> str:
        await made.wait()
        return "context"

    async def close(value: str) -> None:
        closed.append(value)

    with pytest.raises(BrowserMeshError) as info:
        await creations.within(create(), Deadline(20), close)
    assert info.value.code is ErrorCode.OPERATION_TIMEOUT
    assert len(creations) == 1
    made.set()
    await all_tasks_blocked()  # the creation arrives and is closed at once
    assert len(creations) == 0
    assert closed == ["context"]


async def test_drain_cancels_and_awaits_the_creations_still_pending() -> None:
    creations = AbandonedCreations()
    cleaned: list[str] = []

    async def create() -> str:
        try:
            await asyncio.Event().wait()
        finally:
            await asyncio.sleep(0.01)
            cleaned.append("creation")
        return "never"

    async def close(_value: str) -> None:
        raise AssertionError("nothing was created")

    before = _running()
    with pytest.raises(BrowserMeshError):
        await creations.within(create(), Deadline(20), close)
    await creations.drain()
    assert cleaned == ["creation"]
    assert len(creations) == 0
    assert _running() == before


# ---------------------------------------------------------------- engine/popups.py


class _Sink:
    def __init__(self) -> None:
        self.popups: list[tuple[str, bool]] = []

    def admit(self, _ring: str) -> bool:
        return True

    def popup(self, url: str, *, closed: bool) -> None:
        self.popups.append((url, closed))


class _Popup:
    url = "http://popup.test/"

    def __init__(self, pages: list[object]) -> None:
        self.context = self
        self.pages = pages
        self.closed = False
        self.handlers: list[Callable[[Any], None]] = []

    def on(self, _event: str, handler: Callable[[Any], None]) -> None:
        self.handlers.append(handler)

    async def close(self) -> None:
        await asyncio.sleep(0.01)
        self.closed = True


async def test_a_popup_past_the_limit_is_closed_by_a_task_its_owner_awaits() -> None:
    closes = TaskOwner()
    sink = _Sink()
    guard = PopupGuard(sink, lambda: 1, closes)  # type: ignore[arg-type]
    opener = _Popup([])
    guard.watch(opener, managed=True)  # type: ignore[arg-type]
    popup = _Popup(["opener", "popup"])
    opener.handlers[0](popup)
    assert sink.popups == [("http://popup.test/", True)]
    assert len(closes) == 1 and not popup.closed
    await closes.drain()
    assert popup.closed


# ---------------------------------------------------------------- engine/backends.py


async def test_slot_stop_cancels_and_awaits_the_install() -> None:
    cleaned: list[str] = []

    async def install(_phase: Callable[[str], None]) -> None:
        try:
            await asyncio.Event().wait()
        finally:
            await asyncio.sleep(0.01)
            cleaned.append("install")

    slot = LocalSlot(None, True, True, installer=install)
    before = _running()
    with pytest.raises(BrowserMeshError) as info:
        await slot._installed(20)
    assert info.value.details == {"reason": "installing"}
    assert len(_running() - before) == 1  # the install goes on: the slot's
    await slot.stop()
    assert cleaned == ["install"]
    assert _running() == before


# ---------------------------------------------------------------- persistence/states.py


async def test_run_to_completion_waits_for_the_thread_when_cancelled() -> None:
    release = threading.Event()
    finished: list[str] = []

    def write() -> None:
        release.wait(5)
        finished.append("written")

    before = _running()
    call = asyncio.get_running_loop().create_task(_run_to_completion(write))
    await all_tasks_blocked()  # the write runs in its thread
    call.cancel()
    await all_tasks_blocked()
    assert not call.done()  # still waiting for the thread
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert finished == ["written"]
    assert _running() == before
