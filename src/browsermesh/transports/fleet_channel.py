"""The fleet's internal channel, the owner's side (issue 37 item 2, reference §37.6).

`FleetChannelMiddleware` answers `POST /fleet/v1/call` and the live view's `POST /fleet/v1/view`
(handed to transports/view_channel.py; 404 on a replica without the view) before access control
(the channel has its own credential, the fleet token, and callers are other replicas, not MCP
clients); every other request passes through. A call is taken only from a loopback, private or
link-local peer address with `Authorization: Bearer <fleet token>` (compared in constant time);
anything else is refused (403/401) and logged `fleet.refused` with the reason, never the header.

A taken call runs through the tool dispatcher as a call of the principal the body names,
marked forwarded (it never travels further), within its `budgetMs` plus
`forwarding.ANSWER_SLACK_S`. The answer is an NDJSON stream: the call's progress phases as
they start (when asked), then the CallToolResult. When the sending replica goes away (its
caller cancelled), the call is cancelled here too.
"""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final

import anyio
import mcp.types as types
from mcp import MCPError
from starlette.types import ASGIApp, Receive, Scope, Send

from browsermesh.config.tokens import PRINCIPAL_RE
from browsermesh.log import EventLog
from browsermesh.mcp.forwarding import ANSWER_SLACK_S, FLEET_CALL_PATH, FLEET_VIEW_PATH
from browsermesh.model import progress
from browsermesh.transports.asgi import header, respond_json
from browsermesh.transports.auth import bearer_token

__all__ = ["FleetChannelMiddleware", "ForwardedCall"]

MAX_BODY_BYTES: Final = 16 * 1024 * 1024
"""A forwarded call's body at most (its arguments were already bounded by the first replica)."""
MAX_PHASES_QUEUED: Final = 64
READ_S: Final = 5.0
"""A forwarded resource read at most (a session's page titles are peeked within 1 s each)."""
_TOOL_RE: Final = re.compile(r"^[a-z_]{1,64}$")
_NDJSON: Final = b"application/x-ndjson"
_MAX_URI_CHARS: Final = 2_048
_TOO_LARGE: Final = b"\x00too large"  # compared by identity

Serve = Callable[[str, dict[str, Any], str], Awaitable[types.CallToolResult]]
"""`serve(tool, arguments, principal)`: the dispatcher's forwarded call."""
Read = Callable[[str, str], Awaitable[types.ReadResourceResult]]
"""`read(principal, uri)`: the session resources' forwarded read."""
View = Callable[[bytes, Scope, Receive, Send], Awaitable[None]]
"""`view(body, scope, receive, send)`: the live view's channel requests (transports/
view_channel.py), answered in full."""


@dataclass(frozen=True, slots=True)
class ForwardedCall:
    """A call as the channel received it: a tool call, or a resource read (`resource`)."""

    tool: str
    arguments: dict[str, Any]
    principal: str
    budget_ms: int
    progress: bool
    resource: str | None = None


def parse_call(body: bytes) -> ForwardedCall | None:
    """The call in `body`, or None when it is not one."""
    try:
        raw = json.loads(body)
    except ValueError:
        return None
    if not isinstance(raw, dict):
        return None
    tool, args, principal = raw.get("tool"), raw.get("arguments"), raw.get("principal")
    budget, wants, resource = raw.get("budgetMs"), raw.get("progress"), raw.get("resource")
    if not isinstance(principal, str) or not PRINCIPAL_RE.match(principal):
        return None
    if not isinstance(budget, int) or isinstance(budget, bool) or not 1 <= budget <= 3_600_000:
        return None
    if isinstance(resource, str) and len(resource) <= _MAX_URI_CHARS:
        return ForwardedCall("", {}, principal, budget, False, resource)
    if not isinstance(tool, str) or not _TOOL_RE.match(tool) or not isinstance(args, dict):
        return None
    return ForwardedCall(tool, args, principal, budget, wants is True)


def private_peer(scope: Scope) -> bool:
    """Whether the request comes from a loopback, private or link-local address."""
    client = scope.get("client")
    if not client:
        return False
    try:
        ip = ipaddress.ip_address(str(client[0]))
    except ValueError:
        return False
    mapped = getattr(ip, "ipv4_mapped", None)
    ip = mapped or ip
    return ip.is_loopback or ip.is_private or ip.is_link_local


