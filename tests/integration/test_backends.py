"""Remote backends (reference §14.2, §14.3) on loopback: CDP attach to a Chromium started here,
and a pool of two Playwright browser servers started here.

Every process is started in its own process group with a unique marker in its environment, and
killed by id (group id, then any marked Chromium left over) when the test ends.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any

import anyio
import pytest

from browsermesh.log import EventLog
from browsermesh.runtime.runtime import Runtime
from tests.fixtures.site import FixtureSite
from tests.support.cdp import debuggable_chromium, devtools_port_of
from tests.support.clients import ToolClient, tool_client, whoami
from tests.support.eventually import eventually
from tests.support.ports import closed_port
from tests.support.runtimes import real_runtime
from tests.support.servers import chromium_pids_with_marker

pytestmark = pytest.mark.anyio

MARKER_VAR = "BROWSERMESH_TEST_BACKENDS_MARKER"


# ------------------------------------------------------------------------------ processes


class Processes:
    """Processes this test started: each leads its own process group."""

    def __init__(self) -> None:
        self.marker = f"bm-backends-{uuid.uuid4().hex}"
        self.procs: list[subprocess.Popen[bytes]] = []

    def spawn(self, cmd: list[str]) -> subprocess.Popen[bytes]:
        env = {**os.environ, MARKER_VAR: self.marker}
        proc = subprocess.Popen(
            cmd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        self.procs.append(proc)
        return proc

    @staticmethod
    def kill(proc: subprocess.Popen[bytes]) -> None:
        """Kill the process group `proc` leads (the run-server wrapper and its node driver)."""
        if proc.poll() is None or _group_alive(proc.pid):
            with suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)

    def marked_chromium(self) -> list[int]:
        """Every Chromium process (browser, zygotes, renderers) started under our marker."""
        return chromium_pids_with_marker(self.marker)

    def marked_browsers(self) -> list[int]:
        """Just the Chromium browser (main) processes."""
        found = []
        for pid in self.marked_chromium():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as fh:
                    cmd = fh.read()
            except OSError:
                continue
            if b"--type=" not in cmd and b"crashpad" not in cmd.split(b"\0")[0]:
                found.append(pid)
        return found

    def cleanup(self) -> None:
        for proc in self.procs:
            self.kill(proc)
        # Chromium launched by a browser server runs in its own group; it exits when its
        # server goes, but never leave one behind.
        with suppress(AssertionError):  # killed below if still there
            anyio.run(eventually, lambda: not self.marked_chromium(), 5)
        for pid in self.marked_chromium():
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


@pytest.fixture
def procs() -> Iterator[Processes]:
    p = Processes()
    try:
        yield p
    finally:
        p.cleanup()


def free_port() -> int:
    return closed_port()


async def wait_listening(port: int, proc: subprocess.Popen[bytes], seconds: float = 20) -> None:
    def listening() -> bool:
        assert proc.poll() is None, "the process exited before listening"
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return True
        except OSError:
            return False

    await eventually(listening, seconds, f"port {port} listening")


def start_cdp_chromium(procs: Processes, profile: Path) -> subprocess.Popen[bytes]:
    return procs.spawn(debuggable_chromium(profile))


async def devtools_port(profile: Path, proc: subprocess.Popen[bytes]) -> int:
    """The port Chromium chose (its profile's DevToolsActivePort file)."""

    def chosen() -> int | None:
        assert proc.poll() is None, "Chromium exited"
        return devtools_port_of(profile)

    return await eventually(chosen, 15, "DevToolsActivePort")


def start_server(procs: Processes, port: int) -> subprocess.Popen[bytes]:
    # --unsafe lets the client's launch options (executablePath, args) through: this machine
    # has no Playwright-managed browser, only the system Chromium.
    cmd = [sys.executable, "-m", "playwright", "run-server", "--port", str(port)]
    return procs.spawn([*cmd, "--host", "127.0.0.1", "--unsafe"])


def json_get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=5) as resp:
        return json.loads(resp.read())


