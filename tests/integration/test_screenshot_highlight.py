"""browser_screenshot `highlight` on real Chromium (reference §9): a magenta ring around the
element in the picture, its box in the result, and the page left exactly as it was.

The fixture page places its buttons at known CSS pixels on a plain white page, in a small
viewport (480 x 320) so that the pure-Python PNG decoding below stays quick.
"""

from __future__ import annotations

import base64
import struct
import zlib
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from typing import Any

import pytest

from browsermesh.demo.loopback import LoopbackSite, QuietHTTPServer
from tests.fixtures.handler import FixtureHandler
from tests.support.clients import ToolClient

pytestmark = pytest.mark.anyio

VIEWPORT = {"width": 480, "height": 320}
GO = {"x": 200, "y": 150, "width": 160, "height": 48}
"""The `Go ahead` button, in the viewport."""
FAR = {"x": 120, "y": 700, "width": 100, "height": 40}
"""The `Far away` button, in the document (below the fold)."""
BY_LOCATOR = {"locator": {"strategy": "role", "value": "button", "name": "Go ahead"}}

_STYLE = """
html, body { margin: 0; background: #fff; }
body { position: relative; height: 900px; font: 14px Arial, sans-serif; }
button { position: absolute; margin: 0; padding: 0; border: 1px solid #000; background: #fff;
         color: #000; font: 14px Arial, sans-serif; }
::backdrop { background: rgba(0, 0, 0, 0.5); }
dialog { position: fixed; inset: auto; left: 60px; top: 60px; margin: 0; padding: 0;
         border: 0; width: 200px; height: 100px; background: #fff; }
dialog button { left: 20px; top: 30px; width: 120px; height: 36px; }
"""
_LAYOUT = f"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Layout</title>
<style>{_STYLE}
#go {{ left: {GO["x"]}px; top: {GO["y"]}px; width: {GO["width"]}px; height: {GO["height"]}px; }}
#far {{ left: {FAR["x"]}px; top: {FAR["y"]}px; width: {FAR["width"]}px;
        height: {FAR["height"]}px; }}
</style></head><body><button id="go">Go ahead</button><button id="far">Far away</button>
</body></html>"""
_MODAL = f"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Modal</title>
<style>{_STYLE}</style></head><body><dialog id="dlg"><button>Confirm</button></dialog>
<script>document.getElementById('dlg').showModal();</script></body></html>"""
CONFIRM = {"x": 80, "y": 90, "width": 120, "height": 36}
"""The dialog's `Confirm` button, in the viewport."""


class _Handler(FixtureHandler):
    def do_GET(self) -> None:
        pages = {"/layout": _LAYOUT, "/modal": _MODAL}
        path, _ = self.path_and_query()
        body = pages.get(path, "not found").encode()
        self.head(200 if path in pages else 404, "text/html; charset=utf-8", (), len(body))
        self.wfile.write(body)


class _LayoutSite(LoopbackSite):
    def _make_server(self, address: tuple[str, int]) -> ThreadingHTTPServer:
        return QuietHTTPServer(address, _Handler)


@pytest.fixture(scope="module")
def layout() -> Iterator[_LayoutSite]:
    with _LayoutSite() as site:
        yield site


# ------------------------------------------------------------------------ PNG pixels


