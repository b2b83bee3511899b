"""A page whose main thread never yields must not wedge its session, close or shutdown (issue 12).

`while (true) {}` in the page: every call on it answers within its budget (OPERATION_TIMEOUT),
session close answers within a bounded time, and SIGTERM, SIGINT or stdin close exit within the
shutdown grace plus bounded clean-up, leaving no Chromium behind. The same holds for a long
`browser_wait` on a healthy page (SIGTERM does not wait for the call's whole budget).
"""

from __future__ import annotations

import json
import signal
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from browsermesh.factory import create_runtime
from browsermesh.log import EventLog
from browsermesh.model.action_table import table_refs
from browsermesh.runtime.runtime import Runtime
from tests.fixtures.site import FixtureSite
from tests.stdio_peer import StdioPeer
from tests.support.clients import ToolClient, tool_client
from tests.support.procs import browser_main_pids
from tests.support.runtimes import real_config
from tests.support.servers import (
    assert_no_chromium_left,
    chromium_pids_with_marker,
    spawn_stdio_server,
)

pytestmark = pytest.mark.anyio

BUSY = "while (true) {}"
# What a loaded CI machine may add to a budget before the answer arrives.
MARGIN_S = 3.0
SESSION_BUDGET_MS = 5_000


@pytest.fixture
async def busy_runtime(tmp_path: Path) -> AsyncIterator[Runtime]:
    """Session-level calls (create, state save, close) get a 5 s default budget here."""
    rt = create_runtime(real_config(tmp_path, timeout_ms=SESSION_BUDGET_MS), EventLog("silent"))
    yield rt
    with anyio.fail_after(20):
        await rt.shutdown()


async def _busy_page(c: ToolClient, site: FixtureSite) -> tuple[dict[str, str], str]:
    """A session on /interactions with a fresh ref, then a page that never yields again."""
    created = await c.ok("browser_session_create", {})
    addr = {
        "sessionId": created["session"]["sessionId"],
        "pageId": created["initialPage"]["pageId"],
    }
    await c.ok("browser_navigate", {**addr, "url": site.url("/interactions"), "timeoutMs": 15_000})
    snap = await c.ok("browser_snapshot", {**addr, "format": "actions", "timeoutMs": 15_000})
    ref = next(r["ref"] for r in table_refs(snap["snapshot"]) if r["role"] == "button")
    error = await c.err("browser_evaluate", {**addr, "expression": BUSY, "timeoutMs": 1_000})
    assert error["code"] == "OPERATION_TIMEOUT"
    return addr, ref


async def _timed_error(c: ToolClient, name: str, args: dict[str, Any]) -> tuple[str, float]:
    started = time.monotonic()
    with anyio.fail_after(30):
        error = await c.err(name, args)
    return error["code"], time.monotonic() - started


async def test_calls_on_a_busy_page_answer_within_their_budget(
    busy_runtime: Runtime, site: FixtureSite
) -> None:
    async with tool_client(busy_runtime, mode="auto") as c:
        addr, ref = await _busy_page(c, site)
        measured = {
            "ref click": await _timed_error(
                c, "browser_click", {**addr, "ref": ref, "timeoutMs": 1_000}
            ),
            "state save": await _timed_error(
                c, "browser_state_save", {"sessionId": addr["sessionId"], "stateId": "busy"}
            ),
            "title": await _timed_error(c, "browser_get_title", {**addr, "timeoutMs": 1_000}),
            "snapshot": await _timed_error(c, "browser_snapshot", {**addr, "timeoutMs": 1_000}),
        }
        for name, (code, seconds) in measured.items():
            assert code == "OPERATION_TIMEOUT", (name, code)
            budget_s = SESSION_BUDGET_MS / 1000 if name == "state save" else 1.0
            assert seconds < budget_s + MARGIN_S, (name, seconds)
        started = time.monotonic()
        with anyio.fail_after(30):
            closed = await c.ok("browser_session_close", {"sessionId": addr["sessionId"]})
        close_s = time.monotonic() - started
        assert closed["session"]["status"] == "closed"
        assert close_s < 5.0 + MARGIN_S, close_s
        # The runtime still works: a new session on the same browser.
        fresh = await c.ok("browser_session_create", {})
        assert fresh["session"]["status"] == "ready"
    print(json.dumps({k: round(v[1], 2) for k, v in measured.items()} | {"close": close_s}))


async def test_shutdown_with_a_busy_page_is_bounded_and_leaves_no_chromium(
    tmp_path: Path, site: FixtureSite
) -> None:
    runtime = create_runtime(real_config(tmp_path, shutdown_grace_ms=500), EventLog("silent"))
    async with tool_client(runtime, mode="auto") as c:
        await _busy_page(c, site)
        assert browser_main_pids()
        started = time.monotonic()
        with anyio.fail_after(30):
            await runtime.shutdown()
        elapsed = time.monotonic() - started
    assert elapsed < 0.5 + 10, elapsed
    assert not browser_main_pids()


def _stop_server_with_busy_page(tmp_path: Path, site: FixtureSite, how: str) -> float:
    marker = f"bm-busy-{uuid.uuid4()}"
    proc = spawn_stdio_server(tmp_path, marker, {"BROWSERMESH_SHUTDOWN_GRACE_MS": "1000"})
    try:
        peer = StdioPeer(proc)
        peer.initialize()
        created = peer.call("browser_session_create", {})
        addr = {
            "sessionId": created["session"]["sessionId"],
            "pageId": created["initialPage"]["pageId"],
        }
        peer.call("browser_navigate", {**addr, "url": site.url("/interactions")})
        busy = peer.request(
            "tools/call",
            {
                "name": "browser_evaluate",
                "arguments": {**addr, "expression": BUSY, "timeoutMs": 1_000},
            },
        )
        assert busy["result"]["isError"]
        # In flight when the signal arrives: a call with a long budget, and a state save
        # queued behind it.
        peer.start_call(
            "browser_wait",
            {
                **addr,
                "condition": {"kind": "text", "text": "never", "state": "present"},
                "timeoutMs": 60_000,
            },
        )
        peer.wait_log(
            lambda r: r.get("type") == "operation.started" and r.get("tool") == "browser_wait"
        )
        peer.start_call("browser_state_save", {"sessionId": addr["sessionId"], "stateId": "x"})
        peer.wait_log(
            lambda r: r.get("type") == "operation.started" and r.get("tool") == "browser_state_save"
        )
        assert chromium_pids_with_marker(marker)
        started = time.monotonic()
        if how == "stdin":
            assert proc.stdin
            proc.stdin.close()
        else:
            proc.send_signal(signal.SIGTERM if how == "sigterm" else signal.SIGINT)
        code = proc.wait(timeout=60)
        elapsed = time.monotonic() - started
        stderr = peer.rest_of_stderr()
        assert code == 0, stderr[-2000:]
        assert "Traceback" not in stderr
        assert_no_chromium_left(marker, 10)
        return elapsed
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=5)


@pytest.mark.parametrize("how", ["sigterm", "sigint", "stdin"])
def test_server_exit_with_a_busy_page_is_bounded(
    tmp_path: Path, site: FixtureSite, how: str
) -> None:
    elapsed = _stop_server_with_busy_page(tmp_path, site, how)
    print(json.dumps({"exitSeconds": round(elapsed, 2), "how": how}))
    # 1 s grace, then cancel, close (bounded) and stop Chromium (bounded, then killed).
    assert elapsed < 1.0 + 12, elapsed
