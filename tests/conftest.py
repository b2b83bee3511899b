"""Shared fixtures: the loopback site, a real-Chromium runtime, MCP clients in both eras."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings
from jsonschema import Draft202012Validator
from mcp import Client, StdioServerParameters

from browsermesh.config import Config, default_config
from browsermesh.factory import create_runtime
from browsermesh.log import EventLog
from browsermesh.mcp.server import create_server
from browsermesh.runtime.runtime import Runtime
from tests.fixtures.apps import AdminApp, DatasetteApp, start_datasette, start_django_admin
from tests.fixtures.files_site import FilesSite
from tests.fixtures.site import FixtureSite
from tests.support.cdp import debuggable_chromium, devtools_port_of
from tests.support.examples import FEW

pytest_plugins = ["tests.support.chromium_guard", "pytester"]
"""Marks every test that uses Chromium `chromium`, and fails an unmarked one that does."""

if FEW:  # BM_TEST_FEW_EXAMPLES=1 (tests/support/examples.py): a tenth of the default too
    settings.register_profile("few", max_examples=10)
    settings.load_profile("few")

ERAS = ["auto", "legacy"]
INITIALIZE_PARAMS: dict[str, Any] = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "raw", "version": "1"},
}
INITIALIZE: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": INITIALIZE_PARAMS,
}
"""A raw `initialize` request, for tests that speak JSON-RPC themselves (stdio or HTTP)."""
CHECKOUT_ENV = {"PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
"""For the minimal environment of a stdio-spawned `python -m browsermesh`: run this checkout's
code, not whatever the interpreter's installed (possibly editable, elsewhere) copy is."""
OPERATION_ID = re.compile(r"o[0-9a-z]{4,}")
"""An operation id (model.ids `short_id("o")`); tests check only the kind letter and the
alphabet, never the counter, so ids stay opaque to them."""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def site() -> Iterator[FixtureSite]:
    with FixtureSite() as s:
        yield s


@pytest.fixture(scope="session")
def files_site() -> Iterator[FilesSite]:
    """The loopback upload/download site (issue 14); tests call `files_site.clear()` first."""
    with FilesSite() as s:
        yield s


@pytest.fixture(scope="session")
def django_admin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AdminApp]:
    """The stock Django admin of tests/fixtures/apps/djshop on loopback (issue 13)."""
    app = start_django_admin(tmp_path_factory.mktemp("django-admin"))
    try:
        yield app
    finally:
        app.stop()


@pytest.fixture(scope="session")
def datasette_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DatasetteApp]:
    """Stock Datasette over a small books table on loopback (issue 13)."""
    app = start_datasette(tmp_path_factory.mktemp("datasette"))
    try:
        yield app
    finally:
        app.stop()


def real_config(tmp_path: Path, **overrides: Any) -> Config:
    """The real-runtime harness settings (contract §26.1), with a 15 s default budget instead of
    5 s: session creation and the first Chromium launch share it, and CI machines are shared
    and noisy. Tests that exercise deadlines pass their own small `timeoutMs`."""
    values: dict[str, Any] = {
        "headless": True,
        "timeout_ms": 15_000,
        "max_sessions": 50,
        "max_pages": 10,
        "data_dir": tmp_path / "data",
        "tools": ("core", "observability", "persistence", "files", "eval"),
    }
    values.update(overrides)
    return default_config(**values)


@pytest.fixture
def log_records() -> list[dict[str, Any]]:
    return []


SHARED_BROWSER = os.environ.get("BM_TEST_SHARED_BROWSER") == "1"
"""Issue 18 prototype, opt-in: the `runtime` fixture attaches over CDP to one Chromium for the
whole session (a fresh context per session as always) instead of launching its own. Tests
marked `own_browser` (they check the launch, the binary or a browser crash) still launch."""


