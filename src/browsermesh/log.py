"""Structured JSON-line logging on stderr (stdout belongs to the MCP protocol).

Only the fields of reference §22 are ever written; callers pass ids, codes and reasons, never page
content, form values, cookies or tokens. URLs go through the sanitizer before they get here.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
from collections.abc import Callable
from typing import Any, TextIO

from browsermesh.model.clock import iso_now

LEVELS: dict[str, int] = {"debug": 10, "info": 20, "warn": 30, "error": 40, "silent": 100}
_FIELDS = (
    "operationId",
    "sessionId",
    "pageId",
    "principal",
    "code",
    "reason",
    "endpoint",
    "tool",
    "durationMs",
    "host",
    "port",
    "path",
    "url",
)

LogSink = Callable[[dict[str, Any]], None]
LevelGate = Callable[[str], bool]


class EventLog:
    """Writes one JSON object per line. Each of `sinks` (tests) receives every record as well;
    each of `gated` (the MCP clients' log notifications) receives the records of the levels its
    gate asks for at that moment."""

    def __init__(self, level: str = "info", stream: TextIO | None = None) -> None:
        self._threshold = LEVELS.get(level, 20)
        self._stream = stream
        self._lock = threading.Lock()
        self.sinks: list[LogSink] = []
        self.gated: list[tuple[LevelGate, LogSink]] = []

    def emit(self, level: str, event: str, **fields: Any) -> None:
        """Log `event` at `level` with only the allowlisted fields."""
        # Hot path: every operation logs, so a record nobody takes is never built (issue 33:
        # the timestamp alone was ~10 us per record).
        gated = [sink for wants, sink in self.gated if wants(level)] if self.gated else ()
        if not self.sinks and not gated and LEVELS.get(level, 20) < self._threshold:
            return
        record: dict[str, Any] = {
            "level": level,
            "message": event,
            "type": event,
            "timestamp": iso_now(),
        }
        for key in _FIELDS:
            value = fields.get(key)
            if value is not None:
                record[key] = value
        for sink in (*self.sinks, *gated):
            sink(record)
        if LEVELS.get(level, 20) < self._threshold:
            return
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
        stream = self._stream or sys.stderr
        with self._lock:
            try:
                stream.write(line + "\n")
                stream.flush()
            except (OSError, ValueError):
                pass  # stderr closed during shutdown: logging must never fail an operation

    def info(self, event: str, **fields: Any) -> None:
        self.emit("info", event, **fields)

    def warn(self, event: str, **fields: Any) -> None:
        self.emit("warn", event, **fields)

    def debug(self, event: str, **fields: Any) -> None:
        self.emit("debug", event, **fields)


def route_library_logging() -> None:
    """Send third-party `logging` output (SDK, uvicorn, Playwright) to stderr at WARNING+."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        logging.Formatter('{"level":"warn","message":"library","logger":"%(name)s"}')
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
