"""The context's one route handler (engine/policy.py) on stand-in routes and CDP sessions: which
requests it aborts and with which label, that it never raises and answers every route, that its
memory of aborted requests is weak and bounded, what the redirect guard fails, and the context
options of `network` and `proxy`."""

from __future__ import annotations

import gc
from typing import Any

import pytest

from browsermesh.engine.policy import (
    BLOCKED_FAILURE,
    POLICY_CLOSE_CODE,
    POLICY_FAILURE,
    RequestRouter,
    apply_network,
    network_kwargs,
)
from browsermesh.model.network import origin_policy
from browsermesh.model.observe_query import parse_query

pytestmark = pytest.mark.anyio

A = "http://127.0.0.1:4001"
B = "http://127.0.0.1:4002"


class FakeRequest:
    def __init__(self, url: str, resource_type: str = "document") -> None:
        self.url = url
        self.resource_type = resource_type

    def is_navigation_request(self) -> bool:
        return self.resource_type == "document"

    @property
    def frame(self) -> Any:  # like a popup's first navigation: no page yet
        raise RuntimeError("Frame for this navigation request is not available")


class FakeRoute:
    def __init__(
        self, url: str, resource_type: str = "document", fail: BaseException | None = None
    ) -> None:
        self.request = FakeRequest(url, resource_type)
        self.calls: list[tuple[str, Any]] = []
        self._fail = fail

    async def abort(self, code: str) -> None:
        self.calls.append(("abort", code))
        if self._fail is not None:
            raise self._fail

    async def fallback(self) -> None:
        self.calls.append(("fallback", None))
        if self._fail is not None:
            raise self._fail


class FakeBrowserSession:
    def __init__(self) -> None:
        self.sent: list[str] = []
        self.detached = False

    def on(self, event: str, handler: Any) -> None:
        pass

    async def send(self, method: str, params: Any = None) -> dict[str, Any]:
        self.sent.append(method)
        return {}

    async def detach(self) -> None:
        self.detached = True


class FakeBrowser:
    def __init__(self) -> None:
        self.sessions: list[FakeBrowserSession] = []

    async def new_browser_cdp_session(self) -> FakeBrowserSession:
        self.sessions.append(FakeBrowserSession())
        return self.sessions[-1]


class FakeContext:
    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.pages: list[Any] = []
        self.browser = FakeBrowser()
        self.listeners: list[str] = []

    def on(self, event: str, handler: Any) -> None:
        self.listeners.append(event)

    async def route(self, pattern: str, handler: Any) -> None:
        self.calls.append(("route", pattern))

    async def unroute(self, pattern: str, handler: Any) -> None:
        self.calls.append(("unroute", pattern))

    async def route_web_socket(self, url: Any, handler: Any) -> None:
        self.calls.append(("route_web_socket", url(f"ws{B[4:]}/socket")))

    async def set_extra_http_headers(self, headers: dict[str, str]) -> None:
        self.calls.append(("headers", headers))

    async def set_offline(self, offline: bool) -> None:
        self.calls.append(("offline", offline))


def policy(**network: Any) -> Any:
    return origin_policy(network)


async def test_blocked_types_are_aborted_and_others_fall_back() -> None:
    router = RequestRouter(["image", "font"])
    image, script = FakeRoute(f"{A}/i.png", "image"), FakeRoute(f"{A}/s.js", "script")
    await router.handle(image)  # type: ignore[arg-type]
    await router.handle(script)  # type: ignore[arg-type]
    assert image.calls == [("abort", "blockedbyclient")]
    assert script.calls == [("fallback", None)]
    assert len(router) == 1
    failure = "net::ERR_BLOCKED_BY_CLIENT"
    assert router.failure(image.request, failure) == BLOCKED_FAILURE  # type: ignore[arg-type]
    assert len(router) == 0  # reported: forgotten
    assert router.failure(image.request, failure) == failure  # type: ignore[arg-type]
    assert router.failure(script.request, None) == "failed"  # type: ignore[arg-type]
    assert router.failure(object(), "net::ERR_FAILED") == "net::ERR_FAILED"  # type: ignore[arg-type]


