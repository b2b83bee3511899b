"""The Streamable HTTP transport (contract §18.2-18.6) and the idle reaper (§13.7).

Layout of a request, outermost first:

1. :class:`AccessControlMiddleware` (ours): ``Host`` allowlist → 421, ``Origin`` allowlist → 403
   (both checked before authentication, §18.5), then bearer tokens → 401 (§18.3). A matched token's
   principal is published to the SDK's auth context (``scope["user"]`` and ``auth_context_var``)
   so :func:`browsermesh.mcp.server.principal_of` sees it; without a token file nothing is set
   and every caller is ``local``.
2. The SDK's Streamable HTTP app (``Server.streamable_http_app``), mounted at ``config.http_path``,
   with the SDK's own DNS-rebinding check switched off (it cannot express port-less entries or
   ``*``). It is stateful on the 2025-11-25 leg (so ``notifications/cancelled`` reaches the
   request it names; the SDK binds each MCP session to the principal that opened it) and always
   sessionless on the 2026-07-28 leg. Browser sessions never depend on MCP sessions.

The parent Starlette lifespan runs the SDK session manager and the idle reaper. uvicorn serves the
app on sockets we bind ourselves, so a bind failure is one stderr line (exit 1) and the actual
ephemeral port is known for the ``http.listening`` log line.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import signal
import socket
import sys
from collections.abc import AsyncIterator, Iterable, Iterator, MutableMapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import anyio
import uvicorn
from mcp.server import Server
from mcp.server.auth.middleware.auth_context import auth_context_var
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.authentication import AuthCredentials
from starlette.middleware import Middleware
from starlette.routing import Mount
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from browsermesh.config import Config, derive_allowed_hosts, derive_allowed_origins
from browsermesh.config.hosts import split_authority, split_origin
from browsermesh.errors import BrowserMeshError
from browsermesh.log import EventLog
from browsermesh.model.clock import iso_now
from browsermesh.runtime.runtime import Runtime
from browsermesh.transports.jsonrpc import check_message

__all__ = [
    "GRACEFUL_SHUTDOWN_S",
    "AccessControlMiddleware",
    "AccessPolicy",
    "HttpService",
    "IdleReaper",
    "RequestDrain",
    "build_http_app",
    "reaper_interval_ms",
    "serve_http",
]

# How long in-flight requests may run after a stop signal before they are ended; uvicorn's own
# (task-cancelling) timeout is a backstop one second later.
GRACEFUL_SHUTDOWN_S: Final = 2
REAPER_MAX_INTERVAL_MS: Final = 30_000
_DEFAULT_PORTS: Final = {"http": 80, "https": 443, "ws": 80, "wss": 443}
_LOG_PATH_MAX: Final = 200
# Stored in the AccessToken handed to the SDK instead of the secret (nothing reads it).
_TOKEN_PLACEHOLDER: Final = "[redacted]"


# --------------------------------------------------------------------------------------------
# Host / Origin allowlists (§18.5)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Rule:
    scheme: str | None  # origins only
    host: str
    port: int | None  # None: any port

    def matches(self, scheme: str | None, host: str, port: int) -> bool:
        return (
            self.scheme == scheme and self.host == host and (self.port is None or self.port == port)
        )


def _host_rule(entry: str) -> _Rule | None:
    parts = split_authority(entry, wildcard_port=True)
    return None if parts is None else _Rule(None, parts[0], parts[1])


def _origin_rule(entry: str) -> _Rule | None:
    parts = split_origin(entry, wildcard_port=True)
    return None if parts is None else _Rule(parts[0], parts[1], parts[2])


def _rules(entries: Iterable[str], parse: Any) -> tuple[_Rule, ...] | None:
    """None when ``*`` disables the check; unparsable entries are dropped (config validated)."""
    entries = list(entries)
    if "*" in entries:
        return None
    rules = (parse(entry) for entry in entries)
    return tuple(rule for rule in rules if rule is not None)


class AccessPolicy:
    """Host/Origin allowlists and the bearer-token table of one HTTP listener."""

    def __init__(
        self,
        allowed_hosts: Sequence[str],
        allowed_origins: Sequence[str],
        tokens: Sequence[tuple[str, str]] = (),
    ) -> None:
        self._hosts: tuple[_Rule, ...] | None = ()
        self._origins: tuple[_Rule, ...] | None = ()
        self.set_allowlists(allowed_hosts, allowed_origins)
        # Compare SHA-256 digests: equal lengths, so compare_digest is constant time even for
        # tokens of different lengths.
        self._tokens = tuple(
            (principal, hashlib.sha256(token.encode("utf-8")).digest())
            for principal, token in tokens
        )

    @classmethod
    def from_config(cls, config: Config) -> AccessPolicy:
        return cls(config.allowed_hosts, config.allowed_origins, config.auth_tokens)

    def set_allowlists(self, allowed_hosts: Sequence[str], allowed_origins: Sequence[str]) -> None:
        """Replace both allowlists (the listener learns its ephemeral port only once bound)."""
        self._hosts = _rules(allowed_hosts, _host_rule)
        self._origins = _rules(allowed_origins, _origin_rule)

    @property
    def auth_required(self) -> bool:
        return bool(self._tokens)

    def host_allowed(self, host_header: str | None, scheme: str = "http") -> bool:
        """The ``Host`` check: a missing or malformed header fails unless the check is off."""
        if self._hosts is None:
            return True
        if not host_header:
            return False
        parts = split_authority(host_header, wildcard_port=False)
        if parts is None:
            return False
        host, port = parts
        effective = port if port is not None else _DEFAULT_PORTS.get(scheme, 80)
        return any(rule.matches(None, host, effective) for rule in self._hosts)

    def origin_allowed(self, origin: str | None) -> bool:
        """The ``Origin`` check: absent → allowed (non-browser clients); ``null`` → refused."""
        if origin is None or self._origins is None:
            return True
        parts = split_origin(origin, wildcard_port=False)
        if parts is None:
            return False
        scheme, host, port = parts
        effective = port if port is not None else _DEFAULT_PORTS.get(scheme, -1)
        return any(rule.matches(scheme, host, effective) for rule in self._origins)

    def principal_for(self, token: bytes) -> str | None:
        """The principal whose token equals ``token``; every token is compared (no early exit)."""
        digest = hashlib.sha256(token).digest()
        matched: str | None = None
        for principal, expected in self._tokens:
            if hmac.compare_digest(digest, expected) and matched is None:
                matched = principal
        return matched


def bound_allowlists(config: Config, port: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The Host and Origin allowlists once `port` is bound.

    With `--port 0` the defaults had to be derived before the port was known, so they match any
    port (`:*`); once bound they are derived again for `port`, so a page on another loopback
    port cannot reach the server (§18.5 defaults name `<port>`). Lists given explicitly (even ones
    with `:*`) are kept as they are; a list equal to the port-0 defaults counts as derived.
    """
    hosts, origins = config.allowed_hosts, config.allowed_origins
    if config.http_port == 0:
        if hosts == derive_allowed_hosts(config.http_host, 0):
            hosts = derive_allowed_hosts(config.http_host, port)
        if origins == derive_allowed_origins(config.http_host, 0):
            origins = derive_allowed_origins(config.http_host, port)
    return hosts, origins


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return bytes(value)
    return None


