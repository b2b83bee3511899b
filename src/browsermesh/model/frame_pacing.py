"""How often and how large the live view's pictures of a page may be (issue 21). Pure rules.

`PictureBounds` is the one set of bounds (frame rate, size, JPEG quality, when a still page gets
a fresh screenshot); `FramePacer` applies the rate to one page's pictures; `fit_scale` is the
scale that brings a viewport inside the size bounds.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Frame", "FramePacer", "PictureBounds", "fit_scale"]


@dataclass(frozen=True, slots=True)
class PictureBounds:
    """The bounds of every picture the live view takes of a page."""

    max_fps: float = 2.0
    max_width: int = 640
    max_height: int = 640
    jpeg_quality: int = 50
    # A page that sent no picture for this long gets one screenshot (a still page, or a
    # browser whose screencast does not run); then it waits this long again.
    stale_s: float = 3.0

    def __post_init__(self) -> None:
        if not (0 < self.max_fps <= 30):
            raise ValueError("max_fps must be in (0, 30]")
        if self.max_width < 16 or self.max_height < 16:
            raise ValueError("pictures must be at least 16 px wide and high")
        if not (1 <= self.jpeg_quality <= 100):
            raise ValueError("jpeg_quality must be in 1..100")
        if self.stale_s <= 0:
            raise ValueError("stale_s must be positive")

    @property
    def interval_s(self) -> float:
        """The shortest time between two pictures of one page."""
        return 1.0 / self.max_fps


class FramePacer:
    """One page's picture rate: a picture may go `interval_s` after the previous one.

    The screencast asks `wait_s` before it forwards a frame and acknowledges it (Chromium sends
    no new frame while earlier ones are unacknowledged, so the pace also bounds what Chromium
    captures); the fallback asks `stale` whether a still page needs a screenshot."""

    __slots__ = ("_interval_s", "_last")

    def __init__(self, interval_s: float) -> None:
        if interval_s <= 0:
            raise ValueError("interval_s must be positive")
        self._interval_s = interval_s
        self._last: float | None = None

    @property
    def last(self) -> float | None:
        """When the last picture went (monotonic seconds), or None before the first."""
        return self._last

    def wait_s(self, now: float) -> float:
        """Seconds from `now` until the next picture may go (0: at once)."""
        if self._last is None:
            return 0.0
        return max(0.0, self._last + self._interval_s - now)

    def sent(self, now: float) -> None:
        """A picture went at `now`."""
        self._last = now

    def stale(self, now: float, stale_s: float) -> bool:
        """Whether no picture went for `stale_s` (or none ever did)."""
        return self._last is None or now - self._last >= stale_s


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
