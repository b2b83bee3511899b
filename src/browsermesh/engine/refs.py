"""A page's element refs (reference §5.5): the registry a capture fills and every ref call reads.

A ref is a token (``s<gen>e<n>`` from a capture, ``s<gen>r<n>`` for a collapsed region,
``s<gen>c<n>`` added by error details; ``<gen>`` is the generation in base 36) standing for one
element handle until its TTL ends or a newer capture or a main-frame navigation replaces the
generation. Made with each
managed page (`PlaywrightEngine.adopt_page`), filled by `engine.snapshot`, read by
`engine.elements` and `engine.candidates`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from browsermesh.engine import actionability
from browsermesh.engine.bounded import quietly
from browsermesh.errors import BrowserMeshError, ErrorCode
from browsermesh.model.clock import Clock
from browsermesh.model.ids import base36
from browsermesh.model.tasks import all_of

if TYPE_CHECKING:
    from playwright.async_api import ElementHandle

__all__ = ["REF_TTL_S", "Expired", "RefEntry", "RefRegistry", "release_retired"]

REF_TTL_S = 30.0


@dataclass(eq=False)
class RefEntry:
    """A live ref: the element's handle, captured by one snapshot, valid until `expires_at`.
    `role` and `name` (as the snapshot printed them) let an expired ref be renewed."""

    handle: ElementHandle
    expires_at: float
    region: bool = False
    role: str | None = None
    name: str | None = None


@dataclass(eq=False)
class Expired:
    """A ref of the current generation that only outlived its TTL."""

    entry: RefEntry


@dataclass(eq=False)
class RefRegistry:
    """One page's refs. A new capture or a main-frame navigation replaces them all.

    Error details may add refs to the current generation (`add`: candidates, a renewed ref):
    that is no newer capture, so every ref already handed out stays valid. The registry also
    carries the page's element policy from the config: the ref TTL and the actionability
    settle time."""

    clock: Clock
    ttl_s: float = REF_TTL_S
    new_generation: Callable[[], int] | None = None
    settle_ms: float = actionability.SETTLE_MS
    generation: int = 0
    entries: dict[str, RefEntry] = field(default_factory=dict)
    added: int = 0
    # Entries of replaced generations whose handles are not released yet (`release`). A
    # navigation keeps the frame, and Playwright scopes a handle to its frame, not to the
    # document: an unreleased handle of a page navigated away from lives (in the driver and in
    # this process) until the page closes (issue 30: about 1.8 MB per 200-ref snapshot).
    retired: list[RefEntry] = field(default_factory=list)

    def advance(self, generation: int) -> None:
        """Start a new generation; the old entries wait in `retired` for `release`."""
        self.retired.extend(self.entries.values())
        self.generation = generation
        self.entries = {}
        self.added = 0

    def forget(self, generation: int) -> None:
        """Start a new generation of a page that is gone: its handles went with it."""
        self.advance(generation)
        self.retired.clear()

    def lookup(self, token: str, *, region: bool = False) -> RefEntry:
        """The live entry of `token`; STALE_ELEMENT_REFERENCE otherwise (an expired one carries
        `Expired` in `internal["expired"]`, for `renew`)."""
        entry = self.entries.get(token)
        if entry is None or entry.region != region:
            raise BrowserMeshError(ErrorCode.STALE_ELEMENT_REFERENCE)
        if entry.expires_at <= self.clock.monotonic():
            self.entries.pop(token, None)
            raise BrowserMeshError(
                ErrorCode.STALE_ELEMENT_REFERENCE, internal={"expired": Expired(entry)}
            )
        return entry

    def drop_expired(self) -> list[RefEntry]:
        """Remove the expired entries that `candidates.renew` could never renew (no role or no
        name: browser_find's refs) and return them for release. Their lookup answers
        STALE_ELEMENT_REFERENCE either way; without this, a page searched often between two
        captures would keep every handle ever handed out."""
        now = self.clock.monotonic()
        dropped = {
            token: entry
            for token, entry in self.entries.items()
            if entry.expires_at <= now and not entry.region and (not entry.role or not entry.name)
        }
        for token in dropped:
            del self.entries[token]
        return list(dropped.values())

    def add(self, handle: ElementHandle, role: str | None, name: str | None) -> str | None:
        """Register `handle` as a new ref of the current generation (`s{gen}c{n}`); None when
        the page never had a generation and none can be started here."""
        if self.generation == 0:
            if self.new_generation is None:
                return None
            self.generation = self.new_generation()
        self.added += 1
        token = f"s{base36(self.generation)}c{self.added}"
        self.entries[token] = RefEntry(
            handle, self.clock.monotonic() + self.ttl_s, role=role, name=name
        )
        return token


async def release_retired(registry: RefRegistry) -> None:
    """Dispose the handles of `registry`'s replaced refs (called after a capture and after a
    navigation). Best effort and bounded: a handle that cannot be released (its page is busy or
    gone) is freed with its page or context anyway."""
    retired, registry.retired = registry.retired, []
    await all_of(*(quietly(e.handle.dispose()) for e in retired))
