"""The HTTP transport's one-job modules (issue 18): re-exports, the reaper's boundary, and the
serving task group that owns the announcement and the idle reaper (no Chromium: fake engine)."""

from __future__ import annotations

import ast
import contextlib
import importlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

import browsermesh.transports.http as http
from browsermesh.config import default_config
from browsermesh.log import EventLog
from browsermesh.mcp.server import create_server
from browsermesh.runtime.reaper import IdleReaper
from browsermesh.runtime.runtime import Runtime
from tests.fakes import FakeEngine
from tests.support.jsonrpc import INITIALIZE

pytestmark = pytest.mark.anyio

SRC = Path(__file__).resolve().parents[2] / "src" / "browsermesh"

HOMES = {
    "GRACEFUL_SHUTDOWN_S": "browsermesh.transports.drain",
    "REAPER_MAX_INTERVAL_MS": "browsermesh.runtime.reaper",
    "AccessControlMiddleware": "browsermesh.transports.auth",
    "AccessPolicy": "browsermesh.transports.access",
    "HttpService": "browsermesh.transports.http",
    "IdleReaper": "browsermesh.runtime.reaper",
    "JsonRpcGuardMiddleware": "browsermesh.transports.http_app",
    "RequestDrain": "browsermesh.transports.drain",
    "bound_allowlists": "browsermesh.transports.access",
    "build_http_app": "browsermesh.transports.http_app",
    "reaper_interval_ms": "browsermesh.runtime.reaper",
    "serve_http": "browsermesh.transports.http",
}


def test_public_names_stay_importable_from_transports_http() -> None:
    assert sorted(http.__all__) == sorted(HOMES)
    for name, home in HOMES.items():
        assert getattr(http, name) is getattr(importlib.import_module(home), name), name


def test_the_reaper_uses_only_the_runtimes_public_api() -> None:
    tree = ast.parse((SRC / "runtime" / "reaper.py").read_text())
    private = [
        f"{node.lineno}: {ast.unparse(node)}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and node.attr.startswith("_")
        and not (isinstance(node.value, ast.Name) and node.value.id == "self")
    ]
    assert not private


def test_http_modules_are_small_and_documented() -> None:
    paths = [*(SRC / "transports").glob("*.py"), SRC / "runtime" / "reaper.py"]
    for path in paths:
        assert len(path.read_text().splitlines()) < 400, path.name
        assert ast.get_docstring(ast.parse(path.read_text())), path.name


def _service(tmp_path: Path, **overrides: Any) -> tuple[http.HttpService, Runtime, list[Any]]:
    config = default_config(transport="http", http_port=0, data_dir=tmp_path, **overrides)
    records: list[dict[str, Any]] = []
    log = EventLog("silent")
    log.sinks.append(records.append)
    runtime = Runtime(config, FakeEngine(), log)
    service = http.HttpService(config, runtime, create_server(runtime), log)
    service.bind()
    return service, runtime, records


async def test_serve_owns_the_announcement_and_the_reaper(tmp_path: Path) -> None:
    service, runtime, records = _service(tmp_path, session_idle_ms=60_000)
    reaping = anyio.Event()
    ended: list[str] = []

    async def reaper_run() -> None:
        reaping.set()
        try:
            await anyio.sleep_forever()
        finally:
            ended.append("reaper")

    service.reaper.run = reaper_run  # type: ignore[method-assign]
    async with anyio.create_task_group() as tg:
        tg.start_soon(service.serve)
        with anyio.fail_after(10):
            await service.wait_ready()
            await reaping.wait()
        async with httpx2.AsyncClient() as client:
            response = await client.post(
                service.url,
                json=INITIALIZE,
                headers={"Accept": "application/json, text/event-stream"},
            )
        assert response.status_code == 200
        listening = [r for r in records if r["type"] == "http.listening"]
        assert listening == [{**listening[0], "port": service.port}]
        service.stop()
    # serve() returned only after cancelling and awaiting its helpers; its sockets are closed
    assert ended == ["reaper"]
    assert all(sock.fileno() == -1 for sock in service.sockets)
    await runtime.shutdown()