class Picture:
    """The RGB pixels of a PNG as Chromium writes it (8-bit RGB or RGBA, not interlaced)."""

    def __init__(self, data: bytes) -> None:
        pos, idat = 8, bytearray()
        while pos < len(data):
            (length,) = struct.unpack(">I", data[pos : pos + 4])
            kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
            if kind == b"IHDR":
                self.width, self.height, depth, colour, _, _, interlace = struct.unpack(
                    ">IIBBBBB", body
                )
                assert depth == 8 and colour in (2, 6) and interlace == 0
                self.bpp = 3 if colour == 2 else 4
            elif kind == b"IDAT":
                idat += body
            pos += 12 + length
        raw, stride, bpp = zlib.decompress(bytes(idat)), self.width * self.bpp, self.bpp
        self.rows: list[bytearray] = []
        prev = bytearray(stride)
        for y in range(self.height):
            start = y * (stride + 1)
            kind_byte, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
            if kind_byte == 1:
                for i in range(bpp, stride):
                    line[i] = (line[i] + line[i - bpp]) & 255
            elif kind_byte == 2:
                line = bytearray((a + b) & 255 for a, b in zip(line, prev, strict=True))
            elif kind_byte == 3:
                for i in range(stride):
                    left = line[i - bpp] if i >= bpp else 0
                    line[i] = (line[i] + (left + prev[i]) // 2) & 255
            elif kind_byte == 4:
                for i in range(stride):
                    a = line[i - bpp] if i >= bpp else 0
                    b, c = prev[i], prev[i - bpp] if i >= bpp else 0
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    line[i] = (
                        line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)
                    ) & 255
            self.rows.append(line)
            prev = line

    def at(self, x: int, y: int) -> tuple[int, int, int]:
        row, i = self.rows[y], x * self.bpp
        return row[i], row[i + 1], row[i + 2]

    def magenta(self, x: int, y: int) -> bool:
        r, g, b = self.at(x, y)
        return r > 230 and g < 40 and b > 230

    def any_magenta(self) -> bool:
        return any(self.magenta(x, y) for y in range(self.height) for x in range(self.width))


