"""A `browsermesh --transport http --port 0` child process for the package suites (the
installed wheel in tests/package/test_installed.py, this tree in test_conformance.py): its
stderr drained on a thread, its endpoint read from the `http.listening` record."""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import threading
from pathlib import Path
from typing import Any


class HttpServerProcess:
    """`cmd` started with `env` in `cwd`, its stderr kept in `lines`; `stdout` is discarded
    unless a test reads it (`subprocess.PIPE`: nothing but the protocol may go there)."""

    def __init__(
        self, cmd: list[str], env: dict[str, str], cwd: Path, stdout: int = subprocess.DEVNULL
    ) -> None:
        self.proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=cwd,
        )
        self.lines: list[str] = []
        self._listening: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line.rstrip("\n"))
            if '"http.listening"' in line:
                self._listening.put(json.loads(line))
        self._listening.put(None)  # stderr closed: the server has exited

    def log_tail(self) -> str:
        """The last lines the server wrote to stderr."""
        return "\n".join(self.lines[-40:])

    def wait_listening(self, timeout: float = 30.0) -> str:
        """The endpoint URL once the server logs ``http.listening``; fails if it exits first."""
        try:
            event = self._listening.get(timeout=timeout)
        except queue.Empty:
            event = None
        if event is None:
            raise AssertionError(
                f"no http.listening within {timeout}s (exit {self.proc.poll()})\n{self.log_tail()}"
            )
        assert event["host"] == "127.0.0.1" and event["port"] > 0, event
        return f"http://127.0.0.1:{event['port']}{event['path']}"

    def stop(self, timeout: float = 30.0) -> int:
        """SIGTERM, then the exit code (kills it and fails when it does not exit in time)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.wait_exit(timeout)

    def wait_exit(self, timeout: float = 30.0) -> int:
        """The exit code of a process already told to stop, sending no signal of its own
        (kills it and fails when it does not exit in time)."""
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"no exit {timeout}s after SIGTERM\n{self.log_tail()}") from None
        self._reader.join(timeout=5)
        return code
