"""The Streamable HTTP transport for tests: a real runtime served in this process, and MCP
clients that connect to it (tests/integration/test_http.py and the suites that need HTTP)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from browsermesh.config import parse_auth_token_file
from browsermesh.factory import create_runtime
from browsermesh.log import EventLog
from browsermesh.mcp.instructions import instructions_for
from browsermesh.mcp.server import create_server
from browsermesh.runtime.runtime import Runtime
from browsermesh.transports.http import HttpService
from tests.support.clients import ToolClient
from tests.support.runtimes import real_config

TOKENS = {"alice": "alice-token-0123456789abcdef", "bob": "bob-token-fedcba9876543210"}
"""The principals of `http_server(tokens=True)` and their bearer tokens."""


def write_token_file(tmp_path: Path, mode: int = 0o600) -> Path:
    path = tmp_path / "tokens.txt"
    path.write_text(
        "# principals\n" + "".join(f"{name}:{token}\n" for name, token in TOKENS.items())
    )
    path.chmod(mode)
    return path


@dataclass
class Running:
    service: HttpService
    runtime: Runtime
    records: list[dict[str, Any]]

    @property
    def url(self) -> str:
        return self.service.url


@asynccontextmanager
async def http_server(
    tmp_path: Path,
    *,
    tokens: bool = False,
    service_options: dict[str, Any] | None = None,
    **overrides: Any,
) -> AsyncIterator[Running]:
    """The HTTP transport on a real runtime, served by uvicorn in this process (`overrides`:
    configuration fields; `service_options`: `HttpService` keywords, e.g. its deadlines)."""
    if tokens:
        path = write_token_file(tmp_path)
        pairs, problems = parse_auth_token_file(path)
        assert not problems
        overrides.update(auth_token_file=path, auth_tokens=pairs)
    config = real_config(tmp_path, transport="http", http_port=0, **overrides)
    records: list[dict[str, Any]] = []
    log = EventLog("silent")
    log.sinks.append(records.append)
    runtime = create_runtime(config, log)
    server = create_server(runtime, instructions=instructions_for(config))
    service = HttpService(config, runtime, server, log, **(service_options or {}))
    service.bind()
    task = asyncio.get_running_loop().create_task(service.serve())
    try:
        with anyio.fail_after(10):
            await service.wait_ready()
        yield Running(service, runtime, records)
    finally:
        service.stop()
        with anyio.fail_after(10):
            await task
        await runtime.shutdown()


@asynccontextmanager
async def connect(
    url: str, mode: str, token: str | None = None, **client_options: Any
) -> AsyncIterator[ToolClient]:
    """An MCP client over Streamable HTTP (`token`: its bearer token; `client_options`: the
    SDK client's, e.g. `message_handler`)."""
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    # The SDK does not close a client it was given: this block does.
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=60)) as http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, mode=mode, **client_options) as client:
            yield await ToolClient.of(client)
