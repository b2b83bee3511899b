"""The ASGI application of the Streamable HTTP transport (§18.2), built once per listener.

Layout of a request, outermost first:

1. :class:`~browsermesh.transports.drain.DrainMiddleware`: every request runs under the
   :class:`~browsermesh.transports.drain.RequestDrain`, so a stop can end it cleanly.
   With a fleet token, :class:`~browsermesh.transports.fleet_channel.FleetChannelMiddleware`
   then takes the other replicas' forwarded calls (its own credential, §37.6).
2. :class:`~browsermesh.transports.auth.AccessControlMiddleware`: ``Host`` → 421, ``Origin`` →
   403, bearer token → 401, and the caller's principal.
3. :class:`~browsermesh.transports.mcp_limits.McpSessionLimit`: a principal's MCP session (or
   ``subscriptions/listen`` stream) beyond ``max_mcp_sessions_per_principal`` → 429.
4. :class:`JsonRpcGuardMiddleware`: a POSTed body that is not one valid JSON-RPC message → 400.
5. The SDK's Streamable HTTP app (``Server.streamable_http_app``), mounted at ``config.http_path``,
   with the SDK's own DNS-rebinding check switched off (it cannot express port-less entries or
   ``*``). It is stateful on the 2025-11-25 leg (so ``notifications/cancelled`` reaches the
   request it names; the SDK binds each MCP session to the principal that opened it) and always
   sessionless on the 2026-07-28 leg. Browser sessions never depend on MCP sessions.

Unless ``config.view`` is off, the live view's routes (`transports.view`) come before the SDK
app, and access control leaves their authentication to them (a view-session cookie, not a
bearer token).

The app's lifespan runs the SDK session manager (a mounted app's own lifespan never runs) and,
on the way out, closes the live view (its watches and picture streams).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import AsyncIterator, Collection
from typing import Any

from mcp.server import Server
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import BaseRoute, Mount
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from browsermesh.config import Config
from browsermesh.log import EventLog
from browsermesh.mcp.server import BrowserMeshServer
from browsermesh.runtime.live import LiveView
from browsermesh.runtime.runtime import Runtime
from browsermesh.transports.access import AccessPolicy
from browsermesh.transports.asgi import header, respond_json
from browsermesh.transports.auth import AccessControlMiddleware
from browsermesh.transports.drain import DrainMiddleware, RequestDrain, drain_grace_s
from browsermesh.transports.fleet_channel import FleetChannelMiddleware
from browsermesh.transports.jsonrpc import check_message
from browsermesh.transports.mcp_limits import McpSessionLimit
from browsermesh.transports.view import VIEW_HEADERS, VIEW_PATH, view_routes
from browsermesh.transports.view_artifacts import artifact_server
from browsermesh.transports.view_auth import ViewAuth
from browsermesh.transports.view_channel import ViewChannel
from browsermesh.transports.view_fleet import FleetViews
from browsermesh.transports.view_input import input_actions

__all__ = ["JsonRpcGuardMiddleware", "build_http_app"]


def _is_json(scope: Scope) -> bool:
    """The SDK's own Content-Type test (`application/json`, parameters ignored)."""
    value = (header(scope, b"content-type") or b"").decode("latin-1")
    return any(part.strip() == "application/json" for part in value.split(";")[0].split(","))


