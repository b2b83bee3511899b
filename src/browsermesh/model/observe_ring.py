"""One bounded event ring of a page (reference §8, issue 12, issue 15).

A page has two :class:`EventRing` s, the console ring and the network ring (see
:mod:`browsermesh.model.observe`). A ring owns its namespace (a short id such as ``n4k2q``), its
sequence starting at 1, the retained events, the cumulative counter of evicted and refused
events, and the one-second ingestion window. Used on every capture (``admit``, ``append``) and
every read (``parse``, ``event_id``, ``oldest_seq``).

Pure model: no Playwright, no MCP, no file system.
"""

from __future__ import annotations

import math
import re
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from browsermesh.model.ids import base36, short_id
from browsermesh.model.observe_limits import MAX_EVENTS_PER_SECOND

__all__ = ["EventRing", "Kind", "Ring"]

Kind = Literal["console", "page_error", "popup", "human", "request", "response", "request_failed"]
"""The ``kind`` of an event."""

Ring = Literal["console", "network"]
"""The console ring (console, page_error, popup) or the network ring."""

_WINDOW_S: Final = 1.0

_SEQ_RE: Final = re.compile(r"[1-9a-z][0-9a-z]{0,12}")  # canonical: no leading zero, >= 1


@dataclass(slots=True)
class EventRing:
    """One bounded ring: namespace, sequence, retained events and the eviction counter."""

    capacity: int
    on_evict: Callable[[dict[str, Any]], None] | None = None
    namespace: str = field(default_factory=lambda: short_id("n"))
    last_seq: int = 0
    dropped: int = 0
    events: deque[tuple[int, dict[str, Any]]] = field(default_factory=deque)
    window_start: float = -math.inf
    window_count: int = 0

    def admit(self, now: float) -> bool:
        """Count one event against the current one-second window; a refusal counts as dropped."""
        if now - self.window_start >= _WINDOW_S:
            self.window_start, self.window_count = now, 0
        if self.window_count >= MAX_EVENTS_PER_SECOND:
            self.dropped += 1
            return False
        self.window_count += 1
        return True

    def reopens_in(self, now: float) -> float:
        """Seconds until the current window ends (0 when it already has)."""
        return max(0.0, self.window_start + _WINDOW_S - now)

    def event_id(self, seq: int) -> str:
        return f"{self.namespace}.{base36(seq)}"

    def append(self, kind: Kind, common: dict[str, Any], extra: dict[str, Any]) -> None:
        """Issue the next sequence and store the event, evicting the oldest on overflow."""
        self.last_seq += 1
        event: dict[str, Any] = {"eventId": self.event_id(self.last_seq)}
        event.update(common)
        event["kind"] = kind
        event.update(extra)
        self.events.append((self.last_seq, event))
        while len(self.events) > self.capacity:
            _, evicted = self.events.popleft()
            self.dropped += 1
            if self.on_evict is not None:
                self.on_evict(evicted)

    def oldest_seq(self) -> int:
        """Sequence of the oldest retained event (``last_seq + 1`` when the ring is empty)."""
        return self.events[0][0] if self.events else self.last_seq + 1

    def parse(self, event_id: str) -> int | None:
        """The sequence of ``event_id`` if it belongs to this ring's namespace, else ``None``."""
        namespace, sep, digits = event_id.rpartition(".")
        if not sep or namespace != self.namespace or _SEQ_RE.fullmatch(digits) is None:
            return None
        return int(digits, 36)

    def clear(self) -> None:
        self.events.clear()
        self.dropped = 0