@pytest.fixture(scope="session")
def shared_cdp_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str | None]:
    """With BM_TEST_SHARED_BROWSER=1: the endpoint of one Chromium for the session, started
    detached (not a descendant of pytest, so no test that counts or kills this process's
    Chromium children sees it) and killed at the end; otherwise None."""
    if not SHARED_BROWSER:
        yield None
        return
    profile = tmp_path_factory.mktemp("shared-chromium")
    argv = " ".join(shlex.quote(a) for a in debuggable_chromium(profile))
    # The shell starts Chromium in the background, prints its pid and exits: Chromium is
    # re-parented away from us.
    started = subprocess.run(
        ["sh", "-c", f"{argv} >/dev/null 2>&1 </dev/null & echo $!"],
        capture_output=True,
        text=True,
        check=True,
        start_new_session=True,
    )
    pid = int(started.stdout.strip())
    try:
        deadline = time.monotonic() + 30
        while (port := devtools_port_of(profile)) is None:
            assert time.monotonic() < deadline, "the shared Chromium never listened"
            os.kill(pid, 0)  # raises once it has exited
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:  # its parent now is init, which reaps it
                os.kill(pid, 0)
                time.sleep(0.05)


@pytest.fixture
async def runtime(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    log_records: list[dict[str, Any]],
    shared_cdp_endpoint: str | None,
) -> AsyncIterator[Runtime]:
    log = EventLog("silent")
    log.sinks.append(log_records.append)
    shared = shared_cdp_endpoint and not request.node.get_closest_marker("own_browser")
    overrides = {"cdp_endpoint": shared_cdp_endpoint} if shared else {}
    rt = create_runtime(real_config(tmp_path, **overrides), log)
    yield rt
    await rt.shutdown()


VERBATIM = {"browser_evaluate": {"result"}}
"""Result fields that carry the page's own JSON (nulls and empty lists there are data)."""


def assert_lean(name: str, data: dict[str, Any], args: dict[str, Any], required: Any) -> None:
    """Issue 31 item 9: no null, no empty list or object at any depth (a required top-level
    field excepted), no top-level id that repeats the one the client sent."""

    def walk(value: Any, where: str) -> None:
        assert value is not None, f"{name}: null at {where}"
        if isinstance(value, dict | list):
            assert value, f"{name}: empty {type(value).__name__} at {where}"
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, item in items:
                walk(item, f"{where}.{key}")

    for key, value in data.items():
        if key in VERBATIM.get(name, ()):
            continue
        if key.endswith("Id") and key in args:
            assert args[key] != value, f"{name}: {key} repeats the request"
        if key not in required:
            walk(value, key)