def page_targets(port: int) -> list[dict[str, Any]]:
    """Page targets over plain HTTP (no CDP attach)."""
    return [t for t in json_get(f"http://127.0.0.1:{port}/json/list") if t["type"] == "page"]


# ------------------------------------------------------------------------------ MCP harness


@asynccontextmanager
async def runtime_for(tmp_path: Path, **overrides: Any) -> AsyncIterator[Runtime]:
    # A generous creation budget: a browser server launches Chromium inside `connect`.
    overrides.setdefault("timeout_ms", 15000)
    async with real_runtime(tmp_path, EventLog("silent"), **overrides) as rt:
        yield rt


async def wait_failed(tc: ToolClient, sid: str) -> dict[str, Any]:
    async def failed() -> dict[str, Any] | None:
        view: dict[str, Any] = (await tc.ok("browser_session_get", {"sessionId": sid}))["session"]
        return view if view["status"] == "failed" else None

    view = await eventually(failed, 10, "the session failed")
    assert view is not None
    return view


def placement(rt: Runtime, sid: str) -> str | None:
    return rt.sessions_snapshot()[sid].placement


# ------------------------------------------------------------------------------ CDP attach


async def test_cdp_attach_isolates_and_leaves_the_browser_alone(
    tmp_path: Path, procs: Processes, site: FixtureSite
) -> None:
    profile = tmp_path / "profile"
    chrome = start_cdp_chromium(procs, profile)
    port = await devtools_port(profile, chrome)
    await eventually(lambda: page_targets(port), 10, "a page target")
    (original,) = page_targets(port)
    assert original["url"] == "about:blank"

    endpoint = f"http://127.0.0.1:{port}"
    async with runtime_for(tmp_path, cdp_endpoint=endpoint) as rt, tool_client(rt) as tc:
        info = await tc.ok("browser_runtime_info")
        assert info["browserBackend"] == "cdp" and "sandbox" not in info
        assert "browserBinary" not in info  # only a local launch knows its binary
        assert info["browserLaunchState"] == "not_started" and "browserVersion" not in info
        assert info["endpoints"] == [
            {
                "endpoint": endpoint,
                "state": "not_connected",
                "activeSessions": 0,
            }
        ]

        a, page_a = await tc.session(name="a")
        b, page_b = await tc.session(name="b")
        assert await whoami(tc, site, a, page_a, "A") == "ls:A|cookie:identity=A"
        assert await whoami(tc, site, b, page_b, None) == "ls:|cookie:"

        info = await tc.ok("browser_runtime_info")
        assert info["browserLaunchState"] == "ready" and info["browserVersion"]
        (ep,) = info["endpoints"]
        assert ep["state"] == "connected" and ep["activeSessions"] == 2
        assert ep["browserVersion"] == info["browserVersion"]

        # The browser's own context and page are untouched (seen over a separate attach).
        from playwright.async_api import async_playwright

        async with async_playwright() as pw:
            probe = await pw.chromium.connect_over_cdp(endpoint, timeout=5000)
            try:
                # Playwright files other clients' pages under its default context, so ask
                # the browser which context each page target belongs to.
                cdp = await probe.new_browser_cdp_session()
                targets = (await cdp.send("Target.getTargets"))["targetInfos"]
            finally:
                await probe.close()
        pages = {t["targetId"]: t for t in targets if t["type"] == "page"}
        default_id = pages[original["id"]]["browserContextId"]
        in_default = [t for t in pages.values() if t["browserContextId"] == default_id]
        assert [(t["targetId"], t["url"]) for t in in_default] == [(original["id"], "about:blank")]
        ours = {t["browserContextId"] for t in pages.values()} - {default_id}
        assert len(pages) == 3 and len(ours) == 2  # one new context and page per session

        await tc.ok("browser_session_close", {"sessionId": a})
        info = await tc.ok("browser_runtime_info")
        assert info["endpoints"][0]["activeSessions"] == 1
        assert rt.engine.live_contexts() == 1  # type: ignore[attr-defined]

    # Shutdown closed our contexts, disconnected and left the remote Chromium running.
    assert chrome.poll() is None
    assert [t["id"] for t in page_targets(port)] == [original["id"]]
    assert json_get(f"http://127.0.0.1:{port}/json/version")["Browser"]

    # A ws:// endpoint works too; shutdown again leaves the browser alone.
    ws_url = json_get(f"http://127.0.0.1:{port}/json/version")["webSocketDebuggerUrl"]
    async with runtime_for(tmp_path, cdp_endpoint=ws_url) as rt, tool_client(rt) as tc:
        s, p = await tc.session()
        assert await whoami(tc, site, s, p, "W") == "ls:W|cookie:identity=W"
        info = await tc.ok("browser_runtime_info")
        assert info["endpoints"][0]["endpoint"].startswith("ws://127.0.0.1:")
    assert chrome.poll() is None
    assert [t["id"] for t in page_targets(port)] == [original["id"]]


