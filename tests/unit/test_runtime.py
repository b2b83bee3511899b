"""Runtime rules on the fake engine: lifecycle, limits, tombstones, queues, deadlines, cancel."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator

import pytest

from browsermesh.config import default_config
from browsermesh.errors import BrowserMeshError, ErrorCode
from browsermesh.log import EventLog
from browsermesh.runtime.calls import PageCall
from browsermesh.runtime.runtime import Runtime
from tests.fakes import FakeEngine, Gate
from tests.support.loop import all_tasks_blocked

pytestmark = pytest.mark.anyio


@pytest.fixture
async def rig(
    tmp_path: object,
) -> AsyncIterator[tuple[Runtime, FakeEngine, list[dict[str, object]]]]:
    engine = FakeEngine()
    log = EventLog("silent")
    records: list[dict[str, object]] = []
    log.sinks.append(records.append)
    config = default_config(timeout_ms=1000, max_sessions=3, max_pages=3, data_dir=tmp_path)
    runtime = Runtime(config, engine, log)
    yield runtime, engine, records
    await runtime.shutdown()


async def code_of(coro: object) -> ErrorCode:
    with pytest.raises(BrowserMeshError) as info:
        await coro  # type: ignore[misc]
    return info.value.code


async def test_create_session_is_ready_with_default_page(rig) -> None:
    runtime, _engine, records = rig
    op_id, view, page_id = await runtime.create_session(name="buyer", metadata={"role": "buyer"})
    assert re.fullmatch(r"o[0-9a-z]{4,}", op_id)
    assert view["status"] == "ready" and view["name"] == "buyer"
    assert view["metadata"] == {"role": "buyer"} and view["contextSettings"] == {}
    _, pages = await runtime.list_pages("local", view["sessionId"])
    assert [p["pageId"] for p in pages] == [page_id]
    assert pages[0]["isDefault"] is True and pages[0]["url"] == "about:blank"
    assert any(r["type"] == "session.created" for r in records)


async def test_ids_are_short_unique_and_only_looked_up(rig) -> None:
    """Session, page and operation ids are model.ids short ids (issue 15), all distinct; an id
    of the right shape that this server never issued is unknown like any other string."""
    runtime, _engine, _ = rig
    issued: list[str] = []
    for _ in range(2):
        op_id, view, page_id = await runtime.create_session()
        op2, page = await runtime.create_page("local", view["sessionId"])
        issued += [op_id, view["sessionId"], page_id, op2, page["pageId"]]
    for value, kind in zip(issued, "ospop" * 2, strict=True):
        assert re.fullmatch(rf"{kind}[0-9a-z]{{4,}}", value), value
        assert len(value) <= 8
    assert len(set(issued)) == len(issued)
    sid = issued[1]
    # counters start at 1 and have no leading zero, so "s0zzz"/"p0zzz" are never issued
    assert await code_of(
        runtime.get_url(PageCall(principal="local", session_id="s0zzz", page_id=issued[2]))
    ) is (ErrorCode.SESSION_NOT_FOUND)
    assert (
        await code_of(runtime.get_url(PageCall(principal="local", session_id=sid, page_id="p0zzz")))
        is ErrorCode.PAGE_NOT_FOUND
    )
    # the old uuid form is simply unknown too
    old = "session_00000000-0000-4000-8000-000000000000"
    assert await code_of(
        runtime.get_url(PageCall(principal="local", session_id=old, page_id=issued[2]))
    ) is (ErrorCode.SESSION_NOT_FOUND)


async def test_session_limit_and_tombstones(rig) -> None:
    runtime, _engine, _ = rig
    ids = [(await runtime.create_session())[1]["sessionId"] for _ in range(3)]
    assert await code_of(runtime.create_session()) is ErrorCode.LIMIT_EXCEEDED
    await runtime.close_session("local", ids[0])
    # closing freed a slot
    await runtime.create_session()
    # retention: at most max_sessions terminal records; older ones are pruned
    for sid in ids[1:]:
        await runtime.close_session("local", sid)
    extra = (await runtime.create_session())[1]["sessionId"]
    await runtime.close_session("local", extra)
    _, views = runtime.list_sessions("local")
    assert len([v for v in views if v["status"] == "closed"]) == 3
    with pytest.raises(BrowserMeshError) as info:
        runtime.get_session("local", ids[0])
    assert info.value.code is ErrorCode.SESSION_NOT_FOUND


async def test_close_is_idempotent_and_drains(rig) -> None:
    runtime, engine, _ = rig
    _, view, page_id = await runtime.create_session()
    sid = view["sessionId"]
    engine.gate = Gate()
    nav = asyncio.create_task(
        runtime.navigate(
            PageCall(principal="local", session_id=sid, page_id=page_id), "http://a.test/"
        )
    )
    await engine.gate.arrivals(1)
    closing = asyncio.gather(
        runtime.close_session("local", sid), runtime.close_session("local", sid)
    )
    await all_tasks_blocked()  # both closes wait for the running navigation
    assert not nav.done()
    engine.gate.open()
    closes = await closing
    assert (await nav)[1].url == "http://a.test/"  # accepted work drained before close
    assert all(v["status"] == "closed" for _, v in closes)
    assert (await runtime.close_session("local", sid))[1]["status"] == "closed"
    assert engine.contexts == []
    assert (
        await code_of(runtime.get_url(PageCall(principal="local", session_id=sid, page_id=page_id)))
        is ErrorCode.SESSION_CLOSED
    )
    assert await code_of(
        runtime.get_url(PageCall(principal="local", session_id="nope", page_id=page_id))
    ) is (ErrorCode.SESSION_NOT_FOUND)


async def test_new_work_after_close_requested_is_rejected(rig) -> None:
    runtime, engine, _ = rig
    _, view, page_id = await runtime.create_session()
    sid = view["sessionId"]
    engine.gate = Gate()
    nav = asyncio.create_task(
        runtime.navigate(
            PageCall(principal="local", session_id=sid, page_id=page_id), "http://a.test/"
        )
    )
    await engine.gate.arrivals(1)
    close = asyncio.create_task(runtime.close_session("local", sid))
    await all_tasks_blocked()  # the close is requested, draining the navigation
    assert (
        await code_of(runtime.get_url(PageCall(principal="local", session_id=sid, page_id=page_id)))
        is ErrorCode.SESSION_CLOSING
    )
    engine.gate.open()
    await nav
    await close


async def test_same_session_runs_in_acceptance_order(rig) -> None:
    runtime, _engine, _ = rig
    _, view, page_id = await runtime.create_session()
    sid = view["sessionId"]
    results = await asyncio.gather(
        runtime.navigate(
            PageCall(principal="local", session_id=sid, page_id=page_id), "http://one.test/"
        ),
        runtime.get_url(PageCall(principal="local", session_id=sid, page_id=page_id)),
        runtime.navigate(
            PageCall(principal="local", session_id=sid, page_id=page_id), "http://two.test/"
        ),
        runtime.get_url(PageCall(principal="local", session_id=sid, page_id=page_id)),
    )
    # navigate answers a Landing, get_url a string: compare where each left the page.
    assert [getattr(r[1], "url", r[1]) for r in results] == [
        "http://one.test/",
        "http://one.test/",
        "http://two.test/",
        "http://two.test/",
    ]


async def test_sessions_run_in_parallel(rig) -> None:
    runtime, engine, _ = rig
    a = await runtime.create_session()
    b = await runtime.create_session()
    engine.gate = Gate()
    tasks = [
        asyncio.create_task(
            runtime.navigate(
                PageCall(principal="local", session_id=v["sessionId"], page_id=p), "http://x.test/"
            )
        )
        for _, v, p in (a, b)
    ]
    await all_tasks_blocked()
    assert engine.gate.arrived == ["navigate", "navigate"]  # both inside at once: no global lock
    engine.gate.open()
    await asyncio.gather(*tasks)


async def test_deadline_expiring_in_queue_never_reaches_engine(rig) -> None:
    runtime, engine, _ = rig
    _, view, page_id = await runtime.create_session()
    sid = view["sessionId"]
    engine.gate = Gate()
    blocker = asyncio.create_task(
        runtime.navigate(
            PageCall(principal="local", session_id=sid, page_id=page_id, timeout_ms=2000),
            "http://a.test/",
        )
    )
    await engine.gate.arrivals(1)
    calls_before = len(engine.calls)
    code = await code_of(
        runtime.get_title(
            PageCall(principal="local", session_id=sid, page_id=page_id, timeout_ms=50)
        )
    )
    assert code is ErrorCode.OPERATION_TIMEOUT
    engine.gate.open()
    await blocker
    await all_tasks_blocked()  # had the expired call stayed queued, it would run now
    assert "title" not in engine.calls[calls_before:]
    # the queue keeps working
    assert (await runtime.get_title(PageCall(principal="local", session_id=sid, page_id=page_id)))[
        1
    ] == "Title of http://a.test/"


async def test_failure_does_not_poison_queue(rig) -> None:
    runtime, engine, _ = rig
    _, view, page_id = await runtime.create_session()
    sid = view["sessionId"]
    engine.fail_next_navigation = BrowserMeshError(ErrorCode.NAVIGATION_FAILED)
    assert (
        await code_of(
            runtime.navigate(
                PageCall(principal="local", session_id=sid, page_id=page_id), "http://a.test/"
            )
        )
        is ErrorCode.NAVIGATION_FAILED
    )
    assert (
        await runtime.navigate(
            PageCall(principal="local", session_id=sid, page_id=page_id), "http://b.test/"
        )
    )[1].url == ("http://b.test/")


async def test_cancelled_queued_call_is_skipped(rig) -> None:
    runtime, engine, _ = rig
    _, view, page_id = await runtime.create_session()
    sid = view["sessionId"]
    engine.gate = Gate()
    first = asyncio.create_task(
        runtime.navigate(
            PageCall(principal="local", session_id=sid, page_id=page_id), "http://a.test/"
        )
    )
    await engine.gate.arrivals(1)
    second = asyncio.create_task(
        runtime.navigate(
            PageCall(principal="local", session_id=sid, page_id=page_id), "http://b.test/"
        )
    )
    await all_tasks_blocked()  # the second navigation is queued
    second.cancel()
    third = asyncio.create_task(
        runtime.get_url(PageCall(principal="local", session_id=sid, page_id=page_id))
    )
    await all_tasks_blocked()
    engine.gate.open()
    await first
    assert (await third)[1] == "http://a.test/"  # the cancelled navigation never ran
    assert engine.calls.count("navigate") == 1


async def test_cancelled_running_call_keeps_its_slot(rig) -> None:
    runtime, engine, _ = rig
    _, view, page_id = await runtime.create_session()
    sid = view["sessionId"]
    engine.gate = Gate()
    first = asyncio.create_task(
        runtime.navigate(
            PageCall(principal="local", session_id=sid, page_id=page_id), "http://a.test/"
        )
    )
    await engine.gate.arrivals(1)
    first.cancel()
    follower = asyncio.create_task(
        runtime.get_url(PageCall(principal="local", session_id=sid, page_id=page_id))
    )
    await all_tasks_blocked()
    assert not follower.done()  # cannot overtake the still-running navigation
    engine.gate.open()
    assert (await follower)[1] == "http://a.test/"


async def test_page_limit_and_page_isolation(rig) -> None:
    runtime, _engine, _ = rig
    _, a, page_a = await runtime.create_session()
    _, _b, page_b = await runtime.create_session()
    await runtime.create_page("local", a["sessionId"])
    await runtime.create_page("local", a["sessionId"])
    assert await code_of(runtime.create_page("local", a["sessionId"])) is ErrorCode.LIMIT_EXCEEDED
    assert (
        await code_of(
            runtime.get_url(PageCall(principal="local", session_id=a["sessionId"], page_id=page_b))
        )
        is ErrorCode.PAGE_NOT_FOUND
    )
    await runtime.close_page("local", a["sessionId"], page_a)
    _, pages = await runtime.list_pages("local", a["sessionId"])
    assert len(pages) == 2 and pages[0]["isDefault"] is True
    assert (
        await code_of(runtime.close_page("local", a["sessionId"], page_a))
        is ErrorCode.PAGE_NOT_FOUND
    )


async def test_disconnect_fails_sessions_and_keeps_failure_code(rig) -> None:
    runtime, engine, records = rig
    _, view, page_id = await runtime.create_session()
    sid = view["sessionId"]
    engine.disconnect()
    _, got = runtime.get_session("local", sid)
    assert got["status"] == "failed" and got["failureCode"] == "BROWSER_DISCONNECTED"
    assert (
        await code_of(runtime.get_url(PageCall(principal="local", session_id=sid, page_id=page_id)))
        is ErrorCode.BROWSER_DISCONNECTED
    )
    _, closed = await runtime.close_session("local", sid)
    assert closed["status"] == "closed" and closed["failureCode"] == "BROWSER_DISCONNECTED"
    assert (await runtime.create_session())[1]["status"] == "ready"
    assert any(r["type"] == "browser.disconnected" for r in records)


async def test_failed_creation_leaves_tombstone(rig) -> None:
    runtime, engine, _ = rig
    engine.fail_next_context = BrowserMeshError(ErrorCode.BROWSER_ERROR)
    with pytest.raises(BrowserMeshError) as info:
        await runtime.create_session()
    assert info.value.code is ErrorCode.BROWSER_ERROR and info.value.operation_id
    _, views = runtime.list_sessions("local")
    assert views[-1]["status"] == "failed" and views[-1]["failureCode"] == "BROWSER_ERROR"
    assert runtime.counts() == (0, 1)


async def test_principals_do_not_see_each_other(rig) -> None:
    runtime, _engine, _ = rig
    _, view, _ = await runtime.create_session("alice")
    assert runtime.list_sessions("bob")[1] == []
    with pytest.raises(BrowserMeshError) as info:
        runtime.get_session("bob", view["sessionId"])
    assert info.value.code is ErrorCode.SESSION_NOT_FOUND


async def test_shutdown_closes_everything_and_rejects_new_work(rig) -> None:
    runtime, engine, records = rig
    for _ in range(3):
        await runtime.create_session()
    await asyncio.gather(runtime.shutdown(), runtime.shutdown())
    assert engine.contexts == []
    with pytest.raises(BrowserMeshError) as info:
        runtime.list_sessions("local")
    assert info.value.code is ErrorCode.RUNTIME_SHUTTING_DOWN
    assert runtime.info()["activeSessions"] == 0
    assert sum(1 for r in records if r["type"] == "session.closed") == 3


async def test_timeout_and_url_validation(rig) -> None:
    runtime, _engine, _ = rig
    _, view, page_id = await runtime.create_session()
    sid = view["sessionId"]
    for bad in (0, 300_001, "5", True):
        assert await code_of(
            runtime.get_url(
                PageCall(principal="local", session_id=sid, page_id=page_id, timeout_ms=bad)
            )
        ) is (ErrorCode.INVALID_ARGUMENT)
    for url in ("file:///etc/passwd", "javascript:alert(1)", "/relative", "chrome://version"):
        assert await code_of(
            runtime.navigate(PageCall(principal="local", session_id=sid, page_id=page_id), url)
        ) is (ErrorCode.INVALID_ARGUMENT)


async def test_close_aborts_a_job_that_overruns_its_deadline(
    rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A job that never honours its deadline (a page that never yields) cannot hold the close."""
    import browsermesh.runtime.lifecycle as runtime_module

    monkeypatch.setattr(runtime_module, "CLOSE_OVERRUN_S", 0.2)
    runtime, engine, records = rig
    _, view, page_id = await runtime.create_session()
    sid = view["sessionId"]
    engine.gate = Gate()  # navigate never returns
    stuck = asyncio.create_task(
        runtime.navigate(
            PageCall(principal="local", session_id=sid, page_id=page_id, timeout_ms=100),
            "http://a.test/",
        )
    )
    await engine.gate.arrivals(1)
    started = time.monotonic()
    _, closed = await asyncio.wait_for(runtime.close_session("local", sid), timeout=5)
    assert closed["status"] == "closed"
    assert time.monotonic() - started < 0.1 + 0.2 + 1.0
    # The call was cut short by the client's own close: the session is closed, the server is not.
    assert await code_of(stuck) == ErrorCode.SESSION_CLOSED
    assert any(r["type"] == "session.drain_aborted" for r in records)


