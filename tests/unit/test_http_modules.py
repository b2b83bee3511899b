"""The HTTP transport's one-job modules (issue 18): re-exports, the reaper's boundary and its
sweep (no Chromium: fake engine)."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path
from typing import Any

import pytest

import browsermesh.transports.http as http
from browsermesh.config import default_config
from browsermesh.log import EventLog
from browsermesh.runtime.reaper import IdleReaper
from browsermesh.runtime.runtime import Runtime
from tests.fakes import FakeEngine

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
