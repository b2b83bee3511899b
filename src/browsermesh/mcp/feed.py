"""What one call sends the client while it runs: progress, and its own log lines (issue 17).

A `CallFeed` exists only for a request that asked for something: a `progressToken` (progress)
or, on the 2026-07-28 wire, the `io.modelcontextprotocol/logLevel` opt-in in `_meta` (on the
handshake era, `logging/setLevel` on the connection). Phases come from `model.progress.report`
anywhere below; log records from the `EventLog` through `mcp.clients`. Both are accepted
synchronously and sent by the feed's own pump task, which the call's task group owns: it ends
when the call returns (pending log lines are flushed first, a pending progress line is dropped,
so nothing follows the result) or is cancelled with it.

A progress token longer than `MAX_PROGRESS_TOKEN_CHARS` is not echoed: that call gets no
progress (its log lines still come) and the server logs `progress.token_ignored` once, never
the token.

Progress is rate-limited: nothing for a call shorter than `GRACE_S`; then at most one
notification per `INTERVAL_S`, a new phase as soon as the interval allows and the running
phase again every `HEARTBEAT_S` with its elapsed time ("waiting for text 'Saved' (4.1 s of
10 s)"). The progress value is the call's elapsed seconds, strictly increasing; no total (the
phases differ in length, and the spec wants a monotonic value).
"""

from __future__ import annotations

import contextlib
import math
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextvars import ContextVar
from typing import Any

import anyio

from browsermesh.model import progress

GRACE_S = 0.25
INTERVAL_S = 0.25
HEARTBEAT_S = 1.0
MAX_CALL_LOGS = 200
"""Log lines one call sends at most (a call that logs more is cut; stderr keeps them all)."""
MAX_PROGRESS_TOKEN_CHARS = 128
"""The longest string `progressToken` that is echoed (issue 30 #10): every notification
repeats the token, so a 1 MB token made every progress line of the call 1 MB. A longer token,
or an integer beyond 64 bits, gets no progress notifications; the call itself runs."""
_INT64 = 2**63

ProgressSender = Callable[[float, str], Awaitable[None]]
LogSender = Callable[[str, dict[str, Any]], Awaitable[None]]

_CURRENT: ContextVar[CallFeed | None] = ContextVar("browsermesh_call_feed", default=None)


def current() -> CallFeed | None:
    """The feed of the call this code runs for, if that call has one."""
    return _CURRENT.get()


def echoable_progress_token(token: object) -> bool:
    """Whether a request's `progressToken` is small enough to repeat in its notifications."""
    if isinstance(token, bool):
        return False
    if isinstance(token, str):
        return len(token) <= MAX_PROGRESS_TOKEN_CHARS
    if isinstance(token, int):
        return -_INT64 <= token < _INT64
    return False


def _seconds(value: float) -> str:
    return f"{value:.1f}".removesuffix(".0")


class CallFeed:
    """Progress and log lines of one call; `run` sends them, `close` ends it."""

    def __init__(
        self,
        *,
        send_progress: ProgressSender | None,
        send_log: LogSender | None,
        log_threshold: str | None = None,
        connection: object = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._send_progress = send_progress
        self._send_log = send_log
        # The connection the call came on: connection-wide log delivery skips the records this
        # feed already carries (they would arrive twice).
        self.connection = connection
        # The least severe MCP level this call's client wants (None: no log lines).
        self.log_threshold = log_threshold if send_log is not None else None
        self._clock = clock
        self._started = clock()
        self._phase: str | None = None
        self._phase_at = 0.0
        self._phase_total: float | None = None
        self._fresh = False
        self._last_sent_at = -math.inf
        self._last_value = 0.0
        self._logs: deque[tuple[str, dict[str, Any]]] = deque()
        self._logged = 0
        self._closed = False
        self._wake = anyio.Event()

    @property
    def wants_logs(self) -> bool:
        return self._send_log is not None

    # ------------------------------------------------------------------ accepting (sync)

    def phase(self, message: str, total_s: float | None) -> None:
        """`model.progress` sink: a new phase started."""
        if self._send_progress is None or self._closed:
            return
        self._phase, self._phase_at, self._phase_total = message, self._clock(), total_s
        self._fresh = True
        self._wake.set()

    def log(self, level: str, data: dict[str, Any]) -> None:
        """A log line of this call (already allowed by the level gate)."""
        if self._send_log is None or self._closed or self._logged >= MAX_CALL_LOGS:
            return
        self._logged += 1
        self._logs.append((level, data))
        self._wake.set()

    def close(self) -> None:
        """The call has its result: flush the log lines, send no more progress, stop."""
        self._closed = True
        self._wake.set()

    # ------------------------------------------------------------------ sending

    def _progress_due(self, now: float) -> float:
        """When the next progress notification may go (inf: nothing to send)."""
        if self._phase is None or self._closed:
            return math.inf
        earliest = max(self._started + GRACE_S, self._last_sent_at + INTERVAL_S)
        if self._fresh:
            return earliest
        return max(earliest, self._last_sent_at + HEARTBEAT_S)

    def _message(self, now: float) -> str:
        elapsed = _seconds(max(0.0, now - self._phase_at))
        total = "" if self._phase_total is None else f" of {_seconds(self._phase_total)}"
        return f"{self._phase} ({elapsed} s{total} s)"

    async def _flush_logs(self) -> None:
        while self._logs and self._send_log is not None:
            level, data = self._logs.popleft()
            with contextlib.suppress(Exception):  # a notification never fails the call
                await self._send_log(level, data)

    async def run(self) -> None:
        """Send until `close` (then flush the log lines) or cancellation."""
        while True:
            self._wake = anyio.Event()
            await self._flush_logs()
            if self._closed:
                return
            now = self._clock()
            due = self._progress_due(now)
            if due <= now and self._send_progress is not None:
                # Strictly increasing, as the spec requires of `progress`.
                value = max(round(now - self._started, 1), round(self._last_value + 0.1, 1))
                self._last_value, self._last_sent_at, self._fresh = value, now, False
                with contextlib.suppress(Exception):  # a notification never fails the call
                    await self._send_progress(value, self._message(now))
                continue
            if self._logs:
                continue
            with anyio.move_on_after(max(0.0, due - now) if due != math.inf else math.inf):
                await self._wake.wait()


@contextlib.asynccontextmanager
async def running(feed: CallFeed | None) -> AsyncIterator[None]:
    """Run `feed` (when there is one) around the body: its pump, its phases, its log lines."""
    if feed is None:
        yield
        return
    async with anyio.create_task_group() as group:
        group.start_soon(feed.run)
        try:
            with _installed(feed), progress.reporting(feed.phase):
                yield
        finally:
            feed.close()


@contextlib.contextmanager
def _installed(feed: CallFeed) -> Iterator[None]:
    token = _CURRENT.set(feed)
    try:
        yield
    finally:
        _CURRENT.reset(token)
