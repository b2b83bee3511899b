"""The one route of a session's context: network policy (issue 19) and blocked resource types
(issue 16), plus what a route cannot see by itself.

`RequestRouter` owns every rule the browser enforces for a session:

- **One HTTP route**, `context.route("**/*", handle)`, installed only while there is a rule
  (routing costs a driver round trip per request and turns Chromium's HTTP cache off). The
  handler decides in one place, in this order: a URL the origin policy blocks is aborted
  (`blocked_by_policy`); a resource type `blockResources` names is aborted (`blocked`); any
  other request first has its page armed by the redirect guard (below), then goes on
  (`fallback`). It never raises, and every route it gets is answered.
- **A WebSocket route** (`context.route_web_socket`), installed with the first origin list and
  kept (Playwright has no way to remove it): a WebSocket to a blocked origin is closed with
  code 1008 before it connects; any other connects as usual.
- **The redirect guard** (engine/guard.py): a CDP session per page (and per out-of-process
  frame) pausing responses, so that a redirect out of the policy is failed before Chromium
  follows it, and requests sent as a document goes away (keepalive fetch, beacon), which the
  route never sees. Pages are armed as soon as they exist (`prepare` for the engine's pages,
  the context's `page` listener for popups); a navigation whose page was not armed when it
  started is refused (`blocked_by_policy`), since its redirects would go unchecked.
- **The shared-worker gate** (engine/shared_workers.py): shared workers are targets outside
  every page; those of a policy session are closed before they run (fail closed).

Gaps (docs/decisions.md, "What the policy does not guarantee"): the redirects of a popup's
very first navigation (its page does not exist yet when it is routed) and WebSockets of
workers.

Requests the router aborted, and URLs whose redirect the guard failed, are remembered so that
the observers report their failure as `blocked` / `blocked_by_policy` instead of Chromium's
`net::ERR_BLOCKED_BY_CLIENT`: the aborted ones in a weak map (Playwright's own objects bound
it; a reported request leaves at once), the redirect URLs in a small bounded map. A popup's
first navigation is stopped before its page exists, so no listener can see it: the router
keeps it (weakly, at most 16) and it is reported on that page once, whether the page's
listeners see its failure or the engine finds it when it starts observing the page.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from browsermesh.engine.guard import POLICY_FAILURE, RedirectGuard, Unguarded, report_blocked
from browsermesh.engine.shared_workers import SharedWorkerGate
from browsermesh.model.network import OriginPolicy, origin_of, origin_policy

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext, Page, Request, Route, WebSocketRoute

    from browsermesh.model.observe import PageObservations

__all__ = [
    "BLOCKED_FAILURE",
    "POLICY_FAILURE",
    "RedirectGuard",
    "RequestRouter",
    "apply_network",
    "network_kwargs",
    "playwright_proxy",
]

BLOCKED_FAILURE = "blocked"
"""The `failure` of a request `blockResources` aborted."""
POLICY_CLOSE_CODE = 1008
"""WebSocket close code of a connection the policy refused (RFC 6455: policy violation)."""
_ABORT_CODE = "blockedbyclient"
_MAX_ORPHANS = 16


class RequestRouter:
    """One session's network rules in the browser: origin policy and blocked resource types."""

    def __init__(
        self, resource_types: Iterable[str] = (), policy: OriginPolicy | None = None
    ) -> None:
        self.resource_types = frozenset(resource_types)
        self.policy = policy
        self.workers = SharedWorkerGate(self._report_worker)
        self.guard = RedirectGuard(lambda: self.policy, self.sink_of, self.workers.learn)
        # Observed pages of the context -> their sink: where the guard and the worker gate
        # report requests no page listener sees (engine/guard.py). Weak: pages come and go.
        self._sinks: weakref.WeakKeyDictionary[Any, PageObservations] = weakref.WeakKeyDictionary()
        self._pages_watched = False
        self._aborted: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
        # Policy-blocked first navigations of popups (no page existed to observe them yet):
        # request -> reported yet. Weak, and at most _MAX_ORPHANS.
        self._orphans: weakref.WeakKeyDictionary[Any, bool] = weakref.WeakKeyDictionary()
        self._context: BrowserContext | None = None
        self._routed = False
        self._web_sockets_routed = False

    @classmethod
    def for_settings(cls, settings: Mapping[str, Any]) -> RequestRouter:
        """The router of normalized context settings (`blockResources`, `network`)."""
        return cls(settings.get("blockResources") or (), origin_policy(settings.get("network")))

    @property
    def routing(self) -> bool:
        """Whether the context needs its route (some rule is set)."""
        return bool(self.resource_types) or self.policy is not None

    async def sync(self, context: BrowserContext) -> None:
        """Install what the current rules need: the route (removed again when no rule is
        left), the WebSocket route (kept once installed), the guard (disarmed without a
        policy)."""
        self._context = context
        if self.routing and not self._routed:
            await context.route("**/*", self.handle)
            self._routed = True
        elif not self.routing and self._routed:
            await context.unroute("**/*", self.handle)
            self._routed = False
        if self.policy is not None and not self._web_sockets_routed:
            await context.route_web_socket(self._refused_web_socket, self.handle_web_socket)
            self._web_sockets_routed = True
        if self.policy is None:
            await self.guard.disarm()
            await self.workers.stop()
            return
        if not self._pages_watched:
            # Every page is armed as soon as it exists (a popup's later navigations too).
            context.on("page", lambda page: self.guard.arm_soon(context, page))
            self._pages_watched = True
        await self.workers.start(context)  # fails closed: no policy without the gate
        for page in list(context.pages):  # a policy set while pages are open
            await self.guard.arm_page(context, page)

    async def prepare(self, page: Page) -> None:
        """Arm a page the engine opened before it requests anything (no-op without a policy):
        a navigation whose page was not armed when it started is refused."""
        if self.policy is not None and self._context is not None:
            await self.guard.arm_page(self._context, page)

    def watch(self, page: Page, sink: PageObservations) -> None:
        """`page` is observed on `sink` (engine.observe): its stopped requests go there."""
        with contextlib.suppress(TypeError):
            self._sinks[page] = sink

    def sink_of(self, page: Any) -> PageObservations | None:
        """The sink `page` is observed on, if any."""
        try:
            return self._sinks.get(page)
        except TypeError:
            return None

    def _report_worker(self, url: str) -> None:
        """A shared worker the gate closed: reported on each observed page of its origin."""
        origin = origin_of(url)
        for page, sink in list(self._sinks.items()):
            with contextlib.suppress(Exception):
                if origin is not None and origin_of(page.url) == origin:
                    report_blocked(sink, "GET", url, "sharedworker")

    async def set_policy(self, context: BrowserContext, policy: OriginPolicy | None) -> None:
        """New origin lists for the session (browser_session_update)."""
        self.policy = policy
        await self.sync(context)

    async def handle(self, route: Route) -> None:
        """The context's route handler; answers every route, never raises (a page or context
        closing under a routed request only loses that request)."""
        with contextlib.suppress(Exception):
            request = route.request
            label = self._verdict(request.url, request.resource_type)
            if label is not None:
                self._aborted[request] = label
                popup = label == POLICY_FAILURE and request.is_navigation_request()
                if popup and _pageless(request):
                    self._orphans[request] = False
                    while len(self._orphans) > _MAX_ORPHANS:
                        del self._orphans[next(iter(self._orphans))]
                await route.abort(_ABORT_CODE)
                return
            if self.policy is not None and self._context is not None:
                try:
                    await self.guard.cover(self._context, request)
                except Unguarded:
                    # Its page's guard came too late for it: refused, as the policy's stop.
                    self._aborted[request] = POLICY_FAILURE
                    await route.abort(_ABORT_CODE)
                    return
                except Exception:
                    await route.abort("failed")  # fail closed: unguarded redirects could leak
                    return
            await route.fallback()

    def _verdict(self, url: str, resource_type: str) -> str | None:
        if self.policy is not None and self.policy.blocks(url):
            return POLICY_FAILURE
        if resource_type in self.resource_types:
            return BLOCKED_FAILURE
        return None

    def _refused_web_socket(self, url: str) -> bool:
        return self.policy is not None and self.policy.blocks(url)

    async def handle_web_socket(self, web_socket: WebSocketRoute) -> None:
        """A WebSocket to a blocked origin: closed before it ever connects."""
        with contextlib.suppress(Exception):
            await web_socket.close(code=POLICY_CLOSE_CODE, reason=POLICY_FAILURE)

    def failure(self, request: Request, failure: str | None) -> str:
        """The failure text to report for `request`: `blocked` / `blocked_by_policy` when this
        router stopped it (and it is forgotten), else Playwright's own text (`failed` when it
        has none)."""
        try:
            label = self._aborted.pop(request, None)
        except TypeError:  # not weak-referenceable: never one of ours
            label = None
        if label is not None:
            return label
        text = failure or "failed"
        if text.startswith("net::ERR_BLOCKED_BY_CLIENT") and self.guard.took(request.url):
            return POLICY_FAILURE
        return text

    def orphans_of(self, page: Any) -> list[Request]:
        """The blocked first navigations of `page` (a popup) not reported yet: the page did
        not exist when they were stopped, so its listeners may have missed them."""
        found: list[Request] = []
        for request, reported in list(self._orphans.items()):
            if reported:
                continue
            try:
                owner = request.frame.page
            except Exception:
                continue
            if owner is page:
                found.append(request)
        return found

    def orphan(self, request: Any) -> bool | None:
        """None: not an orphan; else whether it was reported already."""
        try:
            return self._orphans.get(request)
        except TypeError:
            return None

    def reported(self, request: Any) -> None:
        """An orphan's failure is in its page's ring now: never again."""
        with contextlib.suppress(TypeError):
            if request in self._orphans:
                self._orphans[request] = True
                self._aborted.pop(request, None)

    async def close(self) -> None:
        await self.workers.close()
        await self.guard.close()

    def __len__(self) -> int:
        """Aborted requests not reported yet (and still alive)."""
        return len(self._aborted)


