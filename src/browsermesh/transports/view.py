"""The live view's HTTP side (issue 21): the page, its assets, its event stream and its links.

Served by the HTTP transport under ``/view`` (``--no-view`` turns it off), behind the same
``Host`` and ``Origin`` checks as ``/mcp`` (`transports.auth`); who the viewer is comes from
`transports.view_auth` (``local`` without a token file, else a view-session cookie):

- ``GET /view/``: the page (``view_static/index.html``; plain HTML, CSS and a small script
  shipped in the package: no build step, no CDN);
- ``GET /view/static/{name}``: its stylesheet and script;
- ``GET /view/events``: Server-Sent Events, ``state`` (the viewer's grid, when it changes) and
  ``frame`` (a page's newest picture), from `runtime.live.LiveView`;
- ``GET /view/login?code=``: redeems a one-time code, sets the view-session cookie and moves
  on to ``/view/`` (a same-site step, so the ``SameSite=Strict`` cookie goes along even when the
  link was opened from another site);
- ``POST /view/link``: a new one-time link for the bearer token's principal (``browsermesh
  view-link``); without a token file, the plain ``/view/`` address.

Everything is read-only: no endpoint acts on a session or a page. Every answer forbids caching,
framing and referrers; the page's script may talk only to this server.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator, Sequence
from importlib import resources
from typing import Final
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Mount, Route

from browsermesh.config.http_options import VIEW_PATH
from browsermesh.log import EventLog
from browsermesh.model.clock import iso_now
from browsermesh.runtime.live import LiveView
from browsermesh.transports.auth import bearer_token
from browsermesh.transports.view_auth import ViewAuth

__all__ = ["HEARTBEAT_S", "VIEW_PATH", "announce_view", "view_routes"]

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
_HEADERS: Final = {
    "cache-control": "no-store",
    "referrer-policy": "no-referrer",
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "content-security-policy": _CSP,
}
_UNAUTHORIZED: Final = (
    "<!doctype html><meta charset=utf-8><title>BrowserMesh live view</title>"
    "<p>401: this view needs a link. Run <code>browsermesh view-link</code> and open the link "
    "it prints (it works once, within a minute).</p>"
)
_LOGIN_DONE: Final = (
    '<!doctype html><meta charset=utf-8><meta http-equiv="refresh" content="0;url=/view/">'
    '<title>BrowserMesh live view</title><p><a href="/view/">Open the live view</a></p>'
)


def _asset(name: str) -> bytes:
    return resources.files("browsermesh.transports").joinpath("view_static", name).read_bytes()


def _html(body: str, status: int, extra: dict[str, str] | None = None) -> Response:
    return Response(
        body, status, {**_HEADERS, **(extra or {})}, media_type="text/html; charset=utf-8"
    )


def _sse(kind: str, data: object) -> bytes:
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return f"event: {kind}\ndata: {text}\n\n".encode()


def view_routes(live: LiveView, auth: ViewAuth, log: EventLog) -> list[BaseRoute]:
    """The ``/view`` routes of one listener (see the module doc)."""
    assets = {name: _asset(name) for name in _ASSETS}

    def viewer(request: Request) -> str | None:
        cookie = request.headers.get("cookie")
        return auth.principal_of(None if cookie is None else cookie.encode("latin-1"))

    async def page(request: Request) -> Response:
        if viewer(request) is None:
            return _html(_UNAUTHORIZED, 401)
        return Response(assets["index.html"], 200, _HEADERS, media_type=_ASSETS["index.html"])

    async def asset(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in _ASSETS or name == "index.html":
            return Response(b"not found", 404, _HEADERS, media_type="text/plain")
        if viewer(request) is None:
            return Response(b"unauthorized", 401, _HEADERS, media_type="text/plain")
        return Response(assets[name], 200, _HEADERS, media_type=_ASSETS[name])

    async def events(request: Request) -> Response:
        principal = viewer(request)
        if principal is None:
            return Response(b"unauthorized", 401, _HEADERS, media_type="text/plain")
        return StreamingResponse(
            _stream(live, principal, log),
            200,
            {**_HEADERS, "x-accel-buffering": "no"},
            media_type="text/event-stream",
        )

    async def login(request: Request) -> Response:
        principal = auth.redeem(request.query_params.get("code", ""))
        if principal is None:
            log.warn("view.login_refused", reason="unknown_expired_or_used_code")
            return _html(_UNAUTHORIZED, 401)
        cookie = auth.open_session(principal)
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
                "url": login_url(base, auth.issue_code(principal)),
                "principal": principal,
                "expiresInS": int(auth.code_ttl_s),
            },
            200,
            _HEADERS,
        )

    # One mount: a path under /view that no route takes, or a method a route does not take,
    # is answered here (404, 405), never by the MCP app behind.
    return [
        Route(VIEW_PATH, page, methods=["GET"]),
        Mount(
            VIEW_PATH,
            routes=[
                Route("/", page, methods=["GET"]),
                Route("/static/{name}", asset, methods=["GET"]),
                Route("/events", events, methods=["GET"]),
                Route("/login", login, methods=["GET"]),
                Route("/link", link, methods=["POST"]),
            ],
        ),
    ]


def login_url(base: str, code: str) -> str:
    return f"{base}{VIEW_PATH}/login?code={quote(code, safe='')}"


async def _stream(live: LiveView, principal: str, log: EventLog) -> AsyncIterator[bytes]:
    """One viewer's event stream: joins the live view first, leaves it when the stream ends."""
    feed = live.join(principal)
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
        live.leave(feed)
        log.info("view.closed", principal=principal)


def announce_view(auth: ViewAuth, base: str, principals: Sequence[str], quiet: bool) -> None:
    """At start-up, on stderr: where the view is (without tokens) or one one-time link per
    principal (never a token). One JSON line each, like the other start-up lines."""
    if quiet:
        return
    lines: list[dict[str, object]]
    if not auth.required:
        lines = [{"message": "view.ready", "url": f"{base}{VIEW_PATH}/"}]
    else:
        lines = [
            {
                "message": "view.link",
                "principal": principal,
                "url": login_url(base, auth.issue_code(principal)),
                "expiresInS": int(auth.code_ttl_s),
            }
            for principal in principals
        ]
    for line in lines:
        record = {"level": "info", **line, "type": line["message"], "timestamp": iso_now()}
        print(json.dumps(record, separators=(",", ":")), file=sys.stderr, flush=True)
