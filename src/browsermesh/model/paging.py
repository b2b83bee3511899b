"""Snapshot response bounding and cursor pagination (§6.6), and the snapshot result (§6.3).

Pure rules plus a small in-memory store of retained snapshot text per page. No I/O; the clocks
are injectable. The options a snapshot call takes are checked in
`browsermesh.model.snapshot_options` (their names are importable from here too).
"""

from __future__ import annotations

import re
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from browsermesh.errors import BrowserMeshError, ErrorCode, invalid_argument
from browsermesh.model.clock import iso_from_epoch
from browsermesh.model.ids import short_id
from browsermesh.model.snapshot_options import (
    ARIA_ONLY_KEYS,
    SNAPSHOT_OPTION_KEYS,
    SnapshotFormat,
    SnapshotOptions,
    normalize_snapshot_options,
)
from browsermesh.model.text import fit_prefix, utf8_len

__all__ = [
    "ARIA_ONLY_KEYS",
    "MAX_CURSOR_OFFSET",
    "MAX_RETAINED_SNAPSHOTS",
    "RETAINED_MAX_CHARS",
    "SNAPSHOT_OPTION_KEYS",
    "SNAPSHOT_TTL_SECONDS",
    "Page",
    "RetainedSnapshot",
    "SnapshotFormat",
    "SnapshotOptions",
    "SnapshotStore",
    "clip_retained",
    "content_format",
    "normalize_snapshot_options",
    "page_content",
    "parse_cursor",
]

RETAINED_MAX_CHARS = 1_000_000
"""§6.4 step 8: retained serializations are clipped to this many code points."""
MAX_RETAINED_SNAPSHOTS = 4
SNAPSHOT_TTL_SECONDS = 30.0
MAX_CURSOR_OFFSET = 2**53 - 1


# --------------------------------------------------------------------------------------------
# Bounding and pages
# --------------------------------------------------------------------------------------------


def clip_retained(content: str) -> tuple[str, bool]:
    """§6.4 step 8: ``(content cut to RETAINED_MAX_CHARS code points, whether it was cut)``."""
    if len(content) <= RETAINED_MAX_CHARS:
        return content, False
    return content[:RETAINED_MAX_CHARS], True


def content_format(fmt: SnapshotFormat, partial: bool) -> str:
    """The §6.1 ``contentFormat`` value."""
    base = "aria-yaml" if fmt == "aria" else "action-table"
    return base + "-fragment" if partial else base


@dataclass(frozen=True)
class Page:
    """One response's share of a serialization.

    Attributes:
        text: The returned code points.
        next_offset: Where the next page starts, or None when nothing follows.
        truncation: The §6.3 ``truncation`` object.
        partial: ``offsetChars > 0``, or more follows, or the source was clipped.
    """

    text: str
    next_offset: int | None
    truncation: dict[str, Any]
    partial: bool


def page_content(
    content: str,
    offset: int,
    max_chars: int,
    max_bytes: int,
    *,
    clipped: bool,
    stops: Sequence[int] = (),
) -> Page:
    """Take code points from ``offset`` until ``max_chars`` are taken or the next one would
    push the UTF-8 size over ``max_bytes`` (§6.6), ending early at the first of ``stops``
    after ``offset`` (where an action table's next page of refs begins; the newline before a
    stop is consumed but not returned).

    Raises `INVALID_ARGUMENT` when not even one code point fits (internal ``maxBytes``,
    ``requiredBytes``, ``offsetChars``) and `STALE_SNAPSHOT_CURSOR` for an offset at or past the
    end of non-empty content.
    """
    if offset < 0 or max_chars < 1 or max_bytes < 1:
        raise ValueError("offset must be >= 0 and the bounds >= 1")
    if offset > 0 and offset >= len(content):
        raise BrowserMeshError(
            ErrorCode.STALE_SNAPSHOT_CURSOR,
            internal={"reason": "offset out of range", "offsetChars": offset},
        )
    limit = offset + max_chars
    stop = next((s for s in stops if s > offset), len(content) + 1)
    stopped = stop <= min(limit, len(content))
    if stopped:
        limit = stop - 1  # the page's text ends before the newline that precedes the stop
    text = fit_prefix(content[offset:limit], max_chars, max_bytes)
    end = offset + len(text)
    if stopped and end == limit:
        end = stop  # the whole page fitted: the newline is consumed
    more = end < len(content)
    if not text and more:
        required = utf8_len(content[offset])
        error = invalid_argument(
            "maxBytes",
            f"at least {required}, the UTF-8 size of the next character (a cursor keeps the "
            "maxBytes of the call that returned it)",
        )
        error.internal.update(maxBytes=max_bytes, requiredBytes=required, offsetChars=offset)
        raise error
    returned_bytes = utf8_len(text)
    cut = offset + len(text)  # first code point not returned
    by_chars = more and len(text) == max_chars
    by_bytes = more and cut < len(content) and returned_bytes + utf8_len(content[cut]) > max_bytes
    if stopped and end == stop:
        by_chars = by_bytes = False  # the page ended at its last ref, not at a bound
    truncation = {
        "truncated": more or clipped,
        "byMaxChars": by_chars,
        "byMaxBytes": by_bytes,
        "originalChars": len(content),
        "originalBytes": utf8_len(content),
        "returnedChars": len(text),
        "returnedBytes": returned_bytes,
    }
    return Page(
        text=text,
        next_offset=end if more else None,
        truncation=truncation,
        partial=offset > 0 or more or clipped,
    )


