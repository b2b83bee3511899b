"""A raw JSON-RPC peer over a spawned stdio server's pipes (for tests that signal the server).

The SDK client owns the process it spawns; tests that SIGTERM the server, close its stdin or
write malformed lines need the pipes themselves.
"""

from __future__ import annotations

import json
import select
import subprocess
import time
from collections.abc import Callable
from typing import Any


class StdioPeer:
    """Requests, notifications and tool calls over `proc`'s stdin/stdout, one line each."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdin and proc.stdout
        self.proc = proc
        self._ids = iter(range(1, 1_000_000))
        self._buffer = b""
        self._err_buffer = b""
        self.log: list[dict[str, Any]] = []

    def send(self, msg: dict[str, Any]) -> None:
        assert self.proc.stdin
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        self.proc.stdin.flush()

    def send_request(self, method: str, params: dict[str, Any]) -> int:
        rid = next(self._ids)
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return rid

    def read_reply(self, rid: int, timeout_s: float = 60.0) -> dict[str, Any]:
        """The reply to request `rid` (other lines are skipped)."""
        assert self.proc.stdout
        deadline = time.monotonic() + timeout_s
        fd = self.proc.stdout.fileno()
        while True:
            while b"\n" in self._buffer:
                line, self._buffer = self._buffer.split(b"\n", 1)
                msg = json.loads(line)
                if msg.get("id") == rid:
                    return msg  # type: ignore[no-any-return]
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"no reply to request {rid} within {timeout_s} s"
            ready, _, _ = select.select([fd], [], [], remaining)
            if ready:
                chunk = self.proc.stdout.read1(65536)  # type: ignore[attr-defined]
                assert chunk, "server closed stdout"
                self._buffer += chunk

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return self.read_reply(self.send_request(method, params))

    def initialize(self) -> dict[str, Any]:
        init = self.request(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "stdio-peer", "version": "1"},
            },
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return init

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """A tool call that must succeed; returns its structuredContent."""
        result = self.request("tools/call", {"name": name, "arguments": arguments})["result"]
        assert not result.get("isError"), result
        return result["structuredContent"]  # type: ignore[no-any-return]

    def start_call(self, name: str, arguments: dict[str, Any]) -> int:
        """Send a tool call without waiting; returns its request id."""
        return self.send_request("tools/call", {"name": name, "arguments": arguments})

    def wait_log(
        self, predicate: Callable[[dict[str, Any]], bool], timeout_s: float = 30.0
    ) -> None:
        """Read the server's JSON log lines (stderr) until one satisfies `predicate`."""
        assert self.proc.stderr
        deadline = time.monotonic() + timeout_s
        fd = self.proc.stderr.fileno()
        seen = len(self.log)
        while True:
            while b"\n" in self._err_buffer:
                line, self._err_buffer = self._err_buffer.split(b"\n", 1)
                if line.startswith(b"{"):
                    self.log.append(json.loads(line))
            if any(predicate(r) for r in self.log[seen:]):
                return
            seen = len(self.log)
            remaining = deadline - time.monotonic()
            assert remaining > 0, "no matching log line"
            ready, _, _ = select.select([fd], [], [], remaining)
            if ready:
                chunk = self.proc.stderr.read1(65536)  # type: ignore[attr-defined]
                assert chunk, "server closed stderr"
                self._err_buffer += chunk

    def rest_of_stderr(self) -> str:
        """Everything the server wrote to stderr and was not yet parsed (after it exited)."""
        assert self.proc.stderr
        return (self._err_buffer + self.proc.stderr.read()).decode(errors="replace")
