"""Ending in-flight HTTP requests cleanly when the server stops (graceful shutdown, §14.4).

:class:`RequestDrain` tracks every request in its own cancel scope; :class:`DrainMiddleware` puts
each request under it. On a stop signal the HTTP service calls :meth:`RequestDrain.stop`:
standalone ``GET`` streams end at once and everything else gets the runtime's shutdown grace
plus :data:`GRACEFUL_SHUTDOWN_S` (:func:`drain_grace_s`), so a call the runtime cuts short at
the end of its grace is still answered (``RUNTIME_SHUTTING_DOWN``) before its request is ended
(issue 30 #10: with 2 s here and 5 s there, a call running at the signal got no answer). A
second signal calls :meth:`RequestDrain.hurry` while the runtime cuts its grace short: requests
then get :data:`HURRY_S` to write those answers.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import MutableMapping
from typing import Any, Final

import anyio
from starlette.types import ASGIApp, Receive, Scope, Send

from browsermesh.transports.asgi import respond_json

__all__ = ["GRACEFUL_SHUTDOWN_S", "HURRY_S", "DrainMiddleware", "RequestDrain", "drain_grace_s"]

# How long in-flight requests may run after the runtime's shutdown grace before they are ended
# (time for the answers of the work it cancelled); uvicorn's own (task-cancelling) timeout is a
# backstop one second later.
GRACEFUL_SHUTDOWN_S: Final = 2
HURRY_S: Final = 1.0
"""After a second stop signal: how long requests may still run (the runtime has cancelled their
work, so they only have their answers to write)."""


def drain_grace_s(shutdown_grace_ms: int) -> float:
    """How long in-flight requests may run after a stop signal."""
    return shutdown_grace_ms / 1000 + GRACEFUL_SHUTDOWN_S


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
        self._expiry: asyncio.TimerHandle | None = None

    @property
    def active(self) -> int:
        return len(self._active)

    def stop(self) -> None:
        if self.stopping:
            return
        self.stopping = True
        self._cancel(only_streams=True)
        self._expiry = asyncio.get_running_loop().call_later(self.grace_s, self._expire)

    def hurry(self) -> None:
        """A second stop: end what is still in flight within `HURRY_S` instead of the grace."""
        self.stop()
        if self.expired or self._expiry is None:
            return
        loop = asyncio.get_running_loop()
        if self._expiry.when() - loop.time() > HURRY_S:
            self._expiry.cancel()
            self._expiry = loop.call_later(HURRY_S, self._expire)

    def _expire(self) -> None:
        self._expiry = None
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
