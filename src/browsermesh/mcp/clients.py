"""The clients that asked to hear from the server between calls, and the one sender (issue 17).

On the handshake era (2025-11-25) a connection asks for log lines with `logging/setLevel` and
for resource updates with `resources/subscribe`; both are delivered on the connection's
standalone channel (stdio itself; the GET stream over Streamable HTTP). A `Listener` remembers
what one connection asked for and whose it is; `Clients` routes each safe `EventLog` record and
each resource change to the listeners of the record's principal, and its `run` task (owned by
the server's lifespan) sends them in order. Delivery is best-effort and bounded: when the
outbox is full a notification is dropped, never an operation slowed.

A record produced inside a call that has a `CallFeed` with log delivery rides that call's
response stream instead (`mcp.feed`), on either era. Over HTTP a principal only ever hears
about its own sessions; records about no session (a browser disconnect, the listening line)
go only to the `local` principal (stdio and unauthenticated loopback).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.server import ServerRequestContext
from mcp.server.connection import Connection

from browsermesh.mcp import feed
from browsermesh.runtime.runtime import LOCAL_PRINCIPAL

MCP_LEVELS: tuple[str, ...] = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)
"""MCP's log levels, least severe first (RFC 5424 order)."""

_FROM_EVENT_LEVEL = {"debug": "debug", "info": "info", "warn": "warning", "error": "error"}
LOGGER = "browsermesh"
OUTBOX = 1024
"""Notifications waiting for the sender at most; more are dropped (best-effort delivery)."""


def mcp_level(record: dict[str, Any]) -> str:
    """The MCP level of an `EventLog` record."""
    return _FROM_EVENT_LEVEL.get(str(record.get("level")), "info")


def at_or_above(level: str, threshold: str | None) -> bool:
    """True when `level` passes a client's `threshold` (None: the client asked for nothing)."""
    if threshold not in MCP_LEVELS or level not in MCP_LEVELS:
        return False
    return MCP_LEVELS.index(level) >= MCP_LEVELS.index(threshold)


def connection_of(ctx: ServerRequestContext[Any]) -> Connection:
    """The SDK connection a request came on. The SDK 2.3 keeps it on the request's session
    without a public accessor; `tests/unit/test_mcp_clients.py` fails if that changes."""
    connection: Connection = ctx.session._connection
    return connection


@dataclass(eq=False)
class Listener:
    """What one handshake-era connection asked to hear, and whose it is."""

    principal: str
    connection: Connection
    log_level: str | None = None
    subscriptions: set[str] = field(default_factory=set)


Outgoing = tuple[Connection, str, dict[str, Any] | None]


class Clients:
    """Listeners by connection, the routing of records and changes, and the sender."""

    def __init__(self, owner_of: Callable[[str], str | None]) -> None:
        # Connections end without telling us (an HTTP session expires): weak keys let a
        # listener go with its connection.
        self._listeners: weakref.WeakKeyDictionary[Connection, Listener] = (
            weakref.WeakKeyDictionary()
        )
        self._owner_of = owner_of
        self._send: MemoryObjectSendStream[Outgoing]
        self._receive: MemoryObjectReceiveStream[Outgoing]
        self._send, self._receive = anyio.create_memory_object_stream[Outgoing](OUTBOX)
        self.dropped = 0

    def listener(self, ctx: ServerRequestContext[Any], principal: str) -> Listener:
        """The listener of the connection `ctx` came on (created on first use)."""
        connection = connection_of(ctx)
        found = self._listeners.get(connection)
        if found is None or found.principal != principal:
            found = Listener(principal, connection)
            self._listeners[connection] = found
        return found

    def log_level(self, ctx: ServerRequestContext[Any]) -> str | None:
        """The level the connection `ctx` came on asked for (None: it asked for no logs)."""
        found = self._listeners.get(connection_of(ctx))
        return None if found is None else found.log_level

    def listeners(self, principal: str) -> list[Listener]:
        return [x for x in list(self._listeners.values()) if x.principal == principal]

    def principal_of(self, record: dict[str, Any]) -> str:
        """Whose record this is: its principal, else its session's owner, else `local`."""
        principal = record.get("principal")
        if isinstance(principal, str) and principal:
            return principal
        session_id = record.get("sessionId")
        owner = self._owner_of(session_id) if isinstance(session_id, str) else None
        return owner or LOCAL_PRINCIPAL

    # ------------------------------------------------------------------ routing (sync)

    def on_record(self, record: dict[str, Any]) -> None:
        """`EventLog` sink: the call's own feed first, then the principal's listeners."""
        level = mcp_level(record)
        call = feed.current()
        if call is not None and call.wants_logs:
            if at_or_above(level, call.log_threshold):
                call.log(level, record)
            skip: object = call.connection
        else:
            skip = None
        listeners = self.listeners(self.principal_of(record))
        for listener in listeners:
            if listener.connection is skip or not at_or_above(level, listener.log_level):
                continue
            params = {"level": level, "logger": LOGGER, "data": record}
            self._post(listener.connection, "notifications/message", params)

    def resource_updated(self, principal: str, uri: str) -> None:
        """Tell the principal's listeners subscribed to `uri` that it changed."""
        for listener in self.listeners(principal):
            if uri in listener.subscriptions:
                self._post(listener.connection, "notifications/resources/updated", {"uri": uri})

    def resource_list_changed(self, principal: str) -> None:
        """Tell the principal's listeners (connections that listed resources, subscribed or set
        a log level) that its resource list changed."""
        for listener in self.listeners(principal):
            self._post(listener.connection, "notifications/resources/list_changed", None)

    def _post(self, connection: Connection, method: str, params: dict[str, Any] | None) -> None:
        try:
            self._send.send_nowait((connection, method, params))
        except anyio.WouldBlock:
            self.dropped += 1

    # ------------------------------------------------------------------ sending

    async def run(self) -> None:
        """Send queued notifications in order until cancelled (the server lifespan owns it)."""
        async for connection, method, params in self._receive:
            await connection.notify(method, params)  # best-effort: never raises
