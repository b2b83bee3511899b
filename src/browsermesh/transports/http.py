"""Serving MCP over Streamable HTTP (reference §18.2-18.6): bind, serve, stop on a signal.

:func:`serve_http` is the ``--transport http`` entry point: it binds the listening sockets itself
(so a bind failure is one stderr line, exit 1, and an ephemeral port is known for the
``http.listening`` log line), serves with uvicorn until SIGINT/SIGTERM, then shuts the runtime
down. :class:`HttpService` is one bound listener; while it serves, one task group owns uvicorn's
loop, the ``http.listening`` announcement and the idle reaper (§13.7).

The pieces live in one-job modules and are re-exported here: the access rules
(:mod:`~browsermesh.transports.access`), the access-control middleware
(:mod:`~browsermesh.transports.auth`), the request drain (:mod:`~browsermesh.transports.drain`),
the ASGI app (:mod:`~browsermesh.transports.http_app`) and the idle reaper
(:mod:`browsermesh.runtime.reaper`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import socket
import sys
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import anyio
import uvicorn
from mcp.server import Server

from browsermesh.config import Config
from browsermesh.config.fleet import derived_advertise
from browsermesh.log import EventLog
from browsermesh.model.clock import iso_now
from browsermesh.runtime.reaper import REAPER_MAX_INTERVAL_MS, IdleReaper, reaper_interval_ms
from browsermesh.runtime.runtime import Runtime
from browsermesh.transports.access import AccessPolicy, bound_allowlists
from browsermesh.transports.auth import AccessControlMiddleware
from browsermesh.transports.drain import GRACEFUL_SHUTDOWN_S, RequestDrain, drain_grace_s
from browsermesh.transports.http_app import JsonRpcGuardMiddleware, build_http_app
from browsermesh.transports.slow_clients import BODY_TIMEOUT_S, HEAD_TIMEOUT_S, cutoff_protocol
from browsermesh.transports.view import VIEW_PATH, announce_view
from browsermesh.transports.view_artifacts import artifact_path
from browsermesh.transports.view_auth import ViewAuth

__all__ = [
    "GRACEFUL_SHUTDOWN_S",
    "REAPER_MAX_INTERVAL_MS",
    "AccessControlMiddleware",
    "AccessPolicy",
    "HttpService",
    "IdleReaper",
    "JsonRpcGuardMiddleware",
    "RequestDrain",
    "bound_allowlists",
    "build_http_app",
    "reaper_interval_ms",
    "serve_http",
]


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
    """The bound HTTP transport of one runtime: ``bind()``, then ``serve()`` until ``stop()``.

    ``head_timeout_s`` and ``body_timeout_s`` bound how slowly a client may send a request
    (`transports.slow_clients`); tests shorten them."""

    def __init__(
        self,
        config: Config,
        runtime: Runtime,
        server: Server[Any],
        log: EventLog,
        *,
        head_timeout_s: float = HEAD_TIMEOUT_S,
        body_timeout_s: float = BODY_TIMEOUT_S,
    ) -> None:
        self.config = config
        self.runtime = runtime
        self.server = server
        self.log = log
        self.drain = RequestDrain(drain_grace_s(config.shutdown_grace_ms))
        self.policy = AccessPolicy.from_config(config)
        self.reaper = IdleReaper(runtime, config.session_idle_ms, log)
        fleet = runtime.fleet
        # In a fleet with its token the view's sign-in is the fleet's (reference §37.9).
        shared = fleet if fleet is not None and config.fleet_token is not None else None
        self.view_auth = ViewAuth(
            self.policy, shared=None if shared is None else (lambda: shared.directory)
        )
        self.app = build_http_app(
            server,
            runtime,
            config,
            log,
            drain=self.drain,
            policy=self.policy,
            view_auth=self.view_auth,
        )
        self.sockets: list[socket.socket] = []
        self._helper_failure: Exception | None = None
        self._stops = 0  # calls of stop(): graceful, hurried, forced
        self._uvicorn = _UvicornServer(
            uvicorn.Config(
                self.app,
                host=config.http_host,
                port=config.http_port,
                # h11 plus deadlines for a slowly sent request (slowloris, issue 30 #10).
                http=cutoff_protocol(log, head_s=head_timeout_s, body_s=body_timeout_s),
                ws="none",
                lifespan="on",
                log_config=None,
                access_log=False,
                server_header=False,
                timeout_graceful_shutdown=int(self.drain.grace_s) + 1,
            )
        )

    def bind(self) -> None:
        """Bind the listening sockets; raises OSError when the address cannot be bound. With
        port 0, the derived allowlists are narrowed to the port actually bound."""
        self.sockets = _bind(self.config.http_host, self.config.http_port)
        self.policy.set_allowlists(*bound_allowlists(self.config, self.port))
        fleet = self.runtime.fleet
        if fleet is not None and self.config.fleet_token is not None:
            # Where the other replicas reach this one's channel (reference §37.6).
            fleet.endpoint = self.config.fleet_advertise or derived_advertise(self.host, self.port)
            if fleet.endpoint is None:
                self.log.warn("fleet.no_endpoint", host=self.host)

    @property
    def host(self) -> str:
        return str(self.sockets[0].getsockname()[0])

    @property
    def port(self) -> int:
        return int(self.sockets[0].getsockname()[1])

    @property
    def base(self) -> str:
        """``http://host:port`` of the bound listener."""
        host = self.host
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.base}{self.config.http_path}"

    async def wait_ready(self) -> None:
        await self._uvicorn.ready.wait()

    async def serve(self) -> None:
        """Serve until :meth:`stop`; logs ``http.listening`` once accepting.

        One task group owns everything that runs while serving: uvicorn's loop (in the group's own
        body), the ``http.listening`` announcement and the idle reaper. When uvicorn returns, the
        helpers are cancelled and awaited. A helper that fails stops the server gracefully and its
        error is raised here once uvicorn has finished. Raises SystemExit when uvicorn's startup
        (the lifespan) fails.
        """
        if not self.sockets:
            self.bind()
        self._helper_failure = None
        outcome: Exception | SystemExit | None = None
        try:
            async with anyio.create_task_group() as helpers:
                helpers.start_soon(self._helper, self._announce)
                helpers.start_soon(self._helper, self.reaper.run)
                try:
                    await self._uvicorn.serve(sockets=self.sockets)
                except (Exception, SystemExit) as exc:
                    # Raised as itself below, not wrapped in the group's ExceptionGroup.
                    outcome = exc
                helpers.cancel_scope.cancel()
        finally:
            for sock in self.sockets:
                sock.close()
        if outcome is not None:
            raise outcome
        if self._helper_failure is not None:
            raise self._helper_failure

    async def _helper(self, job: Callable[[], Awaitable[None]]) -> None:
        """Run `job` beside uvicorn; if it fails, keep the error for :meth:`serve` and stop."""
        try:
            await job()
        except Exception as exc:
            if self._helper_failure is None:
                self._helper_failure = exc
            self.stop()

    async def _announce(self) -> None:
        await self._uvicorn.ready.wait()
        self.log.info("http.listening", host=self.host, port=self.port, path=self.config.http_path)
        if self.config.view:
            view = f"{self.base}{VIEW_PATH}/"
            self.runtime.handover.view_link = lambda session_id: f"{view}#s={session_id}"
            self.runtime.files.download_link = lambda session_id, artifact_id: (
                f"{self.base}{VIEW_PATH}{artifact_path(session_id, artifact_id)}"
            )
            principals = [name for name, _ in self.config.auth_tokens]
            quiet = self.config.log_level == "silent"
            await announce_view(self.view_auth, self.base, principals, quiet)

    def stop(self) -> None:
        """Begin a graceful stop. A second call hurries it: the runtime cancels its work now
        and every request still in flight is answered (``RUNTIME_SHUTTING_DOWN``) within
        ``HURRY_S`` (issue 30 #10: it used to force the connections closed, unanswered). Only
        a third call forces open connections closed."""
        self._stops += 1
        if self._stops == 2:
            self.runtime.hurry_shutdown()
            self.drain.hurry()
        elif self._stops > 2:
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

    A signal stops accepting at once and starts the runtime's shutdown while uvicorn finishes the
    responses in flight (calls already queued drain meanwhile). The shutdown runs in a task of
    this function's task group, which awaits it before returning.
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

    stopping = anyio.Event()  # a signal arrived, or serving ended: shut the runtime down
    shutdown_failed = False

    async def shut_down_runtime() -> None:
        nonlocal shutdown_failed
        await stopping.wait()
        try:
            await runtime.shutdown()
        except Exception:
            shutdown_failed = True

    def on_signal() -> None:
        service.stop()
        stopping.set()

    loop = asyncio.get_running_loop()
    installed = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, on_signal)
            installed.append(sig)

    code = 0
    error: Exception | None = None
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(shut_down_runtime)
        try:
            await service.serve()
        except SystemExit:
            code = 1  # the lifespan failed to start (uvicorn logged it)
        except Exception as exc:
            error = exc
        finally:
            for sig in installed:
                loop.remove_signal_handler(sig)
            stopping.set()
    if shutdown_failed:
        code = 1
    if error is not None:
        raise error  # after cleanup: serve() reports it as a fatal error (exit 1)
    return code
