"""The live view's HTTP side (issue 21): the page, its assets, its event stream and its links.

Served by the HTTP transport under ``/view`` (``--no-view`` turns it off), behind the same
``Host`` and ``Origin`` checks as ``/mcp`` (`transports.auth`); who the viewer is comes from
`transports.view_auth` (``local`` without a token file, else a view-session cookie):

- ``GET /view/``: the page (``view_static/index.html``; plain HTML, CSS and a small script
  shipped in the package: no build step, no CDN);
- ``GET /view/static/{name}``: its stylesheet and script;
- ``GET /view/events``: Server-Sent Events, ``state`` (the viewer's grid, when it changes) and
  ``frame`` (a page's newest picture), from `runtime.live.LiveView`;
- ``GET /view/login?code=``: for a valid one-time code, a page that says whose live view the
  link opens (and as whom this browser is signed in now) with a Continue button; the code is
  not used up (issue 30 #6: a link someone else sent must not sign this browser into their
  view unannounced, login CSRF);
- ``POST /view/login`` (that button; a same-origin form, so ``Origin`` must be this server's):
  redeems the code, sets the view-session cookie and moves on to ``/view/`` (a same-site step,
  so the ``SameSite=Strict`` cookie goes along);
- ``POST /view/link``: a new one-time link for the bearer token's principal (``browsermesh
  view-link``); without a token file, the plain ``/view/`` address.

- ``POST /view/hold``, ``/view/input``, ``/view/release``: a person takes a session's page over,
  drives it and hands it back (issue 34, `transports.view_input`).

In a fleet with its token (reference §37.9) the sign-in is the fleet's (`ViewAuth` keeps codes
and view sessions in its directory), the event stream shows the principal's sessions on every
replica and take-overs and downloads reach the session's replica (`transports.view_fleet`); a
directory that does not answer makes a view request 503, not 401.
- ``GET /view/artifacts/{sessionId}/{artifactId}``: a session's artifact (its traces and videos
  are linked from its card), for its principal only (issue 35, `transports.view_artifacts`).

Nothing else acts on a session or a page. Every answer forbids caching, framing and referrers;
the page's script may talk only to this server.
"""

from __future__ import annotations

import asyncio
import html
import json
import sys
from collections.abc import AsyncIterator, Sequence
from importlib import resources
from typing import Any, Final, Protocol
from urllib.parse import parse_qs, quote

from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Mount, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from browsermesh.config.http_options import VIEW_PATH
from browsermesh.log import EventLog
from browsermesh.model.clock import iso_now
from browsermesh.runtime.handover import Handover
from browsermesh.runtime.live import LiveView, ViewerFeed
from browsermesh.transports.asgi import respond_json
from browsermesh.transports.auth import bearer_token
from browsermesh.transports.view_artifacts import artifact_routes
from browsermesh.transports.view_auth import ViewAuth, ViewAuthUnavailable
from browsermesh.transports.view_input import input_routes

__all__ = ["HEARTBEAT_S", "VIEW_HEADERS", "VIEW_PATH", "FleetSide", "announce_view", "view_routes"]

