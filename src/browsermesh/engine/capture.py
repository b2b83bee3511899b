"""Screenshots (reference §9): measure an immutable plan, pre-validate, capture, post-validate."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from browsermesh.engine import elements
from browsermesh.engine.failures import timed
from browsermesh.errors import BrowserMeshError, ErrorCode
from browsermesh.model.deadline import OperationContext
from browsermesh.model.element_ops import OTHER_OPERATIONS
from browsermesh.model.locators import Locator
from browsermesh.model.png import ScreenshotLimits

if TYPE_CHECKING:
    from playwright.async_api import Page

_PAGE_SIZE = """() => {
  const h = document.documentElement, b = document.body || h;
  return [Math.max(h.scrollWidth, h.clientWidth, b.scrollWidth, b.clientWidth),
          Math.max(h.scrollHeight, h.clientHeight, b.scrollHeight, b.clientHeight)];
}"""
_INNER_SIZE = "() => [window.innerWidth, window.innerHeight]"


async def screenshot(
    page: Page,
    kind: str,
    locator: Locator | None,
    limits: ScreenshotLimits,
    ctx: OperationContext,
) -> tuple[bytes, int, int]:
    """Capture a PNG; returns (bytes, width, height) of the actual image."""
    clip: dict[str, float] | None = None
    full_page = False
    if kind == "element":
        assert locator is not None

        async def measure(el: Any, timeout_ms: float) -> Any:
            await el.scroll_into_view_if_needed(timeout=timeout_ms)
            return await el.bounding_box(timeout=timeout_ms)

        box = await elements.on_locator(page, locator, ctx, "screenshot", measure)
        if box is None:
            raise BrowserMeshError(
                ErrorCode.ELEMENT_NOT_FOUND,
                details={"operation": OTHER_OPERATIONS["screenshot"], "locator": locator.detail()},
            )
        width, height = limits.check_size(box["width"], box["height"])
        clip = {"x": int(box["x"]), "y": int(box["y"]), "width": width, "height": height}
    elif kind == "fullPage":
        w, h = await timed(page.evaluate(_PAGE_SIZE), ctx.deadline)
        width, height = limits.check_size(w, h)
        clip = {"x": 0, "y": 0, "width": width, "height": height}
        full_page = True
    else:
        size = page.viewport_size
        if size is None:
            w, h = await timed(page.evaluate(_INNER_SIZE), ctx.deadline)
        else:
            w, h = size["width"], size["height"]
        limits.check_size(w, h)
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
    return data, width, height
