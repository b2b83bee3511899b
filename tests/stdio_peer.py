"""A raw JSON-RPC peer over a spawned stdio server's pipes (the one used by every raw stdio test).

The SDK client owns the process it spawns; tests that SIGTERM the server, close its stdin or
write malformed lines need the pipes themselves.
"""

from __future__ import annotations

import json
import select
import subprocess
import time
from collections.abc import Callable
from typing import IO, Any

from tests.support.jsonrpc import INITIALIZE_PARAMS

REPLY_S = 60.0


class _Lines:
    """Whole lines read from one pipe without blocking past a deadline."""

    def __init__(self, pipe: IO[bytes]) -> None:
        self._pipe = pipe
        self._buffer = b""

    def next(self, timeout_s: float) -> bytes:
        deadline = time.monotonic() + timeout_s
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            assert remaining > 0, "no line from the server in time"
            ready, _, _ = select.select([self._pipe.fileno()], [], [], remaining)
            if ready:
                chunk = self._pipe.read1(65536)  # type: ignore[attr-defined]
                assert chunk, "the server closed the pipe"
                self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line

    def rest(self) -> bytes:
        """What is buffered plus everything until the pipe closes (the process has exited)."""
        rest, self._buffer = self._buffer + self._pipe.read(), b""
        return rest


class StdioPeer:
    """Requests, notifications and tool calls over `proc`'s stdin/stdout, one line each; the
    server's JSON log lines (stderr) on demand."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdin and proc.stdout and proc.stderr
        self.proc = proc
        self._ids = iter(range(1, 1_000_000))
        self._out = _Lines(proc.stdout)
        self._err = _Lines(proc.stderr)
        self.log: list[dict[str, Any]] = []

    def send(self, msg: str | dict[str, Any]) -> None:
        """One line: `msg` as given when it is a string, else its JSON."""
        text = msg if isinstance(msg, str) else json.dumps(msg)
        assert self.proc.stdin
        self.proc.stdin.write(text.encode() + b"\n")
        self.proc.stdin.flush()

    def next_message(self, timeout_s: float = REPLY_S) -> dict[str, Any]:
        """The next message the server writes, whatever its id."""
        data: dict[str, Any] = json.loads(self._out.next(timeout_s))
        return data

    def send_request(self, method: str, params: dict[str, Any] | None = None) -> int:
        rid = next(self._ids)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return rid

    def read_reply(self, rid: int, timeout_s: float = REPLY_S) -> dict[str, Any]:
        """The reply to request `rid` (other messages are skipped)."""
        deadline = time.monotonic() + timeout_s
        while True:
            msg = self.next_message(max(deadline - time.monotonic(), 0.001))
            if msg.get("id") == rid:
                return msg

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.read_reply(self.send_request(method, params))

    def initialize(self) -> dict[str, Any]:
        init = self.request("initialize", INITIALIZE_PARAMS)
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
        deadline = time.monotonic() + timeout_s
        while True:
            line = self._err.next(max(deadline - time.monotonic(), 0.001))
            if line.startswith(b"{"):
                record = json.loads(line)
                self.log.append(record)
                if predicate(record):
                    return

    def rest_of_stderr(self) -> str:
        """Everything the server wrote to stderr and was not yet read (after it exited)."""
        return self._err.rest().decode(errors="replace")
