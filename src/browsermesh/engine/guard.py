"""The redirect guard of a session's network policy (issue 19, issue 30 item 4): what the
context route cannot see by itself, checked in Chromium's own interception.

The guard opens a CDP session of its own on each page (and on each out-of-process frame it can
reach) and enables `Fetch` there, beside Playwright's:

- **Response stage, every request**: Playwright continues redirect hops itself, so the route
  never sees them; a 3xx whose `Location` the policy blocks is failed (`BlockedByClient`)
  before Chromium follows it.
- **Request stage, requests that may outlive their document** (`Fetch`, `XHR`, `Ping`,
  `CSPViolationReport`): `fetch(…, {keepalive: true})` and `navigator.sendBeacon` from
  `pagehide` are sent after the document is gone, with no network id; Playwright's route
  lets such requests go on without asking (it cannot tie them to a frame). The guard fails
  the ones the policy blocks and reports them on the page's ring itself (no page listener
  ever sees them). Requests Playwright does know are left to the route.

**Arming before the first request.** Chromium decides a request's interception stages when it
starts: a `Fetch.enable` sent while a navigation is already in flight does not pause that
navigation's response (checked with Chromium 156: a fresh page's first navigation through a
redirect, and a popup's first navigation after its page appeared, both went through). So a
page is armed as soon as it exists (the engine awaits it for the pages it opens; the router's
`page` listener arms popups) and a navigation whose page was not armed when it reached the
route is refused (`Unguarded`: fail closed) instead of going on unchecked. A popup's very first
navigation starts before its page exists: its first URL is checked by the route, its
redirects are not (the one documented gap left, docs/decisions.md).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import weakref
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

from browsermesh.engine.bounded import bounded
from browsermesh.model.network import OriginPolicy
from browsermesh.model.tasks import TaskOwner

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext, Page, Request

    from browsermesh.model.observe import PageObservations

__all__ = ["POLICY_FAILURE", "RedirectGuard", "Unguarded", "report_blocked"]

POLICY_FAILURE = "blocked_by_policy"
"""The `failure` of a request the network policy stopped (route, guard or worker gate)."""
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_ARM_BUDGET_MS = 10_000
"""Arming a page's guard takes two CDP round trips; past this the request is aborted."""
_REMEMBERED_REDIRECTS = 256
_NO_SEPARATE_SESSION = "does not have a separate CDP session"
_DETACHED_TYPES = ("Fetch", "XHR", "Ping", "CSPViolationReport")
"""Resource types a document can send as it goes away (keepalive fetch, beacon, report)."""
_PATTERNS = [
    {"urlPattern": "*", "requestStage": "Response"},
    *(
        {"urlPattern": "*", "resourceType": kind, "requestStage": "Request"}
        for kind in _DETACHED_TYPES
    ),
]


class Unguarded(Exception):
    """A navigation that started before its page's guard was armed: its redirects would go
    unchecked, so it is refused."""


def _without_fragment(url: str) -> str:
    return url.split("#", 1)[0]


def _header(headers: Iterable[Mapping[str, str]] | None, name: str) -> str | None:
    for header in headers or ():
        if str(header.get("name", "")).lower() == name:
            return str(header.get("value", ""))
    return None


def report_blocked(sink: PageObservations | None, method: str, url: str, kind: str) -> None:
    """Record a request the policy stopped that no page listener will see (a keepalive request
    of a document that is gone, a shared worker): its start and its failure, on `sink`'s
    ring, within the ring's allowance."""
    if sink is None or not sink.admit("network"):
        return
    key = object()  # the request has no Playwright object: a key of its own
    sink.request(key, method, url, kind)
    sink.request_failed(key, POLICY_FAILURE)


