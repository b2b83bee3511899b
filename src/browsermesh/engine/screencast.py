"""Pictures of a managed page for the live view (issue 21): Chromium's screencast over CDP, a
screenshot when the page sends none, and its title, without touching what the agent sees.

`Screencaster.open` gives a `PageScreencast` for one page, started by the live view when the
first viewer of the page's principal arrives and closed when the last leaves. It opens a CDP
session of its own on the page (as engine/policy.py's redirect guard does) and, on it:

- `Page.startScreencast` (JPEG, bounded width and height): Chromium sends a frame when the page
  repaints. Each frame is forwarded and acknowledged at most `PictureBounds.max_fps` times a
  second; Chromium captures nothing more while its frames wait for their acknowledgement, so
  the pace bounds the browser's work too. Every frame received is acknowledged (on close too).
- `Page.captureScreenshot` of the viewport, scaled into the bounds, when no picture went for
  `PictureBounds.stale_s` (a still page, or a screencast that could not start).
- `Target.getTargetInfo` for the title: the browser process answers, no script runs in the page.

Nothing here navigates, focuses, resizes or evaluates in the page, and nothing waits in the
session's queue: the agent's operations neither see nor wait for the pictures. Every failure
(a closed or crashed page, a browser going away) is swallowed: the picture just stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Mapping
from typing import Any, Final

from browsermesh.model.frame_pacing import Frame, FramePacer, PictureBounds, fit_scale
from browsermesh.model.tasks import TaskOwner

__all__ = ["FrameSink", "PageScreencast", "Screencaster"]

FrameSink = Callable[[Frame], None]
_CDP_BUDGET_S: Final = 5.0
"""One CDP round trip of the pictures may take this long (a hung page shows no new picture)."""
_TITLE_BUDGET_S: Final = 1.0
_FIRST_LOOK_S: Final = 0.5
"""How long after the start the fallback first looks (the screencast's first frame is faster)."""


class PageScreencast:
    """The pictures and the title of one page while someone watches (see the module doc)."""

    def __init__(
        self,
        page: Any,
        sink: FrameSink,
        bounds: PictureBounds,
        *,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        self._page = page  # a Playwright Page
        self._sink = sink
        self._bounds = bounds
        self._now = now
        self._pacer = FramePacer(bounds.interval_s)
        self._session: Any = None
        self._casting = False
        self._closed = False
        self._pending: str | None = None  # the newest frame not forwarded yet
        self._unacked: list[int] = []
        self._flushing = False
        self._tasks = TaskOwner()

    @property
    def casting(self) -> bool:
        """Whether Chromium's screencast runs (else only screenshots come)."""
        return self._casting

    async def start(self) -> None:
        """Open the CDP session, start the screencast and the fallback; never raises."""
        try:
            session = await asyncio.wait_for(
                self._page.context.new_cdp_session(self._page), _CDP_BUDGET_S
            )
        except Exception:
            return  # no CDP session (the page closed meanwhile): no pictures, no title
        if self._closed:
            await _detach(session)
            return
        self._session = session
        session.on("Page.screencastFrame", self._on_frame)
        b = self._bounds
        params = {
            "format": "jpeg",
            "quality": b.jpeg_quality,
            "maxWidth": b.max_width,
            "maxHeight": b.max_height,
        }
        try:
            await asyncio.wait_for(session.send("Page.startScreencast", params), _CDP_BUDGET_S)
            self._casting = True
        except Exception:
            self._casting = False  # screenshots only
        self._tasks.spawn(self._fallback(), name="screencast-fallback")

    async def title(self) -> str | None:
        """The page's title as the browser knows it, or None when it cannot say."""
        session = self._session
        if session is None or self._closed:
            return None
        try:
            info = await asyncio.wait_for(session.send("Target.getTargetInfo"), _TITLE_BUDGET_S)
        except Exception:
            return None
        title = (info.get("targetInfo") or {}).get("title")
        return title if isinstance(title, str) else None

    async def close(self) -> None:
        """Stop the pictures: the tasks end, pending frames are acknowledged, the screencast
        stops and the CDP session is detached. Idempotent."""
        if self._closed:
            return
        self._closed = True
        await self._tasks.aclose()
        session, self._session = self._session, None
        if session is None:
            return
        with contextlib.suppress(Exception):
            session.remove_listener("Page.screencastFrame", self._on_frame)
        await self._ack_all(session)
        if self._casting:
            await _send(session, "Page.stopScreencast", {})
        await _detach(session)

    # ------------------------------------------------------------------ screencast

    def _on_frame(self, event: Mapping[str, Any]) -> None:
        """A screencast frame: keep the newest, acknowledge them all at the next paced slot."""
        frame_id = event.get("sessionId")
        if isinstance(frame_id, int):
            self._unacked.append(frame_id)
        data = event.get("data")
        if isinstance(data, str) and data:
            self._pending = data
        if not self._flushing and not self._closed:
            self._flushing = True
            self._tasks.spawn(self._flush(), name="screencast-flush")

    async def _flush(self) -> None:
        try:
            while (self._pending is not None or self._unacked) and not self._closed:
                delay = self._pacer.wait_s(self._now())
                if delay > 0:
                    await asyncio.sleep(delay)
                data, self._pending = self._pending, None
                if data is not None:
                    self._deliver(Frame(data, "screencast"))
                if self._session is not None:
                    await self._ack_all(self._session)
        finally:
            self._flushing = False

    async def _ack_all(self, session: Any) -> None:
        acks, self._unacked = self._unacked, []
        for frame_id in acks:
            await _send(session, "Page.screencastFrameAck", {"sessionId": frame_id})

    def _deliver(self, frame: Frame) -> None:
        self._pacer.sent(self._now())
        with contextlib.suppress(Exception):  # a sink must not stop the pictures
            self._sink(frame)

    # ------------------------------------------------------------------ fallback

    async def _fallback(self) -> None:
        """A screenshot whenever no picture went for `stale_s`."""
        stale_s = self._bounds.stale_s
        await asyncio.sleep(min(stale_s, _FIRST_LOOK_S))
        while not self._closed:
            now = self._now()
            if self._pacer.stale(now, stale_s) and not self._flushing:
                await self._screenshot()
                wait = stale_s
            else:
                last = self._pacer.last if self._pacer.last is not None else now
                wait = max(0.05, last + stale_s - now)
            await asyncio.sleep(wait)

    async def _screenshot(self) -> None:
        session = self._session
        if session is None:
            return
        b = self._bounds
        try:
            metrics = await asyncio.wait_for(session.send("Page.getLayoutMetrics"), _CDP_BUDGET_S)
            viewport = metrics.get("cssVisualViewport") or {}
            width = float(viewport.get("clientWidth", 0))
            height = float(viewport.get("clientHeight", 0))
            if width <= 0 or height <= 0:
                return
            clip = {
                "x": float(viewport.get("pageX", 0)),
                "y": float(viewport.get("pageY", 0)),
                "width": width,
                "height": height,
                "scale": fit_scale(width, height, b.max_width, b.max_height),
            }
            shot = await asyncio.wait_for(
                session.send(
                    "Page.captureScreenshot",
                    {
                        "format": "jpeg",
                        "quality": b.jpeg_quality,
                        "clip": clip,
                        "captureBeyondViewport": False,
                    },
                ),
                _CDP_BUDGET_S,
            )
        except Exception:
            return
        data = shot.get("data")
        if isinstance(data, str) and data and not self._closed:
            self._deliver(Frame(data, "screenshot"))


class Screencaster:
    """Opens the pictures of a managed page (`PlaywrightEngine`'s page handles)."""

    def open(self, handle: Any, sink: FrameSink, bounds: PictureBounds) -> PageScreencast:
        return PageScreencast(handle.page, sink, bounds)


async def _send(session: Any, method: str, params: dict[str, Any]) -> None:
    with contextlib.suppress(Exception):  # the page or its target went away meanwhile
        await asyncio.wait_for(session.send(method, params), _CDP_BUDGET_S)


async def _detach(session: Any) -> None:
    with contextlib.suppress(Exception):
        await asyncio.wait_for(session.detach(), _CDP_BUDGET_S)
