"""The access-control middleware: the first thing every HTTP request meets (§18.3, §18.5).

In order: ``Host`` not allowed → 421, ``Origin`` not allowed → 403 (both before authentication),
then, when a token file is configured, a missing or unknown bearer token → 401. A matched token's
principal is published to the SDK's auth context (``scope["user"]`` and ``auth_context_var``) so
:func:`browsermesh.mcp.server.principal_of` sees it; without a token file nothing is set and every
caller is ``local``. The rules themselves live in :mod:`browsermesh.transports.access`.

Requests under ``own_auth_prefix`` (the live view, ``/view``) pass the ``Host`` and ``Origin``
checks here like any other but no bearer check: a browser viewing them carries a view-session
cookie instead, which :mod:`browsermesh.transports.view` checks itself.
"""

from __future__ import annotations

from typing import Final

from mcp.server.auth.middleware.auth_context import auth_context_var
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from starlette.authentication import AuthCredentials
from starlette.types import ASGIApp, Receive, Scope, Send

from browsermesh.log import EventLog
from browsermesh.transports.access import AccessPolicy
from browsermesh.transports.asgi import header, respond_json

__all__ = ["AccessControlMiddleware", "bearer_token"]

_LOG_PATH_MAX: Final = 200
# Stored in the AccessToken handed to the SDK instead of the secret (nothing reads it).
_TOKEN_PLACEHOLDER: Final = "[redacted]"


def bearer_token(value: bytes | None) -> bytes | None:
    """The token of an ``Authorization: Bearer <token>`` header value, or None."""
    if value is None:
        return None
    scheme, _, token = value.strip().partition(b" ")
    token = token.strip()
    if scheme.lower() != b"bearer" or not token:
        return None
    return token


class AccessControlMiddleware:
    """Host → 421, Origin → 403, then bearer auth → 401 (§18.3, §18.5); sets the principal."""

    def __init__(
        self, app: ASGIApp, policy: AccessPolicy, log: EventLog, own_auth_prefix: str | None = None
    ) -> None:
        self.app = app
        self.policy = policy
        self.log = log
        self.own_auth_prefix = own_auth_prefix

    def _own_auth(self, path: str) -> bool:
        prefix = self.own_auth_prefix
        return prefix is not None and (path == prefix or path.startswith(prefix + "/"))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":  # no WebSocket endpoints exist
            await send({"type": "websocket.close", "code": 1008})
            return
        host = header(scope, b"host")
        if not self.policy.host_allowed(
            None if host is None else host.decode("latin-1"), str(scope.get("scheme", "http"))
        ):
            await respond_json(
                send, 421, {"error": "misdirected_request", "message": "Invalid Host header"}
            )
            return
        origin = header(scope, b"origin")
        if not self.policy.origin_allowed(None if origin is None else origin.decode("latin-1")):
            await respond_json(
                send, 403, {"error": "forbidden", "message": "Invalid Origin header"}
            )
            return
        if not self.policy.auth_required or self._own_auth(str(scope.get("path", ""))):
            await self.app(scope, receive, send)
            return
        authorization = header(scope, b"authorization")
        token = bearer_token(authorization)
        principal = None if token is None else self.policy.principal_for(token)
        if principal is None:
            self.log.warn(
                "auth.rejected",
                reason="missing_token" if authorization is None else "invalid_token",
                path=str(scope.get("path", ""))[:_LOG_PATH_MAX],
            )
            await respond_json(
                send,
                401,
                {"error": "unauthorized", "message": "A valid bearer token is required."},
                [(b"www-authenticate", b"Bearer")],
            )
            return
        user = AuthenticatedUser(
            AccessToken(token=_TOKEN_PLACEHOLDER, client_id=principal, scopes=[])
        )
        # scope["user"] lets the SDK bind a stateful MCP session to its principal; the context
        # variable is what principal_of() reads inside the tool handler.
        scope = {**scope, "user": user, "auth": AuthCredentials([])}
        reset = auth_context_var.set(user)
        try:
            await self.app(scope, receive, send)
        finally:
            auth_context_var.reset(reset)
