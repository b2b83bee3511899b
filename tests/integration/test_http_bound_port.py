"""`--port 0`: the derived Host/Origin allowlists use the port actually bound (issue 12 #14)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.support.http_transport import http_server
from tests.support.jsonrpc import INITIALIZE
from tests.support.ports import closed_port

pytestmark = pytest.mark.anyio

ACCEPT = {"Accept": "application/json, text/event-stream"}


async def status(http: httpx2.AsyncClient, url: str, **headers: str) -> int:
    response = await http.post(url, json=INITIALIZE, headers={**ACCEPT, **headers})
    return int(response.status_code)


def other_port(port: int) -> int:
    other = closed_port()
    return other if other != port else other + 1


async def test_port_zero_allows_only_the_bound_port(tmp_path: Path) -> None:
    async with http_server(tmp_path) as srv, httpx2.AsyncClient() as http:
        port = srv.service.port
        wrong = other_port(port)
        for host in ("127.0.0.1", "localhost", "[::1]"):
            assert await status(http, srv.url, Host=f"{host}:{wrong}") == 421, host
            assert await status(http, srv.url, Host=f"{host}:{port}") == 200, host
        assert await status(http, srv.url, Origin=f"http://127.0.0.1:{wrong}") == 403
        assert await status(http, srv.url, Origin=f"http://localhost:{wrong}") == 403
        assert await status(http, srv.url, Origin=f"http://localhost:{port}") == 200
        assert await status(http, srv.url, Origin=f"http://[::1]:{port}") == 200


@pytest.mark.parametrize(
    "lists",
    [
        {"allowed_hosts": ("127.0.0.1:*",)},
        {"allowed_origins": ("http://127.0.0.1:*",)},
    ],
)
async def test_explicit_any_port_entries_are_kept(tmp_path: Path, lists: dict[str, Any]) -> None:
    async with http_server(tmp_path, **lists) as srv, httpx2.AsyncClient() as http:
        wrong = other_port(srv.service.port)
        if "allowed_hosts" in lists:
            assert await status(http, srv.url, Host=f"127.0.0.1:{wrong}") == 200
            assert await status(http, srv.url, Host=f"localhost:{srv.service.port}") == 421
        else:
            assert await status(http, srv.url, Origin=f"http://127.0.0.1:{wrong}") == 200
            # the host list is still the derived one, narrowed to the bound port
            assert await status(http, srv.url, Host=f"127.0.0.1:{wrong}") == 421