async def test_the_policy_comes_first_and_labels_its_aborts() -> None:
    router = RequestRouter(["image"], policy(blockOrigins=[B]))
    blocked_image = FakeRoute(f"{B}/i.png", "image")
    allowed_image = FakeRoute(f"{A}/i.png", "image")
    page = FakeRoute(f"{A}/page")
    other = FakeRoute(f"{B}/page")
    for route in (blocked_image, allowed_image, page, other):
        await router.handle(route)  # type: ignore[arg-type]
    assert blocked_image.calls == allowed_image.calls == other.calls
    assert other.calls == [("abort", "blockedbyclient")]
    assert page.calls == [("fallback", None)]  # no page to arm (a popup's first request)
    text = "net::ERR_BLOCKED_BY_CLIENT"
    assert router.failure(blocked_image.request, text) == POLICY_FAILURE  # type: ignore[arg-type]
    assert router.failure(allowed_image.request, text) == BLOCKED_FAILURE  # type: ignore[arg-type]
    assert router.failure(other.request, text) == POLICY_FAILURE  # type: ignore[arg-type]


async def test_a_popups_blocked_first_navigation_is_reported_on_its_page_once() -> None:
    """The popup's page did not exist when its first navigation was stopped: whichever comes
    first — the page's `requestfailed` listener or the engine starting to observe the page —
    reports it on the popup's ring, recording its request first when it was missed; later
    events of that request are ignored."""
    from browsermesh.engine.observers import _network_handlers, report_orphan
    from browsermesh.model.clock import Clock
    from browsermesh.model.observe import ObserveLimits, PageObservations

    class Later(FakeRequest):
        owner: Any = None
        method = "GET"
        failure = "net::ERR_BLOCKED_BY_CLIENT"
        timing = None

        @property
        def frame(self) -> Any:
            if self.owner is None:
                raise RuntimeError("Frame for this navigation request is not available")
            return type("Frame", (), {"page": self.owner})()

    router = RequestRouter((), policy(blockOrigins=[B]))
    first, second, image = Later(f"{B}/popup"), Later(f"{B}/other"), Later(f"{B}/i", "image")
    for request in (first, second, image):
        route = FakeRoute(request.url)
        route.request = request
        await router.handle(route)  # type: ignore[arg-type]
    popup, other_page = object(), object()
    assert router.orphans_of(popup) == []  # no frame has a page yet
    first.owner, second.owner, image.owner = popup, other_page, popup
    assert router.orphans_of(popup) == [first]  # not the image: only navigations
    assert router.orphan(image) is None

    def ring() -> PageObservations:
        limits = ObserveLimits(200, 2048, 100, 65_536)
        return PageObservations("s1", "p1", limits, Clock())

    def failed(sink: PageObservations) -> list[tuple[str, str]]:
        events = sink.query(parse_query({"source": "requestFailed"}))["events"]
        return [(e["url"], e["failure"]) for e in events]

    # The engine finds it first: reported once; the listener's late events change nothing.
    sink = ring()
    report_orphan(sink, router, first)
    handlers = _network_handlers(sink, router)
    handlers["request"](first)
    handlers["requestfailed"](first)
    assert failed(sink) == [(f"{B}/popup", POLICY_FAILURE)]
    assert router.orphans_of(popup) == []
    # The listener sees only its failure first: recorded and reported; the engine skips it.
    other = ring()
    _network_handlers(other, router)["requestfailed"](second)
    assert failed(other) == [(f"{B}/other", POLICY_FAILURE)]
    assert router.orphans_of(other_page) == []


async def test_an_allow_list_blocks_everything_else_but_local_urls() -> None:
    router = RequestRouter((), policy(allowOrigins=["http://*.shop.test:4001", A]))
    routes = {
        url: FakeRoute(url)
        for url in (
            f"{A}/x",
            "http://a.b.shop.test:4001/x",
            "http://shop.test:4001/x",  # the apex is not a subdomain
            f"{B}/x",
            "data:text/plain,hi",
        )
    }
    for route in routes.values():
        await router.handle(route)  # type: ignore[arg-type]
    verdicts = {url: route.calls[0][0] for url, route in routes.items()}
    assert verdicts == {
        f"{A}/x": "fallback",
        "http://a.b.shop.test:4001/x": "fallback",
        "http://shop.test:4001/x": "abort",
        f"{B}/x": "abort",
        "data:text/plain,hi": "fallback",
    }


async def test_the_handler_never_raises() -> None:
    router = RequestRouter(["media"], policy(blockOrigins=[B]))
    for url, kind in ((f"{A}/m", "media"), (f"{A}/x", "xhr"), (f"{B}/x", "xhr")):
        await router.handle(FakeRoute(url, kind, RuntimeError("Target closed")))  # type: ignore[arg-type]

    class Gone:
        @property
        def request(self) -> Any:
            raise RuntimeError("context closed")

    await router.handle(Gone())  # type: ignore[arg-type]


