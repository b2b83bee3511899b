"""The live view's runtime side (issue 21): what a principal's viewers see, and the pictures
that run only while one of them watches.

`LiveView` is a `SessionWatcher` of the runtime. A viewer joins with `watch(principal)` and
reads `ViewerFeed.next()` until it leaves. The first viewer of a principal starts a `_Watch`:
one task that, every `refresh_s` and at once when a session of that principal changes,

- builds the principal's grid (`grid_state`): each live or failed session's name, labels,
  status, its pages' sanitized URLs and titles, and its last operations (tool, outcome code,
  duration: never an argument's value), and hands it to the viewers when it changed;
- keeps one picture stream (`FrameStream`, engine/screencast.py for Chromium) per page of the
  principal's ready sessions, opening and closing them as pages come and go.

The last viewer leaving stops the watch: its task ends and every stream closes, so with nobody
watching nothing runs. Nothing here queues behind or on a session: a page's title is read as
browser_get_title reads it (password values redacted), but only again when the browser's own
answer (asked through the picture stream, no page script runs) or the URL changed; URLs come
from the engine's bookkeeping.

A viewer that reads slowly never holds anything up: its feed keeps only the newest grid and the
newest picture of each page, so what it has not read yet is replaced, never piled up.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Protocol

from browsermesh.engine.screencast import FrameSink, Screencaster
from browsermesh.model.clock import iso_from_epoch
from browsermesh.model.frame_pacing import HELD_BOUNDS, Frame, PictureBounds
from browsermesh.model.tasks import TaskOwner, all_of, all_settled, cancel_and_await
from browsermesh.persistence.artifact_record import KEPT_KINDS
from browsermesh.redact import sanitize_url
from browsermesh.runtime.session import PageRecord, SessionRecord
from browsermesh.runtime.watchers import SessionChange
from browsermesh.text_redact import redact_text

if TYPE_CHECKING:
    from browsermesh.runtime.runtime import Runtime

__all__ = [
    "MAX_PICTURE_STREAMS",
    "MAX_VIEW_SESSIONS",
    "FrameSource",
    "FrameStream",
    "LiveView",
    "Viewer",
    "ViewerFeed",
    "shown_url",
]

MAX_VIEW_SESSIONS: Final = 100
"""Sessions one grid shows at most (registry order)."""
MAX_PICTURE_STREAMS: Final = 32
"""Pages of one principal that get a live picture at most (the others show none)."""
SHOWN_OPERATIONS: Final = 5
"""Last operations a session's card shows."""
SHOWN_RECORDINGS: Final = 10
"""Traces and videos a card links (the newest)."""
_URL_CHARS: Final = 256
_TITLE_CHARS: Final = 200


class FrameStream(Protocol):
    """The pictures and the title of one page (engine/screencast.py's `PageScreencast`)."""

    async def start(self) -> None: ...
    async def title(self) -> str | None: ...
    def pace(self, bounds: PictureBounds) -> None: ...
    def hurry(self) -> None: ...
    async def close(self) -> None: ...


class FrameSource(Protocol):
    """Opens a page's `FrameStream` (engine/screencast.py's `Screencaster`)."""

    def open(self, handle: Any, sink: FrameSink, bounds: PictureBounds) -> FrameStream: ...


def shown_url(url: str) -> str:
    """A page URL as the view shows it: the one sanitizer in origin-and-path mode (no query:
    a GET form's values land there), and ``about:blank`` as itself."""
    if url == "about:blank":
        return url
    return sanitize_url(url, max_chars=_URL_CHARS, origin_and_path=True)


class Viewer(Protocol):
    """What the watch hands a principal's grid and pictures to (`ViewerFeed`, or a feed that
    merges several replicas' grids, transports/view_fleet.py)."""

    principal: str

    def put_state(self, state: dict[str, Any]) -> None: ...
    def put_frame(self, session_id: str, page_id: str, frame: Frame) -> None: ...