async def test_shutdown_grace_then_in_flight_work_is_cancelled(tmp_path: object) -> None:
    engine = FakeEngine()
    config = default_config(timeout_ms=60_000, shutdown_grace_ms=100, data_dir=tmp_path)
    runtime = Runtime(config, engine, EventLog("silent"))
    _, view, page_id = await runtime.create_session()
    engine.gate = Gate()
    in_flight = asyncio.create_task(
        runtime.navigate(
            PageCall(
                principal="local", session_id=view["sessionId"], page_id=page_id, timeout_ms=60_000
            ),
            "http://a.test/",
        )
    )
    await engine.gate.arrivals(1)
    started = time.monotonic()
    await asyncio.wait_for(runtime.shutdown(), timeout=5)
    assert time.monotonic() - started < 1.0  # the grace, not the call's 60 s budget
    assert await code_of(in_flight) == ErrorCode.RUNTIME_SHUTTING_DOWN


async def test_shutdown_lets_work_finish_within_the_grace(tmp_path: object) -> None:
    engine = FakeEngine()
    config = default_config(shutdown_grace_ms=2_000, data_dir=tmp_path)
    runtime = Runtime(config, engine, EventLog("silent"))
    _, view, page_id = await runtime.create_session()
    engine.gate = Gate()
    in_flight = asyncio.create_task(
        runtime.navigate(
            PageCall(principal="local", session_id=view["sessionId"], page_id=page_id),
            "http://a.test/",
        )
    )
    await engine.gate.arrivals(1)
    shutdown = asyncio.create_task(runtime.shutdown())
    await all_tasks_blocked()  # the shutdown waits for the call within its grace
    assert not in_flight.done()
    engine.gate.open()
    await shutdown
    assert (await in_flight)[1].url == "http://a.test/"


async def test_leaving_the_runtime_closes_sessions_and_awaits_its_tasks(tmp_path: object) -> None:
    """`async with Runtime(...)`: exit shuts down and leaves no task of the runtime running,
    not even a close that was still draining work when the block ended."""
    engine = FakeEngine()
    config = default_config(data_dir=tmp_path)
    async with Runtime(config, engine, EventLog("silent")) as runtime:
        _, view, page_id = await runtime.create_session()
        sid = view["sessionId"]
        engine.gate = Gate()
        work = asyncio.ensure_future(
            runtime.navigate(
                PageCall(principal="local", session_id=sid, page_id=page_id), "http://a.test/"
            )
        )
        closing = asyncio.ensure_future(runtime.close_session("local", sid))
        await all_tasks_blocked()
        assert len(runtime.tasks) >= 1  # the bounded close is running, owned by the runtime
        engine.gate.open()  # the navigation may end now; the close still drains it
    assert len(runtime.tasks) == 0
    assert runtime.shutting_down
    assert runtime.sessions_snapshot()[sid].status == "closed"
    assert (await work)[1].url == "http://a.test/"
    await closing