_OFFSET_RE = re.compile(r"[0-9]{1,16}")


def parse_cursor(cursor: str) -> tuple[str, int]:
    """Split ``<snapshotId>.<offset>`` at the last ``.`` (§6.6).

    The id must be non-empty and the offset a positive decimal integer <= 2**53-1; otherwise
    `STALE_SNAPSHOT_CURSOR`.
    """
    snapshot_id, dot, offset_text = cursor.rpartition(".")
    if not dot or not snapshot_id or _OFFSET_RE.fullmatch(offset_text) is None:
        raise BrowserMeshError(ErrorCode.STALE_SNAPSHOT_CURSOR, internal={"reason": "malformed"})
    offset = int(offset_text)
    if not 1 <= offset <= MAX_CURSOR_OFFSET:
        raise BrowserMeshError(ErrorCode.STALE_SNAPSHOT_CURSOR, internal={"reason": "malformed"})
    return snapshot_id, offset


# --------------------------------------------------------------------------------------------
# Retained snapshots
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RetainedSnapshot:
    """Immutable retained serialization of one capture.

    Attributes:
        snapshot_id: ``short_id("c")`` (model.ids), e.g. ``c9k2x``; cursors are
            ``<snapshot_id>.<offset>``.
        content: The (possibly clipped) serialization.
        bounds: The original capture's ``appliedBounds`` (``maxChars``/``maxBytes`` page it).
        format: ``aria`` or ``actions``.
        clipped: The serialization was clipped (§6.4 step 8).
        expires_at: Monotonic expiry time (capture + 30 s).
        expires_at_iso: The same instant as an ISO-8601 UTC wall-clock string.
        stops: Where the pages of an action table start (see `page_content`).
    """

    snapshot_id: str
    content: str
    bounds: Mapping[str, Any]
    format: SnapshotFormat
    clipped: bool
    expires_at: float
    expires_at_iso: str
    stops: tuple[int, ...] = ()


