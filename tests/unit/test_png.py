"""PNG header parsing and screenshot limit checks."""

from __future__ import annotations

import pytest

from browsermesh.errors import BrowserMeshError, ErrorCode
from browsermesh.model.png import PNG_SIGNATURE, ScreenshotLimits, png_size
from tests.fakes import make_png


def test_png_size_reads_ihdr() -> None:
    assert png_size(make_png(300, 200)) == (300, 200)


@pytest.mark.parametrize("data", [b"", b"GIF89a" + b"\0" * 30, PNG_SIGNATURE + b"\0" * 16])
def test_bad_header_is_browser_error(data: bytes) -> None:
    with pytest.raises(BrowserMeshError) as info:
        png_size(data)
    assert info.value.code is ErrorCode.BROWSER_ERROR


def test_limits() -> None:
    limits = ScreenshotLimits(max_dimension=1000, max_pixels=500_000, max_bytes=100)
    assert limits.check_size(999.2, 10) == (1000, 10)
    for w, h in ((1001, 1), (1, 1001), (1000, 501)):
        with pytest.raises(BrowserMeshError) as info:
            limits.check_size(w, h)
        assert info.value.code is ErrorCode.LIMIT_EXCEEDED
    for w, h in ((0, 5), (float("nan"), 5), (5, float("inf"))):
        with pytest.raises(BrowserMeshError) as info:
            limits.check_size(w, h)
        assert info.value.code is ErrorCode.BROWSER_ERROR
    with pytest.raises(BrowserMeshError) as info:
        limits.check_png(make_png(10, 10) + b"\0" * 100)
    assert info.value.code is ErrorCode.LIMIT_EXCEEDED
    assert limits.check_png(make_png(10, 10)) == (10, 10)
