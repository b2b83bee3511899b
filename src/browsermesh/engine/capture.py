"""Screenshots (reference §9): measure an immutable plan, pre-validate, capture, post-validate;
with a `highlight`, the element is boxed in the picture (`engine.highlight`)."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from browsermesh.engine import elements
from browsermesh.engine.failures import timed
from browsermesh.engine.highlight import Box, drawn, locate, no_box
from browsermesh.engine.refs import RefRegistry
from browsermesh.model.deadline import OperationContext
from browsermesh.model.locators import Locator, Target
from browsermesh.model.mouse import Viewport
from browsermesh.model.png import ScreenshotLimits

if TYPE_CHECKING:
    from playwright.async_api import Page

__all__ = ["Screenshot", "screenshot"]

# The document's size, and its scroll offset: where a full-page picture lies in the viewport.
_PAGE_SIZE = """() => {
  const h = document.documentElement, b = document.body || h;
  return [Math.max(h.scrollWidth, h.clientWidth, b.scrollWidth, b.clientWidth),
          Math.max(h.scrollHeight, h.clientHeight, b.scrollHeight, b.clientHeight),
          window.scrollX, window.scrollY];
}"""
_INNER_SIZE = "() => [window.innerWidth, window.innerHeight]"


@dataclass(frozen=True, slots=True)
class Screenshot:
    """A captured PNG, its actual size, and where the highlighted element is in it (None
    without a highlight)."""

    png: bytes
    width: int
    height: int
    highlight: Box | None = None
    viewport: Viewport | None = None
    """The viewport and its scale factor, when the `vision` profile is published."""


async def screenshot(
    page: Page,
    refs: RefRegistry,
    kind: str,
    locator: Locator | None,
    mark: Target | None,
    limits: ScreenshotLimits,
    ctx: OperationContext,
) -> Screenshot:
    """Capture a PNG of the viewport, the full page or one element; with `mark`, boxed."""
    clip: dict[str, float] | None = None
    full_page = False
    if kind == "element":
        assert locator is not None

        async def measure(el: Any, timeout_ms: float) -> Any:
            await el.scroll_into_view_if_needed(timeout=timeout_ms)
            return await el.bounding_box(timeout=timeout_ms)

        box = await elements.on_locator(page, locator, ctx, "screenshot", measure)
        if box is None:
            raise no_box(locator)
        width, height = limits.check_size(box["width"], box["height"])
        clip = {"x": int(box["x"]), "y": int(box["y"]), "width": width, "height": height}
        left, top = clip["x"], clip["y"]
    elif kind == "fullPage":
        w, h, scroll_x, scroll_y = await timed(page.evaluate(_PAGE_SIZE), ctx.deadline)
        width, height = limits.check_size(w, h)
        clip = {"x": 0, "y": 0, "width": width, "height": height}
        full_page = True
        # A full-page picture starts at the document's origin, above and left of the viewport.
        left, top = -scroll_x, -scroll_y
    else:
        size = page.viewport_size
        if size is None:
            w, h = await timed(page.evaluate(_INNER_SIZE), ctx.deadline)
        else:
            w, h = size["width"], size["height"]
        width, height = limits.check_size(w, h)
        left, top = 0, 0
    box_in_picture: Box | None = None
    async with contextlib.AsyncExitStack() as overlay:
        if mark is not None:
            # Only a viewport picture scrolls to the element: a full page shows it wherever it
            # is, and an element picture must keep its own element where it was measured.
            found = await locate(page, refs, mark, ctx, scroll=kind == "viewport")
            picture = (float(left), float(top), width, height)
            box_in_picture = await overlay.enter_async_context(drawn(page, found, picture, ctx))
        data: bytes = await timed(
            page.screenshot(
                type="png",
                full_page=full_page,
                clip=clip,  # type: ignore[arg-type]
                scale="css",
                timeout=ctx.deadline.budget_ms(),
            ),
            ctx.deadline,
        )
    width, height = limits.check_png(data)
    return Screenshot(data, width, height, box_in_picture)
