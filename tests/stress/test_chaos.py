"""Chaos (reference §14.4, §15): the browser dies mid-flight; the stdio server gets SIGTERM.

Every in-flight call must come back promptly with a classified error, nothing may hang, and the
runtime must serve fresh sessions afterwards. A SIGTERM'd server exits 0 and leaves no Chromium.
"""

from __future__ import annotations

import json
import os
import signal
import time
import uuid
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import pytest

from browsermesh.factory import create_runtime
from browsermesh.log import EventLog
from browsermesh.runtime.runtime import Runtime
from tests.fixtures.site import FixtureSite
from tests.stdio_peer import StdioPeer
from tests.support.clients import OPERATION_ID, ToolClient, tool_client
from tests.support.eventually import eventually
from tests.support.procs import browser_main_pids
from tests.support.runtimes import real_config
from tests.support.servers import (
    assert_no_chromium_left,
    chromium_pids_with_marker,
    spawn_stdio_server,
)

pytestmark = pytest.mark.anyio

# Generous per-call budgets: a prompt answer must come from disconnect handling, never from the
# operation's own deadline expiring.
CALL_TIMEOUT_MS = 20_000
PROMPT_S = 10.0
DISCONNECT_CODES = {"BROWSER_DISCONNECTED", "OPERATION_TIMEOUT", "NAVIGATION_FAILED"}


async def _inflight_calls(c: ToolClient, site: FixtureSite) -> list[tuple[str, dict[str, Any]]]:
    """Four sessions, each about to run a long operation (two slow navigations, a text wait that
    never succeeds, a locator wait that never succeeds)."""
    calls: list[tuple[str, dict[str, Any]]] = []
    for i in range(4):
        s, p = await c.session(name=f"chaos-{i}")
        addr = {"sessionId": s, "pageId": p, "timeoutMs": CALL_TIMEOUT_MS}
        if i < 2:
            calls.append(("browser_navigate", {**addr, "url": site.url(f"/slow?ms=3000&v={i}")}))
            continue
        await c.ok("browser_navigate", {"sessionId": s, "pageId": p, "url": site.url("/")})
        if i == 2:
            condition = {"kind": "text", "text": "this text never appears", "state": "present"}
        else:
            condition = {
                "kind": "locator",
                "locator": {"strategy": "testId", "value": "never-there"},
                "state": "visible",
            }
        calls.append(("browser_wait", {**addr, "condition": condition}))
    return calls


def running(runtime: Runtime, calls: list[tuple[str, dict[str, Any]]]) -> bool:
    """Every call has been accepted and runs: one per session, each session's queue is busy."""
    sessions = runtime.sessions_snapshot()
    return all(sessions[args["sessionId"]].queue.busy for _name, args in calls)


