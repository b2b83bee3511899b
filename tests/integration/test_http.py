"""Streamable HTTP transport (reference §18, §13.7): access control, principals, both eras.

Most tests serve the real app with uvicorn in-process on 127.0.0.1 port 0 (`HttpService`); the
command-line behaviours (exit codes, `http.listening`, SIGTERM) run `python -m browsermesh` as a
subprocess. Everything stays on loopback.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client, MCPError

from browsermesh.log import EventLog
from browsermesh.transports.http import AccessPolicy, IdleReaper, reaper_interval_ms
from tests.fixtures.site import FixtureSite
from tests.support.clients import ERAS, ToolClient
from tests.support.eventually import eventually
from tests.support.http_transport import TOKENS, connect, http_server, write_token_file
from tests.support.jsonrpc import INITIALIZE
from tests.support.servers import assert_no_chromium_left, chromium_pids_with_marker, stdio_server

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]


# ------------------------------------------------------------------------------------------
# Allowlist rules (§18.5), without a server
# ------------------------------------------------------------------------------------------


def test_host_and_origin_rules() -> None:
    policy = AccessPolicy(
        ["127.0.0.1:7331", "localhost:*", "[::1]:*", "example.test"],
        ["http://127.0.0.1:7331", "https://app.test", "http://[::1]:*"],
    )
    allowed = ["127.0.0.1:7331", "LOCALHOST:9", "localhost", "[::1]:80", "[0::1]:5", "Example.Test"]
    for host in allowed:
        assert policy.host_allowed(host), host
    assert policy.host_allowed("example.test:8443")  # port-less entry: any port
    for host in [None, "", "127.0.0.1:7332", "127.0.0.1", "evil.test", "example.test:x", "[::2]"]:
        assert not policy.host_allowed(host), host
    assert policy.origin_allowed(None)  # non-browser clients send no Origin
    for origin in ["http://127.0.0.1:7331", "https://app.test:1234", "http://[::1]:3000"]:
        assert policy.origin_allowed(origin), origin
    for origin in ["null", "https://127.0.0.1:7331", "http://app.test", "http://evil.test", "x"]:
        assert not policy.origin_allowed(origin), origin
    # a host entry with an explicit port also matches a Host header that omits the default port
    assert AccessPolicy(["h.test:80"], []).host_allowed("h.test")
    # `*` alone disables the check
    anything = AccessPolicy(["*"], ["*"])
    assert anything.host_allowed("evil.test:1") and anything.origin_allowed("null")
    assert reaper_interval_ms(1000) == 500 and reaper_interval_ms(1_800_000) == 30_000


def test_tokens_map_to_principals() -> None:
    policy = AccessPolicy(["*"], ["*"], list(TOKENS.items()))
    assert policy.auth_required
    assert policy.principal_for(TOKENS["alice"].encode()) == "alice"
    assert policy.principal_for(TOKENS["bob"].encode()) == "bob"
    assert policy.principal_for(TOKENS["bob"][:-1].encode()) is None
    assert policy.principal_for(b"") is None
    assert not AccessPolicy(["*"], ["*"]).auth_required


# ------------------------------------------------------------------------------------------
# HTTP status codes before MCP (§18.3, §18.5)
# ------------------------------------------------------------------------------------------


async def test_rejections_happen_before_mcp(tmp_path: Path) -> None:
    accept = {"Accept": "application/json, text/event-stream"}
    good = {**accept, "Authorization": f"Bearer {TOKENS['alice']}"}
    async with http_server(tmp_path, tokens=True) as srv, httpx2.AsyncClient() as http:
        url = srv.url
        missing = await http.post(url, json=INITIALIZE, headers=accept)
        assert missing.status_code == 401
        assert missing.headers["www-authenticate"].startswith("Bearer")
        wrong = await http.post(
            url, json=INITIALIZE, headers={**accept, "Authorization": "Bearer " + "x" * 24}
        )
        assert wrong.status_code == 401 and wrong.headers["www-authenticate"] == "Bearer"
        basic = await http.post(
            url, json=INITIALIZE, headers={**accept, "Authorization": "Basic YTpi"}
        )
        assert basic.status_code == 401
        # Host and Origin are checked before authentication
        assert (
            await http.post(url, json=INITIALIZE, headers={"Host": "evil.test"})
        ).status_code == 421
        bad_host = await http.post(url, json=INITIALIZE, headers={**good, "Host": "evil.test:80"})
        assert bad_host.status_code == 421
        bad_origin = {"Origin": "http://evil.test"}
        assert (await http.post(url, json=INITIALIZE, headers=bad_origin)).status_code == 403
        assert (
            await http.post(url, json=INITIALIZE, headers={**good, **bad_origin})
        ).status_code == 403
        own_origin = f"http://127.0.0.1:{srv.service.port}"
        ok = await http.post(url, json=INITIALIZE, headers={**good, "Origin": own_origin})
        assert ok.status_code == 200 and ok.headers.get("mcp-session-id")
    rejected = [r for r in srv.records if r["type"] == "auth.rejected"]
    assert [r["reason"] for r in rejected] == ["missing_token", "invalid_token", "invalid_token"]
    assert all(r["level"] == "warn" for r in rejected)
    logged = json.dumps(srv.records)
    assert not any(token in logged for token in TOKENS.values()) and "x" * 24 not in logged


# ------------------------------------------------------------------------------------------
# The shared scenario: same results over HTTP (both eras) as over stdio
# ------------------------------------------------------------------------------------------

_ID_KEYS = {"sessionId": "session", "pageId": "page", "operationId": "operation"}
_STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def _normalize(value: Any, ids: dict[str, str] | None = None, key: str = "") -> Any:
    """Ids (the values of `_ID_KEYS`, opaque: their form is not looked at) become `<kind>#<n>`
    in order of appearance, timestamps a placeholder."""
    ids = {} if ids is None else ids
    if isinstance(value, dict):
        return {k: _normalize(v, ids, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_normalize(v, ids) for v in value]
    if isinstance(value, str):
        if key in _ID_KEYS:
            kind = _ID_KEYS[key]
            return ids.setdefault(
                value, f"{kind}#{sum(v.startswith(kind) for v in ids.values()) + 1}"
            )
        if _STAMP.match(value):
            return "<timestamp>"
    return value


async def scenario(c: ToolClient, site: FixtureSite) -> list[Any]:
    created = await c.ok("browser_session_create", {"name": "scenario", "metadata": {"k": "v"}})
    s, p = created["session"]["sessionId"], created["initialPage"]["pageId"]
    addr = {"sessionId": s, "pageId": p}
    navigated = await c.ok("browser_navigate", {**addr, "url": site.url("/?value=scenario")})
    title = await c.ok("browser_get_title", addr)
    listed = await c.ok("browser_session_list")
    closed = await c.ok("browser_session_close", {"sessionId": s})
    after = await c.err("browser_get_title", addr)
    return _normalize([created, navigated, title, listed, closed, after])


@pytest.mark.parametrize("mode", ERAS)
async def test_scenario_matches_stdio(mode: str, tmp_path: Path, site: FixtureSite) -> None:
    async with http_server(tmp_path / "http") as srv, connect(srv.url, mode) as c:
        over_http = await scenario(c, site)
        info = await c.ok("browser_runtime_info")
        assert info["transport"] == "http"
        assert c.client.session.instructions
    async with Client(stdio_server(tmp_path / "stdio"), mode=mode) as client:
        over_stdio = await scenario(await ToolClient.of(client), site)
    assert over_http == over_stdio
    assert over_http[2]["title"] == "Identity"
    assert over_http[4]["session"]["status"] == "closed"
    assert over_http[5]["code"] == "SESSION_CLOSED"
    # no token file: every connection is the implicit principal
    created = [r for r in srv.records if r["type"] == "session.created"]
    assert created and all(r["principal"] == "local" for r in created)


# ------------------------------------------------------------------------------------------
# Principals and ownership (§18.4)
# ------------------------------------------------------------------------------------------


async def test_principals_are_isolated_and_sessions_outlive_connections(
    tmp_path: Path, site: FixtureSite
) -> None:
    async with http_server(tmp_path, tokens=True) as srv:
        url = srv.url
        async with (
            connect(url, "auto", TOKENS["alice"]) as alice,
            connect(url, "legacy", TOKENS["alice"]) as alice2,
            connect(url, "legacy", TOKENS["bob"]) as bob,
        ):
            s, p = await alice.session(name="alice-only")
            addr = {"sessionId": s, "pageId": p}
            await alice.ok("browser_navigate", {**addr, "url": site.url("/?value=alice")})
            bob_s, _ = await bob.session(name="bob-only")

            # bob can neither see nor use alice's session
            assert [x["sessionId"] for x in (await bob.ok("browser_session_list"))["sessions"]] == [
                bob_s
            ]
            for name, args in [
                ("browser_session_get", {"sessionId": s}),
                ("browser_get_title", addr),
                ("browser_navigate", {**addr, "url": site.url("/")}),
                ("browser_session_close", {"sessionId": s}),
            ]:
                assert (await bob.err(name, args))["code"] == "SESSION_NOT_FOUND", name
            # nor alice bob's
            assert (await alice.err("browser_session_get", {"sessionId": bob_s}))[
                "code"
            ] == "SESSION_NOT_FOUND"

            # a second connection of the same principal (other era) shares the session
            listed = (await alice2.ok("browser_session_list"))["sessions"]
            assert [x["sessionId"] for x in listed] == [s]
            assert (await alice2.ok("browser_get_url", addr))["url"].endswith("value=alice")

        # every connection is gone; the sessions are not
        assert srv.runtime.sessions_snapshot()[s].status == "ready"
        async with connect(url, "legacy", TOKENS["alice"]) as again:
            assert [
                x["sessionId"] for x in (await again.ok("browser_session_list"))["sessions"]
            ] == [s]
            assert (await again.ok("browser_get_url", addr))["url"].endswith("value=alice")
            await again.ok("browser_session_close", {"sessionId": s})
    owners = {r["sessionId"]: r["principal"] for r in srv.records if r["type"] == "session.created"}
    assert owners == {s: "alice", bob_s: "bob"}


def _sse_result(response: httpx2.Response) -> Any:
    for line in response.text.splitlines():
        if line.startswith("data:") and '"result"' in line:
            return json.loads(line[5:])["result"]
    raise AssertionError(response.text)


async def test_dropped_connection_and_foreign_mcp_session(tmp_path: Path) -> None:
    """A raw legacy client creates a session and vanishes without DELETE; a new connection of
    the same principal finds it; another principal cannot reuse the abandoned MCP session."""
    accept = {"Accept": "application/json, text/event-stream"}
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
    create = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": "browser_session_create", "arguments": {"name": "dropped"}},
    }
    async with http_server(tmp_path, tokens=True) as srv:
        alice = {**accept, "Authorization": f"Bearer {TOKENS['alice']}"}
        async with httpx2.AsyncClient() as raw:
            opened = await raw.post(srv.url, json=INITIALIZE, headers=alice)
            sid = opened.headers["mcp-session-id"]
            alice.update({"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"})
            initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            assert (await raw.post(srv.url, json=initialized, headers=alice)).status_code == 202
            created = _sse_result(await raw.post(srv.url, json=create, headers=alice))
            s = created["structuredContent"]["session"]["sessionId"]
        # the raw client is gone without ending its MCP session; the browser session stays
        async with connect(srv.url, "auto", TOKENS["alice"]) as again:
            listed = (await again.ok("browser_session_list"))["sessions"]
            assert [(x["sessionId"], x["status"]) for x in listed] == [(s, "ready")]
        async with httpx2.AsyncClient() as http:
            hijack = await http.post(
                srv.url,
                json=listing,
                headers={**alice, "Authorization": f"Bearer {TOKENS['bob']}"},
            )
            assert hijack.status_code == 404
            still = await http.post(srv.url, json=listing, headers=alice)
            assert still.status_code == 200


# ------------------------------------------------------------------------------------------
# Cancellation reaches the handler over HTTP in both eras (why the legacy leg is stateful)
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ERAS)
async def test_client_timeout_cancels_the_call(mode: str, tmp_path: Path) -> None:
    async with http_server(tmp_path) as srv, connect(srv.url, mode) as c:
        s, p = await c.session()
        addr = {"sessionId": s, "pageId": p}
        never = {"kind": "text", "text": "Never shown anywhere", "state": "present"}
        started = time.monotonic()
        with pytest.raises(MCPError):
            await c.raw(
                "browser_wait",
                {**addr, "condition": never, "timeoutMs": 4000},
                read_timeout_seconds=0.5,
            )
        # the queue is free again long before the 4 s wait would have ended
        await c.ok("browser_get_url", addr)
        assert time.monotonic() - started < 3
        failed = [
            r
            for r in srv.records
            if r["type"] == "operation.failed" and r.get("tool") == "browser_wait"
        ]
        assert failed and failed[0]["code"] == "OPERATION_CANCELLED"


# ------------------------------------------------------------------------------------------
# Idle reaping (§13.7)
# ------------------------------------------------------------------------------------------


async def test_idle_reaper_closes_untouched_sessions(tmp_path: Path) -> None:
    async with http_server(tmp_path, session_idle_ms=1000) as srv, connect(srv.url, "auto") as c:
        idle, idle_page = await c.session(name="idle")
        busy, busy_page = await c.session(name="busy")

        async def idle_reaped() -> bool:
            await c.ok("browser_get_url", {"sessionId": busy, "pageId": busy_page})  # stays busy
            return srv.runtime.sessions_snapshot()[idle].status == "closed"

        await eventually(idle_reaped, 10, "the idle session was reaped")
        err = await c.err("browser_get_url", {"sessionId": idle, "pageId": idle_page})
        assert err["code"] == "SESSION_CLOSED"
        view = await c.ok("browser_session_get", {"sessionId": idle})
        assert view["session"]["status"] == "closed"
        assert srv.runtime.sessions_snapshot()[busy].status == "ready"
    closed = [r for r in srv.records if r["type"] == "session.closed" and r["sessionId"] == idle]
    assert closed[0]["reason"] == "idle"
    busy_closed = [
        r for r in srv.records if r["type"] == "session.closed" and r["sessionId"] == busy
    ]
    assert [r["reason"] for r in busy_closed] == ["shutdown"]


async def test_idle_sweep_rules(tmp_path: Path) -> None:
    """`0` disables reaping; a due session is closed once; closed ones are skipped."""
    async with http_server(tmp_path, session_idle_ms=0) as srv, connect(srv.url, "auto") as c:
        s, _ = await c.session()
        fresh, _ = await c.session()
        rec = srv.runtime.sessions_snapshot()[s]
        rec.last_touch -= 3600  # untouched for an hour
        log = EventLog("silent")
        assert await IdleReaper(srv.runtime, 0, log).sweep() == 0
        reaper = IdleReaper(srv.runtime, 60_000, log)
        assert [r.session_id for r in reaper.idle_sessions()] == [s]
        assert await reaper.sweep() == 1
        assert rec.status == "closed" and await reaper.sweep() == 0
        assert srv.runtime.sessions_snapshot()[fresh].status == "ready"


# ------------------------------------------------------------------------------------------
# The command line: listening line, SIGTERM, start-up refusals, bind failure
# ------------------------------------------------------------------------------------------


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BROWSERMESH_")}
    env.update({"BROWSERMESH_DATA_DIR": str(tmp_path / "data"), **extra})
    return env


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "browsermesh", "--transport", "http", *args]


def test_sigterm_stops_the_http_server(tmp_path: Path, site: FixtureSite) -> None:
    marker = f"bm-{uuid.uuid4()}"
    tokens = write_token_file(tmp_path, mode=0o644)  # accepted, with a warning
    proc = subprocess.Popen(
        _cli("--port", "0", "--headless", "--auth-token-file", str(tokens)),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(tmp_path, BM_TEST_MARKER=marker),
        cwd=ROOT,
    )
    assert proc.stderr is not None and proc.stdout is not None
    try:
        seen: list[dict[str, Any]] = []
        while not any(r.get("type") == "http.listening" for r in seen):
            line = proc.stderr.readline().decode()
            assert line, "server exited before listening"
            if line.startswith("{"):
                seen.append(json.loads(line))
        listening = seen[-1]
        assert listening["host"] == "127.0.0.1" and listening["path"] == "/mcp"
        assert any(r["level"] == "warn" and "token" in r["type"] for r in seen)
        url = f"http://127.0.0.1:{listening['port']}/mcp"

        async def use() -> None:
            async with connect(url, "legacy", TOKENS["bob"]) as c:
                s, p = await c.session()
                await c.ok("browser_navigate", {"sessionId": s, "pageId": p, "url": site.url("/")})
                assert (await c.ok("browser_runtime_info"))["transport"] == "http"

        anyio.run(use)
        assert chromium_pids_with_marker(marker)
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=15)
        assert code == 0 and time.monotonic() - started < 5
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    rest = proc.stderr.read().decode()
    assert "Traceback" not in rest and proc.stdout.read() == b""
    records = [json.loads(line) for line in rest.splitlines() if line.startswith("{")]
    closed = [r for r in records if r.get("type") == "session.closed"]
    assert closed and all(r["reason"] == "shutdown" for r in closed)
    assert not any(token in rest for token in TOKENS.values())
    assert_no_chromium_left(marker, 10)


@pytest.mark.parametrize("host", ["0.0.0.0", "10.1.2.3"])
def test_non_loopback_bind_without_token_file_is_refused(host: str, tmp_path: Path) -> None:
    done = subprocess.run(
        _cli("--host", host, "--port", "0"),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=_env(tmp_path),
        cwd=ROOT,
        timeout=30,
    )
    assert done.returncode == 2
    assert b"BROWSERMESH_AUTH_TOKEN_FILE" in done.stderr and done.stdout == b""


def test_bind_failure_is_one_line_and_exit_1(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        done = subprocess.run(
            _cli("--port", str(port)),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            env=_env(tmp_path),
            cwd=ROOT,
            timeout=30,
        )
    assert done.returncode == 1
    lines = done.stderr.decode().splitlines()
    assert len(lines) == 1, lines
    record = json.loads(lines[0])
    assert record["level"] == "error" and record["port"] == port