class ToolClient:
    """A thin wrapper over the SDK client that checks every success against its outputSchema,
    that the compatibility text equals structuredContent, and that the result is lean."""

    def __init__(self, client: Client, tools: dict[str, Any]) -> None:
        self.client = client
        self.tools = tools

    @classmethod
    async def of(cls, client: Client) -> ToolClient:
        """A ToolClient over a connected SDK client, with the tools it lists."""
        return cls(client, {t.name: t for t in (await client.list_tools()).tools})

    async def raw(self, name: str, args: dict[str, Any] | None = None, **kw: Any) -> Any:
        return await self.client.call_tool(name, args or {}, **kw)

    async def ok(self, name: str, args: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
        result = await self.raw(name, args, **kw)
        assert not result.is_error, result.content[0].text
        data: dict[str, Any] = result.structured_content
        schema = self.tools[name].output_schema
        Draft202012Validator(schema).validate(data)
        assert_lean(name, data, args or {}, schema.get("required", ()))
        text_blocks = [c for c in result.content if c.type == "text"]
        if name != "browser_runtime_info":
            assert json.loads(text_blocks[-1].text) == data
        assert OPERATION_ID.fullmatch(data["operationId"])
        return data

    async def err(self, name: str, args: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
        result = await self.raw(name, args, **kw)
        assert result.is_error and result.structured_content is None
        assert len(result.content) == 1
        payload: dict[str, Any] = json.loads(result.content[0].text)
        assert payload["ok"] is False
        return payload["error"]

    async def session(self, **args: Any) -> tuple[str, str]:
        data = await self.ok("browser_session_create", args)
        return data["session"]["sessionId"], data["initialPage"]["pageId"]


@asynccontextmanager
async def tool_client(runtime: Runtime, **client_options: Any) -> AsyncIterator[ToolClient]:
    """An in-memory MCP client of a server over `runtime` (`mode=`, `message_handler=`...)."""
    async with Client(create_server(runtime), **client_options) as c:
        yield await ToolClient.of(c)


@asynccontextmanager
async def real_runtime(
    tmp_path: Path, log: EventLog | None = None, **overrides: Any
) -> AsyncIterator[Runtime]:
    """A real-Chromium runtime with `real_config(tmp_path, **overrides)`, shut down after."""
    rt = create_runtime(real_config(tmp_path, **overrides), log)
    try:
        yield rt
    finally:
        await rt.shutdown()


@pytest.fixture
async def client(runtime: Runtime) -> AsyncIterator[ToolClient]:
    """One client in the default era (the two-era `mcp_client` doubles a test's cost)."""
    async with tool_client(runtime) as c:
        yield c


async def open_page(c: ToolClient, url: str) -> dict[str, str]:
    """A new session's first page, navigated to `url`: its address."""
    s, p = await c.session()
    addr = {"sessionId": s, "pageId": p}
    await c.ok("browser_navigate", {**addr, "url": url})
    return addr


async def whoami(tc: ToolClient, site: FixtureSite, sid: str, pid: str, value: str | None) -> str:
    """What the fixture site's `/whoami` says a session stored (its title), after storing
    `value` first when one is given: isolation checks across sessions and backends."""
    addr = {"sessionId": sid, "pageId": pid}
    if value is not None:
        await tc.ok("browser_navigate", {**addr, "url": site.url(f"/?value={value}")})
    await tc.ok("browser_navigate", {**addr, "url": site.url("/whoami")})
    title: str = (await tc.ok("browser_get_title", addr))["title"]
    return title


@pytest.fixture(params=ERAS)
async def mcp_client(request: pytest.FixtureRequest, runtime: Runtime) -> AsyncIterator[ToolClient]:
    async with tool_client(runtime, mode=request.param) as c:
        yield c


def stdio_server(data_root: Path, *args: str, **env: str) -> StdioServerParameters:
    """`python -m browsermesh [args]` for the SDK's stdio client: headless, log level warn, its
    data below `data_root`, this checkout's code; `env` adds variables or overrides these."""
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "browsermesh", *args],
        env={
            "BROWSERMESH_HEADLESS": "true",
            "BROWSERMESH_DATA_DIR": str(data_root / "data"),
            "BROWSERMESH_LOG_LEVEL": "warn",
            **CHECKOUT_ENV,
            **env,
        },
    )


def spawn_stdio_server(
    tmp_path: Path, marker: str, extra_env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """A headless `python -m browsermesh` stdio server with pipes; its environment carries
    `marker` (BM_TEST_MARKER), so `chromium_pids_with_marker` finds the Chromium it launches."""
    env = {
        **os.environ,
        "BROWSERMESH_HEADLESS": "true",
        "BM_TEST_MARKER": marker,
        "BROWSERMESH_DATA_DIR": str(tmp_path / "d"),
        "BROWSERMESH_LOG_LEVEL": "info",
        **(extra_env or {}),
    }
    return subprocess.Popen(
        [sys.executable, "-m", "browsermesh"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )


def chromium_pids_with_marker(marker: str) -> list[int]:
    """Processes whose environment carries `marker` (Chromium inherits the server's env)."""
    found = []
    needle = marker.encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as fh:
                env = fh.read()
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                cmd = fh.read()
        except OSError:
            continue
        if needle in env and b"chrom" in cmd.lower():
            found.append(int(entry))
    return found


def assert_clean(data: Any, *secrets: str) -> None:
    """No secret in `data`'s JSON form, not even JSON-escaped (the redaction canaries)."""
    blob = json.dumps(data, ensure_ascii=False)
    for secret in secrets:
        assert secret not in blob
        assert json.dumps(secret)[1:-1] not in blob


def closed_port() -> int:
    """A loopback port with nothing listening (a real 'connection refused')."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
