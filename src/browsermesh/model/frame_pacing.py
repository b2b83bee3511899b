"""How often and how large the live view's pictures of a page may be (issue 21). Pure rules.

`PictureBounds` is the one set of bounds (frame rate, size, JPEG quality, how long to wait for a
screencast frame, how rarely a still page is looked at); `FramePacer` applies them to one page's
pictures; `fit_scale` is the scale that brings a viewport inside the size bounds.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["HELD_BOUNDS", "VIDEO_BOUNDS", "Frame", "FramePacer", "PictureBounds", "fit_scale"]


@dataclass(frozen=True, slots=True)
class PictureBounds:
    """The bounds of every picture the live view takes of a page."""

    max_fps: float = 2.0
    max_width: int = 640
    max_height: int = 640
    jpeg_quality: int = 50
    # How long a started screencast may take to send its frame; then a screenshot is taken.
    frame_wait_s: float = 2.0
    # A page whose picture did not change is looked at less and less often, down to this.
    idle_max_s: float = 4.0
    # Keep the screencast running and pass on its frames (at most max_fps a second) instead of
    # one started screencast per picture: for a page a person holds (issue 34).
    continuous: bool = False

    def __post_init__(self) -> None:
        if not (0 < self.max_fps <= 30):
            raise ValueError("max_fps must be in (0, 30]")
        if self.max_width < 16 or self.max_height < 16:
            raise ValueError("pictures must be at least 16 px wide and high")
        if not (1 <= self.jpeg_quality <= 100):
            raise ValueError("jpeg_quality must be in 1..100")
        if self.frame_wait_s <= 0 or self.idle_max_s <= 0:
            raise ValueError("frame_wait_s and idle_max_s must be positive")

    @property
    def interval_s(self) -> float:
        """The shortest time between two pictures of one page."""
        return 1.0 / self.max_fps


HELD_BOUNDS = PictureBounds(
    max_fps=10.0,
    max_width=1280,
    max_height=1280,
    jpeg_quality=60,
    frame_wait_s=1.0,
    idle_max_s=0.5,
    continuous=True,
)
"""The pictures of a page a person holds (issue 34): large, from a screencast that keeps
running, so every change the page shows comes at once, up to 10 a second. One picture per
started screencast cannot do that: each costs its start, first frame and stop (140-180 ms on an
idle machine, 400-800 ms under load), which measured 1.2-2.5 pictures a second."""


class FramePacer:
    """When one page's next picture may be taken: `interval_s` after the previous one while
    the pictures change, twice as long after each unchanged one, up to `idle_max_s` (a still
    page costs a capture every few seconds, not two a second)."""

    __slots__ = ("_base", "_idle_max", "_interval", "_last")

    def __init__(self, interval_s: float, idle_max_s: float | None = None) -> None:
        if interval_s <= 0:
            raise ValueError("interval_s must be positive")
        self._base = interval_s
        self._interval = interval_s
        self._idle_max = max(interval_s, idle_max_s if idle_max_s is not None else interval_s)
        self._last: float | None = None

    @property
    def interval_s(self) -> float:
        """The current wait between two pictures."""
        return self._interval

    def wait_s(self, now: float) -> float:
        """Seconds from `now` until the next picture may be taken (0: at once)."""
        if self._last is None:
            return 0.0
        return max(0.0, self._last + self._interval - now)

    def hurry(self) -> None:
        """The page probably changed (an operation ended): back to the shortest wait."""
        self._interval = self._base

    def taken(self, now: float, changed: bool) -> None:
        """A picture was taken at `now`; `changed`: it differs from the one before."""
        self._last = now
        self._interval = self._base if changed else min(self._interval * 2, self._idle_max)


def fit_scale(width: float, height: float, max_width: int, max_height: int) -> float:
    """The scale (at most 1) that fits a `width` x `height` viewport inside the bounds."""
    if width <= 0 or height <= 0:
        return 1.0
    return min(1.0, max_width / width, max_height / height)


@dataclass(frozen=True, slots=True)
class Frame:
    """One picture of a page: a base64 JPEG, from the screencast or a fallback screenshot."""

    data: str
    source: str  # "screencast" or "screenshot"


VIDEO_BOUNDS = PictureBounds(
    max_fps=5.0,
    max_width=1280,
    max_height=720,
    jpeg_quality=70,
    frame_wait_s=1.0,
    idle_max_s=1.0,
    continuous=True,
)
"""The pictures of a page a session video records (issue 35): a running screencast, each new
frame passed on at most 5 a second, within 1280x720 (the video's own bounds, engine/video.py)."""
