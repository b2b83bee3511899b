"""Recovering a page whose renderer crashed (issue 12 #13).

Chromium does not bring a crashed tab back for Playwright: reload and goto on it fail with
"Page crashed". So `browser_reload` on a crashed page replaces it: a new page in the same
context takes over the same managed handle (same pageId, same observation sink), loads the last
URL the crashed page had committed, and the crashed page is closed. Its refs died with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from browsermesh.engine import navigation
from browsermesh.engine.bounded import quietly
from browsermesh.engine.failures import timed
from browsermesh.model.deadline import OperationContext

if TYPE_CHECKING:
    from browsermesh.engine.playwright_engine import PlaywrightEngine, PwPage


async def reopen(engine: PlaywrightEngine, handle: PwPage, ctx: OperationContext) -> str:
    """Replace the crashed page behind `handle` and load its last URL; returns the new URL."""
    deadline = ctx.deadline
    crashed = handle.page
    url = handle.last_url or crashed.url
    fresh = await timed(handle.context.context.new_page(), deadline)
    await timed(handle.context.router.prepare(fresh), deadline)
    handle.page = fresh
    handle.crashed = False
    engine.watch(handle, fresh)
    sink = handle.extras.get("sink")
    if sink is not None:
        engine.observe(handle, sink)
    await quietly(crashed.close())
    if url.startswith(("http://", "https://")):
        return await navigation.goto(fresh, url, ctx)
    return fresh.url