class SnapshotStore:
    """Retained snapshots of one page: at most 4 (oldest evicted), 30 s TTL from capture.

    Expired entries are pruned on every call (no timers). ``now`` is a monotonic clock and
    ``wall_now`` a Unix-time clock, both in seconds; ``new_id`` makes snapshot ids.
    """

    def __init__(
        self,
        *,
        now: Callable[[], float] = time.monotonic,
        wall_now: Callable[[], float] = time.time,
        new_id: Callable[[], str] = lambda: short_id("c"),
        max_entries: int = MAX_RETAINED_SNAPSHOTS,
        ttl_seconds: float = SNAPSHOT_TTL_SECONDS,
    ) -> None:
        self._now = now
        self._wall_now = wall_now
        self._new_id = new_id
        self._max_entries = max_entries
        self._ttl = ttl_seconds
        self._entries: OrderedDict[str, RetainedSnapshot] = OrderedDict()

    def prune(self) -> None:
        """Drop expired entries (``expires_at <= now``)."""
        now = self._now()
        for key in [k for k, e in self._entries.items() if e.expires_at <= now]:
            del self._entries[key]

    def put(
        self,
        content: str,
        bounds: Mapping[str, Any],
        format: SnapshotFormat,
        clipped: bool,
        stops: Sequence[int] = (),
    ) -> str:
        """Retain ``content``; returns its new snapshot id (evicting the oldest beyond 4)."""
        self.prune()
        snapshot_id = self._new_id()
        self._entries[snapshot_id] = RetainedSnapshot(
            snapshot_id=snapshot_id,
            content=content,
            bounds=dict(bounds),
            format=format,
            clipped=clipped,
            expires_at=self._now() + self._ttl,
            expires_at_iso=iso_from_epoch(self._wall_now() + self._ttl),
            stops=tuple(stops),
        )
        while len(self._entries) > self._max_entries:
            self._entries.popitem(last=False)
        return snapshot_id

    def get(self, snapshot_id: str) -> RetainedSnapshot | None:
        """The live entry, or None when unknown, expired or evicted."""
        self.prune()
        return self._entries.get(snapshot_id)

    def clear(self) -> None:
        """Drop everything (navigation, action-and-wait, page close...)."""
        self._entries.clear()

    def __len__(self) -> int:
        self.prune()
        return len(self._entries)

    def first_page(
        self,
        content: str,
        bounds: Mapping[str, Any],
        format: SnapshotFormat,
        clipped: bool,
        stops: Sequence[int] = (),
    ) -> tuple[Page, dict[str, Any]]:
        """Page a fresh capture from offset 0; retain it only when more follows.

        Returns the page and the §6.3 ``pagination`` object (all nulls for a complete page).
        """
        self.prune()
        page = page_content(
            content,
            0,
            int(bounds["maxChars"]),
            int(bounds["maxBytes"]),
            clipped=clipped,
            stops=stops,
        )
        if page.next_offset is None:
            return page, {
                "snapshotId": None,
                "nextCursor": None,
                "offsetChars": 0,
                "expiresAt": None,
            }
        snapshot_id = self.put(content, bounds, format, clipped, stops)
        entry = self._entries[snapshot_id]
        return page, {
            "snapshotId": snapshot_id,
            "nextCursor": f"{snapshot_id}.{page.next_offset}",
            "offsetChars": 0,
            "expiresAt": entry.expires_at_iso,
        }

    def read(self, cursor: str) -> tuple[RetainedSnapshot, Page, dict[str, Any]]:
        """Serve a continuation: the entry, the page at the cursor's offset and ``pagination``.

        Malformed, unknown, expired or evicted cursors and offsets past the end raise
        `STALE_SNAPSHOT_CURSOR`.
        """
        snapshot_id, offset = parse_cursor(cursor)
        entry = self.get(snapshot_id)
        if entry is None:
            raise BrowserMeshError(ErrorCode.STALE_SNAPSHOT_CURSOR, internal={"reason": "unknown"})
        page = page_content(
            entry.content,
            offset,
            int(entry.bounds["maxChars"]),
            int(entry.bounds["maxBytes"]),
            clipped=entry.clipped,
            stops=entry.stops,
        )
        next_cursor = None if page.next_offset is None else f"{snapshot_id}.{page.next_offset}"
        return (
            entry,
            page,
            {
                "snapshotId": snapshot_id,
                "nextCursor": next_cursor,
                "offsetChars": offset,
                "expiresAt": entry.expires_at_iso,
            },
        )


def snapshot_result(
    piece: Page,
    pagination: dict[str, Any],
    fmt: SnapshotFormat,
    bounds: Mapping[str, Any],
    refs: list[dict[str, str]] | None,
    *,
    given: bool,
    stops: Sequence[int] = (),
) -> dict[str, Any]:
    """The ``browser_snapshot`` result without the ids (issue 15 byte hygiene).

    Parts that carry nothing are left out: ``partial`` unless true, ``refs`` for action
    tables (each line carries its ref, role and name) and on continuations, ``omissions``
    entries that are zero, ``pagination`` and ``truncation`` for a complete first page,
    ``appliedBounds`` unless the call gave an option besides ``format``. An action table's
    page reports ``listedRefs`` and ``omittedRefs`` (refs on later pages and beyond the
    capture ceiling) in ``truncation``.

    ``bounds`` holds the public applied bounds plus ``_omissions`` and ``_pageRefs``.
    """
    omissions = dict(bounds.get("_omissions", {}))
    page_refs = [int(n) for n in bounds.get("_pageRefs", [])]
    public = {k: v for k, v in bounds.items() if not k.startswith("_")}
    offset = int(pagination["offsetChars"])
    out: dict[str, Any] = {
        "snapshot": piece.text,
        "contentFormat": content_format(fmt, piece.partial),
    }
    if piece.partial:  # `partial: false` only repeats what a non-fragment contentFormat says
        out["partial"] = True
    truncation = dict(piece.truncation)
    if fmt == "aria" and refs is not None and public.get("includeRefs"):
        out["refs"] = refs
    if fmt == "actions" and page_refs:
        index = sum(1 for stop in stops if stop <= offset)
        later = sum(page_refs[index + 1 :]) + int(omissions.get("maxRefsNodes", 0))
        omissions["maxRefsNodes"] = later
        truncation["listedRefs"] = page_refs[index] if index < len(page_refs) else 0
        truncation["omittedRefs"] = later
    kept = {k: v for k, v in omissions.items() if v}
    if kept:
        out["omissions"] = kept
    if given:
        out["appliedBounds"] = public
    if pagination["nextCursor"] is not None or offset:
        out["pagination"] = pagination
    if truncation["truncated"] or offset:
        out["truncation"] = truncation
    return out
