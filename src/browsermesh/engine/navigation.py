"""Navigation whose result matches where the page is (contract §7, issue 12 #3).

After a navigation fails, Chromium commits its error page (`chrome-error://chromewebdata/`) a
moment later, and a navigation issued meanwhile is reported by Playwright as "interrupted by
another navigation" although the page may well reach its URL; the interrupted one can even
commit later and interrupt the next. So an interruption is not an answer: the page is let
settle, and the navigation is done when the page is at its URL, or issued again (within the same
deadline) when it is not.
"""

from __future__ import annotations

import contextlib
import re
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from browsermesh.engine import quiet
from browsermesh.engine.failures import navigation_error
from browsermesh.engine.landing import document_status, landing
from browsermesh.errors import BrowserMeshError
from browsermesh.model import progress
from browsermesh.model.deadline import Deadline
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


async def goto(page: Page, url: str, deadline: Deadline) -> str:
    """Navigate to `url` and wait for `load` within `deadline`; returns the page's URL."""
    await _goto(page, url, deadline)
    return page.url


async def navigate(page: Page, url: str, deadline: Deadline) -> Landing:
    """`goto`, answered as a `Landing` (status, title, key text: issue 31 item 2), read once
    the page has settled (engine.quiet: a single-page app renders after its fetches)."""
    status = await _goto(page, url, deadline)
    await quiet.settle(page, deadline)
    return await landing(page, status, deadline)


async def _goto(page: Page, url: str, deadline: Deadline) -> int | None:
    """Navigate to `url` and wait for `load`; the main document's status when it is known."""
    if progress.active():  # the origin is parsed only for a call that reports progress
        progress.report(progress.loading_phase(url), total_ms=deadline.remaining_ms())
    attempt = 1
    while True:
        try:
            response = await page.goto(url, wait_until="load", timeout=deadline.budget_ms())
            return document_status(page, response)
        except BrowserMeshError:
            raise  # the budget is gone: OPERATION_TIMEOUT
        except Exception as exc:
            if not _INTERRUPTED.search(str(exc)) or attempt == MAX_ATTEMPTS:
                raise navigation_error(exc, url, deadline.timeout_ms) from None
            failure = exc
        # Another navigation committed over ours: let the page settle, then look where it is.
        # (A later commit may interrupt this wait too, and it may time out: either way, look.)
        # The response that got there is not ours to know: no status.
        with contextlib.suppress(Exception):
            await page.wait_for_load_state("load", timeout=max(1.0, deadline.remaining_ms()))
        if same_url(page.url, url):
            return None
        if deadline.expired():
            raise navigation_error(failure, url, deadline.timeout_ms)
        attempt += 1