async def test_cdp_attach_failure_is_a_connect_error(tmp_path: Path) -> None:
    endpoint = f"http://127.0.0.1:{closed_port()}"
    async with runtime_for(tmp_path, cdp_endpoint=endpoint) as rt, tool_client(rt) as tc:
        err = await tc.err("browser_session_create")
        assert err["code"] == "BROWSER_ERROR"
        assert err["message"] == "Could not connect to the configured browser endpoint."
        info = await tc.ok("browser_runtime_info")
        assert info["browserLaunchState"] == "failed"
        assert info["endpoints"][0]["state"] == "failed"


# ------------------------------------------------------------------------ browser servers


async def test_browser_server_pool_placement_and_failure_isolation(
    tmp_path: Path, procs: Processes, site: FixtureSite
) -> None:
    port1, port2 = free_port(), free_port()
    server1, server2 = start_server(procs, port1), start_server(procs, port2)
    await asyncio.gather(wait_listening(port1, server1), wait_listening(port2, server2))
    ws1 = f"ws://127.0.0.1:{port1}/"
    ws2 = f"ws://127.0.0.1:{port2}/?token=s3cret"
    shown = [ws1, f"ws://127.0.0.1:{port2}/?token=[REDACTED]"]

    async with runtime_for(tmp_path, browser_endpoints=(ws1, ws2)) as rt, tool_client(rt) as tc:
        info = await tc.ok("browser_runtime_info")
        assert info["browserBackend"] == "browser-server" and "sandbox" not in info
        assert "browserBinary" not in info
        assert info["browserLaunchState"] == "not_started" and "browserVersion" not in info
        assert [e["endpoint"] for e in info["endpoints"]] == shown
        assert [e["state"] for e in info["endpoints"]] == ["not_connected"] * 2

        # Fewest live sessions first, ties in configured order: 1, 2, 1, 2.
        sessions = [await tc.session() for _ in range(4)]
        assert [placement(rt, s) for s, _ in sessions] == [shown[0], shown[1]] * 2
        info = await tc.ok("browser_runtime_info")
        assert info["browserLaunchState"] == "ready" and info["browserVersion"]
        assert [e["activeSessions"] for e in info["endpoints"]] == [2, 2]
        assert [e["state"] for e in info["endpoints"]] == ["connected"] * 2
        assert all(e["browserVersion"] for e in info["endpoints"])
        for i, (s, p) in enumerate(sessions):
            assert await whoami(tc, site, s, p, f"v{i}") == f"ls:v{i}|cookie:identity=v{i}"
        assert len(procs.marked_browsers()) == 2  # one browser per server

        # Kill server 1: only its sessions fail.
        killed_at = time.monotonic()
        Processes.kill(server1)
        on_1 = [sessions[0], sessions[2]]
        on_2 = [sessions[1], sessions[3]]
        for s, p in on_1:
            view = await wait_failed(tc, s)
            assert view["failureCode"] == "BROWSER_DISCONNECTED"
            err = await tc.err("browser_get_url", {"sessionId": s, "pageId": p})
            assert err["code"] == "BROWSER_DISCONNECTED"
        for s, p in on_2:
            assert (await tc.ok("browser_session_get", {"sessionId": s}))["session"][
                "status"
            ] == "ready"
            ok = await tc.ok(
                "browser_navigate", {"sessionId": s, "pageId": p, "url": site.url("/delay?v=2")}
            )
            assert ok["url"].endswith("v=2")
        info = await tc.ok("browser_runtime_info")
        assert [e["state"] for e in info["endpoints"]] == ["failed", "connected"]
        assert [e["activeSessions"] for e in info["endpoints"]] == [0, 2]
        assert "browserVersion" not in info["endpoints"][0]
        assert info["browserLaunchState"] == "ready" and info["failedSessions"] == 2

        # Restart server 1 on the same port. While endpoint 1 backs off (30 s by default) new
        # sessions go to the survivor even though endpoint 1 is reachable again.
        server1 = start_server(procs, port1)
        await wait_listening(port1, server1)
        s5, _ = await tc.session()
        assert placement(rt, s5) == shown[1]

        # Shorten the backoff and wait it out: endpoint 1 takes new sessions again.
        backoff = 1.0
        rt.engine.endpoint_backoff_s = backoff  # type: ignore[attr-defined]
        await asyncio.sleep(max(0.0, killed_at + backoff + 0.2 - time.monotonic()))
        s6, p6 = await tc.session()
        assert placement(rt, s6) == shown[0]
        assert await whoami(tc, site, s6, p6, "back") == "ls:back|cookie:identity=back"
        info = await tc.ok("browser_runtime_info")
        assert [e["state"] for e in info["endpoints"]] == ["connected", "connected"]
        assert [e["activeSessions"] for e in info["endpoints"]] == [1, 3]

        # Concurrent creations count the ones still being placed: 1+3 -> 4/4, not 5/3.
        await asyncio.gather(*(tc.session() for _ in range(4)))
        info = await tc.ok("browser_runtime_info")
        assert [e["activeSessions"] for e in info["endpoints"]] == [4, 4]

    # Disconnecting ends the browsers the servers launched for us; the servers keep running.
    await eventually(lambda: not procs.marked_chromium(), 10, "no Chromium of the servers")
    assert server1.poll() is None and server2.poll() is None


