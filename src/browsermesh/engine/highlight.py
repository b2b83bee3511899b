"""The `highlight` of browser_screenshot (reference §9): a box and a label around one element,
drawn into the picture and gone before the call answers.

How it is drawn, and why this way. Playwright's own options do not fit: `mask` paints over the
element (it hides what it should point at) and takes no element handle, so no ref; `style`
is a stylesheet, and a stylesheet can only reach an element a CSS selector names (a role or
text locator, a ref, an element in an iframe: none); `locator.highlight()` draws Playwright's
debugging overlay (its own colours and a selector tooltip), takes no element handle either,
and stays until hidden. So the engine draws its own overlay, the way Playwright draws a mask:

- one element, `<browsermesh-highlight>`, appended to `<html>` just before the capture and
  removed in a `finally` right after it (removal is a clean-up step, bounded, never raising);
- its content (the ring and the label) sits in a closed shadow root, so page scripts cannot
  reach into it and page styles do not apply to it; its own box is styled inline with
  `!important` (beats any page rule), `pointer-events: none` (it takes no input), and
  `position: fixed` (no effect on the page's layout or scroll size);
- it lies above the page: the highest z-index, or, when the page shows something in the top
  layer (a modal dialog, a popover, a full-screen element: no z-index is above those), it
  joins the top layer as a manual popover (which closes nothing and takes no focus); only then
  does the page see a `beforetoggle` event, on the overlay itself;
- CSSOM only (`style.cssText`, `textContent`), so a Content-Security-Policy that forbids
  inline styles does not stop it, and no page text is ever parsed as HTML.

What the page can still notice: a mutation of `<html>`'s children for the few milliseconds of
the capture (a MutationObserver, a query of the whole document). Nothing stays: the test
compares the document before and after (tests/integration/test_screenshot_highlight.py).

The element is measured with Playwright's `bounding_box` (CSS pixels of the top frame's
viewport, iframes included) through the element helpers every tool uses
(`elements.on_target`: same strictness, same not-found classification, same stale refs). The
overlay covers exactly the picture, so what falls outside the picture is clipped.

The label says which element it is: the role and accessible name a ref's snapshot printed (the
ref itself when it printed none), a role locator's role and name, or another locator's own
words (`text "Save"`): the engine has no second role/name algorithm, and Playwright's ARIA
snapshot of an element does not always begin with that element (a generic container shows
its child).
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from browsermesh.engine import elements
from browsermesh.engine.bounded import bounded, quietly
from browsermesh.engine.failures import timed
from browsermesh.engine.refs import RefRegistry
from browsermesh.errors import BrowserMeshError, ErrorCode
from browsermesh.model.deadline import OperationContext
from browsermesh.model.element_ops import OTHER_OPERATIONS
from browsermesh.model.locators import Locator, RefTarget, Target
from browsermesh.redact import cut_chars

if TYPE_CHECKING:
    from playwright.async_api import Page

__all__ = ["COLOUR", "RING_PX", "Box", "Mark", "drawn", "locate", "no_box"]

COLOUR: Final = "#ff00ff"
"""The ring and the label background: magenta is rare on web pages and stands out on light and
dark ones alike."""
RING_PX: Final = 3
"""The ring's width, drawn just outside the element's border box."""
LABEL_PX: Final = 18
"""The label's height (13 px text); above the ring, or inside the box at the picture's top."""
MAX_LABEL_CHARS: Final = 60

# The overlay (see the module doc). `picture` is where the picture lies in the top frame's
# viewport ([left, top, width, height]), `box` the element there.
_DRAW = f"""([picture, box, label]) => {{
  const [left, top, width, height] = picture;
  const [x, y, w, h] = [box[0] - left, box[1] - top, box[2], box[3]];
  const host = document.createElement('browsermesh-highlight');
  let topLayer = false;
  try {{
    topLayer = typeof host.showPopover === 'function' &&
      document.querySelector(':modal, :popover-open') !== null;
  }} catch (e) {{}}
  const place = (l, t) => `left:${{l}}px!important;top:${{t}}px!important;`;
  host.style.cssText = 'all:initial!important;display:block!important;' +
    'position:fixed!important;right:auto!important;bottom:auto!important;' +
    `width:${{width}}px!important;height:${{height}}px!important;` + place(left, top) +
    'margin:0!important;padding:0!important;border:0!important;overflow:hidden!important;' +
    'background:transparent!important;pointer-events:none!important;' +
    'z-index:2147483647!important;';
  const root = host.attachShadow({{mode: 'closed'}});
  // Just outside the border box; a side that would fall outside the picture is drawn at its
  // edge instead (an element capture of the element itself still shows the ring).
  const ringLeft = Math.max(x - {RING_PX}, 0), ringTop = Math.max(y - {RING_PX}, 0);
  const ringWidth = Math.min(x + w + {RING_PX}, width) - ringLeft;
  const ringHeight = Math.min(y + h + {RING_PX}, height) - ringTop;
  const shown = ringWidth > 0 && ringHeight > 0;  // else nothing of it is in the picture
  const ring = document.createElement('div');
  ring.style.cssText = 'position:absolute;box-sizing:border-box;' +
    `left:${{ringLeft}}px;top:${{ringTop}}px;width:${{ringWidth}}px;height:${{ringHeight}}px;` +
    'border:{RING_PX}px solid {COLOUR};' + (shown ? '' : 'display:none;');
  const tag = document.createElement('div');
  tag.textContent = label;
  tag.style.cssText = 'position:absolute;box-sizing:border-box;height:{LABEL_PX}px;' +
    'padding:0 4px;font:13px/{LABEL_PX}px Arial,Helvetica,sans-serif;white-space:pre;' +
    'color:#000;background:{COLOUR};' + (shown ? '' : 'display:none;');
  root.append(ring, tag);
  if (topLayer) {{
    host.setAttribute('popover', 'manual');
    // A page rule for every ::backdrop would dim the picture; the shadow's !important wins.
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(':host::backdrop{{background:transparent!important}}');
    root.adoptedStyleSheets = [sheet];
  }}
  document.documentElement.append(host);
  if (topLayer) {{
    try {{ host.showPopover(); }} catch (e) {{}}
  }}
  // A transformed <html> makes itself the box of a fixed element: put the overlay back.
  const at = host.getBoundingClientRect();
  if (Math.abs(at.left - left) > 0.5 || Math.abs(at.top - top) > 0.5) {{
    host.style.cssText += place(2 * left - at.left, 2 * top - at.top);
  }}
  const above = ringTop - {LABEL_PX};
  const tagTop = Math.min(above >= 0 ? above : ringTop, Math.max(height - {LABEL_PX}, 0));
  const tagLeft = Math.max(0, Math.min(ringLeft, width - tag.offsetWidth));
  tag.style.left = tagLeft + 'px';
  tag.style.top = tagTop + 'px';
}}"""
_REMOVE = """() => {
  for (const host of document.querySelectorAll(':root > browsermesh-highlight')) host.remove();
}"""


@dataclass(frozen=True, slots=True)
class Box:
    """A rectangle in whole CSS pixels of the picture (the result's `highlight`)."""

    x: int
    y: int
    width: int
    height: int

    def wire(self) -> dict[str, int]:
        return {"x": self.x, "y": self.y, "width": self.width, "height": self.height}


@dataclass(frozen=True, slots=True)
class Mark:
    """The element to box: its border box in CSS pixels of the top frame's viewport, and the
    label to print above it."""

    x: float
    y: float
    width: float
    height: float
    label: str

    def in_picture(self, left: float, top: float) -> Box:
        """The smallest whole-pixel box that covers the element, in the picture whose top-left
        corner lies at (`left`, `top`) of the viewport; it may reach past the picture's edges
        (an element larger than the viewport, or outside the captured element)."""
        # Rounded first: a box at 100 px must not become 99 through 99.99999.
        x0, y0 = math.floor(round(self.x - left, 3)), math.floor(round(self.y - top, 3))
        x1 = math.ceil(round(self.x + self.width - left, 3))
        y1 = math.ceil(round(self.y + self.height - top, 3))
        return Box(x0, y0, x1 - x0, y1 - y0)


def no_box(target: Target) -> BrowserMeshError:
    """ELEMENT_NOT_FOUND for an element that has no box (not rendered: `display: none`, or
    inside a closed `<details>`), as for any element that is not there to capture or box."""
    details: dict[str, Any] = {"operation": OTHER_OPERATIONS["screenshot"]}
    if isinstance(target, Locator):
        details["locator"] = target.detail()
    return BrowserMeshError(ErrorCode.ELEMENT_NOT_FOUND, details=details)


async def locate(
    page: Page, refs: RefRegistry, target: Target, ctx: OperationContext, *, scroll: bool
) -> Mark:
    """Where the highlight target is now and what its label says; with `scroll`, it is first
    scrolled into view if it is not (a viewport picture shows it)."""

    async def measure(el: Any, timeout_ms: float) -> Any:
        if scroll:
            await el.scroll_into_view_if_needed(timeout=timeout_ms)
        # ElementHandle.bounding_box takes no timeout: bounded here for both kinds.
        return await bounded(el.bounding_box(), timeout_ms)

    box = await elements.on_target(page, refs, target, ctx, "screenshot", measure)
    if box is None:
        raise no_box(target)
    return Mark(box["x"], box["y"], box["width"], box["height"], _label(target, refs))


def _label(target: Target, refs: RefRegistry) -> str:
    if isinstance(target, RefTarget):
        entry = refs.entries.get(target.token)
        text = _role_and_name(entry.role, entry.name) if entry is not None else ""
        text = text or target.token
    elif target.selector.strategy == "role":
        text = _role_and_name(target.selector.value, target.selector.name)
    else:
        text = f'{target.selector.strategy} "{target.selector.value}"'
    return cut_chars(" ".join(text.split()), MAX_LABEL_CHARS)


def _role_and_name(role: str | None, name: str | None) -> str:
    if not role:
        return ""
    return f'{role} "{name}"' if name else role


@asynccontextmanager
async def drawn(
    page: Page,
    mark: Mark,
    picture: tuple[float, float, int, int],
    ctx: OperationContext,
) -> AsyncIterator[Box]:
    """The overlay around `mark`, on the page while the block runs (the capture) and removed
    after it whatever happens; yields the element's box in the picture. `picture` is where
    the picture lies in the top frame's viewport: left, top, width, height (a full-page
    picture starts at minus the scroll offset)."""
    left, top = picture[0], picture[1]
    box = [mark.x, mark.y, mark.width, mark.height]
    try:
        await timed(page.evaluate(_DRAW, [list(picture), box, mark.label]), ctx.deadline)
        yield mark.in_picture(left, top)
    finally:
        # Also after a draw that timed out: page calls run in order, so a draw that runs late
        # is still followed by this removal.
        await quietly(page.evaluate(_REMOVE))
