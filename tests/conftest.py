"""Shared fixtures: the loopback sites, a real-Chromium runtime, MCP clients in both eras.

Fixtures only; the helpers they use (and tests import) live in tests/support/."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from browsermesh.factory import create_runtime
from browsermesh.log import EventLog
from browsermesh.runtime.runtime import Runtime
from tests.fixtures.apps import AdminApp, DatasetteApp, start_datasette, start_django_admin
from tests.fixtures.files_site import FilesSite
from tests.fixtures.site import FixtureSite
from tests.support.cdp import detached_chromium
from tests.support.clients import ERAS, ToolClient, tool_client
from tests.support.examples import FEW
from tests.support.runtimes import real_config

pytest_plugins = ["tests.support.chromium_guard", "tests.support.long_first", "pytester"]
"""Marks every test that uses Chromium `chromium`, and fails an unmarked one that does."""

if FEW:  # BM_TEST_FEW_EXAMPLES=1 (tests/support/examples.py): a tenth of the default too
    settings.register_profile("few", max_examples=10)
    settings.load_profile("few")


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


@pytest.fixture
def log_records() -> list[dict[str, Any]]:
    return []


SHARED_BROWSER = os.environ.get("BM_TEST_SHARED_BROWSER") == "1"
"""Issue 18 prototype, opt-in: the `runtime` fixture attaches over CDP to one Chromium for the
whole session (a fresh context per session as always) instead of launching its own. Tests
marked `own_browser` (they check the launch, the binary or a browser crash) still launch."""


@pytest.fixture(scope="session")
def shared_cdp_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str | None]:
    """With BM_TEST_SHARED_BROWSER=1: the endpoint of one Chromium for the session
    (`detached_chromium`, killed at the end); otherwise None."""
    if not SHARED_BROWSER:
        yield None
        return
    with detached_chromium(tmp_path_factory.mktemp("shared-chromium")) as endpoint:
        yield endpoint


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


@pytest.fixture
async def client(runtime: Runtime) -> AsyncIterator[ToolClient]:
    """One client in the default era (the two-era `mcp_client` doubles a test's cost)."""
    async with tool_client(runtime) as c:
        yield c


@pytest.fixture(params=ERAS)
async def mcp_client(request: pytest.FixtureRequest, runtime: Runtime) -> AsyncIterator[ToolClient]:
    async with tool_client(runtime, mode=request.param) as c:
        yield c