async def test_a_failing_reaper_stops_the_server_and_is_raised(tmp_path: Path) -> None:
    service, runtime, _ = _service(tmp_path, session_idle_ms=60_000)

    async def broken() -> None:
        await service.wait_ready()
        raise RuntimeError("reaper bug")

    service.reaper.run = broken  # type: ignore[method-assign]
    with anyio.fail_after(10), pytest.raises(RuntimeError, match="reaper bug"):
        await service.serve()  # the error itself, not an ExceptionGroup
    assert all(sock.fileno() == -1 for sock in service.sockets)
    await runtime.shutdown()


async def test_serve_http_reraises_a_helper_failure_after_the_shutdown(tmp_path: Path) -> None:
    config = default_config(
        transport="http", http_port=0, data_dir=tmp_path, session_idle_ms=60_000
    )
    runtime = Runtime(config, FakeEngine(), EventLog("silent"))
    calls: list[str] = []

    async def failing_sweep(self: IdleReaper) -> int:
        calls.append("sweep")
        raise RuntimeError("sweep bug")

    async def fast_run(self: IdleReaper) -> None:
        await self.sweep()

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(IdleReaper, "sweep", failing_sweep)
        patch.setattr(IdleReaper, "run", fast_run)
        with anyio.fail_after(15), pytest.raises(RuntimeError, match="sweep bug"):
            await http.serve_http(config, runtime, create_server(runtime), EventLog("silent"))
    assert calls == ["sweep"] and runtime.shutting_down


async def test_serve_http_returns_1_when_the_lifespan_fails(tmp_path: Path) -> None:
    """uvicorn's startup raises SystemExit; the service's task group lets it through as itself,
    so serve_http still maps it to exit code 1 after shutting the runtime down."""
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    config = default_config(transport="http", http_port=0, data_dir=tmp_path)
    runtime = Runtime(config, FakeEngine(), EventLog("silent"))

    @contextlib.asynccontextmanager
    async def broken(self: StreamableHTTPSessionManager) -> AsyncIterator[None]:
        raise RuntimeError("lifespan bug")
        yield

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(StreamableHTTPSessionManager, "run", broken)
        with anyio.fail_after(15):
            code = await http.serve_http(
                config, runtime, create_server(runtime), EventLog("silent")
            )
    assert code == 1 and runtime.shutting_down


async def test_idle_sweep_closes_through_the_normal_path(tmp_path: Path) -> None:
    config = default_config(data_dir=tmp_path)
    records: list[dict[str, Any]] = []
    log = EventLog("silent")
    log.sinks.append(records.append)
    runtime = Runtime(config, FakeEngine(), log)
    _, idle, _ = await runtime.create_session()
    _, fresh, _ = await runtime.create_session()
    runtime.sessions_snapshot()[idle["sessionId"]].last_touch -= 3600
    reaper = IdleReaper(runtime, 60_000, log)
    assert [r.session_id for r in reaper.idle_sessions()] == [idle["sessionId"]]
    assert await reaper.sweep() == 1 and await reaper.sweep() == 0
    closed = [r for r in records if r["type"] == "session.closed"]
    assert [(r["sessionId"], r["reason"]) for r in closed] == [(idle["sessionId"], "idle")]
    assert runtime.sessions_snapshot()[fresh["sessionId"]].status == "ready"
    assert await IdleReaper(runtime, 0, log).sweep() == 0
    await runtime.shutdown()
    assert await reaper.sweep() == 0  # nothing is reaped once shutting down


async def test_the_mcp_session_limit_sees_the_sdks_sessions(tmp_path: Path) -> None:
    """`live_mcp_sessions` reads the SDK session manager's private table (issue 30 #10): an
    opened session is in it, a deleted one is not. Fails if the SDK renames it."""
    from browsermesh.transports.http_app import live_mcp_sessions

    service, runtime, _ = _service(tmp_path)
    async with anyio.create_task_group() as tg:
        tg.start_soon(service.serve)
        with anyio.fail_after(10):
            await service.wait_ready()
        assert list(live_mcp_sessions(service.server)) == []
        async with httpx2.AsyncClient() as client:
            headers = {"Accept": "application/json, text/event-stream"}
            opened = await client.post(service.url, json=INITIALIZE, headers=headers)
            session_id = opened.headers["mcp-session-id"]
            assert list(live_mcp_sessions(service.server)) == [session_id]
            closed = await client.delete(
                service.url,
                headers={
                    **headers,
                    "mcp-session-id": session_id,
                    "mcp-protocol-version": "2025-11-25",
                },
            )
            assert closed.status_code < 400
        assert list(live_mcp_sessions(service.server)) == []
        service.stop()
    await runtime.shutdown()
