"""Cutting off HTTP clients that send a request too slowly (issue 30 #10, slowloris).

uvicorn's h11 protocol times out only an idle keep-alive connection (``timeout_keep_alive``,
after a response); a client that opens a connection and trickles its request head, or sends a
head and then its body a byte at a time, holds the connection (and, for the body, a request
task) for ever. :func:`cutoff_protocol` makes an ``H11Protocol`` subclass with two deadlines,
driven by the h11 parser's view of the client (``their_state``):

- ``IDLE`` (waiting for a request head: a new connection, or after a response): the complete
  head must arrive within ``head_s`` (:data:`HEAD_TIMEOUT_S`), however the bytes are spread;
- ``SEND_BODY`` (head received, body under way): the whole body within ``body_s``
  (:data:`BODY_TIMEOUT_S`) of the head.

Once the request is complete nothing is timed here: the app's own deadlines apply (a long call,
an event stream). A client past a deadline is disconnected (there is no request to answer
while the head is incomplete; an app waiting for the body sees ``http.disconnect``) and one
``http.slow_client`` warning says which deadline, never who. The timers are loop call-backs on
the protocol, cancelled with the connection: no task is started.
"""

from __future__ import annotations

import asyncio
from typing import Any, Final

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from browsermesh.log import EventLog

__all__ = ["BODY_TIMEOUT_S", "HEAD_TIMEOUT_S", "cutoff_protocol"]

HEAD_TIMEOUT_S: Final = 10.0
"""A request head (line and headers, at most h11's 16 KiB) takes no longer than this."""
BODY_TIMEOUT_S: Final = 30.0
"""A request body (at most 4 MiB on /mcp) takes no longer than this after its head (about
140 KB/s at the largest size)."""


class _CutoffProtocol(H11Protocol):
    """uvicorn's h11 protocol with the request-head and request-body deadlines."""

    head_s: float = HEAD_TIMEOUT_S
    body_s: float = BODY_TIMEOUT_S
    log: EventLog | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._phase: object = None  # an h11 state sentinel
        self._deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._follow()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def handle_events(self) -> None:
        super().handle_events()
        self._follow()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._follow()

    def _follow(self) -> None:
        """(Re)arm the deadline when the client's side of the exchange changes phase."""
        phase = self.conn.their_state
        if phase is self._phase or self.transport.is_closing():
            return
        self._phase = phase
        self._disarm()
        if phase is h11.IDLE:
            self._deadline = self.loop.call_later(self.head_s, self._cut, "request head")
        elif phase is h11.SEND_BODY:
            self._deadline = self.loop.call_later(self.body_s, self._cut, "request body")

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _cut(self, what: str) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        if self.log is not None:
            limit = self.head_s if what == "request head" else self.body_s
            self.log.warn("http.slow_client", reason=f"{what} not received within {limit:g} s")
        self.transport.close()


def cutoff_protocol(
    log: EventLog, *, head_s: float = HEAD_TIMEOUT_S, body_s: float = BODY_TIMEOUT_S
) -> type[H11Protocol]:
    """The protocol class for ``uvicorn.Config(http=...)``: h11 with these deadlines."""
    return type(
        "CutoffH11Protocol", (_CutoffProtocol,), {"head_s": head_s, "body_s": body_s, "log": log}
    )