async def test_sigkill_browser_mid_flight_returns_promptly_and_recovers(
    tmp_path: Path, site: FixtureSite
) -> None:
    runtime = create_runtime(real_config(tmp_path), EventLog("silent"))
    try:
        async with tool_client(runtime, mode="auto") as c:
            calls = await _inflight_calls(c, site)
            pids = browser_main_pids()
            assert len(pids) == 1, pids

            outcomes: dict[int, tuple[float, Any]] = {}
            killed_at: list[float] = []

            async def run(i: int, name: str, args: dict[str, Any]) -> None:
                result = await c.raw(name, args)
                outcomes[i] = (time.monotonic(), result)

            with anyio.fail_after(30):
                async with anyio.create_task_group() as tg:
                    for i, (name, args) in enumerate(calls):
                        tg.start_soon(run, i, name, args)
                    # Let every call reach the browser (navigations are waiting on the server,
                    # the waits are polling), then kill Chromium outright.
                    await eventually(partial(running, runtime, calls), 10, "every call runs")
                    assert not outcomes, "a long operation finished before the kill"
                    killed_at.append(time.monotonic())
                    os.kill(pids[0], signal.SIGKILL)

            codes: dict[str, str] = {}
            for i, (name, _args) in enumerate(calls):
                finished, result = outcomes[i]
                elapsed = finished - killed_at[0]
                assert result.is_error, (name, result.content)
                payload = json.loads(result.content[0].text)
                code = payload["error"]["code"]
                codes[f"{i}:{name}"] = code
                assert elapsed < PROMPT_S, (name, elapsed)
                assert code in DISCONNECT_CODES, (name, payload)
                assert OPERATION_ID.fullmatch(payload["error"].get("operationId", ""))
            print(json.dumps({"inflightCodes": codes}))

            # Every affected session is failed with the disconnect code, and stays answerable.
            for _name, args in calls:
                sid = args["sessionId"]
                view = (await c.ok("browser_session_get", {"sessionId": sid}))["session"]
                assert view["status"] == "failed", view
                assert view["failureCode"] == "BROWSER_DISCONNECTED"
                err = await c.err("browser_get_url", {"sessionId": sid, "pageId": args["pageId"]})
                assert err["code"] == "BROWSER_DISCONNECTED"
            info = await c.ok("browser_runtime_info")
            assert info["browserLaunchState"] == "failed" and info["failedSessions"] == 4

            # A fresh session relaunches Chromium and works end to end.
            with anyio.fail_after(30):
                s, p = await c.session(name="after-crash")
                addr = {"sessionId": s, "pageId": p}
                await c.ok("browser_navigate", {**addr, "url": site.url("/?value=phoenix")})
                await c.ok("browser_navigate", {**addr, "url": site.url("/whoami")})
                title = (await c.ok("browser_get_title", addr))["title"]
                assert title == "ls:phoenix|cookie:identity=phoenix"
                info = await c.ok("browser_runtime_info")
                assert info["browserLaunchState"] == "ready"
                # Failed tombstones close at once.
                for _name, args in calls:
                    closed = await c.ok("browser_session_close", {"sessionId": args["sessionId"]})
                    assert closed["session"]["status"] == "closed"
                await c.ok("browser_session_close", {"sessionId": s})
            assert len(browser_main_pids()) == 1
    finally:
        with anyio.fail_after(30):
            await runtime.shutdown()
    assert browser_main_pids() == []


async def test_inflight_calls_on_a_killed_browser_report_browser_disconnected(
    tmp_path: Path, site: FixtureSite
) -> None:
    """Reference §14.4: the operations of sessions on a browser that went away return
    BROWSER_DISCONNECTED (the runtime re-maps engine failures of disconnected sessions). Repeated
    a few times because the outcome depends on which of Playwright's signals arrives first."""
    runtime = create_runtime(real_config(tmp_path), EventLog("silent"))
    seen: list[str] = []
    try:
        async with tool_client(runtime, mode="auto") as c:
            for _round in range(2):
                calls = await _inflight_calls(c, site)
                pids = browser_main_pids()
                assert len(pids) == 1, pids
                results: list[Any] = []

                async def run(name: str, args: dict[str, Any], sink: list[Any] = results) -> None:
                    sink.append((name, await c.raw(name, args)))

                with anyio.fail_after(30):
                    async with anyio.create_task_group() as tg:
                        for name, args in calls:
                            tg.start_soon(run, name, args)
                        await eventually(partial(running, runtime, calls), 10, "every call runs")
                        os.kill(pids[0], signal.SIGKILL)
                for name, result in results:
                    code = json.loads(result.content[0].text)["error"]["code"]
                    seen.append(f"{name}:{code}")
    finally:
        with anyio.fail_after(30):
            await runtime.shutdown()
    print(json.dumps({"inflightCodes": seen}))
    assert all(entry.endswith(":BROWSER_DISCONNECTED") for entry in seen), seen


