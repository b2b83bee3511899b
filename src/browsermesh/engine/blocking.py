"""`contextSettings.blockResources` (issue 16): a context route that aborts unwanted resource types.

Only a session that sets `blockResources` gets a route: routing costs a round trip to this
process per request (and Playwright turns Chromium's HTTP cache off for a routed context), so an
unset session keeps the unrouted path. The one handler aborts a request whose resource type is
in the set with `blockedbyclient` and lets every other request go on (`fallback`).

Requests the handler aborted are remembered in a weak set, so the observers can report their
failure as `blocked` instead of Chromium's `net::ERR_BLOCKED_BY_CLIENT`; the set holds no request
alive (Playwright's own objects bound it) and a reported request leaves it at once.

Known gap: requests a service worker answers (or makes itself) never reach a context route in
Chromium, so a page controlled by a service worker may still load what the set names.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext, Request, Route

__all__ = ["BLOCKED_FAILURE", "ResourceBlocker"]

BLOCKED_FAILURE = "blocked"
"""The `failure` of a `request_failed` event for a request the blocker aborted."""
_ABORT_CODE = "blockedbyclient"


class ResourceBlocker:
    """One session's blocked resource types and the requests its route aborted."""

    def __init__(self, resource_types: Iterable[str]) -> None:
        self.resource_types = frozenset(resource_types)
        self._aborted: weakref.WeakSet[Any] = weakref.WeakSet()

    async def install(self, context: BrowserContext) -> None:
        """Route every request of `context` through :meth:`handle` (pages made later included)."""
        await context.route("**/*", self.handle)

    async def handle(self, route: Route) -> None:
        """Abort a request of a blocked type, let any other go on; never raises (a context or
        page closing under a routed request only loses that request)."""
        with contextlib.suppress(Exception):  # the request died with its page or context
            request = route.request
            if request.resource_type in self.resource_types:
                self._aborted.add(request)
                await route.abort(_ABORT_CODE)
            else:
                await route.fallback()

    def failure(self, request: Request, failure: str | None) -> str:
        """The failure text to report for `request`: `blocked` when this blocker aborted it
        (and it is forgotten), else Playwright's own text (`failed` when it has none)."""
        try:
            if request in self._aborted:
                self._aborted.discard(request)
                return BLOCKED_FAILURE
        except TypeError:  # not weak-referenceable: never one of ours
            pass
        return failure or "failed"

    def __len__(self) -> int:
        """Aborted requests not reported yet (and still alive)."""
        return len(self._aborted)
