"""Ending in-flight HTTP requests cleanly when the server stops (graceful shutdown, §14.4).

:class:`RequestDrain` tracks every request in its own cancel scope; :class:`DrainMiddleware` puts
each request under it. On a stop signal the HTTP service calls :meth:`RequestDrain.stop`:
standalone ``GET`` streams end at once and everything else gets :data:`GRACEFUL_SHUTDOWN_S`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import MutableMapping
from typing import Any, Final

import anyio
from starlette.types import ASGIApp, Receive, Scope, Send

from browsermesh.transports.asgi import respond_json

__all__ = ["GRACEFUL_SHUTDOWN_S", "DrainMiddleware", "RequestDrain"]

# How long in-flight requests may run after a stop signal before they are ended; uvicorn's own
# (task-cancelling) timeout is a backstop one second later.
GRACEFUL_SHUTDOWN_S: Final = 2


class RequestDrain:
    """Tracks in-flight HTTP requests so a stop can end them cleanly.

    On :meth:`stop`, standalone ``GET`` streams (server-to-client notifications only, no result
    is lost) end at once; other requests get ``grace_s`` to finish (the runtime drains their
    work meanwhile) and are then cancelled. A cancelled request's response is completed (an
    empty last chunk, or 503 when nothing was sent yet), so uvicorn never has to cancel tasks.
    """

    def __init__(self, grace_s: float) -> None:
        self.grace_s = grace_s
        self.stopping = False
        self.expired = False
        self._active: dict[int, tuple[anyio.CancelScope, str]] = {}

    @property
    def active(self) -> int:
        return len(self._active)

    def stop(self) -> None:
        if self.stopping:
            return
        self.stopping = True
        self._cancel(only_streams=True)
        asyncio.get_running_loop().call_later(self.grace_s, self._expire)

    def _expire(self) -> None:
        self.expired = True
        self._cancel()

    def _cancel(self, only_streams: bool = False) -> None:
        for cancel_scope, method in list(self._active.values()):
            if not only_streams or method == "GET":
                cancel_scope.cancel()

    async def __call__(self, app: ASGIApp, scope: Scope, receive: Receive, send: Send) -> None:
        started = finished = False

        async def tracked(message: MutableMapping[str, Any]) -> None:
            nonlocal started, finished
            if message["type"] == "http.response.start":
                started = True
            elif message["type"] == "http.response.body" and not message.get("more_body"):
                finished = True
            await send(message)

        method = str(scope.get("method", ""))
        key = id(scope)
        with anyio.CancelScope() as cancel_scope:
            if self.stopping and (method == "GET" or self.expired):
                cancel_scope.cancel()
            self._active[key] = (cancel_scope, method)
            try:
                await app(scope, receive, tracked)
            finally:
                self._active.pop(key, None)
        if not cancel_scope.cancelled_caught or finished:
            return
        with contextlib.suppress(OSError, RuntimeError):
            if started:
                await send({"type": "http.response.body", "body": b"", "more_body": False})
            else:
                await respond_json(
                    send, 503, {"error": "unavailable", "message": "Server stopping"}
                )


class DrainMiddleware:
    """Runs every HTTP request under `drain` (other scope types pass straight through)."""

    def __init__(self, app: ASGIApp, drain: RequestDrain) -> None:
        self.app = app
        self.drain = drain

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        await self.drain(self.app, scope, receive, send)