async def test_a_request_whose_guard_cannot_be_armed_is_aborted() -> None:
    """Fail closed: a request that would go on unguarded (its redirects unchecked) dies."""

    class Page:
        main_frame: Any = None

    class Frame:
        parent_frame = None
        page = Page()

    class Request(FakeRequest):
        @property
        def frame(self) -> Any:
            return Frame()

    class Context:
        async def new_cdp_session(self, target: Any) -> Any:
            raise RuntimeError("CDP sessions are not supported here")

    router = RequestRouter((), policy(blockOrigins=[B]))
    router._context = Context()  # type: ignore[assignment]
    route = FakeRoute(f"{A}/page")
    route.request = Request(f"{A}/page")
    await router.handle(route)  # type: ignore[arg-type]
    assert route.calls == [("abort", "failed")]


async def test_aborted_requests_are_held_weakly() -> None:
    router = RequestRouter(["image"], policy(blockOrigins=[B]))
    for index in range(100):
        await router.handle(FakeRoute(f"{A if index % 2 else B}/i.png", "image"))  # type: ignore[arg-type]
    gc.collect()
    assert len(router) == 0  # nothing kept a request alive


async def test_the_route_comes_and_goes_with_the_rules() -> None:
    context = FakeContext()
    router = RequestRouter.for_settings({})
    assert not router.routing
    await router.sync(context)  # type: ignore[arg-type]
    assert context.calls == []  # no rule, no route at all
    await router.set_policy(context, policy(blockOrigins=[B]))  # type: ignore[arg-type]
    assert context.calls == [("route", "**/*"), ("route_web_socket", True)]
    await router.set_policy(context, None)  # type: ignore[arg-type]
    assert context.calls[-1] == ("unroute", "**/*")
    await router.set_policy(context, policy(allowOrigins=[A]))  # type: ignore[arg-type]
    # The WebSocket route is kept once installed (Playwright cannot remove it).
    assert context.calls[-1] == ("route", "**/*")
    assert [c for c in context.calls if c[0] == "route_web_socket"] == [("route_web_socket", True)]
    blocking = RequestRouter.for_settings({"blockResources": ["font"], "network": {}})
    assert blocking.routing and blocking.policy is None
    await blocking.set_policy(context, None)  # type: ignore[arg-type]
    assert context.calls[-1] == ("route", "**/*")  # blockResources keeps its route


async def test_a_blocked_web_socket_is_closed_with_policy_violation() -> None:
    class WebSocketRoute:
        closed: tuple[int | None, str | None] | None = None

        async def close(self, code: int | None = None, reason: str | None = None) -> None:
            self.closed = (code, reason)

    ws = WebSocketRoute()
    router = RequestRouter((), policy(blockOrigins=[B]))
    assert router._refused_web_socket(f"ws{B[4:]}/chat")
    assert not router._refused_web_socket(f"ws{A[4:]}/chat")
    await router.handle_web_socket(ws)  # type: ignore[arg-type]
    assert ws.closed == (POLICY_CLOSE_CODE, POLICY_FAILURE)


class FakeSession:
    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []

    async def send(self, method: str, params: dict[str, Any]) -> None:
        self.sent.append((method, params))


def paused(url: str, status: int | None, location: str | None) -> dict[str, Any]:
    headers = [] if location is None else [{"name": "Location", "value": location}]
    return {
        "requestId": "interception-1",
        "request": {"url": url},
        "responseStatusCode": status,
        "responseHeaders": headers,
    }


async def test_the_guard_fails_only_redirects_out_of_the_policy() -> None:
    router = RequestRouter((), policy(allowOrigins=[A]))
    session = FakeSession()
    cases = [
        paused(f"{A}/r", 302, f"{B}/x"),  # out of the allow list: failed
        paused(f"{A}/r", 301, "/local"),  # relative, same origin: on
        paused(f"{A}/r", 200, f"{B}/x"),  # not a redirect: on
        paused(f"{A}/r", 307, None),  # no Location: on
        paused(f"{A}/r2", 308, "//127.0.0.1:4002/x"),  # scheme-relative to B: failed
    ]
    for event in cases:
        router.guard._paused(session, event)
    await router.guard._tasks.drain()  # the sends are tasks the guard owns
    methods = [method for method, _ in session.sent]
    assert methods == [
        "Fetch.failRequest",
        "Fetch.continueRequest",
        "Fetch.continueRequest",
        "Fetch.continueRequest",
        "Fetch.failRequest",
    ]
    assert session.sent[0][1]["errorReason"] == "BlockedByClient"
    text = "net::ERR_BLOCKED_BY_CLIENT.Inspector"
    request = FakeRequest(f"{A}/r#fragment")
    assert router.failure(request, text) == POLICY_FAILURE  # type: ignore[arg-type]
    assert router.failure(request, text) == text  # reported once: forgotten
    assert router.failure(FakeRequest(f"{A}/r2"), "net::ERR_FAILED") == "net::ERR_FAILED"  # type: ignore[arg-type]
    assert router.failure(FakeRequest(f"{A}/r2"), text) == POLICY_FAILURE  # type: ignore[arg-type]


