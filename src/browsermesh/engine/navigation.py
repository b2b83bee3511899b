"""Navigation whose result matches where the page is (reference §7, issue 12 #3).

After a navigation fails, Chromium commits its error page (`chrome-error://chromewebdata/`) a
moment later, and a navigation issued meanwhile is reported by Playwright as "interrupted by
another navigation" although the page may well reach its URL; the interrupted one can even
commit later and interrupt the next. So an interruption is not an answer: the page is let
settle, and the navigation is done when the page is at its URL or where that URL redirected
to, or issued again (within the same deadline) when it is not.

"Where it redirected to" is read from the requests themselves (listened to from the first
interruption on, so an uninterrupted navigation pays nothing), not from the interruption: under
a network policy's redirect guard (engine/guard.py) Playwright can report an allowed redirect's
own target as "another navigation" interrupting ours, on every attempt; comparing the page with
the requested URL alone then answered NAVIGATION_FAILED for a page that had arrived (issue 32).
"""

from __future__ import annotations

import contextlib
import re
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from browsermesh.engine.failures import as_navigation_error, navigation_error, translated
from browsermesh.engine.landing import document_status, landing
from browsermesh.errors import BrowserMeshError
from browsermesh.model import progress
from browsermesh.model.deadline import OperationContext
from browsermesh.model.navigation import Landing

if TYPE_CHECKING:
    from playwright.async_api import Page

MAX_ATTEMPTS = 5
_INTERRUPTED = re.compile(r"interrupted by another navigation|net::ERR_ABORTED", re.IGNORECASE)


def same_url(a: str, b: str) -> bool:
    """Equal up to what Chromium normalizes (scheme and host case, an empty path)."""
    try:
        pa, pb = urlsplit(a), urlsplit(b)
    except ValueError:
        return a == b
    return (
        pa.scheme.lower() == pb.scheme.lower()
        and pa.netloc.lower() == pb.netloc.lower()
        and (pa.path or "/") == (pb.path or "/")
        and pa.query == pb.query
    )


async def goto(page: Page, url: str, ctx: OperationContext) -> str:
    """Navigate to `url` and wait for `load` within the call's deadline; returns the page's
    URL."""
    await _goto(page, url, ctx)
    return page.url


async def navigate(page: Page, url: str, ctx: OperationContext) -> Landing:
    """`goto`, answered as a `Landing` (status, title, key text: issue 31 item 2), read once
    the page has settled (engine.quiet: a single-page app renders after its fetches)."""
    status = await _goto(page, url, ctx)
    return await landing(page, status, ctx.deadline)


async def _goto(page: Page, url: str, ctx: OperationContext) -> int | None:
    """Navigate to `url` and wait for `load`; the main document's status when it is known.
    A cancelled call issues no further attempt (`ctx.check()` before each)."""
    deadline = ctx.deadline
    if progress.active():  # the origin is parsed only for a call that reports progress
        progress.report(progress.loading_phase(url), total_ms=deadline.remaining_ms())
    destinations: _Destinations | None = None  # listened to once an attempt was interrupted
    try:
        attempt = 1
        while True:
            ctx.check()
            with translated(as_navigation_error(url, deadline.timeout_ms)):
                try:
                    response = await page.goto(url, wait_until="load", timeout=deadline.budget_ms())
                    return document_status(page, response)
                except BrowserMeshError:
                    raise  # the budget is gone: OPERATION_TIMEOUT
                except Exception as exc:
                    if not _INTERRUPTED.search(str(exc)) or attempt == MAX_ATTEMPTS:
                        raise  # translated: NAVIGATION_FAILED, or Playwright's timeout
                    failure = exc
            if destinations is None:
                destinations = _Destinations(page, url)
                page.on("request", destinations.saw)
            # Another navigation committed over ours: let the page settle, then look where it
            # is. (A later commit may interrupt this wait too, and it may time out: either way,
            # look.) The response that got there is not ours to know: no status.
            with contextlib.suppress(Exception):
                await page.wait_for_load_state("load", timeout=max(1.0, deadline.remaining_ms()))
            if destinations.reached(page.url):
                return None
            if deadline.expired():
                raise navigation_error(failure, url, deadline.timeout_ms)
            attempt += 1
    finally:
        if destinations is not None:
            page.remove_listener("request", destinations.saw)


class _Destinations:
    """The URLs a navigation to `url` leads to: `url` itself and every main-frame document its
    redirects reached (a request whose redirect chain starts at `url`)."""

    def __init__(self, page: Page, url: str) -> None:
        self._page = page
        self._url = url
        self._seen: list[str] = [url]

    def saw(self, request: Any) -> None:
        """The page's `request` listener: remember a redirect hop of ours."""
        with contextlib.suppress(Exception):  # a request of a frame or page going away
            if not request.is_navigation_request() or request.frame != self._page.main_frame:
                return
            first = request
            while first.redirected_from is not None:
                first = first.redirected_from
            if first is not request and same_url(first.url, self._url):
                self._seen.append(request.url)

    def reached(self, page_url: str) -> bool:
        """Whether the page is at one of them."""
        return any(same_url(page_url, seen) for seen in self._seen)
