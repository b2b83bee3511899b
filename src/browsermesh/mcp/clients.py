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

The 2026-07-28 era has no connection-wide channel: a client opens a `subscriptions/listen`
stream instead. Each principal gets its own `InMemorySubscriptionBus` and SDK `ListenHandler`,
so a resource event published for one principal can reach no other principal's stream; the
events are published by the same sender task, in the same order as everything else.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp.types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.server import ServerRequestContext
from mcp.server.connection import Connection
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    ResourcesListChanged,
    ResourceUpdated,
    ServerEvent,
)

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
    without a public accessor; `tests/unit/test_mcp_feed.py` fails if that changes."""
    connection: Connection = ctx.session._connection
    return connection


@dataclass(eq=False)
class Listener:
    """What one handshake-era connection asked to hear, and whose it is."""

    principal: str
    connection: Connection
    log_level: str | None = None
    subscriptions: set[str] = field(default_factory=set)


MAX_SUBSCRIPTIONS = 256
"""Resource URIs one handshake-era connection may subscribe to at once."""


@dataclass(frozen=True)
class _Notify:
    """A notification for one handshake-era connection's standalone channel."""

    connection: Connection
    method: str
    params: dict[str, Any] | None


@dataclass(frozen=True)
class _Publish:
    """An event for one principal's 2026-07-28 listen streams."""

    bus: InMemorySubscriptionBus
    event: ServerEvent


Outgoing = _Notify | _Publish


@dataclass(eq=False)
class _Listens:
    """One principal's 2026-07-28 listen streams: its own bus and handler, and the resource
    URIs each open stream asked for."""

    bus: InMemorySubscriptionBus = field(default_factory=InMemorySubscriptionBus)
    handler: ListenHandler = field(init=False)
    streams: dict[object, frozenset[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.handler = ListenHandler(self.bus)


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
        self._listens: dict[str, _Listens] = {}
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

    def watching(self, principal: str, wanted: Callable[[str], bool]) -> bool:
        """Whether some connection or listen stream of `principal` is subscribed to a URI
        that `wanted` accepts."""
        listens = self._listens.get(principal)
        streams = [] if listens is None else list(listens.streams.values())
        subscribed = [*streams, *(x.subscriptions for x in self.listeners(principal))]
        return any(wanted(uri) for uris in subscribed for uri in uris)

    def subscribe(self, ctx: ServerRequestContext[Any], principal: str, uri: str) -> bool:
        """`resources/subscribe` of the connection `ctx` came on; False when it holds
        `MAX_SUBSCRIPTIONS` already."""
        subscriptions = self.listener(ctx, principal).subscriptions
        if uri not in subscriptions and len(subscriptions) >= MAX_SUBSCRIPTIONS:
            return False
        subscriptions.add(uri)
        return True

    async def listen(
        self,
        ctx: ServerRequestContext[Any],
        params: types.SubscriptionsListenRequestParams,
        principal: str,
    ) -> types.SubscriptionsListenResult:
        """Serve one `subscriptions/listen` stream (2026-07-28) from `principal`'s own bus; it
        lasts until the client goes or the server stops."""
        listens = self._listens.setdefault(principal, _Listens())
        token = object()
        listens.streams[token] = frozenset(params.notifications.resource_subscriptions or ())
        try:
            return await listens.handler(ctx, params)
        finally:
            del listens.streams[token]

    def principal_of(self, record: dict[str, Any]) -> str:
        """Whose record this is: its principal, else its session's owner, else `local`."""
        principal = record.get("principal")
        if isinstance(principal, str) and principal:
            return principal
        session_id = record.get("sessionId")
        owner = self._owner_of(session_id) if isinstance(session_id, str) else None
        return owner or LOCAL_PRINCIPAL

    # ------------------------------------------------------------------ routing (sync)

    def wants_records(self, _level: str) -> bool:
        """`EventLog` gate of `on_record`: whether a record could reach anyone now (the call's
        own feed asked for log lines, or some connection listens between calls)."""
        call = feed.current()
        return bool(self._listeners) or (call is not None and call.wants_logs)

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
        if not self._listeners:
            return  # every operation logs: nobody listening between calls costs nothing more
        listeners = self.listeners(self.principal_of(record))
        for listener in listeners:
            if listener.connection is skip or not at_or_above(level, listener.log_level):
                continue
            params = {"level": level, "logger": LOGGER, "data": record}
            self._post(listener.connection, "notifications/message", params)

    def resource_updated(self, principal: str, uri: str) -> None:
        """Tell the principal's listeners subscribed to `uri`, and its listen streams (which
        filter by URI themselves), that it changed."""
        for listener in self.listeners(principal):
            if uri in listener.subscriptions:
                self._post(listener.connection, "notifications/resources/updated", {"uri": uri})
        self._publish(principal, ResourceUpdated(uri))

    def resource_list_changed(self, principal: str) -> None:
        """Tell the principal's listeners (connections that listed resources, subscribed or set
        a log level) and its listen streams that its resource list changed."""
        for listener in self.listeners(principal):
            self._post(listener.connection, "notifications/resources/list_changed", None)
        self._publish(principal, ResourcesListChanged())

    def _post(self, connection: Connection, method: str, params: dict[str, Any] | None) -> None:
        self._queue(_Notify(connection, method, params))

    def _publish(self, principal: str, event: ServerEvent) -> None:
        listens = self._listens.get(principal)
        if listens is not None:  # a principal that never listened has no bus to publish on
            self._queue(_Publish(listens.bus, event))

    def _queue(self, item: Outgoing) -> None:
        try:
            self._send.send_nowait(item)
        except anyio.WouldBlock:
            self.dropped += 1

    # ------------------------------------------------------------------ sending

    def close(self) -> None:
        """End every listen stream gracefully (the server is stopping): each sends its final
        result, so its client knows the stream ended on purpose."""
        for listens in self._listens.values():
            listens.handler.close()

    async def run(self) -> None:
        """Send queued notifications in order until cancelled (the server lifespan owns it)."""
        async for item in self._receive:
            if isinstance(item, _Notify):
                await item.connection.notify(item.method, item.params)  # never raises
            else:
                await item.bus.publish(item.event)  # fans out to buffered streams; never raises
