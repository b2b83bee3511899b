"""Bounds on what one client can make the HTTP transport hold (issue 30 #10), through a real
uvicorn listener on loopback and the real MCP SDK client.

MCP sessions per principal: a principal at its limit gets HTTP 429 with a JSON-RPC error the
SDK client raises as `MCPError` (`data.code` LIMIT_EXCEEDED, a `nextStep`); other principals
are unaffected, and a closed session frees its place. Slow clients: a request head or body
sent too slowly is disconnected after its deadline, however it is spread. No browser is
started.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client

from browsermesh.transports.mcp_limits import LIMIT_RPC_CODE, NEXT_STEP
from tests.support.http_transport import TOKENS, http_server

pytestmark = pytest.mark.anyio

LIMIT = 3


@contextlib.asynccontextmanager
async def mcp_client(url: str, mode: str, token: str | None = None) -> AsyncIterator[Client]:
    """A connected SDK client (no tool listing: the session is all these tests need)."""
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=60))
    async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
        yield client


def mcp_error(exc: BaseException) -> MCPError:
    """The MCPError in what the client raised (it wraps a failed start in exception groups)."""
    while isinstance(exc, BaseExceptionGroup):
        exc = exc.exceptions[0]
    assert isinstance(exc, MCPError), repr(exc)
    return exc


def assert_limit_refusal(raised: BaseException) -> None:
    error = mcp_error(raised)
    assert error.error.code == LIMIT_RPC_CODE
    assert error.error.message == (
        f"Configured resource limit exceeded. Bound: mcpSessions <= {LIMIT} "
        "(BROWSERMESH_MAX_MCP_SESSIONS_PER_PRINCIPAL)."
    )
    assert error.error.data == {"code": "LIMIT_EXCEEDED", "nextStep": NEXT_STEP}


async def test_mcp_sessions_are_capped_per_principal(tmp_path: Path) -> None:
    async with http_server(tmp_path, tokens=True, max_mcp_sessions_per_principal=LIMIT) as srv:
        async with contextlib.AsyncExitStack() as held:
            alice = [
                await held.enter_async_context(mcp_client(srv.url, "legacy", TOKENS["alice"]))
                for _ in range(LIMIT)
            ]
            with pytest.raises(BaseException) as refused:
                async with mcp_client(srv.url, "legacy", TOKENS["alice"]):
                    pass
            assert_limit_refusal(refused.value)
            # The raw answer: 429, before the SDK (no session was made for it).
            async with httpx2.AsyncClient() as raw:
                answer = await raw.post(
                    srv.url,
                    json=_initialize(),
                    headers={
                        "Authorization": f"Bearer {TOKENS['alice']}",
                        "Accept": "application/json, text/event-stream",
                    },
                )
            assert answer.status_code == 429 and answer.json()["id"] is None
            assert "mcp-session-id" not in answer.headers
            # Bob is another principal: alice's sessions leave his room alone.
            async with mcp_client(srv.url, "legacy", TOKENS["bob"]) as bob:
                await bob.list_tools()
            # Alice's held sessions still work.
            for client in alice:
                await client.list_tools()
        refusals = [r for r in srv.records if r.get("type") == "http.mcp_session_refused"]
        assert [r["principal"] for r in refusals] == ["alice", "alice"]
        assert not any(token in str(srv.records) for token in TOKENS.values())
        # All closed (the SDK client sends DELETE): alice has her whole allowance again.
        async with contextlib.AsyncExitStack() as held:
            for _ in range(LIMIT):
                await held.enter_async_context(mcp_client(srv.url, "legacy", TOKENS["alice"]))


async def test_listen_streams_count_on_the_sessionless_leg(tmp_path: Path) -> None:
    """2026-07-28 keeps nothing between requests except `subscriptions/listen` streams."""
    async with (
        http_server(tmp_path, max_mcp_sessions_per_principal=LIMIT) as srv,
        mcp_client(srv.url, "2026-07-28") as client,
    ):
        async with contextlib.AsyncExitStack() as held:
            for _ in range(LIMIT):
                await held.enter_async_context(client.listen(resources_list_changed=True))
            with pytest.raises(BaseException) as refused:
                async with client.listen(resources_list_changed=True):
                    pass
            assert_limit_refusal(refused.value)
            await client.list_tools()  # ordinary requests are not counted
        async with client.listen(resources_list_changed=True):  # closed streams free it
            pass


def _initialize() -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    }


# ------------------------------------------------------------------------------------------
# Slow clients (slowloris): a request head or body sent too slowly is cut off
# ------------------------------------------------------------------------------------------

HEAD_S = 0.6
BODY_S = 0.8
DEADLINES = {"head_timeout_s": HEAD_S, "body_timeout_s": BODY_S}


async def _closed_by_server(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, trickle: bytes = b""
) -> float:
    """Seconds until the server closes the connection, sending one byte of `trickle` every
    0.1 s meanwhile (the pace of a slow client, not a wait for an event); fails after 10 s."""
    started = time.monotonic()
    with anyio.fail_after(10):
        for byte in trickle:
            try:
                writer.write(bytes([byte]))
                await writer.drain()
            except ConnectionError:
                break
            with anyio.move_on_after(0.1):
                if await reader.read(1) == b"":
                    break
        else:
            assert await reader.read() == b""
    writer.close()
    return time.monotonic() - started


async def test_a_trickled_request_head_is_cut_off(tmp_path: Path) -> None:
    async with http_server(tmp_path, service_options=DEADLINES) as srv:
        host = f"127.0.0.1:{srv.service.port}"
        # Nothing at all after connecting.
        reader, writer = await asyncio.open_connection("127.0.0.1", srv.service.port)
        assert await _closed_by_server(reader, writer) >= HEAD_S * 0.9
        # A head sent a byte at a time: each byte does not restart the deadline.
        reader, writer = await asyncio.open_connection("127.0.0.1", srv.service.port)
        head = f"POST /mcp HTTP/1.1\r\nHost: {host}\r\n".encode() + b"X-Slow: " + b"a" * 200
        elapsed = await _closed_by_server(reader, writer, head)
        assert HEAD_S * 0.9 <= elapsed < HEAD_S + 5
        cuts = [r["reason"] for r in srv.records if r.get("type") == "http.slow_client"]
        assert cuts == ["request head not received within 0.6 s"] * 2
        async with mcp_client(srv.url, "legacy") as client:  # the server serves on
            await client.list_tools()


async def test_a_trickled_request_body_is_cut_off(tmp_path: Path) -> None:
    async with http_server(tmp_path, service_options=DEADLINES) as srv:
        reader, writer = await asyncio.open_connection("127.0.0.1", srv.service.port)
        head = (
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{srv.service.port}\r\n"
            "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
            "Content-Length: 4000\r\n\r\n"
        )
        writer.write(head.encode())
        elapsed = await _closed_by_server(reader, writer, b"{" + b" " * 3000)
        assert BODY_S * 0.9 <= elapsed < BODY_S + 5
        cuts = [r["reason"] for r in srv.records if r.get("type") == "http.slow_client"]
        assert cuts == ["request body not received within 0.8 s"]
        # A request sent at once is not affected by the deadlines, nor is a slow answer.
        async with mcp_client(srv.url, "legacy") as client:
            await client.list_tools()