class ViewerFeed:
    """One viewer's mailbox: the newest grid and the newest picture of each page, unread."""

    def __init__(self, principal: str) -> None:
        self.principal = principal
        self._state: dict[str, Any] | None = None
        self._frames: dict[tuple[str, str], Frame] = {}
        self._wake = asyncio.Event()

    def put_state(self, state: dict[str, Any]) -> None:
        self._state = state
        self._wake.set()

    def put_frame(self, session_id: str, page_id: str, frame: Frame) -> None:
        self._frames[(session_id, page_id)] = frame
        self._wake.set()

    async def next(self) -> list[tuple[str, dict[str, Any]]]:
        """Wait for news: `("state", grid)` first when the grid changed, then one
        `("frame", {sessionId, pageId, source, data})` per page with a new picture."""
        await self._wake.wait()
        self._wake.clear()
        out: list[tuple[str, dict[str, Any]]] = []
        if self._state is not None:
            out.append(("state", self._state))
            self._state = None
        frames, self._frames = self._frames, {}
        for (session_id, page_id), frame in frames.items():
            out.append(
                (
                    "frame",
                    {
                        "sessionId": session_id,
                        "pageId": page_id,
                        "source": frame.source,
                        "data": frame.data,
                    },
                )
            )
        return out


@dataclass(eq=False)
class _Watch:
    """What runs for one principal while it has viewers."""

    principal: str
    viewers: set[Viewer] = field(default_factory=set)
    streams: dict[tuple[str, str], FrameStream] = field(default_factory=dict)
    dirty: asyncio.Event = field(default_factory=asyncio.Event)
    state: dict[str, Any] | None = None
    frames: dict[tuple[str, str], Frame] = field(default_factory=dict)
    # page -> (what the title was read for, the title read): see LiveView._title
    titles: dict[tuple[str, str], tuple[Any, str | None]] = field(default_factory=dict)
    # session -> its newest finished operation seen (a new one hurries its pages' pictures)
    last_ops: dict[str, Any] = field(default_factory=dict)
    task: asyncio.Task[None] | None = None
    # Set before the task is cancelled, so that its loop ends even if a wait swallowed the
    # cancellation (asyncio.wait_for can, on Python 3.11).
    stopped: bool = False

    def sink(self, session_id: str, page_id: str) -> FrameSink:
        def deliver(frame: Frame) -> None:
            self.frames[(session_id, page_id)] = frame
            for viewer in list(self.viewers):
                viewer.put_frame(session_id, page_id, frame)

        return deliver