def _bearer(value: bytes | None) -> bytes | None:
    """The token of an ``Authorization: Bearer <token>`` header value, or None."""
    if value is None:
        return None
    scheme, _, token = value.strip().partition(b" ")
    token = token.strip()
    if scheme.lower() != b"bearer" or not token:
        return None
    return token


async def _respond(
    send: Send, status: int, body: dict[str, str], headers: Sequence[tuple[bytes, bytes]] = ()
) -> None:
    payload = json.dumps(body, separators=(",", ":")).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})


class AccessControlMiddleware:
    """Host → 421, Origin → 403, then bearer auth → 401 (§18.3, §18.5); sets the principal."""

    def __init__(self, app: ASGIApp, policy: AccessPolicy, log: EventLog) -> None:
        self.app = app
        self.policy = policy
        self.log = log

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":  # no WebSocket endpoints exist
            await send({"type": "websocket.close", "code": 1008})
            return
        host = _header(scope, b"host")
        if not self.policy.host_allowed(
            None if host is None else host.decode("latin-1"), str(scope.get("scheme", "http"))
        ):
            await _respond(
                send, 421, {"error": "misdirected_request", "message": "Invalid Host header"}
            )
            return
        origin = _header(scope, b"origin")
        if not self.policy.origin_allowed(None if origin is None else origin.decode("latin-1")):
            await _respond(send, 403, {"error": "forbidden", "message": "Invalid Origin header"})
            return
        if not self.policy.auth_required:
            await self.app(scope, receive, send)
            return
        authorization = _header(scope, b"authorization")
        token = _bearer(authorization)
        principal = None if token is None else self.policy.principal_for(token)
        if principal is None:
            self.log.warn(
                "auth.rejected",
                reason="missing_token" if authorization is None else "invalid_token",
                path=str(scope.get("path", ""))[:_LOG_PATH_MAX],
            )
            await _respond(
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


def _is_json(scope: Scope) -> bool:
    """The SDK's own Content-Type test (`application/json`, parameters ignored)."""
    value = (_header(scope, b"content-type") or b"").decode("latin-1")
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
            await _respond(send, 400, reply)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)


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
                await _respond(send, 503, {"error": "unavailable", "message": "Server stopping"})


