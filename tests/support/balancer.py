"""A round-robin HTTP reverse proxy for the fleet's tests (issue 37): `running_balancer(upstreams)`
serves a `RoundRobinBalancer` with uvicorn on a free loopback port in the test's own event loop.

It behaves like nginx's `upstream { server a; server b; }` with its defaults, the setup the fleet
is documented behind:
- every request (not every connection) goes to the next upstream in turn, with no stickiness;
- the request body is read whole before it is sent on (nginx's `proxy_request_buffering on`),
  so it can be sent again to another upstream; the response body is streamed chunk by chunk as
  it arrives (Server-Sent Events: a long tool call's progress comes before its result);
- `Host` is the upstream's host:port (`proxy_set_header Host $proxy_host`), `X-Forwarded-For`
  gains the client's address, hop-by-hop headers are dropped both ways;
- `proxy_next_upstream error`: when no connection can be made to an upstream, the next one is
  tried (each at most once per request); an error after the request may have been sent is
  passed to the next one only for an idempotent method (nginx never resends a POST, so a tool
  call is never run twice); when none answers, 502.
Unlike nginx, an upstream that failed is not put aside for `fail_timeout`: the next request
tries it again in its turn, so which upstream answers stays predictable for the tests.

Because it runs in the test's event loop, a test must not block that loop (a blocking wait on a
child process stops the balancer too): wait in a thread (`anyio.to_thread`).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass

import anyio
import httpx2
import uvicorn
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tests.fixtures.proxy import HOP_BY_HOP

READ_TIMEOUT_S: float | None = None
"""The proxy's client waits for an upstream's next bytes without limit: a tool call may wait
minutes before its result, and a standalone SSE stream may stay silent; the MCP client in
front has its own read timeout, and its disconnect ends the upstream request here."""
CONNECT_TIMEOUT_S = 15.0
"""Generous for a loaded 2-core machine; a closed loopback port is refused at once anyway."""
START_WITHIN_S = 30.0
"""Bounds a failure to start only; uvicorn serves a pre-bound socket within milliseconds."""
NON_IDEMPOTENT = frozenset({"POST", "PATCH", "LOCK"})
"""Methods nginx does not resend to the next upstream once the request may have been sent."""


@dataclass(frozen=True)
class Hop:
    """One request the balancer passed on: where it went and the status it answered."""

    method: str
    path: str
    upstream: str
    status: int


class _Server(uvicorn.Server):
    """uvicorn that leaves the test process's signal handlers alone and says when it serves."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = asyncio.Event()

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield  # a SIGINT must still interrupt pytest, not stop this proxy

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.started:
            self.ready.set()


