"""Time helpers: ISO-8601 UTC timestamps with milliseconds and an injectable clock."""

from __future__ import annotations

import time
from datetime import UTC, datetime


def iso_from_epoch(seconds: float) -> str:
    """`2025-03-01T12:00:00.000Z` for a Unix time in seconds."""
    stamp = datetime.fromtimestamp(seconds, tz=UTC)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{stamp.microsecond // 1000:03d}Z"


def iso_now() -> str:
    return iso_from_epoch(time.time())


class Clock:
    """Wall time for timestamps and a monotonic time for TTLs; tests swap in a fake."""

    def wall(self) -> float:
        return time.time()

    def monotonic(self) -> float:
        return time.monotonic()