async def test_the_guard_remembers_a_bounded_number_of_redirects() -> None:
    router = RequestRouter((), policy(blockOrigins=[B]))
    session = FakeSession()
    for index in range(1000):
        router.guard._paused(session, paused(f"{A}/r{index}", 302, f"{B}/x"))
    await router.guard._tasks.drain()
    assert len(router.guard._failed) == 256
    assert not router.guard.took(f"{A}/r0")  # the oldest were forgotten
    assert router.guard.took(f"{A}/r999")


async def test_without_a_policy_the_guard_lets_everything_go_on() -> None:
    router = RequestRouter(["image"])
    session = FakeSession()
    router.guard._paused(session, paused(f"{A}/r", 302, f"{B}/x"))
    await router.guard._tasks.drain()
    assert [m for m, _ in session.sent] == ["Fetch.continueRequest"]


def test_context_options_of_network_and_proxy() -> None:
    assert network_kwargs({}) == {}
    assert network_kwargs({"blockResources": ["image"]}) == {}
    assert network_kwargs({"network": {}}) == {"service_workers": "block"}
    assert network_kwargs(
        {"network": {"offline": True, "extraHeaders": {"X-A": "1"}, "blockOrigins": [B]}}
    ) == {"service_workers": "block", "offline": True, "extra_http_headers": {"X-A": "1"}}
    assert network_kwargs({"network": {"offline": False}}) == {"service_workers": "block"}
    proxy = {"server": "http://127.0.0.1:3128", "bypass": ".x", "username": "u", "password": "p"}
    assert network_kwargs({"proxy": proxy}) == {"proxy": proxy}  # workers unaffected by a proxy


async def test_apply_network_sets_policy_then_headers_then_offline() -> None:
    context = FakeContext()
    router = RequestRouter()
    await apply_network(
        context,  # type: ignore[arg-type]
        router,
        {"blockOrigins": [B], "extraHeaders": {"X-A": "1"}, "offline": True},
    )
    assert context.calls == [
        ("route", "**/*"),
        ("route_web_socket", True),
        ("headers", {"X-A": "1"}),
        ("offline", True),
    ]
    await apply_network(context, router, {})  # type: ignore[arg-type]
    assert context.calls[-3:] == [("unroute", "**/*"), ("headers", {}), ("offline", False)]


async def test_the_worker_gate_closes_its_own_contexts_workers_and_releases_others() -> None:
    from browsermesh.engine.shared_workers import SharedWorkerGate

    reported: list[str] = []
    gate = SharedWorkerGate(reported.append)
    context = FakeContext()
    await gate.start(context)  # type: ignore[arg-type]
    session = context.browser.sessions[0]
    assert session.sent == ["Target.setAutoAttach"]
    gate.learn("ours")

    def attached(context_id: str, url: str) -> dict[str, Any]:
        info = {"targetId": "t", "browserContextId": context_id, "url": url}
        return {"sessionId": "s", "targetInfo": info, "waitingForDebugger": True}

    gate._attached(attached("ours", f"{A}/w.js"))
    gate._attached(attached("theirs", f"{A}/x.js"))
    await gate._tasks.drain()
    assert session.sent[1:] == ["Target.closeTarget", "Target.detachFromTarget"]
    assert reported == [f"{A}/w.js"]
    await gate.close()
    assert session.detached


async def test_a_policy_opens_the_worker_gate_and_its_removal_closes_it() -> None:
    router = RequestRouter()
    context = FakeContext()
    await router.set_policy(context, policy(blockOrigins=[B]))  # type: ignore[arg-type]
    assert router.workers.open and context.listeners == ["page"]
    await router.set_policy(context, None)  # type: ignore[arg-type]
    assert not router.workers.open and context.browser.sessions[0].detached