async def _read_body(receive: Receive) -> bytes | None:
    """The whole request body, or None when the client went away first."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)


class JsonRpcGuardMiddleware:
    """A POSTed body that is not one valid JSON-RPC message gets HTTP 400 with the JSON-RPC error
    of `transports.jsonrpc` (-32700 / -32600 with the request's id), instead of the SDK's -32602
    whose text quotes the offending values (issue 12 #9). Valid bodies reach the SDK unchanged;
    the SDK reads the whole body anyway, so buffering it here costs no extra memory."""

    def __init__(self, app: ASGIApp, path: str) -> None:
        self.app = app
        self.path = path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope.get("method") != "POST"
            or scope.get("path") != self.path
            or not _is_json(scope)
        ):
            await self.app(scope, receive, send)
            return
        body = await _read_body(receive)
        if body is None:
            return  # disconnected: nobody to answer
        malformed = check_message(body)
        if malformed is not None:
            reply = malformed.reply.model_dump(mode="json", by_alias=True, exclude_unset=True)
            await respond_json(send, 400, reply)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)


def live_mcp_sessions(server: Server[Any]) -> Collection[str]:
    """The ids of the MCP sessions the SDK's session manager serves now. The SDK 2.3 has no
    public accessor for them; `tests/unit/test_http_modules.py` fails if that changes."""
    sessions: dict[str, Any] = server.session_manager._server_instances
    return sessions.keys()


def build_http_app(
    server: Server[Any],
    runtime: Runtime,
    config: Config,
    log: EventLog,
    *,
    drain: RequestDrain | None = None,
    policy: AccessPolicy | None = None,
    view_auth: ViewAuth | None = None,
) -> Starlette:
    """The HTTP application: access control around the SDK app at ``config.http_path``.

    Its lifespan runs the SDK session manager; the idle reaper is run by whoever serves the app
    (:class:`browsermesh.transports.http.HttpService`), so its failure can stop the server.
    ``drain`` (optional) tracks requests so a stop can end them; ``policy`` (optional, default
    from ``config``) is the access policy, which the caller may narrow once the port is bound;
    ``view_auth`` (optional, default on that policy) the live view's codes and cookies.
    Sets ``runtime.transport`` to ``"http"``.
    """
    runtime.transport = "http"
    mcp_app = server.streamable_http_app(
        streamable_http_path=config.http_path,
        # In a fleet every POST stands alone, so a balancer needs no stickiness (§37.6).
        stateless_http=config.fleet_redis is not None,
        json_response=False,
        # Our middleware does Host/Origin; the SDK still checks the POST Content-Type.
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        host=config.http_host,
    )

    policy = policy or AccessPolicy.from_config(config)
    live = LiveView(runtime) if config.view else None
    dispatcher = server.dispatcher if isinstance(server, BrowserMeshServer) else None
    resources = server.resources if isinstance(server, BrowserMeshServer) else None
    router = None if dispatcher is None else dispatcher.router
    # The view across the fleet: with the fleet token, this replica follows the others' views
    # and answers theirs (reference §37.9).
    fleet_views = (
        FleetViews(live, router, runtime.fleet)
        if live is not None and router is not None and router.forwards and runtime.fleet
        else None
    )
    routes: list[BaseRoute] = [Mount("/", app=mcp_app)]
    if live is not None:
        routes[:0] = view_routes(
            live, view_auth or ViewAuth(policy), log, runtime.handover, fleet_views
        )

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        try:
            async with server.session_manager.run():
                yield
        finally:
            if fleet_views is not None:
                await fleet_views.aclose()
            if live is not None:
                await live.aclose()

    channel: list[Middleware] = []
    if config.fleet_token is not None and dispatcher is not None and resources is not None:
        view_channel = None
        if live is not None:
            view_channel = ViewChannel(
                live,
                input_actions(runtime.handover, VIEW_HEADERS),
                artifact_server(runtime.core, log, VIEW_HEADERS),
            )
        channel.append(
            Middleware(
                FleetChannelMiddleware,
                token=config.fleet_token,
                serve=functools.partial(dispatcher.call, forwarded=True),
                read=functools.partial(resources.read, forwarded=True),
                log=log,
                view=view_channel,
            )
        )
    return Starlette(
        routes=routes,
        middleware=[
            Middleware(
                DrainMiddleware,
                drain=drain or RequestDrain(drain_grace_s(config.shutdown_grace_ms)),
            ),
            *channel,
            Middleware(
                AccessControlMiddleware,
                policy=policy,
                log=log,
                own_auth_prefix=VIEW_PATH if live is not None else None,
            ),
            Middleware(
                McpSessionLimit,
                path=config.http_path,
                limit=config.max_mcp_sessions_per_principal,
                live=lambda: live_mcp_sessions(server),
                log=log,
            ),
            Middleware(JsonRpcGuardMiddleware, path=config.http_path),
        ],
        lifespan=lifespan,
    )