def ring_around(picture: Picture, box: dict[str, int]) -> None:
    """The pixels just outside each side of `box` (1 and 3 px out) are magenta, those 12 px
    beyond the ring are not."""
    x, y, w, h = box["x"], box["y"], box["width"], box["height"]
    for out in (1, 3):
        for point in (
            (x - out, y + h // 2),
            (x + w - 1 + out, y + h // 2),
            (x + w // 2, y - out),
            (x + w // 2, y + h - 1 + out),
        ):
            assert picture.magenta(*point), (point, picture.at(*point))
    for point in ((x - 12, y + h // 2), (x + w + 12, y + h // 2), (x + w // 2, y + h + 12)):
        assert not picture.magenta(*point), point
    # Inside the element: the button's white face, never painted over.
    assert picture.at(x + 4, y + 4) == (255, 255, 255)


async def shot(c: ToolClient, addr: dict[str, str], **args: Any) -> tuple[dict[str, Any], Picture]:
    result = await c.raw("browser_screenshot", {**addr, **args})
    assert not result.is_error, result
    image = result.content[0]
    return result.structured_content, Picture(base64.b64decode(image.data))


async def page_html(c: ToolClient, addr: dict[str, str]) -> str:
    data = await c.ok(
        "browser_evaluate", {**addr, "expression": "document.documentElement.outerHTML"}
    )
    return str(data["result"])


async def open_layout(c: ToolClient, url: str) -> dict[str, str]:
    s, p = await c.session(contextSettings={"viewport": VIEWPORT})
    addr = {"sessionId": s, "pageId": p}
    await c.ok("browser_navigate", {**addr, "url": url})
    return addr


# ------------------------------------------------------------------------------ tests


async def test_highlight_by_locator_and_by_ref_leaves_the_page_as_it_was(
    client: ToolClient, layout: _LayoutSite
) -> None:
    c = client
    addr = await open_layout(c, layout.url("/layout"))
    before = await page_html(c, addr)
    data, picture = await shot(c, addr, highlight=BY_LOCATOR)
    assert data["highlight"] == GO
    assert (data["width"], data["height"]) == (VIEWPORT["width"], VIEWPORT["height"])
    ring_around(picture, GO)
    # The label sits above the ring: magenta from its left edge.
    assert picture.magenta(GO["x"] - 2, GO["y"] - 3 - 9)
    for corner in ((2, 2), (477, 2), (2, 317), (477, 317)):
        assert picture.at(*corner) == (255, 255, 255), corner
    assert await page_html(c, addr) == before

    snap = await c.ok("browser_snapshot", {**addr, "format": "aria", "includeRefs": True})
    ref = next(r["ref"] for r in snap["refs"] if r.get("name") == "Go ahead")
    data, picture = await shot(c, addr, highlight={"ref": ref})
    assert data["highlight"] == GO
    ring_around(picture, GO)
    assert await page_html(c, addr) == before

    plain, picture = await shot(c, addr)
    assert "highlight" not in plain
    assert not picture.any_magenta()


async def test_highlight_below_the_fold(client: ToolClient, layout: _LayoutSite) -> None:
    c = client
    addr = await open_layout(c, layout.url("/layout"))
    # Scrolled a little: a full page starts at the document's origin all the same.
    await c.ok("browser_evaluate", {**addr, "expression": "window.scrollTo(0, 100)"})
    far = {"locator": {"strategy": "css", "value": "#far"}}
    data, picture = await shot(c, addr, capture={"kind": "fullPage"}, highlight=far)
    assert (data["width"], data["height"]) == (VIEWPORT["width"], 900)
    assert data["highlight"] == FAR
    ring_around(picture, FAR)
    scrolled = await c.ok("browser_evaluate", {**addr, "expression": "window.scrollY"})
    assert scrolled["result"] == 100  # a full page needs no scrolling

    # A viewport picture scrolls the element into view first.
    data, picture = await shot(c, addr, highlight=far)
    box = data["highlight"]
    assert (box["width"], box["height"]) == (FAR["width"], FAR["height"])
    assert box["x"] == FAR["x"] and 0 <= box["y"] <= VIEWPORT["height"] - FAR["height"]
    ring_around(picture, box)
    scrolled = await c.ok("browser_evaluate", {**addr, "expression": "window.scrollY"})
    assert scrolled["result"] == FAR["y"] - box["y"]


async def test_highlight_in_an_element_picture_is_clipped_to_it(
    client: ToolClient, layout: _LayoutSite
) -> None:
    c = client
    addr = await open_layout(c, layout.url("/layout"))
    element = {"kind": "element", "locator": {"strategy": "css", "value": "#go"}}
    data, picture = await shot(c, addr, capture=element, highlight=BY_LOCATOR)
    assert (data["width"], data["height"]) == (GO["width"], GO["height"])
    assert data["highlight"] == {"x": 0, "y": 0, "width": GO["width"], "height": GO["height"]}
    # The ring's sides that fall outside the picture are drawn at its edges.
    w, h = GO["width"], GO["height"]
    for point in ((1, h - 2), (w - 2, h // 2), (w // 2, h - 2)):
        assert picture.magenta(*point), point
    assert picture.at(w // 2 + 20, h // 2 + 8) != picture.at(1, h - 2)


async def test_highlight_above_a_modal_dialog(client: ToolClient, layout: _LayoutSite) -> None:
    c = client
    addr = await open_layout(c, layout.url("/modal"))
    before = await page_html(c, addr)
    confirm = {"locator": {"strategy": "role", "value": "button", "name": "Confirm"}}
    data, picture = await shot(c, addr, highlight=confirm)
    assert data["highlight"] == CONFIRM
    ring_around(picture, CONFIRM)
    _, bare = await shot(c, addr)
    # The page's own backdrop dims the page once; the overlay's backdrop adds nothing.
    assert picture.at(400, 300) == bare.at(400, 300) != (255, 255, 255)
    assert not bare.any_magenta()
    assert await page_html(c, addr) == before
    still_modal = await c.ok(
        "browser_evaluate",
        {**addr, "expression": "document.querySelector('dialog:modal') !== null"},
    )
    assert still_modal["result"] is True


async def test_highlight_errors(client: ToolClient, layout: _LayoutSite) -> None:
    c = client
    addr = await open_layout(c, layout.url("/layout"))
    before = await page_html(c, addr)
    missing = {"locator": {"strategy": "css", "value": "#missing"}}
    err = await c.err("browser_screenshot", {**addr, "timeoutMs": 10_000, "highlight": missing})
    assert err["code"] == "ELEMENT_NOT_FOUND", err
    both = {**BY_LOCATOR, "ref": "s1e1"}
    err = await c.err("browser_screenshot", {**addr, "highlight": both})
    assert err["code"] == "INVALID_ARGUMENT"
    assert err["details"]["field"] == "highlight", err
    assert "exactly one of" in err["details"]["rule"]
    err = await c.err("browser_screenshot", {**addr, "highlight": {"ref": "s99e1"}})
    assert err["code"] == "STALE_ELEMENT_REFERENCE", err
    assert await page_html(c, addr) == before
