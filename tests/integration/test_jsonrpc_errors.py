"""Malformed JSON-RPC gets a JSON-RPC error, on stdio and over HTTP (issue 12 #9).

JSON-RPC 2.0 §5.1: a message that is not valid JSON answers -32700 (id null); valid JSON that is
not a valid request answers -32600 with the request's id when it can be read (else null). The
replies are fixed texts: nothing of the offending message is echoed. The server keeps serving.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.stdio_peer import StdioPeer
from tests.support.http_transport import http_server
from tests.support.jsonrpc import INITIALIZE, INITIALIZE_PARAMS
from tests.support.servers import spawn_stdio_server

pytestmark = pytest.mark.anyio

REPLY_S = 15.0


def invalid(request_id: object) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "error": {"code": -32600, "message": "Invalid Request"},
    }


PARSE_ERROR = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}

# (line, reply): each malformed line and the one reply it must get
MALFORMED: list[tuple[str, dict[str, Any]]] = [
    ('{"jsonrpc":"1.0","id":2,"method":"tools/list"}', invalid(2)),
    ('{"jsonrpc":"2.0","id":3}', invalid(3)),
    ('{"jsonrpc":"2.0","id":"four","method":"tools/list","params":[1]}', invalid("four")),
    ('{"jsonrpc":"2.0","id":5,"method":"tools/list","params":"x"}', invalid(5)),
    ('{"id":6,"method":"tools/list"}', invalid(6)),
    ('{"jsonrpc":"2.0","id":7,"method":42}', invalid(7)),
    ('{"jsonrpc":"2.0","id":true,"method":"tools/list"}', invalid(None)),
    ('{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}', invalid(None)),
    ('{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}', invalid(None)),
    ('{"jsonrpc":"2.0","id":null,"method":"tools/list"}', invalid(None)),
    ('{"jsonrpc":"2.0","method":"notifications/initialized","params":[]}', invalid(None)),
    ("[]", invalid(None)),
    ('[{"jsonrpc":"2.0","id":8,"method":"ping"}]', invalid(None)),
    ('"just a string"', invalid(None)),
    ("{not json", PARSE_ERROR),
    ('{"jsonrpc":"2.0","id":9,"method":"tools/list"', PARSE_ERROR),
    ("[" * 100_000, PARSE_ERROR),
]


def call(peer: StdioPeer, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """A request whose reply must be the very next message."""
    rid = peer.send_request(method, params)
    reply = peer.next_message(REPLY_S)
    assert reply.get("id") == rid, reply
    return reply


@contextmanager
def stdio_peer(tmp_path: Path) -> Iterator[StdioPeer]:
    proc = spawn_stdio_server(tmp_path, f"bm-{uuid.uuid4()}", {"BROWSERMESH_LOG_LEVEL": "warn"})
    try:
        yield StdioPeer(proc)
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            proc.wait(timeout=20)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def test_stdio_answers_malformed_requests_and_keeps_serving(tmp_path: Path) -> None:
    with stdio_peer(tmp_path) as peer:
        # before any request: the answer does not depend on a handshake
        peer.send("{not json")
        assert peer.next_message(REPLY_S) == PARSE_ERROR
        assert "result" in call(peer, "initialize", INITIALIZE_PARAMS)
        peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        for line, expected in MALFORMED:
            peer.send(line)
            assert peer.next_message(REPLY_S) == expected, line[:80]
        # nothing of the offending message comes back
        peer.send('{"jsonrpc":"1.0","id":10,"method":"SECRET-d41d8cd9"}')
        assert peer.next_message(REPLY_S) == invalid(10)
        # a blank line and a malformed response (a client answering us) get no reply at all
        peer.send("")
        peer.send('{"jsonrpc":"2.0","id":11,"result":5}')
        assert call(peer, "ping")["result"] == {}
        tools = call(peer, "tools/list")["result"]["tools"]
        assert any(t["name"] == "browser_runtime_info" for t in tools)
        info = call(peer, "tools/call", {"name": "browser_runtime_info", "arguments": {}})
        assert info["result"]["structuredContent"]["browserProduct"] == "chromium"


async def test_http_answers_malformed_requests_with_json_rpc_errors(tmp_path: Path) -> None:
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    async with http_server(tmp_path) as srv, httpx2.AsyncClient() as http:
        opened = await http.post(srv.url, json=INITIALIZE, headers=headers)
        session = {**headers, "mcp-session-id": opened.headers["mcp-session-id"]}
        for with_session in (session, headers):
            for line, expected in [
                *MALFORMED,
                ('{"jsonrpc":"1.0","id":10,"method":"SECRET-d41d8cd9"}', invalid(10)),
                ("", PARSE_ERROR),
                ('{"jsonrpc":"2.0","id":11,"result":5}', invalid(11)),
            ]:
                response = await http.post(srv.url, content=line.encode(), headers=with_session)
                assert response.status_code == 400, line[:80]
                assert response.json() == expected, line[:80]
        listed = await http.post(
            srv.url,
            json={"jsonrpc": "2.0", "id": 20, "method": "tools/list"},
            headers={**session, "mcp-protocol-version": "2025-11-25"},
        )
        assert listed.status_code == 200 and "browser_runtime_info" in listed.text
