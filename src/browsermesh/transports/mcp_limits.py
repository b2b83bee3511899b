"""How many MCP sessions one principal may hold open on the HTTP listener (issue 30 #10).

An MCP session of the 2025-11-25 leg lives in the SDK's session manager, with its server task
and streams, until the client deletes it or it has been idle for 30 minutes; a client that
opens sessions and never closes them made the server hold 340 of them (about 47 MB). The
2026-07-28 leg keeps nothing between requests, except a ``subscriptions/listen`` stream, which
stays open as long as the client wants. :class:`McpSessionLimit` counts both per principal
against ``max_mcp_sessions_per_principal`` (``BROWSERMESH_MAX_MCP_SESSIONS_PER_PRINCIPAL``):

- a POST without ``mcp-session-id`` on the handshake leg (an ``initialize``, which opens a
  session) counts while it is answered and, when the SDK answers it with a session id, as long
  as the SDK still serves that session (``live``, asked at every admission, so sessions that end
  by DELETE, idle timeout or crash free their place without our noticing the event);
- a ``subscriptions/listen`` request (its ``Mcp-Method`` header) counts while it is open.

Over the limit the request is answered here, before the SDK: HTTP 429 with a JSON-RPC error
(id null, which the SDK client reads as the answer to its request) whose message is the
reference's ``LIMIT_EXCEEDED`` text with its bound clause and whose ``data`` carries ``code`` and
``nextStep``. Other requests (calls inside a session, everything sessionless) pass untouched:
one principal's sessions never affect another's.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, MutableMapping
from typing import Any, Final

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.types import ASGIApp, Receive, Scope, Send

from browsermesh.config.variables import V_MAX_MCP_SESSIONS_PER_PRINCIPAL
from browsermesh.errors import Bound, BrowserMeshError, ErrorCode
from browsermesh.log import EventLog
from browsermesh.runtime.runtime import LOCAL_PRINCIPAL
from browsermesh.transports.asgi import header, respond_json

__all__ = ["LIMIT_RPC_CODE", "NEXT_STEP", "McpSessionLimit", "refusal_body"]

LIMIT_RPC_CODE: Final = -32000
"""The JSON-RPC error code of the refusal (implementation-defined server error range); the
BrowserMesh code is in ``error.data.code``."""
NEXT_STEP: Final = (
    "Close the MCP sessions this principal no longer uses (end their clients, or send HTTP "
    "DELETE with their mcp-session-id) or reuse an open one, then reconnect; an idle session "
    "ends by itself after 30 minutes."
)
_LISTEN: Final = b"subscriptions/listen"


def refusal_body(limit: int) -> dict[str, Any]:
    """The JSON-RPC error that refuses one more MCP session at `limit`."""
    error = BrowserMeshError(
        ErrorCode.LIMIT_EXCEEDED,
        bound=Bound("mcpSessions", "<=", limit, V_MAX_MCP_SESSIONS_PER_PRINCIPAL),
    )
    return {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": LIMIT_RPC_CODE,
            "message": error.message,
            "data": {"code": ErrorCode.LIMIT_EXCEEDED.value, "nextStep": NEXT_STEP},
        },
    }


def _principal(scope: Scope) -> str:
    user = scope.get("user")
    if isinstance(user, AuthenticatedUser):
        return str(user.access_token.client_id)
    return LOCAL_PRINCIPAL


class _Holdings:
    """What one principal holds: answered sessions (ids), and requests still being answered."""

    __slots__ = ("pending", "sessions")

    def __init__(self) -> None:
        self.sessions: set[str] = set()
        self.pending = 0

    def count(self, live: Collection[str]) -> int:
        """Forget the sessions the SDK no longer serves, then count what is left."""
        self.sessions = {session for session in self.sessions if session in live}
        return len(self.sessions) + self.pending


class McpSessionLimit:
    """Refuses a principal's MCP session (or listen stream) over the limit (see the module doc).

    `live` gives the session ids the SDK's session manager still serves."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        path: str,
        limit: int,
        live: Callable[[], Collection[str]],
        log: EventLog,
    ) -> None:
        self.app = app
        self.path = path
        self.limit = limit
        self.live = live
        self.log = log
        self._held: dict[str, _Holdings] = {}

    def held(self, principal: str) -> int:
        """How many sessions and listen streams `principal` holds now (tests, logs)."""
        holdings = self._held.get(principal)
        return 0 if holdings is None else holdings.count(self.live())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") != self.path:
            await self.app(scope, receive, send)
            return
        version = header(scope, b"mcp-protocol-version")
        handshake = version is None or version.decode("latin-1") in HANDSHAKE_PROTOCOL_VERSIONS
        opening = (
            handshake and scope.get("method") == "POST" and header(scope, b"mcp-session-id") is None
        )
        listening = not handshake and header(scope, b"mcp-method") == _LISTEN
        if not opening and not listening:
            await self.app(scope, receive, send)
            return
        principal = _principal(scope)
        holdings = self._held.setdefault(principal, _Holdings())
        if holdings.count(self.live()) >= self.limit:
            self.log.warn(
                "http.mcp_session_refused",
                principal=principal,
                reason=f"{self.limit} MCP sessions open",
            )
            await respond_json(send, 429, refusal_body(self.limit))
            return
        session_id: str | None = None

        async def watch(message: MutableMapping[str, Any]) -> None:
            nonlocal session_id
            if opening and message["type"] == "http.response.start" and message["status"] < 400:
                for key, value in message.get("headers", ()):
                    if bytes(key).lower() == b"mcp-session-id":
                        session_id = bytes(value).decode("latin-1")
            await send(message)

        holdings.pending += 1
        try:
            await self.app(scope, receive, watch)
        finally:
            holdings.pending -= 1
            # Counted from now on only while the SDK serves it (see `_Holdings.count`).
            if session_id is not None:
                holdings.sessions.add(session_id)
            if not holdings.pending and not holdings.count(self.live()):
                self._held.pop(principal, None)