async def test_drag_and_drop_on_a_blocked_page_times_out_within_its_budget(
    tmp_path: Path, site: FixtureSite
) -> None:
    """PRODUCT BUG (fails until fixed): a page whose main thread never yields.

    `browser_click` and `browser_hover` with `timeoutMs: 1000` answer OPERATION_TIMEOUT after
    ~1 s (reference §15.2: one deadline, every engine call gets only the remaining budget).
    `browser_drag_and_drop` never answers: `PlaywrightEngine.drag` awaits `probe.count()`
    without any timeout, the renderer never replies, and the call keeps the session queue, so a
    later `browser_session_close` (and `Runtime.shutdown`) waits forever too."""
    runtime = create_runtime(real_config(tmp_path), EventLog("silent"))
    body = {"strategy": "css", "value": "body"}
    busy = "setTimeout(() => { while (true) {} }, 50); 1"
    outcome: dict[str, Any] = {}
    try:
        async with tool_client(runtime, mode="auto") as c:
            for name, extra in (
                ("browser_click", {"locator": body}),
                ("browser_drag_and_drop", {"source": body, "target": body}),
            ):
                s, p = await c.session(name=name)
                addr = {"sessionId": s, "pageId": p}
                await c.ok("browser_navigate", {**addr, "url": site.url("/interactions")})
                await c.ok("browser_evaluate", {**addr, "expression": busy, "timeoutMs": 10_000})
                await anyio.sleep(0.3)  # the loop has started; the renderer is stuck
                started = time.monotonic()
                with anyio.move_on_after(15):
                    result = await c.raw(name, {**addr, **extra, "timeoutMs": 1000})
                    code = json.loads(result.content[0].text)["error"]["code"]
                    outcome[name] = (code, round(time.monotonic() - started, 1))
                outcome.setdefault(name, ("no answer after 15 s", 15.0))
    finally:
        try:
            with anyio.fail_after(10):
                await runtime.shutdown()
        except TimeoutError:
            # The stuck call holds its queue; killing Chromium releases it so nothing leaks.
            for pid in browser_main_pids():
                os.kill(pid, signal.SIGKILL)
            with anyio.fail_after(30):
                await runtime.shutdown()
    print(json.dumps({"blockedPage": outcome}))
    assert outcome["browser_click"][0] == "OPERATION_TIMEOUT", outcome
    assert outcome["browser_drag_and_drop"][0] == "OPERATION_TIMEOUT", outcome
    assert outcome["browser_drag_and_drop"][1] < 5, outcome


def test_sigterm_stdio_server_with_live_sessions(tmp_path: Path, site: FixtureSite) -> None:
    marker = f"bm-chaos-{uuid.uuid4()}"
    proc = spawn_stdio_server(tmp_path, marker)
    try:
        peer = StdioPeer(proc)
        init = peer.initialize()
        assert init["result"]["serverInfo"]["name"] == "browsermesh"
        call = peer.call
        sessions = []
        for i in range(3):
            created = call("browser_session_create", {"name": f"live-{i}"})
            sid, pid = created["session"]["sessionId"], created["initialPage"]["pageId"]
            call(
                "browser_navigate",
                {"sessionId": sid, "pageId": pid, "url": site.url(f"/?value=live{i}")},
            )
            sessions.append(sid)
        assert len(call("browser_session_list", {})["sessions"]) == 3
        assert chromium_pids_with_marker(marker)

        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=15)
        elapsed = time.monotonic() - started
        stderr = peer.rest_of_stderr()
        assert code == 0, stderr[-2000:]
        assert elapsed < 5, elapsed
        assert "Traceback" not in stderr
        records = [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]
        closed = {
            r.get("sessionId")
            for r in records
            if r.get("type") == "session.closed" and r.get("reason") == "shutdown"
        }
        assert closed == set(sessions), records[-10:]
        assert_no_chromium_left(marker, 10)
        print(json.dumps({"sigtermExitSeconds": round(elapsed, 2)}))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=5)
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