def _pageless(request: Any) -> bool:
    try:
        request.frame.page  # noqa: B018 - raises while the request's frame has no page
    except Exception:
        return True
    return False


def playwright_proxy(proxy: Mapping[str, str]) -> dict[str, str]:
    """Normalized `contextSettings.proxy` as Playwright's `proxy` option."""
    return {key: proxy[key] for key in ("server", "bypass", "username", "password") if key in proxy}


def network_kwargs(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The `new_context` arguments of `network` and `proxy`. A session created with `network`
    (even `{}`) runs without service workers: their requests and cache would pass beside the
    route, and origin lists may be set later by browser_session_update."""
    kwargs: dict[str, Any] = {}
    network = settings.get("network")
    if network is not None:
        kwargs["service_workers"] = "block"
        if network.get("offline"):
            kwargs["offline"] = True
        if network.get("extraHeaders"):
            kwargs["extra_http_headers"] = dict(network["extraHeaders"])
    proxy = settings.get("proxy")
    if proxy:
        kwargs["proxy"] = playwright_proxy(proxy)
    return kwargs


async def apply_network(
    context: BrowserContext, router: RequestRouter, network: Mapping[str, Any]
) -> None:
    """Make a live context follow a session's new `network` (browser_session_update): the
    origin lists first, then the headers (replaced as a whole), then offline."""
    await router.set_policy(context, origin_policy(network))
    await context.set_extra_http_headers(dict(network.get("extraHeaders") or {}))
    await context.set_offline(bool(network.get("offline")))