class _DrainMiddleware:
    def __init__(self, app: ASGIApp, drain: RequestDrain) -> None:
        self.app = app
        self.drain = drain

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        await self.drain(self.app, scope, receive, send)


# --------------------------------------------------------------------------------------------
# Idle reaper (§13.7)
# --------------------------------------------------------------------------------------------


def reaper_interval_ms(idle_ms: int) -> int:
    """min(30,000, idle/2) ms, at least 1 ms."""
    return max(1, min(REAPER_MAX_INTERVAL_MS, idle_ms // 2))


class IdleReaper:
    """Closes untouched, idle, ready sessions through the normal close path (reason ``idle``).

    Idleness is measured from the record's ``last_touch`` (monotonic seconds on the runtime
    clock): an accepted call naming the session or a finished queued operation.
    """

    def __init__(self, runtime: Runtime, idle_ms: int, log: EventLog) -> None:
        self.runtime = runtime
        self.idle_ms = idle_ms
        self.log = log

    def _idle_for_ms(self, rec: Any) -> float | None:
        return (self.runtime.clock.monotonic() - float(rec.last_touch)) * 1000

    def idle_sessions(self) -> list[Any]:
        """Records that are due: ready, accepting, nothing queued or running, idle long enough."""
        due = []
        for rec in self.runtime.sessions_snapshot().values():
            if rec.status != "ready" or not rec.accepting or rec.queue.busy:
                continue
            idle = self._idle_for_ms(rec)
            if idle is not None and idle >= self.idle_ms:
                due.append(rec)
        return due

    async def sweep(self) -> int:
        """One pass; returns how many sessions it closed."""
        if self.idle_ms <= 0 or self.runtime.shutting_down:
            return 0
        due = self.idle_sessions()
        results = await asyncio.gather(
            *(self.runtime.close_session(r.principal, r.session_id, reason="idle") for r in due),
            return_exceptions=True,
        )
        closed = 0
        for rec, result in zip(due, results, strict=True):
            if isinstance(result, BaseException):
                if not isinstance(result, BrowserMeshError | asyncio.CancelledError):
                    self.log.warn(
                        "operation.failed",
                        sessionId=rec.session_id,
                        principal=rec.principal,
                        code="INTERNAL_ERROR",
                        reason="idle",
                    )
            else:
                closed += 1
        return closed

    async def run(self) -> None:
        """Sweep every :func:`reaper_interval_ms` until cancelled; returns at once if disabled."""
        if self.idle_ms <= 0:
            return
        interval = reaper_interval_ms(self.idle_ms) / 1000
        while True:
            await asyncio.sleep(interval)
            await self.sweep()


# --------------------------------------------------------------------------------------------
# The ASGI application
# --------------------------------------------------------------------------------------------


def build_http_app(
    server: Server[Any],
    runtime: Runtime,
    config: Config,
    log: EventLog,
    *,
    drain: RequestDrain | None = None,
    policy: AccessPolicy | None = None,
) -> Starlette:
    """The HTTP application: access control around the SDK app at ``config.http_path``.

    Its lifespan runs the SDK session manager and (when ``session_idle_ms`` > 0) the idle reaper.
    ``drain`` (optional) tracks requests so a stop can end them; ``policy`` (optional, default
    from ``config``) is the access policy, which the caller may narrow once the port is bound.
    Sets ``runtime.transport`` to ``"http"``.
    """
    runtime.transport = "http"
    mcp_app = server.streamable_http_app(
        streamable_http_path=config.http_path,
        stateless_http=False,
        json_response=False,
        # Our middleware does Host/Origin; the SDK still checks the POST Content-Type.
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        host=config.http_host,
    )
    reaper = IdleReaper(runtime, config.session_idle_ms, log)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        async with server.session_manager.run():
            task = asyncio.get_running_loop().create_task(reaper.run())
            try:
                yield
            finally:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    return Starlette(
        routes=[Mount("/", app=mcp_app)],
        middleware=[
            Middleware(_DrainMiddleware, drain=drain or RequestDrain(GRACEFUL_SHUTDOWN_S)),
            Middleware(
                AccessControlMiddleware, policy=policy or AccessPolicy.from_config(config), log=log
            ),
            Middleware(JsonRpcGuardMiddleware, path=config.http_path),
        ],
        lifespan=lifespan,
    )


# --------------------------------------------------------------------------------------------
# Serving
# --------------------------------------------------------------------------------------------


def _bind(host: str, port: int) -> list[socket.socket]:
    """Listening sockets for every address of ``host`` (like asyncio's create_server).

    With port 0 the first socket's ephemeral port is reused for the other addresses.
    """
    infos = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP, flags=socket.AI_PASSIVE
    )
    sockets: list[socket.socket] = []
    seen: set[tuple[int, Any]] = set()
    try:
        for family, kind, proto, _canon, address in infos:
            if (family, address) in seen:
                continue
            seen.add((family, address))
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            if sys.platform != "win32":
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6 and hasattr(socket, "IPPROTO_IPV6"):
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            if port == 0 and len(sockets) > 1:
                address = (address[0], sockets[0].getsockname()[1], *address[2:])
            sock.bind(address)
            sock.listen(2048)
            sock.setblocking(False)
    except BaseException:
        for sock in sockets:
            sock.close()
        raise
    if not sockets:
        raise OSError(f"no address found for {host}")
    return sockets


class _UvicornServer(uvicorn.Server):
    """uvicorn without its own signal handling (ours stops it) and with a started event."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = asyncio.Event()

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.started:
            self.ready.set()


class HttpService:
    """The bound HTTP transport of one runtime: ``bind()``, then ``serve()`` until ``stop()``."""

    def __init__(
        self, config: Config, runtime: Runtime, server: Server[Any], log: EventLog
    ) -> None:
        self.config = config
        self.runtime = runtime
        self.server = server
        self.log = log
        self.drain = RequestDrain(GRACEFUL_SHUTDOWN_S)
        self.policy = AccessPolicy.from_config(config)
        self.app = build_http_app(
            server, runtime, config, log, drain=self.drain, policy=self.policy
        )
        self.sockets: list[socket.socket] = []
        self._uvicorn = _UvicornServer(
            uvicorn.Config(
                self.app,
                host=config.http_host,
                port=config.http_port,
                http="h11",
                ws="none",
                lifespan="on",
                log_config=None,
                access_log=False,
                server_header=False,
                timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S + 1,
            )
        )

    def bind(self) -> None:
        """Bind the listening sockets; raises OSError when the address cannot be bound. With
        port 0, the derived allowlists are narrowed to the port actually bound."""
        self.sockets = _bind(self.config.http_host, self.config.http_port)
        self.policy.set_allowlists(*bound_allowlists(self.config, self.port))

    @property
    def host(self) -> str:
        return str(self.sockets[0].getsockname()[0])

    @property
    def port(self) -> int:
        return int(self.sockets[0].getsockname()[1])

    @property
    def url(self) -> str:
        host = self.host
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{self.port}{self.config.http_path}"

    async def wait_ready(self) -> None:
        await self._uvicorn.ready.wait()

    async def serve(self) -> None:
        """Serve until :meth:`stop`; logs ``http.listening`` once accepting.

        Raises SystemExit when uvicorn's startup (the lifespan) fails.
        """
        if not self.sockets:
            self.bind()
        waiter = asyncio.get_running_loop().create_task(self._announce())
        try:
            await self._uvicorn.serve(sockets=self.sockets)
        finally:
            waiter.cancel()
            for sock in self.sockets:
                sock.close()

    async def _announce(self) -> None:
        await self._uvicorn.ready.wait()
        self.log.info("http.listening", host=self.host, port=self.port, path=self.config.http_path)

    def stop(self) -> None:
        """Begin a graceful stop; a second call forces open connections closed."""
        if self._uvicorn.should_exit:
            self._uvicorn.force_exit = True
        self._uvicorn.should_exit = True
        self.drain.stop()


def _bind_failure_line(config: Config, exc: OSError) -> str:
    reason = exc.strerror or type(exc).__name__
    return json.dumps(
        {
            "level": "error",
            "message": "http.bind_failed",
            "type": "http.bind_failed",
            "timestamp": iso_now(),
            "host": config.http_host,
            "port": config.http_port,
            "reason": reason,
        },
        separators=(",", ":"),
    )


async def serve_http(config: Config, runtime: Runtime, server: Server[Any], log: EventLog) -> int:
    """Serve MCP over Streamable HTTP until SIGINT/SIGTERM, then shut the runtime down.

    Returns the exit code: 0 after a clean shutdown, 1 on bind failure, a failed start or a
    failed shutdown. An unexpected error is re-raised after the runtime has shut down.
    """
    runtime.transport = "http"
    if config.token_file_world_readable:
        log.warn("auth.token_file_readable", reason="token file is readable by group or others")
    service = HttpService(config, runtime, server, log)
    try:
        service.bind()
    except OSError as exc:
        print(_bind_failure_line(config, exc), file=sys.stderr, flush=True)
        with contextlib.suppress(Exception):
            await runtime.shutdown()
        return 1

    loop = asyncio.get_running_loop()
    shutdown: asyncio.Task[None] | None = None

    def on_signal() -> None:
        nonlocal shutdown
        service.stop()
        # Stop accepting at once; calls already queued drain while uvicorn finishes responses.
        if shutdown is None:
            shutdown = loop.create_task(runtime.shutdown())

    installed = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, on_signal)
            installed.append(sig)

    code = 0
    error: Exception | None = None
    try:
        await service.serve()
    except SystemExit:
        code = 1  # the lifespan failed to start (uvicorn logged it)
    except Exception as exc:
        error = exc
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)
    try:
        await (shutdown if shutdown is not None else runtime.shutdown())
    except Exception:
        code = 1
    if error is not None:
        raise error  # after cleanup: serve() reports it as a fatal error (exit 1)
    return code
