"""Telling a layer above that a session changed, without importing it (issue 17).

The runtime calls every registered `SessionWatcher` synchronously, on the event loop, at the
points where a session appears, changes status, ends, gains or loses a page, shows another URL
or title after an operation, or gains or loses an artifact. The MCP layer turns these into
resource notifications; the runtime knows nothing of MCP.

Most changes are found where they happen and cost one call per watcher. Only URL and title
changes need looking for: after each completed operation, and only for a principal some watcher
`watches_pages`, the runtime reads the session's pages (one title read each) and compares their
`fingerprint` with the one kept from the previous operation.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

ChangeKind = Literal["created", "closed", "state", "pages", "artifacts"]
"""`created`: the session was registered (it is live); `closed`: it ended (closed or failed: it
is no longer live); `state`: another status otherwise (ready, closing, a failed record closed);
`pages`: a page opened or closed, or a page's URL, title, crash flag or default changed;
`artifacts`: an artifact was added or changed state."""


@dataclass(frozen=True)
class SessionChange:
    """One change of one session, for its owner's eyes only."""

    principal: str
    session_id: str
    kind: ChangeKind


class SessionWatcher(Protocol):
    """What the runtime tells about its sessions, and asks about its watchers."""

    def session_changed(self, change: SessionChange) -> None:
        """A session changed. Called on the event loop; must return at once and never raise."""

    def watches_pages(self, principal: str) -> bool:
        """Whether `principal`'s page URL and title changes are wanted now (finding them costs
        a title read per page after every operation, so the runtime asks first)."""


TIMESTAMP_KEYS = frozenset({"createdAt", "lastActivityAt"})
"""View fields that change with time alone; a change of theirs is not a change worth telling."""


def _without_timestamps(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _without_timestamps(v) for k, v in value.items() if k not in TIMESTAMP_KEYS}
    if isinstance(value, list | tuple):
        return [_without_timestamps(v) for v in value]
    return value


def fingerprint(pages: Iterable[Mapping[str, Any]]) -> str:
    """What a session's page views show, timestamps left out: equal fingerprints mean a reader
    of the views would see nothing new."""
    return json.dumps(_without_timestamps(list(pages)), sort_keys=True, ensure_ascii=False)
