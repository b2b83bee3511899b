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

from browsermesh.config import Config
from browsermesh.log import EventLog, route_library_logging

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
    from browsermesh.transports.stdio import serve_stdio

    install_fatal_handlers(asyncio.get_running_loop())
    log = EventLog(config.log_level)
    runtime = create_runtime(config, log)
    server = create_server(runtime, instructions=instructions_for(config))
    if config.transport == "http":
        from browsermesh.transports.http import serve_http

        return await serve_http(config, runtime, server, log)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)

    async def run_transport() -> None:
        await serve_stdio(server)

    transport = loop.create_task(run_transport())
    stopper = loop.create_task(stop.wait())
    await asyncio.wait({transport, stopper}, return_when=asyncio.FIRST_COMPLETED)
    code = 0
    try:
        await runtime.shutdown()
    except Exception:
        code = 1
    if stop.is_set():
        # The stdio reader is blocked in a worker thread that cannot be interrupted; everything
        # that matters (sessions, Chromium) is closed, so leave without waiting for it.
        sys.stderr.flush()
        os._exit(code)
    stopper.cancel()
    if transport.done() and not transport.cancelled() and transport.exception() is not None:
        code = 1
    return code
