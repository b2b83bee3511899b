"""`browsermesh` (serve): start the runtime and the MCP transport, shut down cleanly.

stdin close (stdio), SIGINT and SIGTERM all lead to the same graceful shutdown that closes every
session and leaves no Chromium process behind. `--transport http` serves Streamable HTTP instead
(`browsermesh.transports.http`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import threading
from typing import TYPE_CHECKING, Any

import anyio

from browsermesh.config import Config
from browsermesh.log import EventLog, route_library_logging

if TYPE_CHECKING:
    from mcp.server import Server

    from browsermesh.runtime.runtime import Runtime

FATAL_LINE = (
    '{"level":"error","code":"INTERNAL_ERROR",'
    '"message":"BrowserMesh stopped after an unexpected internal error."}'
)


def _fatal(*_args: object) -> None:
    """Last-resort handler: one fixed JSON line, never the exception text (§16.5)."""
    with contextlib.suppress(Exception):
        print(FATAL_LINE, file=sys.stderr, flush=True)


def install_fatal_handlers(loop: asyncio.AbstractEventLoop | None = None) -> None:
    sys.excepthook = _fatal
    threading.excepthook = _fatal
    if loop is not None:
        # Unobserved task/future errors (e.g. a late Playwright reply after a page closed) are
        # not fatal: note them without their text.
        loop.set_exception_handler(lambda _loop, _context: _note_loop_error())


def _note_loop_error() -> None:
    with contextlib.suppress(Exception):
        print('{"level":"warn","message":"loop.exception"}', file=sys.stderr, flush=True)


def serve(config: Config) -> int:
    """Run the server until the transport closes or a signal arrives; return the exit code."""
    route_library_logging()
    install_fatal_handlers()
    try:
        return asyncio.run(_serve(config))
    except KeyboardInterrupt:
        return 0
    except Exception:
        print(FATAL_LINE, file=sys.stderr)
        return 1


async def _serve(config: Config) -> int:
    from browsermesh.factory import create_runtime
    from browsermesh.mcp.instructions import instructions_for
    from browsermesh.mcp.server import create_server

    install_fatal_handlers(asyncio.get_running_loop())
    log = EventLog(config.log_level)
    runtime = create_runtime(config, log)
    runtime.start()
    server = create_server(runtime, instructions=instructions_for(config))
    # The transports shut the runtime down themselves (when their signal handling decides, and
    # they report a failed shutdown by the exit code); afterwards whatever the runtime still
    # owns is awaited here.
    try:
        if config.transport == "http":
            from browsermesh.transports.http import serve_http

            return await serve_http(config, runtime, server, log)
        return await _serve_stdio(server, runtime)
    finally:
        await runtime.tasks.aclose()


async def _serve_stdio(server: Server[Any], runtime: Runtime) -> int:
    """Serve over stdio until stdin closes or SIGINT/SIGTERM arrives, then shut the runtime down.

    A task group owns the transport. Returns the exit code: 1 when the shutdown or the transport
    failed. After a signal the process leaves with ``os._exit`` once the runtime is down.
    """
    from browsermesh.transports.stdio import serve_stdio

    ended = anyio.Event()  # stdin closed, the transport failed, or a signal arrived
    signalled = False
    transport_failed = False

    def on_signal() -> None:
        nonlocal signalled
        signalled = True
        ended.set()

    async def run_transport() -> None:
        nonlocal transport_failed
        try:
            await serve_stdio(server)
        except Exception:
            transport_failed = True  # reported by the exit code, after the shutdown
        finally:
            ended.set()

    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, on_signal)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(run_transport)
        await ended.wait()
        code = 0
        try:
            await runtime.shutdown()
        except Exception:
            code = 1
        if signalled:
            # The stdio reader is blocked in a worker thread that cannot be interrupted; everything
            # that matters (sessions, Chromium) is closed, so leave without waiting for it.
            sys.stderr.flush()
            os._exit(code)
    return 1 if transport_failed else code