async def test_unreachable_endpoints_fall_through_then_fail(
    tmp_path: Path, procs: Processes, site: FixtureSite
) -> None:
    port = free_port()
    server = start_server(procs, port)
    dead = f"ws://127.0.0.1:{closed_port()}/"
    live = f"ws://127.0.0.1:{port}/"
    await wait_listening(port, server)

    async with runtime_for(tmp_path, browser_endpoints=(dead, live)) as rt, tool_client(rt) as tc:
        s, p = await tc.session()  # the dead endpoint fails, the next candidate takes it
        assert placement(rt, s) == live
        assert await whoami(tc, site, s, p, "L") == "ls:L|cookie:identity=L"
        info = await tc.ok("browser_runtime_info")
        assert [e["state"] for e in info["endpoints"]] == ["failed", "connected"]
        assert info["browserLaunchState"] == "ready"
        s2, _ = await tc.session()  # the dead endpoint is backing off: not retried
        assert placement(rt, s2) == live

    dead2 = f"ws://127.0.0.1:{closed_port()}/"
    async with runtime_for(tmp_path, browser_endpoints=(dead, dead2)) as rt, tool_client(rt) as tc:
        err = await tc.err("browser_session_create")
        assert err["code"] == "BROWSER_ERROR" and err["details"]["reason"] == "connection"
        info = await tc.ok("browser_runtime_info")
        assert info["browserLaunchState"] == "failed"
        assert [e["state"] for e in info["endpoints"]] == ["failed", "failed"]
        started = time.monotonic()
        err = await tc.err("browser_session_create")  # both backing off: fails at once
        assert err["code"] == "BROWSER_ERROR" and err["details"]["reason"] == "connection"
        assert time.monotonic() - started < 1