class RoundRobinBalancer:
    """An ASGI reverse proxy over `upstreams` (base URLs such as ``http://127.0.0.1:8001``).

    `hits` counts per upstream the requests it answered (any status); `refused` the times no
    connection could be made to it (or it failed before answering). `hops` lists every request
    passed on, in the order they were answered. `add` and `remove` change the rotation at run
    time; requests in flight keep their upstream.
    """

    def __init__(self, upstreams: Sequence[str], *, keep_host: bool = False) -> None:
        self.keep_host = keep_host
        """Pass the client's ``Host`` on (nginx's ``proxy_set_header Host $host``) instead of
        the upstream's own address."""
        self.upstreams: list[str] = []
        self.hits: dict[str, int] = {}
        self.refused: dict[str, int] = {}
        self.hops: list[Hop] = []
        self.port = 0
        self._turn = 0
        self._client = httpx2.AsyncClient(
            timeout=httpx2.Timeout(CONNECT_TIMEOUT_S, read=READ_TIMEOUT_S, pool=None),
            limits=httpx2.Limits(max_connections=None, max_keepalive_connections=32),
            follow_redirects=False,
            trust_env=False,  # no HTTP(S)_PROXY from the environment between us and loopback
        )
        for upstream in upstreams:
            self.add(upstream)

    @property
    def base(self) -> str:
        """``http://127.0.0.1:<port>`` of the listening proxy (set once it serves)."""
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str = "/mcp") -> str:
        """The proxy's URL for `path` (the MCP endpoint by default)."""
        return f"{self.base}{path}"

    def add(self, upstream: str) -> None:
        """Put `upstream` at the end of the rotation (no change when it is already in it)."""
        upstream = upstream.rstrip("/")
        if upstream not in self.upstreams:
            self.upstreams.append(upstream)
        self.hits.setdefault(upstream, 0)
        self.refused.setdefault(upstream, 0)

    def remove(self, upstream: str) -> None:
        """Take `upstream` out of the rotation; its counters stay."""
        self.upstreams.remove(upstream.rstrip("/"))

    def _order(self) -> list[str]:
        """This request's upstreams: the next in turn first, then the others after it."""
        current = list(self.upstreams)
        if not current:
            return []
        start = self._turn % len(current)
        self._turn += 1
        return current[start:] + current[:start]

    async def aclose(self) -> None:
        """Close the proxy's connections to the upstreams."""
        await self._client.aclose()

    # ------------------------------------------------------------------------------------------
    # The ASGI application
    # ------------------------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return  # lifespan is off; no websockets
        body = await _read_body(receive)
        if body is None:
            return  # the client went away before sending its request
        async with anyio.create_task_group() as group:

            async def watch() -> None:
                while (await receive())["type"] != "http.disconnect":
                    pass
                # Nobody reads the answer any more: stop waiting for it (the upstream sees its
                # connection close, as with nginx's default proxy_ignore_client_abort off).
                group.cancel_scope.cancel()

            group.start_soon(watch)
            response = await self._send(scope, body)
            if response is None:
                await _respond(send, 502, b"502 Bad Gateway: no upstream answered\n")
            else:
                await self._relay(response, send)
            group.cancel_scope.cancel()

    async def _send(self, scope: Scope, body: bytes) -> httpx2.Response | None:
        """The first response head an upstream answers, trying them in this request's order;
        None when none can be used (the proxy answers 502)."""
        method: str = scope["method"]
        for upstream in self._order():
            try:
                response = await self._client.send(
                    self._request(upstream, scope, body), stream=True
                )
            except httpx2.ConnectError:
                self.refused[upstream] += 1  # never reached it: safe to try the next one
                continue
            except httpx2.TransportError:
                self.refused[upstream] += 1
                if method in NON_IDEMPOTENT:
                    return None  # it may have run: sending it again could run it twice
                continue
            self.hits[upstream] += 1
            self.hops.append(Hop(method, scope["path"], upstream, response.status_code))
            return response
        return None

    def _request(self, upstream: str, scope: Scope, body: bytes) -> httpx2.Request:
        """The request to send to `upstream`: the client's, with the proxy's own headers."""
        headers: list[tuple[bytes, bytes]] = scope["headers"]
        named = {
            token.strip().lower()
            for name, value in headers
            if name.lower() == b"connection"
            for token in value.split(b",")
        }  # a header the Connection header names is hop-by-hop too
        passed = [
            (name, value)
            for name, value in headers
            if name.decode("latin-1").lower() not in HOP_BY_HOP
            and name.lower() not in named
            and name.lower() not in (b"host", b"content-length", b"x-forwarded-for")
        ]
        forwarded = [value for name, value in headers if name.lower() == b"x-forwarded-for"]
        client = scope.get("client")
        if client:
            forwarded.append(str(client[0]).encode("latin-1"))
        if forwarded:
            passed.append((b"x-forwarded-for", b", ".join(forwarded)))
        own = upstream.split("://", 1)[1].encode("latin-1")
        client_host = next((v for n, v in headers if n.lower() == b"host"), None)
        passed.insert(0, (b"host", client_host if self.keep_host and client_host else own))
        target = scope.get("raw_path") or scope["path"].encode()
        url = upstream + target.decode("latin-1")
        if scope.get("query_string"):
            url += "?" + scope["query_string"].decode("latin-1")
        # Content-Length is computed from the body read whole (a chunked request becomes sized).
        return httpx2.Request(scope["method"], url, headers=passed, content=body)

    async def _relay(self, response: httpx2.Response, send: Send) -> None:
        """Send `response` on as its bytes arrive."""
        headers = [
            (name, value)
            for name, value in response.headers.raw
            if name.decode("latin-1").lower() not in HOP_BY_HOP
        ]
        try:
            start = {"type": "http.response.start", "status": response.status_code}
            await send({**start, "headers": headers})
            try:
                # aiter_raw: the bytes as they come off the socket, still content-encoded (the
                # Content-Encoding header goes on unchanged), never gathered whole.
                async for chunk in response.aiter_raw():
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
            except httpx2.TransportError as exc:
                # The upstream broke mid-body (killed): fail the ASGI call so uvicorn drops the
                # client's connection, as nginx does, rather than end the body cleanly and let
                # a truncated response pass for a whole one.
                raise UpstreamBroke(str(response.request.url)) from exc
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            with anyio.CancelScope(shield=True):  # even when the client has gone: free it
                await response.aclose()


