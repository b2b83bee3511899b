"""Stopping the HTTP server with calls in flight (issue 30 #10): a `browsermesh --transport
http` process, the real SDK client, real Chromium.

One SIGTERM drains: a call still running is answered `RUNTIME_SHUTTING_DOWN`. A second SIGTERM
while the first drains hurries the stop but still answers every call in flight with that
structured error before the process exits (it used to close the connections, leaving the call
unanswered).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.support.clients import ToolClient
from tests.support.eventually import eventually
from tests.support.http_process import HttpServerProcess
from tests.support.http_transport import connect

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
NEVER = {"kind": "text", "text": "never-appears-9f1c", "state": "present"}


def _server(tmp_path: Path) -> HttpServerProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BROWSERMESH_")}
    env["BROWSERMESH_DATA_DIR"] = str(tmp_path / "data")
    # The runtime's grace is longer than the drain's, as it is by default (5 s vs 2 s).
    env["BROWSERMESH_SHUTDOWN_GRACE_MS"] = "5000"
    cmd = [sys.executable, "-m", "browsermesh", "--transport", "http", "--port", "0"]
    return HttpServerProcess([*cmd, "--headless", "--no-view"], env, ROOT)


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(1)
        return probe.connect_ex(("127.0.0.1", port)) == 0


def _started(server: HttpServerProcess, tool: str) -> int:
    records = [json.loads(line) for line in server.lines if line.startswith("{")]
    return sum(1 for r in records if r.get("type") == "operation.started" and r["tool"] == tool)


async def _stop_with_calls_in_flight(tmp_path: Path, signals: int) -> list[dict[str, Any]]:
    """Start two long waits, send `signals` SIGTERMs (each after the previous one has shut the
    listener), and return what each call answered; the process must exit 0."""
    server = _server(tmp_path)
    answers: list[dict[str, Any]] = []
    try:
        url = server.wait_listening(60)
        port = int(url.split(":")[2].split("/")[0])
        async with connect(url, "legacy") as c:
            sid, pid = await c.session()
            args = {"sessionId": sid, "pageId": pid, "condition": NEVER, "timeoutMs": 60_000}

            async def call(client: ToolClient) -> None:
                answers.append(await client.err("browser_wait", args, read_timeout_seconds=30))

            async with anyio.create_task_group() as calls:
                calls.start_soon(call, c)
                calls.start_soon(call, c)
                await eventually(lambda: _started(server, "browser_wait") == 2, 30, "two waits")
                for _ in range(signals):
                    server.proc.send_signal(signal.SIGTERM)
                    await eventually(lambda: not _listening(port), 10, "the listener shut")
                started = time.monotonic()
        assert time.monotonic() - started < 10
        # No further signal: the ones sent must be enough for a clean exit (stop() would send
        # one more, which a slow teardown may take as the forcing third).
        code = server.wait_exit()
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait()
    assert code == 0, server.log_tail()
    assert "Traceback" not in "\n".join(server.lines)
    return answers


async def test_one_sigterm_answers_the_calls_in_flight(tmp_path: Path) -> None:
    answers = await _stop_with_calls_in_flight(tmp_path, signals=1)
    assert [a["code"] for a in answers] == ["RUNTIME_SHUTTING_DOWN"] * 2, answers


async def test_a_second_sigterm_still_answers_the_calls_in_flight(tmp_path: Path) -> None:
    answers = await _stop_with_calls_in_flight(tmp_path, signals=2)
    assert [a["code"] for a in answers] == ["RUNTIME_SHUTTING_DOWN"] * 2, answers