class RedirectGuard:
    """Fails, in Chromium's interception, what the route cannot see: redirects out of the
    policy and requests sent after their document is gone."""

    def __init__(
        self,
        policy: Callable[[], OriginPolicy | None],
        sink_of: Callable[[Any], PageObservations | None],
        learn: Callable[[str], None] | None = None,
    ) -> None:
        """`policy` reads the session's current origin lists; `sink_of(page)` is the ring a
        page's stopped requests are reported on (None: not observed); `learn(id)` is told the
        context's CDP id when the first page is armed."""
        self._policy = policy
        self._sink_of = sink_of
        self._learn = learn
        # target (a Page, or a Frame with a CDP session of its own) -> its arming
        self._armed: weakref.WeakKeyDictionary[Any, asyncio.Future[Any]] = (
            weakref.WeakKeyDictionary()
        )
        # frames known to share their page's session (until they navigate again)
        self._in_page: weakref.WeakSet[Any] = weakref.WeakSet()
        # The armings and the answers to paused requests; `close` cancels and awaits them.
        self._tasks = TaskOwner()
        self._failed: collections.OrderedDict[str, int] = collections.OrderedDict()

    def ready(self, target: Any) -> bool:
        """Whether `target`'s guard is armed (its Fetch session answers)."""
        arming = self._armed.get(target)
        return (
            arming is not None
            and arming.done()
            and not arming.cancelled()
            and arming.exception() is None
        )

    async def arm_page(self, context: BrowserContext, page: Page) -> None:
        """Arm `page` now, before it requests anything (a new page, a popup that appeared)."""
        await self._arm(context, page)

    def arm_soon(self, context: BrowserContext, page: Page) -> None:
        """Start arming `page` (the context's `page` listener); a failure is retried by the
        page's next request, which waits for it."""
        if page not in self._armed:
            self._armed[page] = self._tasks.spawn(self._open(context, page))

    async def cover(self, context: BrowserContext, request: Request) -> None:
        """Arm the page (or out-of-process frame) `request` belongs to before it goes on.
        A request without a page yet (a popup's first navigation) is left as it is; a
        navigation whose page was not armed before it started raises `Unguarded`."""
        try:
            frame = request.frame
            page = frame.page
        except Exception:  # a popup's first navigation, a service worker: no target yet
            return
        if request.is_navigation_request():
            # Navigations are the page's (the browser handles them); the document may land
            # in another process, so what the frame loads next asks again.
            if frame.parent_frame is not None:
                self._in_page.discard(frame)
                await self._forget(frame)
            was_ready = self.ready(page)
            await self._arm(context, page)
            if not was_ready:
                raise Unguarded
            return
        if frame.parent_frame is None:
            await self._arm(context, page)
            return
        if frame not in self._in_page:
            try:
                await self._arm(context, frame)
                return
            except Exception as exc:
                if _NO_SEPARATE_SESSION not in str(exc):
                    raise
                self._in_page.add(frame)  # an in-process frame: its page's session sees it
        await self._arm(context, page)

    async def _arm(self, context: BrowserContext, target: Any) -> None:
        arming = self._armed.get(target)
        if arming is None:
            arming = self._tasks.spawn(self._open(context, target))
            self._armed[target] = arming
        try:
            await bounded(asyncio.shield(arming), _ARM_BUDGET_MS)
        except BaseException:
            if arming.done() and (arming.cancelled() or arming.exception() is not None):
                self._armed.pop(target, None)  # the next request tries again
            raise

    async def _forget(self, target: Any) -> None:
        """Detach `target`'s session, if it has one (its process may be gone or replaced)."""
        arming = self._armed.pop(target, None)
        usable = arming is not None and arming.done() and not arming.cancelled()
        if usable and arming is not None and arming.exception() is None:
            with contextlib.suppress(Exception):
                await arming.result().detach()

    async def _open(self, context: BrowserContext, target: Any) -> Any:
        session = await context.new_cdp_session(target)
        page = getattr(target, "page", target)  # a Frame's page, or the Page itself
        page_ref = weakref.ref(page) if page is not None else None
        session.on("Fetch.requestPaused", lambda event: self._paused(session, event, page_ref))
        await session.send("Fetch.enable", {"patterns": _PATTERNS})
        if self._learn is not None and target is page:
            # Once per context: its CDP id, which the shared-worker gate tells its own by.
            info = await session.send("Target.getTargetInfo")
            learn, self._learn = self._learn, None
            learn(str(info["targetInfo"]["browserContextId"]))
        return session

    def _paused(
        self, session: Any, event: Mapping[str, Any], page_ref: Callable[[], Any] | None = None
    ) -> None:
        """A paused request of an armed target: fail what the policy blocks, let the rest go."""
        request_id = event.get("requestId")
        method, params = "Fetch.continueRequest", {"requestId": request_id}
        policy = self._policy()
        request = event.get("request") or {}
        url = str(request.get("url", ""))
        if "responseStatusCode" not in event and "responseErrorReason" not in event:
            # The request stage: only what Playwright cannot route (no network id) is ours.
            if policy is not None and not event.get("networkId") and policy.blocks(url):
                method = "Fetch.failRequest"
                params = {"requestId": request_id, "errorReason": "BlockedByClient"}
                sink = self._sink_of(page_ref()) if page_ref is not None else None
                kind = str(event.get("resourceType") or "other").lower()
                report_blocked(sink, str(request.get("method", "GET")), url, kind)
            self._tasks.spawn(self._send(session, method, params))
            return
        status = event.get("responseStatusCode")
        location = _header(event.get("responseHeaders"), "location")
        if (
            policy is not None
            and status in _REDIRECTS
            and location
            and policy.blocks(urljoin(url, location))
        ):
            method = "Fetch.failRequest"
            params = {"requestId": request_id, "errorReason": "BlockedByClient"}
            self._remember(url)
        self._tasks.spawn(self._send(session, method, params))

    @staticmethod
    async def _send(session: Any, method: str, params: dict[str, Any]) -> None:
        with contextlib.suppress(Exception):  # the page or its target went away meanwhile
            await session.send(method, params)

    def _remember(self, url: str) -> None:
        key = _without_fragment(url)
        self._failed[key] = self._failed.get(key, 0) + 1
        self._failed.move_to_end(key)
        while len(self._failed) > _REMEMBERED_REDIRECTS:
            self._failed.popitem(last=False)

    def took(self, url: str) -> bool:
        """Whether the guard failed a redirect of `url` not reported yet (and forget one)."""
        key = _without_fragment(url)
        count = self._failed.get(key, 0)
        if not count:
            return False
        if count == 1:
            del self._failed[key]
        else:
            self._failed[key] = count - 1
        return True

    async def disarm(self) -> None:
        """Stop pausing requests (the policy has no origin list any more)."""
        armed, self._armed = self._armed, weakref.WeakKeyDictionary()
        self._in_page = weakref.WeakSet()
        for arming in list(armed.values()):
            if arming.done() and not arming.cancelled() and arming.exception() is None:
                with contextlib.suppress(Exception):
                    await arming.result().detach()

    async def close(self) -> None:
        """The context closed: nothing left to arm or answer (cancelled and awaited)."""
        self._armed = weakref.WeakKeyDictionary()
        await self._tasks.aclose()
