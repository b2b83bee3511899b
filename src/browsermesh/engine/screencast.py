"""Pictures of a managed page for the live view (issue 21): Chromium's screencast over CDP, a
screenshot when it sends nothing, and the page's title, without touching what the agent sees.

`Screencaster.open` gives a `PageScreencast` for one page, started by the live view when the
first viewer of the page's principal arrives and closed when the last leaves. It opens a CDP
session of its own on the page (as engine/policy.py's redirect guard does) and takes one
picture at a time, at most `PictureBounds.max_fps` a second:

- `Page.startScreencast` (JPEG, bounded width and height) until its first frame, then
  `Page.stopScreencast`. A running screencast makes Chromium capture every compositor frame of
  a changing page (tens a second, however slowly frames are acknowledged; measured on an
  animated page: 3 to 4 times the CPU of the page itself), so it runs only for the frame it
  was started for. Every frame received is acknowledged at once.
- `Page.captureScreenshot` of the viewport, scaled into the bounds, when the screencast cannot
  start or sends no frame within `PictureBounds.frame_wait_s`.
- A picture equal to the previous one is not sent again, and the next is taken twice as late,
  up to `PictureBounds.idle_max_s`: a still page costs a capture every few seconds. `hurry`
  (the live view calls it when one of the session's operations ended) goes back to the
  shortest wait.
- While a person holds the page (`PictureBounds.continuous`, issue 34) the screencast keeps
  running instead, and each new frame it sends is passed on, at most `max_fps` a second: what
  the person does shows at once, at the cost of Chromium capturing the changing page.
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

from browsermesh.engine.bounded import bounded
from browsermesh.model.frame_pacing import Frame, FramePacer, PictureBounds, fit_scale
from browsermesh.model.tasks import TaskOwner

__all__ = ["FrameSink", "PageScreencast", "Screencaster"]

FrameSink = Callable[[Frame], None]
_CDP_BUDGET_MS: Final = 5_000
"""One CDP round trip of the pictures may take this long (a hung page shows no new picture)."""
_TITLE_BUDGET_MS: Final = 1_000


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
        self._pacer = FramePacer(bounds.interval_s, bounds.idle_max_s)
        self._session: Any = None
        self._casting = True  # until a start fails: then screenshots only
        self._closed = False
        self._frame: str | None = None  # the frame the running screencast was started for
        self._following = False  # a continuous screencast runs (bounds.continuous)
        self._arrived = asyncio.Event()
        self._hurried = asyncio.Event()
        self._last: str | None = None  # the last picture sent
        self._tasks = TaskOwner()  # the picture loop
        self._acks = TaskOwner()  # acknowledgements: awaited, never cancelled, on close

    @property
    def casting(self) -> bool:
        """Whether pictures come from Chromium's screencast (else from screenshots)."""
        return self._casting

    async def start(self) -> None:
        """Open the CDP session and start taking pictures; never raises."""
        try:
            session = await bounded(self._page.context.new_cdp_session(self._page), _CDP_BUDGET_MS)
        except Exception:
            return  # no CDP session (the page closed meanwhile): no pictures, no title
        if self._closed:
            await _detach(session)
            return
        self._session = session
        session.on("Page.screencastFrame", self._on_frame)
        self._tasks.spawn(self._pictures(), name="screencast-pictures")

    async def title(self) -> str | None:
        """The page's title as the browser knows it, or None when it cannot say."""
        session = self._session
        if session is None or self._closed:
            return None
        try:
            info = await bounded(session.send("Target.getTargetInfo"), _TITLE_BUDGET_MS)
        except Exception:
            return None
        title = (info.get("targetInfo") or {}).get("title")
        return title if isinstance(title, str) else None

    def pace(self, bounds: PictureBounds) -> None:
        """Take the pictures within `bounds` from now on (a page a person holds gets larger,
        more frequent ones), starting with the next one at once."""
        if bounds == self._bounds:
            return
        self._bounds = bounds
        self._pacer = FramePacer(bounds.interval_s, bounds.idle_max_s)
        self._hurried.set()

    def hurry(self) -> None:
        """The page probably changed (its session's operation ended): the next picture comes
        at the shortest wait again, even after a still spell."""
        self._pacer.hurry()
        self._hurried.set()

    async def close(self) -> None:
        """Stop the pictures: the tasks end, the screencast stops and the CDP session is
        detached. Idempotent."""
        if self._closed:
            return
        self._closed = True
        await self._tasks.aclose()
        await self._acks.drain()  # every frame received is acknowledged (each send is bounded)
        session, self._session = self._session, None
        if session is None:
            return
        with contextlib.suppress(Exception):
            session.remove_listener("Page.screencastFrame", self._on_frame)
        await _send(session, "Page.stopScreencast", {})
        await _detach(session)

    # ------------------------------------------------------------------ pictures

    async def _pictures(self) -> None:
        while not self._closed:
            if self._bounds.continuous and self._casting:
                await self._follow()
                continue
            self._hurried.clear()
            with contextlib.suppress(TimeoutError):
                await bounded(self._hurried.wait(), self._pacer.wait_s(self._now()) * 1000)
            await asyncio.sleep(self._pacer.wait_s(self._now()))  # hurried: the shortest wait
            data, source = await self._cast_one(), "screencast"
            if data is None:
                data, source = await self._screenshot(), "screenshot"
            changed = data is not None and data != self._last
            self._pacer.taken(self._now(), changed)
            if changed and data is not None and not self._closed:
                self._last = data
                with contextlib.suppress(Exception):  # a sink must not stop the pictures
                    self._sink(Frame(data, source))

    def _on_frame(self, event: Mapping[str, Any]) -> None:
        """A screencast frame: acknowledged at once; the first one after a start is kept (a
        continuous screencast keeps the newest)."""
        frame_id = event.get("sessionId")
        session = self._session
        if isinstance(frame_id, int) and session is not None and not self._closed:
            self._acks.spawn(_send(session, "Page.screencastFrameAck", {"sessionId": frame_id}))
        data = event.get("data")
        if isinstance(data, str) and data and (self._frame is None or self._following):
            self._frame = data
            self._arrived.set()

    async def _follow(self) -> None:
        """A continuous screencast while the bounds ask for one: each new frame is passed on,
        at most `max_fps` a second (the newest wins); stopped when the bounds change."""
        session, bounds = self._session, self._bounds
        if session is None:
            return
        self._frame = None
        self._arrived.clear()
        self._following = True
        try:
            await bounded(
                session.send("Page.startScreencast", _cast_params(bounds)), _CDP_BUDGET_MS
            )
        except Exception:
            self._following = False
            self._casting = False  # this page (or browser) has no screencast: screenshots
            return
        try:
            while not self._closed and self._bounds is bounds:
                if self._frame is None:
                    self._arrived.clear()
                    with contextlib.suppress(TimeoutError):  # wake to see the bounds change
                        await bounded(self._arrived.wait(), bounds.idle_max_s * 1000)
                data, self._frame = self._frame, None
                if data is not None and data != self._last and not self._closed:
                    self._last = data
                    with contextlib.suppress(Exception):
                        self._sink(Frame(data, "screencast"))
                    await asyncio.sleep(bounds.interval_s)  # at most max_fps pictures a second
        finally:
            self._following = False
            self._frame = None
            await _send(session, "Page.stopScreencast", {})

    async def _cast_one(self) -> str | None:
        """One screencast frame: start, wait for the first frame, stop."""
        session = self._session
        if session is None or not self._casting:
            return None
        b = self._bounds
        self._frame = None
        self._arrived.clear()
        try:
            await bounded(session.send("Page.startScreencast", _cast_params(b)), _CDP_BUDGET_MS)
        except Exception:
            self._casting = False  # this page (or browser) has no screencast: screenshots
            return None
        try:
            with contextlib.suppress(TimeoutError):
                await bounded(self._arrived.wait(), b.frame_wait_s * 1000)
        finally:
            await _send(session, "Page.stopScreencast", {})
        return self._frame

    async def _screenshot(self) -> str | None:
        session = self._session
        if session is None:
            return None
        b = self._bounds
        try:
            metrics = await bounded(session.send("Page.getLayoutMetrics"), _CDP_BUDGET_MS)
            viewport = metrics.get("cssVisualViewport") or {}
            width = float(viewport.get("clientWidth", 0))
            height = float(viewport.get("clientHeight", 0))
            if width <= 0 or height <= 0:
                return None
            clip = {
                "x": float(viewport.get("pageX", 0)),
                "y": float(viewport.get("pageY", 0)),
                "width": width,
                "height": height,
                "scale": fit_scale(width, height, b.max_width, b.max_height),
            }
            shot = await bounded(
                session.send(
                    "Page.captureScreenshot",
                    {
                        "format": "jpeg",
                        "quality": b.jpeg_quality,
                        "clip": clip,
                        "captureBeyondViewport": False,
                    },
                ),
                _CDP_BUDGET_MS,
            )
        except Exception:
            return None
        data = shot.get("data")
        return data if isinstance(data, str) and data else None


def _cast_params(bounds: PictureBounds) -> dict[str, Any]:
    return {
        "format": "jpeg",
        "quality": bounds.jpeg_quality,
        "maxWidth": bounds.max_width,
        "maxHeight": bounds.max_height,
    }


class Screencaster:
    """Opens the pictures of a managed page (`PlaywrightEngine`'s page handles)."""

    def open(self, handle: Any, sink: FrameSink, bounds: PictureBounds) -> PageScreencast:
        return PageScreencast(handle.page, sink, bounds)


async def _send(session: Any, method: str, params: dict[str, Any]) -> None:
    with contextlib.suppress(Exception):  # the page or its target went away meanwhile
        await bounded(session.send(method, params), _CDP_BUDGET_MS)


async def _detach(session: Any) -> None:
    with contextlib.suppress(Exception):
        await bounded(session.detach(), _CDP_BUDGET_MS)
