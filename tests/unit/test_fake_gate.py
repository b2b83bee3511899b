"""The fake engine's Gate (tests/fakes.py): it holds the calls it names, says when each one
arrives, and lets them all through when opened; tests order events on it, not on sleeps.

Driven through the runtime (two sessions, so two navigations can be inside the engine at once)
rather than the engine port directly, whose signatures other work changes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from browsermesh.config import default_config
from browsermesh.log import EventLog
from browsermesh.runtime.calls import PageCall
from browsermesh.runtime.runtime import Runtime
from tests.fakes import FakeEngine, Gate
from tests.support.loop import all_tasks_blocked

pytestmark = pytest.mark.anyio


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[tuple[Runtime, FakeEngine, list[PageCall]]]:
    engine = FakeEngine()
    runtime = Runtime(default_config(data_dir=tmp_path), engine, EventLog("silent"))
    pages = []
    for _ in range(2):
        _, view, page_id = await runtime.create_session()
        pages.append(PageCall(principal="local", session_id=view["sessionId"], page_id=page_id))
    yield runtime, engine, pages
    await runtime.shutdown()


async def test_the_gate_holds_named_calls_and_signals_each_arrival(rig) -> None:
    runtime, engine, (a, b) = rig
    engine.gate = gate = Gate()
    assert not gate.reached.is_set()
    first = asyncio.create_task(runtime.navigate(a, "http://a.test/"))
    await gate.arrivals(1)
    assert gate.reached.is_set() and gate.arrived == ["navigate"]
    assert (await runtime.get_title(b))[1] == "Title of about:blank"  # not held: passes
    second = asyncio.create_task(runtime.navigate(b, "http://b.test/"))
    await gate.arrivals(2)
    await all_tasks_blocked()
    assert not first.done() and not second.done()  # held until opened
    gate.open()
    await asyncio.gather(first, second)
    await runtime.navigate(a, "http://c.test/")  # an open gate holds nothing
    assert gate.arrived == ["navigate"] * 3


async def test_the_gate_holds_the_calls_it_is_given(rig) -> None:
    runtime, engine, (a, _b) = rig
    engine.gate = gate = Gate("title")
    await runtime.navigate(a, "http://a.test/")
    title = asyncio.create_task(runtime.get_title(a))
    await gate.arrivals(1)
    await all_tasks_blocked()
    assert gate.arrived == ["title"] and not title.done()
    gate.open()
    assert (await title)[1] == "Title of http://a.test/"