class FleetChannelMiddleware:
    """Takes forwarded calls at `FLEET_CALL_PATH` and the view's at `FLEET_VIEW_PATH`;
    passes everything else on."""

    def __init__(
        self,
        app: ASGIApp,
        token: str,
        serve: Serve,
        read: Read,
        log: EventLog,
        view: View | None = None,
    ) -> None:
        self.app = app
        self._token = token.encode()
        self._serve = serve
        self._read = read
        self._view = view
        self.log = log

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path") if scope["type"] == "http" else None
        if path != FLEET_CALL_PATH and path != FLEET_VIEW_PATH:
            await self.app(scope, receive, send)
            return
        refusal = self._refusal(scope)
        if refusal is not None:
            status, reason = refusal
            self.log.warn("fleet.refused", reason=reason)
            await respond_json(send, status, {"error": reason})
            return
        body = await _read_body(receive)
        if body is None:
            return  # gone before it finished sending
        if body is _TOO_LARGE:
            await respond_json(send, 413, {"error": "too_large"})
            return
        if path == FLEET_VIEW_PATH:
            if self._view is None:  # this replica serves no live view (--no-view)
                await respond_json(send, 404, {"error": "no_view"})
            else:
                await self._view(body, scope, receive, send)
            return
        call = parse_call(body)
        if call is None:
            await respond_json(send, 400, {"error": "bad_request"})
            return
        if call.resource is not None:
            await self._answer_read(call.principal, call.resource, send)
            return
        await self._answer(call, receive, send)

    async def _answer_read(self, principal: str, uri: str, send: Send) -> None:
        """A resource read: `{"resource": ReadResourceResult}`, or `{"notFound": true}`."""
        try:
            with anyio.fail_after(READ_S):
                read = await self._read(principal, uri)
            answer: dict[str, Any] = {
                "resource": read.model_dump(mode="json", by_alias=True, exclude_none=True)
            }
        except (MCPError, TimeoutError):
            answer = {"notFound": True}
        line = json.dumps(answer, ensure_ascii=False).encode() + b"\n"
        await send(
            {"type": "http.response.start", "status": 200, "headers": [(b"content-type", _NDJSON)]}
        )
        await send({"type": "http.response.body", "body": line, "more_body": False})

    def _refusal(self, scope: Scope) -> tuple[int, str] | None:
        if scope.get("method") != "POST":
            return 405, "method"
        if not private_peer(scope):
            return 403, "not_private"
        token = bearer_token(header(scope, b"authorization"))
        if token is None or not hmac.compare_digest(token, self._token):
            return 401, "token"
        return None

    async def _answer(self, call: ForwardedCall, receive: Receive, send: Send) -> None:
        await send(
            {"type": "http.response.start", "status": 200, "headers": [(b"content-type", _NDJSON)]}
        )
        phases_in, phases_out = anyio.create_memory_object_stream[bytes](MAX_PHASES_QUEUED)
        result: types.CallToolResult | None = None

        def sink(message: str, total_s: float | None) -> None:
            line = json.dumps({"phase": message, "totalS": total_s}).encode() + b"\n"
            with contextlib.suppress(anyio.WouldBlock, anyio.ClosedResourceError):
                phases_in.send_nowait(line)  # a slow reader loses phases, never the call

        async def pump() -> None:
            async with phases_out:
                async for line in phases_out:
                    await send({"type": "http.response.body", "body": line, "more_body": True})

        async def watch(scope: anyio.CancelScope) -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            scope.cancel()  # the sender gave up: so does the call

        reporting = progress.reporting(sink) if call.progress else contextlib.nullcontext()
        async with anyio.create_task_group() as outer:
            outer.start_soon(watch, outer.cancel_scope)
            async with anyio.create_task_group() as inner:
                inner.start_soon(pump)  # ends once every queued phase is sent
                async with phases_in:
                    with reporting, anyio.move_on_after(call.budget_ms / 1000 + ANSWER_SLACK_S):
                        result = await self._serve(call.tool, call.arguments, call.principal)
            outer.cancel_scope.cancel()
        if result is None:
            return  # nobody to answer, or past its budget: the sender answers for itself
        answer = result.model_dump(mode="json", by_alias=True, exclude_none=True)
        line = json.dumps({"result": answer}, ensure_ascii=False).encode() + b"\n"
        with contextlib.suppress(OSError):
            await send({"type": "http.response.body", "body": line, "more_body": False})


async def _read_body(receive: Receive) -> bytes | None:
    """The whole request body, None when the sender went away, `_TOO_LARGE` past
    `MAX_BODY_BYTES` (read to the end, not kept)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None
        chunk = message.get("body", b"")
        if size <= MAX_BODY_BYTES:
            chunks.append(chunk)
        size += len(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks) if size <= MAX_BODY_BYTES else _TOO_LARGE
