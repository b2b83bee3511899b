"""Mouse gestures at viewport coordinates (issue 36 item 3): Playwright's `page.mouse`
takes CSS pixels of the viewport at any device scale factor."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from browsermesh.model.mouse import DRAG_STEPS, MouseGesture, Viewport

if TYPE_CHECKING:
    from playwright.async_api import Page

__all__ = ["perform", "viewport"]

_SIZE_AND_SCALE: Final = "() => [window.innerWidth, window.innerHeight, window.devicePixelRatio]"
_TWO_FRAMES: Final = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"


async def viewport(page: Page) -> Viewport:
    """The page's viewport (its set size, else the window's inner size) and scale factor."""
    width, height, scale = await page.evaluate(_SIZE_AND_SCALE)
    size = page.viewport_size
    if size is not None:
        width, height = size["width"], size["height"]
    return Viewport(float(width), float(height), float(scale))


async def perform(page: Page, gesture: MouseGesture) -> None:
    """Do `gesture` with the page's mouse."""
    mouse, x, y, button = page.mouse, gesture.x, gesture.y, gesture.button
    match gesture.action:
        case "move":
            await mouse.move(x, y)
        case "click":
            await mouse.click(x, y, button=button)
        case "double_click":
            await mouse.dblclick(x, y, button=button)
        case "down":
            await mouse.move(x, y)
            await mouse.down(button=button)
        case "up":
            await mouse.move(x, y)
            await mouse.up(button=button)
        case "drag":
            assert gesture.to is not None  # parse_gesture requires toX/toY for drag
            await mouse.move(x, y)
            await mouse.down(button=button)
            await mouse.move(gesture.to[0], gesture.to[1], steps=DRAG_STEPS)
            await mouse.up(button=button)
        case "wheel":
            await mouse.move(x, y)
            await mouse.wheel(0, gesture.delta_y)
            # The wheel lands asynchronously; two frames later its events were dispatched.
            await page.evaluate(_TWO_FRAMES)
