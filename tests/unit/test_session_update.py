"""browser_session_update on the fake engine (issue 19): what may change, what is refused before
the call is accepted, ordering behind queued work, views and logs that never hold a header value
or a proxy credential."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from browsermesh.config import default_config
from browsermesh.errors import BrowserMeshError, ErrorCode
from browsermesh.log import EventLog
from browsermesh.runtime.calls import PageCall
from browsermesh.runtime.runtime import Runtime
from tests.fakes import FakeEngine, Gate
from tests.support.loop import all_tasks_blocked

pytestmark = pytest.mark.anyio

SECRET = "hdr-canary-5e1d"
PASSWORD = "pw-canary-77aa"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def rig(tmp_path: object) -> AsyncIterator[tuple[Runtime, FakeEngine, list[Any]]]:
    engine = FakeEngine()
    log = EventLog("silent")
    records: list[Any] = []
    log.sinks.append(records.append)
    runtime = Runtime(default_config(timeout_ms=1000, data_dir=tmp_path), engine, log)
    yield runtime, engine, records
    await runtime.shutdown()


async def refusal(coro: Any) -> BrowserMeshError:
    with pytest.raises(BrowserMeshError) as info:
        await coro
    return info.value


async def test_update_replaces_given_fields_and_the_view_hides_values(rig: Any) -> None:
    runtime, engine, records = rig
    _, view, _ = await runtime.create_session(
        context_settings={
            "network": {"allowOrigins": ["https://shop.test"], "extraHeaders": {"X-A": SECRET}},
            "proxy": {"server": "http://p.test:3128", "username": "u", "password": PASSWORD},
        }
    )
    sid = view["sessionId"]
    assert view["contextSettings"]["network"]["extraHeaders"] == {"X-A": "[redacted]"}
    assert view["contextSettings"]["proxy"]["password"] == "[redacted]"
    op_id, updated = await runtime.update_session("local", sid, {"network": {"offline": True}})
    assert updated["contextSettings"]["network"] == {
        "allowOrigins": ["https://shop.test"],
        "offline": True,
        "extraHeaders": {"X-A": "[redacted]"},
    }
    context = engine.contexts[0]
    assert context.networks[-1] == {
        "allowOrigins": ["https://shop.test"],
        "offline": True,
        "extraHeaders": {"X-A": SECRET},  # the engine gets the real value
    }
    _, cleared = await runtime.update_session(
        "local", sid, {"network": {"allowOrigins": [], "extraHeaders": {}}}
    )
    assert cleared["contextSettings"]["network"] == {"offline": True}
    _, got = runtime.get_session("local", sid)
    assert got["contextSettings"] == cleared["contextSettings"]
    _, listed = runtime.list_sessions("local")
    blob = json.dumps([view, updated, cleared, got, listed, records], default=str)
    assert SECRET not in blob and PASSWORD not in blob
    assert any(
        r.get("operationId") == op_id and r["type"] == "operation.completed" for r in records
    )


async def test_what_is_refused_before_the_call_is_accepted(rig: Any) -> None:
    runtime, engine, _ = rig
    _, plain, _ = await runtime.create_session()
    _, netted, _ = await runtime.create_session(context_settings={"network": {}})
    cases = [
        (plain["sessionId"], {"network": {"offline": True}}, "network", "only for a session"),
        (netted["sessionId"], {"proxy": {"server": "http://p.test:1"}}, "proxy", "fixed when"),
        (netted["sessionId"], {"network": {"offline": True}, "proxy": {}}, "proxy", "fixed when"),
        (netted["sessionId"], {}, "network", "required"),
        (netted["sessionId"], {"network": {"allowOrigins": ["x"]}}, "network.allowOrigins[0]",
         "an absolute http(s) origin"),
        (netted["sessionId"], {"network": {"extraHeaders": {"Cookie": "a=b"}}},
         "network.extraHeaders[0].name", "not Host, Cookie"),
    ]  # fmt: skip
    for sid, changes, field, rule in cases:
        error = await refusal(runtime.update_session("local", sid, changes))
        assert error.code is ErrorCode.INVALID_ARGUMENT
        assert error.details["field"] == field
        assert error.details["rule"].startswith(rule), error.details["rule"]
        assert error.operation_id is None  # never accepted
    assert "update_network" not in engine.calls
    missing = await refusal(runtime.update_session("local", "s_nope", {"network": {}}))
    assert missing.code is ErrorCode.SESSION_NOT_FOUND
    other = await refusal(runtime.update_session("bob", netted["sessionId"], {"network": {}}))
    assert other.code is ErrorCode.SESSION_NOT_FOUND
    await runtime.close_session("local", netted["sessionId"])
    closed = await refusal(runtime.update_session("local", netted["sessionId"], {"network": {}}))
    assert closed.code is ErrorCode.SESSION_CLOSED


async def test_queued_updates_merge_in_order(rig: Any) -> None:
    """Each update merges into what the one before it left, not into what was there when it
    was accepted: two queued updates of different fields both stay."""
    runtime, engine, _ = rig
    _, view, page = await runtime.create_session(context_settings={"network": {}})
    sid = view["sessionId"]
    engine.gate = Gate()
    queue = runtime.sessions_snapshot()[sid].queue
    navigation = asyncio.create_task(
        runtime.navigate(
            PageCall(principal="local", session_id=sid, page_id=page), "http://a.test/"
        )
    )
    await engine.gate.arrivals(1)
    first = asyncio.create_task(
        runtime.update_session("local", sid, {"network": {"blockOrigins": ["https://ads.test"]}})
    )
    second = asyncio.create_task(
        runtime.update_session("local", sid, {"network": {"offline": True}})
    )
    await all_tasks_blocked()
    assert queue.pending == 3
    assert "update_network" not in engine.calls  # both wait behind the navigation
    engine.gate.open()
    await navigation
    await first
    _, last = await second
    assert last["contextSettings"]["network"] == {
        "blockOrigins": ["https://ads.test"],
        "offline": True,
    }
    assert [n.get("offline", False) for n in engine.contexts[0].networks] == [False, True]
