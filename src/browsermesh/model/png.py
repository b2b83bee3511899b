"""PNG header parsing and screenshot limits (reference §9): pure checks, no image decoding."""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass

from browsermesh.errors import Bound, BrowserMeshError, ErrorCode

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@dataclass(frozen=True, slots=True)
class ScreenshotLimits:
    max_dimension: int
    max_pixels: int
    max_bytes: int

    def check_size(self, width: float, height: float) -> tuple[int, int]:
        """Reject non-finite or empty sizes (BROWSER_ERROR) and oversized ones (LIMIT_EXCEEDED)."""
        if not (math.isfinite(width) and math.isfinite(height)) or width <= 0 or height <= 0:
            raise BrowserMeshError(ErrorCode.BROWSER_ERROR, cause="invalid capture size")
        w, h = math.ceil(width), math.ceil(height)
        var = "BROWSERMESH_SCREENSHOT_MAX_DIMENSION"
        if w > self.max_dimension:
            raise BrowserMeshError(
                ErrorCode.LIMIT_EXCEEDED, bound=Bound("width", "<=", self.max_dimension, var)
            )
        if h > self.max_dimension:
            raise BrowserMeshError(
                ErrorCode.LIMIT_EXCEEDED, bound=Bound("height", "<=", self.max_dimension, var)
            )
        if w * h > self.max_pixels:
            raise BrowserMeshError(
                ErrorCode.LIMIT_EXCEEDED,
                bound=Bound("pixels", "<=", self.max_pixels, "BROWSERMESH_SCREENSHOT_MAX_PIXELS"),
            )
        return w, h

    def check_png(self, data: bytes) -> tuple[int, int]:
        """Post-capture checks: encoded size, header, then the real dimensions."""
        if len(data) > self.max_bytes:
            raise BrowserMeshError(
                ErrorCode.LIMIT_EXCEEDED,
                bound=Bound("bytes", "<=", self.max_bytes, "BROWSERMESH_SCREENSHOT_MAX_BYTES"),
            )
        width, height = png_size(data)
        return self.check_size(width, height)


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from the IHDR chunk; anything else is BROWSER_ERROR."""
    if (
        len(data) < 24
        or data[:8] != PNG_SIGNATURE
        or struct.unpack(">I", data[8:12])[0] != 13
        or data[12:16] != b"IHDR"
    ):
        raise BrowserMeshError(ErrorCode.BROWSER_ERROR, cause="invalid PNG header")
    width, height = struct.unpack(">II", data[16:24])
    return int(width), int(height)