HEARTBEAT_S: Final = 15.0
"""An idle event stream gets a comment this often (proxies and browsers keep it open)."""
_ASSETS: Final = {
    "index.html": "text/html; charset=utf-8",
    "view.css": "text/css; charset=utf-8",
    "view.js": "text/javascript; charset=utf-8",
}
_CSP: Final = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
VIEW_HEADERS: Final = {
    "cache-control": "no-store",
    "referrer-policy": "no-referrer",
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "content-security-policy": _CSP,
}
"""Every view answer's headers: no caching, framing or referrers; the page's own CSP."""
_HEADERS: Final = VIEW_HEADERS
_UNAUTHORIZED: Final = (
    "<!doctype html><meta charset=utf-8><title>BrowserMesh live view</title>"
    "<p>401: this view needs a link. Run <code>browsermesh view-link</code> and open the link "
    "it prints (it works once, within a minute).</p>"
)
_LOGIN_CSP: Final = (
    "default-src 'none'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
# The Continue form's POST must carry this server's Origin: with "no-referrer" a browser sends
# `Origin: null` for a form POST, so the login page uses "same-origin" (never cross-origin).
_LOGIN_HEADERS: Final = {"content-security-policy": _LOGIN_CSP, "referrer-policy": "same-origin"}
_LOGIN_BODY_MAX: Final = 4096
_FORBIDDEN: Final = (
    "<!doctype html><meta charset=utf-8><title>BrowserMesh live view</title>"
    "<p>403: sign in with the Continue button of the link's own page.</p>"
)
_LOGIN_DONE: Final = (
    '<!doctype html><meta charset=utf-8><meta http-equiv="refresh" content="0;url=/view/">'
    '<title>BrowserMesh live view</title><p><a href="/view/">Open the live view</a></p>'
)


class FleetSide(Protocol):
    """The view across the fleet (transports/view_fleet.py's `FleetViews`, reference §37.9):
    fleet-wide feeds, and take-over requests and downloads relayed to the session's replica."""

    def join(self, principal: str) -> ViewerFeed: ...
    def leave(self, feed: ViewerFeed) -> None: ...
    async def relay_input(
        self, action: str, principal: str, session_id: str, body: dict[str, Any]
    ) -> Response | None: ...
    async def relay_artifact(
        self, principal: str, session_id: str, artifact_id: str
    ) -> Response | None: ...


class _StoreUnavailable:
    """A view request whose sign-in could not be checked because the fleet's directory did
    not answer gets 503 (try again), never a 401 that would send the person to a new link."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = False

        async def tracked(message: Any) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, tracked)
        except ViewAuthUnavailable:
            if started:
                raise
            message = "the fleet's directory does not answer; try again shortly"
            await respond_json(send, 503, {"error": "directory_unreachable", "message": message})


def _confirm_page(principal: str, current: str | None, code: str) -> str:
    """The login page: whose view the link opens, and the Continue form that redeems it."""
    who = html.escape(principal)
    now = ""
    if current is not None and current != principal:
        now = (
            f"<p>This browser is signed in to the live view as <strong>{html.escape(current)}"
            "</strong>; continuing replaces that.</p>"
        )
    return (
        "<!doctype html><meta charset=utf-8><title>BrowserMesh live view</title>"
        f"<h1>Open the live view of principal <strong>{who}</strong>?</h1>"
        f"<p>This link shows the browser sessions of the principal <strong>{who}</strong>. "
        "Continue only if you asked for this link yourself.</p>"
        f"{now}"
        f'<form method=post action="{VIEW_PATH}/login">'
        f'<input type=hidden name=code value="{html.escape(code, quote=True)}">'
        "<button type=submit>Continue</button></form>"
    )


def _same_origin(request: Request) -> bool:
    """Whether a POST comes from a page of this server: its ``Origin`` is this request's own
    scheme and ``Host`` (a browser always sends it with a form POST; a foreign site cannot
    forge it), and ``Sec-Fetch-Site``, when sent, agrees."""
    origin = request.headers.get("origin")
    host = request.headers.get("host")
    if origin is None or host is None:
        return False
    if origin.lower() != f"{request.url.scheme}://{host}".lower():
        return False
    return request.headers.get("sec-fetch-site", "same-origin") == "same-origin"


async def _form_code(request: Request) -> str:
    """The ``code`` field of a small form body (anything larger or malformed: no code)."""
    if request.headers.get("content-type", "").split(";")[0].strip() != (
        "application/x-www-form-urlencoded"
    ):
        return ""
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > _LOGIN_BODY_MAX:
            return ""
    values = parse_qs(body.decode("latin-1"), max_num_fields=4).get("code", [])
    return values[0] if len(values) == 1 else ""


def _asset(name: str) -> bytes:
    return resources.files("browsermesh.transports").joinpath("view_static", name).read_bytes()


def _html(body: str, status: int, extra: dict[str, str] | None = None) -> Response:
    return Response(
        body, status, {**_HEADERS, **(extra or {})}, media_type="text/html; charset=utf-8"
    )


def _sse(kind: str, data: object) -> bytes:
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return f"event: {kind}\ndata: {text}\n\n".encode()


def view_routes(
    live: LiveView,
    auth: ViewAuth,
    log: EventLog,
    handover: Handover | None = None,
    fleet: FleetSide | None = None,
) -> list[BaseRoute]:
    """The ``/view`` routes of one listener (see the module doc); without `handover`, no
    take-over; with `fleet`, the view spans the fleet (reference §37.9)."""
    assets = {name: _asset(name) for name in _ASSETS}

    async def viewer(request: Request) -> str | None:
        cookie = request.headers.get("cookie")
        return await auth.principal_of(None if cookie is None else cookie.encode("latin-1"))

    async def page(request: Request) -> Response:
        if await viewer(request) is None:
            return _html(_UNAUTHORIZED, 401)
        return Response(assets["index.html"], 200, _HEADERS, media_type=_ASSETS["index.html"])

    async def asset(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in _ASSETS or name == "index.html":
            return Response(b"not found", 404, _HEADERS, media_type="text/plain")
        if await viewer(request) is None:
            return Response(b"unauthorized", 401, _HEADERS, media_type="text/plain")
        return Response(assets[name], 200, _HEADERS, media_type=_ASSETS[name])

    async def events(request: Request) -> Response:
        principal = await viewer(request)
        if principal is None:
            return Response(b"unauthorized", 401, _HEADERS, media_type="text/plain")
        return StreamingResponse(
            _stream(fleet or live, principal, log),
            200,
            {**_HEADERS, "x-accel-buffering": "no"},
            media_type="text/event-stream",
        )

    async def confirm(request: Request) -> Response:
        code = request.query_params.get("code", "")
        principal = await auth.peek(code)
        if principal is None:
            log.warn("view.login_refused", reason="unknown_expired_or_used_code")
            return _html(_UNAUTHORIZED, 401)
        body = _confirm_page(principal, await viewer(request), code)
        return _html(body, 200, _LOGIN_HEADERS)

    async def login(request: Request) -> Response:
        if not _same_origin(request):
            log.warn("view.login_refused", reason="not_a_same_origin_form")
            return _html(_FORBIDDEN, 403)
        try:
            code = await _form_code(request)
        except (ValueError, ClientDisconnect):
            code = ""
        principal = await auth.redeem(code)
        if principal is None:
            log.warn("view.login_refused", reason="unknown_expired_or_used_code")
            return _html(_UNAUTHORIZED, 401)
        cookie = await auth.open_session(principal)
        log.info("view.login", principal=principal)
        return _html(_LOGIN_DONE, 200, {"set-cookie": auth.set_cookie(cookie).decode("latin-1")})

    async def link(request: Request) -> Response:
        base = f"{request.url.scheme}://{request.headers.get('host', '')}"
        if not auth.required:
            return JSONResponse({"url": f"{base}{VIEW_PATH}/", "principal": "local"}, 200, _HEADERS)
        raw = request.headers.get("authorization")
        token = bearer_token(None if raw is None else raw.encode("latin-1"))
        principal = None if token is None else auth.principal_for_token(token)
        if principal is None:
            return JSONResponse(
                {"error": "unauthorized", "message": "A valid bearer token is required."},
                401,
                {**_HEADERS, "www-authenticate": "Bearer"},
            )
        return JSONResponse(
            {
                "url": login_url(base, await auth.issue_code(principal)),
                "principal": principal,
                "expiresInS": int(auth.code_ttl_s),
            },
            200,
            _HEADERS,
        )

    # One mount: a path under /view that no route takes, or a method a route does not take,
    # is answered here (404, 405), never by the MCP app behind.
    relay_input = None if fleet is None else fleet.relay_input
    relay_artifact = None if fleet is None else fleet.relay_artifact
    unavailable = [Middleware(_StoreUnavailable)]
    return [
        Route(VIEW_PATH, page, methods=["GET"], middleware=unavailable),
        Mount(
            VIEW_PATH,
            routes=[
                Route("/", page, methods=["GET"]),
                Route("/static/{name}", asset, methods=["GET"]),
                Route("/events", events, methods=["GET"]),
                Route("/login", confirm, methods=["GET"]),
                Route("/login", login, methods=["POST"]),
                Route("/link", link, methods=["POST"]),
                *artifact_routes(live.core, viewer, log, _HEADERS, relay_artifact),
                *(
                    []
                    if handover is None
                    else input_routes(handover, viewer, _same_origin, log, _HEADERS, relay_input)
                ),
            ],
            middleware=unavailable,
        ),
    ]


def login_url(base: str, code: str) -> str:
    return f"{base}{VIEW_PATH}/login?code={quote(code, safe='')}"


async def _stream(
    feeds: LiveView | FleetSide, principal: str, log: EventLog
) -> AsyncIterator[bytes]:
    """One viewer's event stream: joins the live view first, leaves it when the stream ends."""
    feed = feeds.join(principal)
    log.info("view.opened", principal=principal)
    try:
        yield b"retry: 3000\n\n"
        while True:
            try:
                news = await asyncio.wait_for(feed.next(), HEARTBEAT_S)
            except TimeoutError:
                yield b": keep-alive\n\n"
                continue
            for kind, data in news:
                yield _sse(kind, data)
    finally:
        feeds.leave(feed)
        log.info("view.closed", principal=principal)


async def announce_view(auth: ViewAuth, base: str, principals: Sequence[str], quiet: bool) -> None:
    """At start-up, on stderr: where the view is (without tokens) or one one-time link per
    principal (never a token). One JSON line each, like the other start-up lines. A fleet's
    directory that does not answer yet costs the links, never the start (a warning says to run
    ``browsermesh view-link`` later)."""
    if quiet:
        return
    lines: list[dict[str, object]]
    if not auth.required:
        lines = [{"message": "view.ready", "url": f"{base}{VIEW_PATH}/"}]
    else:
        try:
            lines = [
                {
                    "message": "view.link",
                    "principal": principal,
                    "url": login_url(base, await auth.issue_code(principal)),
                    "expiresInS": int(auth.code_ttl_s),
                }
                for principal in principals
            ]
        except ViewAuthUnavailable:
            lines = [
                {
                    "level": "warn",
                    "message": "view.links_unavailable",
                    "reason": "directory_unreachable",
                    "hint": "run `browsermesh view-link` once the fleet's directory answers",
                }
            ]
    for line in lines:
        record = {"level": "info", **line, "type": line["message"], "timestamp": iso_now()}
        print(json.dumps(record, separators=(",", ":")), file=sys.stderr, flush=True)