class LiveView:
    """The live view of one runtime: viewers, their grids and the pictures (module doc)."""

    def __init__(
        self,
        runtime: Runtime,
        source: FrameSource | None = None,
        *,
        bounds: PictureBounds | None = None,
        refresh_s: float = 1.0,
    ) -> None:
        # A service on the runtime's core (the transport hands it the facade).
        self.core = runtime.core
        self.source: FrameSource = source if source is not None else Screencaster()
        self.bounds = bounds or PictureBounds()
        self.refresh_s = refresh_s
        self._watches: dict[str, _Watch] = {}
        # The watches' refresh tasks and their stops; `aclose` awaits them.
        self.tasks = TaskOwner()
        self._closed = False
        self.core.watchers.append(self)

    # ------------------------------------------------------------------ SessionWatcher

    def session_changed(self, change: SessionChange) -> None:
        watch = self._watches.get(change.principal)
        if watch is not None:
            watch.dirty.set()

    def watches_pages(self, principal: str) -> bool:
        """Never: the watch reads titles off the queue itself, so operations pay nothing."""
        return False

    # ------------------------------------------------------------------ viewers

    @property
    def watched(self) -> frozenset[str]:
        """The principals someone watches now."""
        return frozenset(self._watches)

    def streams_of(self, principal: str) -> int:
        """How many picture streams run for `principal` (0 when nobody watches)."""
        watch = self._watches.get(principal)
        return 0 if watch is None else len(watch.streams)

    @contextlib.asynccontextmanager
    async def watch(self, principal: str) -> AsyncIterator[ViewerFeed]:
        """A viewer of `principal`'s sessions, until the block ends."""
        feed = self.join(principal)
        try:
            yield feed
        finally:
            self.leave(feed)

    def join(self, principal: str) -> ViewerFeed:
        """Add a viewer (the first one starts the watch); `leave` must follow."""
        feed = ViewerFeed(principal)
        self.add(feed)
        return feed

    def add(self, feed: Viewer) -> None:
        """Add `feed` as a viewer of its principal (the first one starts the watch); it gets
        the newest grid and pictures at once; `leave` must follow."""
        if self._closed:
            raise RuntimeError("the live view is closed")
        principal = feed.principal
        watch = self._watches.get(principal)
        if watch is None:
            watch = _Watch(principal)
            self._watches[principal] = watch
            watch.task = self.tasks.spawn(self._run(watch), name=f"live-{principal}")
        watch.viewers.add(feed)
        if watch.state is not None:
            feed.put_state(watch.state)
        for (session_id, page_id), frame in watch.frames.items():
            feed.put_frame(session_id, page_id, frame)

    def leave(self, feed: Viewer) -> None:
        """Remove a viewer; the last one's leaving stops the watch (in an owned task)."""
        watch = self._watches.get(feed.principal)
        if watch is None or feed not in watch.viewers:
            return
        watch.viewers.discard(feed)
        if not watch.viewers:
            del self._watches[feed.principal]
            self.tasks.spawn(self._stop(watch), name=f"live-stop-{feed.principal}")

    async def aclose(self) -> None:
        """Stop every watch and close every stream (shutdown); the view takes no new viewer."""
        self._closed = True
        with contextlib.suppress(ValueError):
            self.core.watchers.remove(self)
        watches = list(self._watches.values())
        self._watches.clear()
        await all_of(*(self._stop(w) for w in watches))
        await self.tasks.drain()

    # ------------------------------------------------------------------ the watch

    async def _run(self, watch: _Watch) -> None:
        while not watch.stopped:
            watch.dirty.clear()
            state: dict[str, Any] | None
            try:
                await self._reconcile(watch)
                state = await self.grid_state(watch)
            except Exception:  # a view must never stop on one bad read: try again next time
                self.core.log.warn("view.refresh_failed", principal=watch.principal)
                state = watch.state
            if state is not None and state != watch.state:
                watch.state = state
                for viewer in list(watch.viewers):
                    viewer.put_state(state)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.refresh_s):
                    await watch.dirty.wait()

    async def _stop(self, watch: _Watch) -> None:
        watch.stopped = True
        if watch.task is not None:
            await cancel_and_await(watch.task)
        streams = list(watch.streams.values())
        watch.streams.clear()
        await all_settled(*(s.close() for s in streams))

    def _sessions(self, principal: str) -> list[SessionRecord]:
        """The principal's sessions that are not closed, and closed ones whose traces or
        videos remain (their cards link them)."""
        records = [
            rec
            for rec in self.core.sessions_snapshot().values()
            if rec.principal == principal
            and (rec.status != "closed" or self._recordings(rec.session_id))
        ]
        return records[:MAX_VIEW_SESSIONS]

    async def _reconcile(self, watch: _Watch) -> None:
        """One stream per page of the principal's ready sessions (at most
        `MAX_PICTURE_STREAMS`); streams of pages that went away are closed."""
        wanted: dict[tuple[str, str], Any] = {}
        hurried: set[str] = set()
        held: set[tuple[str, str]] = set()  # pages a person holds: larger, faster pictures
        for rec in self._sessions(watch.principal):
            if rec.status != "ready":
                continue
            hold = rec.holds.hold
            if hold is not None:
                held.add((rec.session_id, hold.page_id))
            last = rec.recent_ops[-1] if rec.recent_ops else None
            if watch.last_ops.get(rec.session_id) is not last:
                watch.last_ops[rec.session_id] = last
                hurried.add(rec.session_id)
            for page in rec.pages.values():
                if len(wanted) < MAX_PICTURE_STREAMS:
                    wanted[(rec.session_id, page.page_id)] = page.handle
        for sid in set(watch.last_ops) - {sid for sid, _ in wanted}:
            del watch.last_ops[sid]
        gone = [key for key in watch.streams if key not in wanted]
        closing = [watch.streams.pop(key) for key in gone]
        for key in gone:
            watch.frames.pop(key, None)
            watch.titles.pop(key, None)
        opened: list[FrameStream] = []
        for key, handle in wanted.items():
            if key in watch.streams and key[0] in hurried:
                watch.streams[key].hurry()
            bounds = HELD_BOUNDS if key in held else self.bounds
            if key not in watch.streams:
                stream = self.source.open(handle, watch.sink(*key), bounds)
                watch.streams[key] = stream
                opened.append(stream)
            else:
                watch.streams[key].pace(bounds)
        await all_settled(*(s.close() for s in closing), *(s.start() for s in opened))

    async def grid_state(self, watch: _Watch) -> dict[str, Any]:
        """The grid of the watched principal's sessions as the view shows it (module doc)."""
        records = self._sessions(watch.principal)
        pairs = [(rec, page) for rec in records for page in list(rec.pages.values())]
        titles = await all_of(*(self._title(watch, rec, page) for rec, page in pairs))
        title_of = {
            (rec.session_id, page.page_id): title
            for (rec, page), title in zip(pairs, titles, strict=True)
        }
        for key in set(watch.titles) - set(title_of):
            del watch.titles[key]  # a page that went away
        return {
            "principal": watch.principal,
            "sessions": [self._card(rec, title_of, watch.streams) for rec in records],
        }

    async def _title(self, watch: _Watch, rec: SessionRecord, page: PageRecord) -> str | None:
        """The page's title as browser_get_title shows it (password values redacted: the
        engine reads them in the page), read again only when the browser's own cheap answer
        or the URL changed since the last read (so a busy session's operations do not each
        cost a title read in the page)."""
        key = (rec.session_id, page.page_id)
        stream = watch.streams.get(key)
        raw = await _probe(stream)
        marker = (raw, self.core.engine.current_url(page.handle), page.handle.crashed)
        known = watch.titles.get(key)
        if known is not None and known[0] == marker:
            return known[1]
        title = await self.core.title_peek(page)
        watch.titles[key] = (marker, title)
        return title

    def _card(
        self,
        rec: SessionRecord,
        titles: dict[tuple[str, str], str | None],
        streams: dict[tuple[str, str], FrameStream],
    ) -> dict[str, Any]:
        pages = []
        for page in list(rec.pages.values()):
            key = (rec.session_id, page.page_id)
            title = titles.get(key)
            pages.append(
                {
                    "pageId": page.page_id,
                    "url": shown_url(self.core.engine.current_url(page.handle)),
                    "title": None if title is None else redact_text(title, max_chars=_TITLE_CHARS),
                    "isDefault": page.page_id == rec.default_page_id,
                    "crashed": bool(page.handle.crashed),
                    "picture": key in streams,
                }
            )
        operations = [
            {
                "tool": note.tool,
                "code": note.code,
                "durationMs": note.duration_ms,
                "at": iso_from_epoch(note.at),
            }
            for note in list(rec.recent_ops)[-SHOWN_OPERATIONS:]
        ]
        card: dict[str, Any] = {
            "sessionId": rec.session_id,
            "name": rec.name,
            "metadata": dict(rec.metadata),
            "status": rec.status,
            "createdAt": rec.created_at,
            "pages": pages,
            "operations": operations,
        }
        if rec.failure_code is not None:
            card["failureCode"] = rec.failure_code.value
        hold = rec.holds.hold
        if hold is not None:
            card["heldBy"] = hold.principal
            card["heldPageId"] = hold.page_id
        if rec.holds.help_reason is not None:
            card["helpWanted"] = rec.holds.help_reason
        recordings = self._recordings(rec.session_id)
        if recordings:
            card["recordings"] = recordings
        return card

    def _recordings(self, session_id: str) -> list[dict[str, Any]]:
        """The session's saved traces and videos (newest first), for the card's links."""
        return [
            {"artifactId": a.artifact_id, "kind": a.kind, "name": a.name, "size": a.size}
            for a in self.core.files.store.list(session_id)
            if a.kind in KEPT_KINDS and a.state == "completed"
        ][:SHOWN_RECORDINGS]


async def _probe(stream: FrameStream | None) -> str | None:
    if stream is None:
        return None
    try:
        return await stream.title()
    except Exception:
        return None
