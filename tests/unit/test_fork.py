"""Forks and batches (issue 19 #4) on the fake engine: argument checks and their order, source
states, capacity, the copy's queue order and bounds, all-or-nothing batches, result shape."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp import Client

from browsermesh.config import default_config
from browsermesh.errors import BrowserMeshError, ErrorCode, error_payload
from browsermesh.log import EventLog
from browsermesh.mcp.server import create_server
from browsermesh.runtime.calls import PageCall
from browsermesh.runtime.fork import validate_count
from browsermesh.runtime.runtime import LOCAL_PRINCIPAL, Runtime
from browsermesh.runtime.watchers import SessionChange
from tests.fakes import FakeEngine, Gate
from tests.support.clients import ToolClient
from tests.support.loop import all_tasks_blocked

pytestmark = pytest.mark.anyio
P = LOCAL_PRINCIPAL


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def rig(tmp_path: object) -> AsyncIterator[tuple[Runtime, FakeEngine, list[dict[str, Any]]]]:
    engine = FakeEngine()
    log = EventLog("silent")
    records: list[dict[str, Any]] = []
    log.sinks.append(records.append)
    config = default_config(timeout_ms=2000, max_sessions=6, data_dir=tmp_path)
    runtime = Runtime(config, engine, log)
    yield runtime, engine, records
    await runtime.shutdown()


async def failure(coro: Any) -> BrowserMeshError:
    with pytest.raises(BrowserMeshError) as info:
        await coro
    return info.value


async def source_of(runtime: Runtime, **labels: Any) -> str:
    _, view, _ = await runtime.create_session(P, **labels)
    return str(view["sessionId"])


def test_count_bounds() -> None:
    assert validate_count(None) == 1
    assert validate_count(1) == 1 and validate_count(10) == 10
    for bad, rule in ((0, "at least 1"), (11, "at most 10"), (True, "integer"), ("2", "integer")):
        with pytest.raises(BrowserMeshError) as info:
            validate_count(bad)
        err = info.value
        assert err.code is ErrorCode.INVALID_ARGUMENT
        assert err.details == {"field": "count", "rule": rule}, bad
    with pytest.raises(BrowserMeshError) as info:
        validate_count(11)
    assert error_payload(info.value)["error"]["message"].endswith("Bound: count <= 10.")


async def test_checks_run_in_order_before_anything_is_allocated(rig: Any) -> None:
    runtime, engine, _ = rig
    src = await source_of(runtime)
    calls = list(engine.calls)
    cases: list[tuple[dict[str, Any], str]] = [
        ({"name": "", "count": 0, "from_session_id": "s0nope"}, "name"),
        ({"context_settings": {"device": "nope"}, "count": 0}, "contextSettings.device"),
        ({"count": 0, "from_session_id": "s0nope"}, "count"),
        ({"from_session_id": src, "state_id": "x"}, "fromSessionId"),
    ]
    for kwargs, field in cases:
        err = await failure(runtime.create_sessions(P, **kwargs))
        assert err.code is ErrorCode.INVALID_ARGUMENT and err.details["field"] == field, kwargs
    unknown = await failure(runtime.create_sessions(P, from_session_id="s0nope", count=2))
    assert unknown.code is ErrorCode.SESSION_NOT_FOUND
    theirs = await failure(runtime.create_sessions("mallory", from_session_id=src))
    assert theirs.code is ErrorCode.SESSION_NOT_FOUND
    assert error_payload(theirs) == error_payload(unknown)  # indistinguishable
    over = await failure(runtime.create_sessions(P, from_session_id=src, count=6))
    assert over.code is ErrorCode.LIMIT_EXCEEDED
    assert "Bound: sessions <= 6 (BROWSERMESH_MAX_SESSIONS)." in over.message
    assert engine.calls == calls  # no copy, no context
    assert [v["sessionId"] for v in runtime.list_sessions(P)[1]] == [src]


async def test_per_principal_capacity_counts_the_whole_batch(tmp_path: object) -> None:
    config = default_config(max_sessions=20, max_sessions_per_principal=3, data_dir=tmp_path)
    runtime = Runtime(config, FakeEngine())
    try:
        src = await source_of(runtime)
        err = await failure(runtime.create_sessions(P, from_session_id=src, count=3))
        assert err.code is ErrorCode.LIMIT_EXCEEDED
        assert "BROWSERMESH_MAX_SESSIONS_PER_PRINCIPAL" in err.message
        _, made = await runtime.create_sessions(P, from_session_id=src, count=2)
        assert len(made) == 2
    finally:
        await runtime.shutdown()


async def test_source_states(rig: Any) -> None:
    runtime, engine, _ = rig
    closed = await source_of(runtime)
    await runtime.close_session(P, closed)
    assert (await failure(runtime.create_sessions(P, from_session_id=closed))).code is (
        ErrorCode.SESSION_CLOSED
    )
    engine.fail_next_context = BrowserMeshError(ErrorCode.BROWSER_ERROR)
    await failure(runtime.create_session(P))
    failed = runtime.list_sessions(P)[1][-1]
    assert failed["status"] == "failed"
    err = await failure(runtime.create_sessions(P, from_session_id=failed["sessionId"]))
    assert err.code is ErrorCode.SESSION_NOT_READY
    gone = await source_of(runtime)
    engine.disconnect()
    err = await failure(runtime.create_sessions(P, from_session_id=gone))
    assert err.code is ErrorCode.BROWSER_DISCONNECTED


async def test_a_closing_source_is_refused(rig: Any) -> None:
    runtime, engine, _ = rig
    _, view, page = await runtime.create_session(P)
    src = view["sessionId"]
    engine.gate = Gate()
    busy = asyncio.create_task(
        runtime.navigate(PageCall(principal=P, session_id=src, page_id=page), "https://a.test/")
    )
    await engine.gate.arrivals(1)
    closing = asyncio.create_task(runtime.close_session(P, src))
    await all_tasks_blocked()
    assert not runtime.sessions_snapshot()[src].accepting  # the close has been requested
    err = await failure(runtime.create_sessions(P, from_session_id=src))
    assert err.code is ErrorCode.SESSION_CLOSING
    engine.gate.open()
    await busy
    await closing


async def test_the_copy_waits_in_the_source_queue_and_seeds_every_fork(rig: Any) -> None:
    runtime, engine, records = rig
    _, view, page = await runtime.create_session(P, name="src", metadata={"role": "buyer"})
    src = view["sessionId"]
    cookie = {"name": "sid", "value": "v", "domain": "a.test", "path": "/", "expires": -1}
    engine.fork_state = {"cookies": [cookie], "origins": []}
    engine.fork_session = {"https://a.test": {"tab": "1"}}
    engine.gate = Gate()
    nav = asyncio.create_task(
        runtime.navigate(PageCall(principal=P, session_id=src, page_id=page), "https://a.test/")
    )
    fork = asyncio.create_task(
        runtime.create_sessions(
            P, from_session_id=src, count=3, context_settings={"locale": "de-DE"}
        )
    )
    queue = runtime.sessions_snapshot()[src].queue
    await engine.gate.arrivals(1)
    await all_tasks_blocked()
    assert queue.pending == 2  # the navigation runs (gated) and the copy is queued behind it
    assert "fork_storage" not in engine.calls and "new_context" not in engine.calls[2:]
    engine.gate.open()
    await nav
    op_id, made = await fork
    assert engine.calls.index("fork_storage") > engine.calls.index("navigate")
    assert len(made) == 3 and len({v["sessionId"] for v, _ in made}) == 3
    for view_, page_id in made:
        assert view_["status"] == "ready" and page_id
        assert view_["forkedFromSessionId"] == src
        assert "name" not in view_ and view_["metadata"] == {}  # labels are not copied
        assert view_["contextSettings"] == {"locale": "de-DE"}
    seeded = engine.contexts[1:]
    assert [c.options.storage_state for c in seeded] == [engine.fork_state] * 3
    assert [c.options.session_storage for c in seeded] == [engine.fork_session] * 3
    assert all(c.options.settings == {"locale": "de-DE"} for c in seeded)
    # one call, one operationId: the copy (logged on the source) and every creation
    started = [r for r in records if r.get("message") == "operation.started"]
    ours = [r["sessionId"] for r in started if r.get("operationId") == op_id]
    assert ours[0] == src and sorted(ours[1:]) == sorted(v["sessionId"] for v, _ in made)


async def test_copy_bounds(tmp_path: object) -> None:
    config = default_config(max_state_bytes=1_024, max_state_origins=2, data_dir=tmp_path)
    engine = FakeEngine()
    runtime = Runtime(config, engine)
    try:
        src = await source_of(runtime)
        engine.fork_session = {"https://a.test": {"k": "v" * 2_000}}
        big = await failure(runtime.create_sessions(P, from_session_id=src))
        assert big.code is ErrorCode.LIMIT_EXCEEDED and "stateBytes <= 1024" in big.message
        assert big.operation_id  # the copy was accepted
        engine.fork_session = {}
        engine.fork_state = {
            "cookies": [],
            "origins": [{"origin": f"https://{n}.test", "localStorage": []} for n in "abc"],
        }
        many = await failure(runtime.create_sessions(P, from_session_id=src))
        assert many.code is ErrorCode.LIMIT_EXCEEDED and "stateOrigins <= 2" in many.message
        assert len(runtime.list_sessions(P)[1]) == 1  # nothing was allocated
    finally:
        await runtime.shutdown()


async def test_a_batch_is_all_or_nothing(rig: Any) -> None:
    runtime, engine, _ = rig
    src = await source_of(runtime)
    statuses: dict[str, set[str]] = {}

    class Watch:
        def session_changed(self, change: SessionChange) -> None:
            rec = runtime.sessions_snapshot().get(change.session_id)
            if rec is not None:
                statuses.setdefault(change.session_id, set()).add(rec.status)

        def watches_pages(self, principal: str) -> bool:
            return False

    runtime.watchers.append(Watch())
    engine.fail_next_context = BrowserMeshError(ErrorCode.BROWSER_ERROR)
    err = await failure(runtime.create_sessions(P, from_session_id=src, count=4))
    assert err.code is ErrorCode.BROWSER_ERROR and err.operation_id
    batch = [v for v in runtime.list_sessions(P)[1] if v["sessionId"] != src]
    assert len(batch) == 4
    assert all(v["status"] == "failed" and v["failureCode"] == "BROWSER_ERROR" for v in batch)
    assert all("ready" not in statuses[v["sessionId"]] for v in batch)  # never ready
    assert len(engine.contexts) == 1  # every context of the batch was closed
    _, made = await runtime.create_sessions(P, count=2)  # capacity was given back
    assert [v["status"] for v, _ in made] == ["ready", "ready"]
    assert all("forkedFromSessionId" not in v for v, _ in made)


@pytest.fixture
async def tools() -> AsyncIterator[ToolClient]:
    runtime = Runtime(default_config(max_sessions=20), FakeEngine())
    async with Client(create_server(runtime)) as client:
        yield ToolClient(client, {t.name: t for t in (await client.list_tools()).tools})
    await runtime.shutdown()


async def test_result_shapes(tools: ToolClient) -> None:
    one = await tools.ok("browser_session_create", {"count": 1})
    assert set(one) == {"operationId", "session", "initialPage"}
    src = one["session"]["sessionId"]
    fork = await tools.ok("browser_session_create", {"fromSessionId": src})
    assert "sessions" not in fork and fork["session"]["forkedFromSessionId"] == src
    several = await tools.ok("browser_session_create", {"fromSessionId": src, "count": 3})
    assert set(several) == {"operationId", "session", "initialPage", "sessions"}
    assert several["sessions"][0] == {
        "session": several["session"],
        "initialPage": several["initialPage"],
    }
    for item in several["sessions"]:
        assert item["initialPage"]["sessionId"] == item["session"]["sessionId"]
    schema_error = await tools.raw("browser_session_create", {"count": "3"})
    assert schema_error.is_error
    invalid = json.loads(schema_error.content[0].text)["error"]
    assert invalid["code"] == "INVALID_ARGUMENT"
    assert invalid["details"] == {"field": "count", "rule": "integer"}
    err = await tools.err("browser_session_create", {"count": 11})
    assert err["details"] == {"field": "count", "rule": "at most 10"}
    assert "11" not in json.dumps({k: v for k, v in err.items() if k != "message"})
