"""The bounds of per-page observability (reference §8, §19.1): configured and fixed.

:class:`ObserveLimits` carries the four configured ``BROWSERMESH_OBSERVABILITY_*`` bounds a page
is created with; the constants are the fixed bounds that capture (field lengths, the ingestion
rate, the in-flight map) and reads (default ``limit``, the response envelope) apply. Read when a
page's :class:`~browsermesh.model.observe.PageObservations` is made and on every capture and read.

Pure model: no Playwright, no MCP, no file system.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Protocol

__all__ = [
    "DEFAULT_LIMIT",
    "MAX_DURATION_MS",
    "MAX_EVENTS_PER_SECOND",
    "MAX_LEVEL_CHARS",
    "MAX_METHOD_CHARS",
    "MAX_REQUEST_ID_CHARS",
    "MAX_RESOURCE_TYPE_CHARS",
    "MAX_SINCE_EVENT_ID_CHARS",
    "MAX_STATUS",
    "MIN_INFLIGHT",
    "RESPONSE_OVERHEAD_BYTES",
    "ObserveLimits",
]

DEFAULT_LIMIT: Final = 50
"""Default ``limit`` (further capped by the configured page size)."""

RESPONSE_OVERHEAD_BYTES: Final = 512
"""Reserved for the envelope: the events array may use ``responseBytes − 512`` bytes."""

MAX_DURATION_MS: Final = 86_400_000
"""Upper clamp of ``durationMs``."""

MAX_EVENTS_PER_SECOND: Final = 500
"""Events one ring records per page per second; the rest are refused (counted as dropped).
High enough for a page load of a few hundred resources, low enough that a flood costs the
server a few percent of a core."""

MAX_LEVEL_CHARS: Final = 64
MAX_METHOD_CHARS: Final = 32
MAX_RESOURCE_TYPE_CHARS: Final = 64
MAX_REQUEST_ID_CHARS: Final = 128
MAX_SINCE_EVENT_ID_CHARS: Final = 128
MIN_INFLIGHT: Final = 32
MAX_STATUS: Final = 999


class ObserveSettings(Protocol):
    """Where the four bounds are configured (`config.Config`; the model does not import it)."""

    @property
    def observability_events(self) -> int: ...
    @property
    def observability_string_chars(self) -> int: ...
    @property
    def observability_page_size(self) -> int: ...
    @property
    def observability_response_bytes(self) -> int: ...


@dataclass(frozen=True, slots=True)
class ObserveLimits:
    """The configured observability bounds (reference §19.1).

    Attributes:
        events_per_ring: ``BROWSERMESH_OBSERVABILITY_EVENTS`` — capacity of each ring.
        string_chars: ``BROWSERMESH_OBSERVABILITY_STRING_CHARS`` — bound of URLs and texts.
        page_size: ``BROWSERMESH_OBSERVABILITY_PAGE_SIZE`` — runtime ceiling of ``limit``.
        response_bytes: ``BROWSERMESH_OBSERVABILITY_RESPONSE_BYTES`` — response byte budget.
    """

    events_per_ring: int
    string_chars: int
    page_size: int
    response_bytes: int

    @classmethod
    def from_config(cls, config: ObserveSettings) -> ObserveLimits:
        """The bounds `config` sets (the runtime's, once at start)."""
        return cls(
            config.observability_events,
            config.observability_string_chars,
            config.observability_page_size,
            config.observability_response_bytes,
        )

    def __post_init__(self) -> None:
        for name in ("events_per_ring", "string_chars", "page_size", "response_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer")