class UpstreamBroke(Exception):
    """An upstream's response ended before its body did; the client's connection is dropped."""


async def _read_body(receive: Receive) -> bytes | None:
    """The whole request body, or None when the client disconnected first."""
    parts: list[bytes] = []
    while True:
        message: Message = await receive()
        if message["type"] == "http.disconnect":
            return None
        parts.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(parts)


async def _respond(send: Send, status: int, body: bytes) -> None:
    """A small plain-text answer of the proxy's own."""
    headers = [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", b"%d" % len(body)),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


async def _wait_serving(server: _Server, task: asyncio.Task[None]) -> None:
    """Return once `server` accepts connections; raise if it stopped or did not start in time."""
    ready = asyncio.ensure_future(server.ready.wait())
    try:
        await asyncio.wait([ready, task], timeout=START_WITHIN_S, return_when="FIRST_COMPLETED")
    finally:
        ready.cancel()
    if not server.ready.is_set():
        if task.done():
            task.result()  # uvicorn's own start-up error, if it raised one
        raise AssertionError(f"uvicorn did not start serving within {START_WITHIN_S} s")


@asynccontextmanager
async def serving(app: ASGIApp) -> AsyncIterator[int]:
    """`app` served by uvicorn on 127.0.0.1 in this event loop until the block ends: its port.
    At the end, responses still open after `timeout_graceful_shutdown` are cut."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))  # bound before serving: the port is known, no race for it
    server = _Server(
        uvicorn.Config(
            app,
            lifespan="off",
            ws="none",
            log_config=None,
            access_log=False,
            # uvicorn's default trusts X-Forwarded-For from loopback peers and would rewrite the
            # ASGI client address from it; the proxy must see (and append) the real peer.
            proxy_headers=False,
            # A proxied response's own Server and Date headers go through: none of uvicorn's.
            server_header=False,
            date_header=False,
            # An SSE stream stays open as long as its client wants: cut it at the end.
            timeout_graceful_shutdown=2,
        )
    )
    task: asyncio.Task[None] = asyncio.get_running_loop().create_task(server.serve([sock]))
    try:
        await _wait_serving(server, task)
        yield int(sock.getsockname()[1])
    finally:
        server.should_exit = True
        with anyio.fail_after(30):
            await task
        sock.close()


@asynccontextmanager
async def running_balancer(
    upstreams: Sequence[str], *, keep_host: bool = False
) -> AsyncIterator[RoundRobinBalancer]:
    """A `RoundRobinBalancer` over `upstreams`, served on 127.0.0.1 (a free port) until the block
    ends; then its open responses are cut and its connections closed."""
    balancer = RoundRobinBalancer(upstreams, keep_host=keep_host)
    try:
        async with serving(balancer) as port:
            balancer.port = port
            yield balancer
    finally:
        await balancer.aclose()
