"""The fleet's test harness (issue 37): the round-robin balancer against small in-test upstreams
(turns per request, headers, streaming, skipping an upstream that is down, 502), and three real
replica processes behind it sharing one Redis (tests/support/fleet_cluster.py).
"""

from __future__ import annotations

import asyncio
import json
import stat
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

import anyio
import httpx2
import pytest
from starlette.types import Receive, Scope, Send

from tests.support.balancer import RoundRobinBalancer, running_balancer, serving
from tests.support.fleet_cluster import replica_command, running_cluster, write_fleet_token
from tests.support.http_transport import TOKENS, connect
from tests.support.ports import closed_port

pytestmark = pytest.mark.anyio

PIECES = [b"piece-1\n", b"piece-2\n"]
LAST = b"last\n"


class Upstream:
    """A tiny ASGI upstream named `name`: `/stream` sends `PIECES`, then `LAST` only once
    `release` is set; any other path answers JSON saying who answered and what it received."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.release = anyio.Event()
        self.finished = False
        self.base = ""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        assert scope["type"] == "http"
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body", False):
                break
        if scope["path"] == "/stream":
            await self._stream(send)
            return
        answer = {
            "name": self.name,
            "method": scope["method"],
            "path": scope["path"],
            "raw_path": scope["raw_path"].decode(),
            "query": scope["query_string"].decode(),
            "body": body.decode(),
            "headers": [[k.decode(), v.decode()] for k, v in scope["headers"]],
        }
        data = json.dumps(answer).encode()
        headers = [(b"content-type", b"application/json"), (b"x-upstream", self.name.encode())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": data})

    async def _stream(self, send: Send) -> None:
        headers = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        for piece in PIECES:
            await send({"type": "http.response.body", "body": piece, "more_body": True})
        await self.release.wait()  # the test sets it only after reading the pieces
        await send({"type": "http.response.body", "body": LAST, "more_body": False})
        self.finished = True


@asynccontextmanager
async def upstreams(*names: str) -> AsyncIterator[list[Upstream]]:
    """Upstreams named `names`, each served on its own port."""
    async with AsyncExitStack() as stack:
        found = []
        for name in names:
            app = Upstream(name)
            app.base = f"http://127.0.0.1:{await stack.enter_async_context(serving(app))}"
            found.append(app)
        yield found


def client() -> httpx2.AsyncClient:
    """A test client of the balancer: one keep-alive connection is reused across requests."""
    return httpx2.AsyncClient(timeout=httpx2.Timeout(30), trust_env=False)


def header(answer: dict[str, object], name: str) -> list[str]:
    pairs = answer["headers"]
    assert isinstance(pairs, list)
    return [value for key, value in pairs if key == name]


async def test_each_request_goes_to_the_next_upstream() -> None:
    async with upstreams("a", "b") as (a, b), running_balancer([a.base, b.base]) as lb:
        async with client() as http:
            names = [(await http.get(lb.url("/who"))).json()["name"] for _ in range(4)]
            assert names == ["a", "b", "a", "b"]  # one connection, yet every request rotates
            assert lb.hits == {a.base: 2, b.base: 2}
            lb.remove(b.base)
            assert [(await http.get(lb.url("/who"))).json()["name"] for _ in range(2)] == ["a"] * 2
            lb.add(b.base)
            back = {(await http.get(lb.url("/who"))).json()["name"] for _ in range(2)}
            assert back == {"a", "b"}
        assert lb.hits == {a.base: 5, b.base: 3}
        assert [hop.upstream for hop in lb.hops][:4] == [a.base, b.base] * 2


async def test_request_passes_through_with_the_proxy_headers() -> None:
    async with upstreams("a") as (a,), running_balancer([a.base]) as lb, client() as http:
        response = await http.post(
            lb.url("/echo/x%2Fy?q=1&r=%20"),
            content=b'{"hello": 1}',
            headers={
                "Content-Type": "application/json",
                "Authorization": "Bearer t",
                "Connection": "keep-alive, X-Hop",
                "X-Hop": "not for the upstream",
                "X-Forwarded-For": "10.1.2.3",
            },
        )
        assert response.status_code == 200
        assert response.headers["x-upstream"] == "a"
        answer = response.json()
        assert answer["method"] == "POST" and answer["body"] == '{"hello": 1}'
        assert answer["raw_path"] == "/echo/x%2Fy" and answer["query"] == "q=1&r=%20"
        # nginx's `proxy_set_header Host $proxy_host`: the upstream's own authority, which a
        # replica's Host allowlist (derived from its bound port) accepts; the balancer's would not.
        assert header(answer, "host") == [a.base.removeprefix("http://")]
        assert header(answer, "x-forwarded-for") == ["10.1.2.3, 127.0.0.1"]
        assert header(answer, "authorization") == ["Bearer t"]
        assert header(answer, "x-hop") == [] and header(answer, "connection") == []
        assert header(answer, "content-length") == ["12"]


async def test_a_response_is_streamed_as_it_arrives() -> None:
    async with upstreams("a") as (a,), running_balancer([a.base]) as lb, client() as http:
        with anyio.fail_after(30):  # a buffering proxy would hang here: the last piece waits
            async with http.stream("GET", lb.url("/stream")) as response:
                assert response.headers["content-type"] == "text/event-stream"
                chunks = response.aiter_raw()
                received = b""
                while received != b"".join(PIECES):
                    received += await anext(chunks)
                # Both pieces came through while the upstream still holds its last one back.
                assert not a.finished
                a.release.set()
                rest = b"".join([chunk async for chunk in chunks])
        assert rest == LAST and a.finished


async def test_an_upstream_that_is_down_is_skipped() -> None:
    down = f"http://127.0.0.1:{closed_port()}"
    async with upstreams("a") as (a,), running_balancer([down, a.base]) as lb, client() as http:
        for _ in range(4):
            response = await http.post(lb.url("/who"), content=b"{}")
            assert response.status_code == 200 and response.json()["name"] == "a"
        assert lb.hits == {down: 0, a.base: 4}
        assert lb.refused[down] == 2  # tried in its turn only: once per request starting there


async def test_all_upstreams_down_is_a_502() -> None:
    downs = [f"http://127.0.0.1:{closed_port()}" for _ in range(2)]
    async with running_balancer(downs) as lb, client() as http:
        for _ in range(2):
            assert (await http.get(lb.url("/who"))).status_code == 502
        assert lb.refused == {downs[0]: 2, downs[1]: 2}  # each tried once per request
        assert lb.hits == {downs[0]: 0, downs[1]: 0}
    async with running_balancer([]) as empty, client() as http:
        assert (await http.get(empty.url("/who"))).status_code == 502


async def test_a_post_is_not_sent_again_once_an_upstream_took_it() -> None:
    """An upstream that accepts the connection and closes it without answering: the request may
    have run there, so a POST gets 502 (like nginx, never a second run); a GET goes on."""
    taken: list[int] = []

    async def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        taken.append(1)
        writer.close()

    rude = await asyncio.start_server(hang_up, "127.0.0.1", 0)
    rude_base = f"http://127.0.0.1:{rude.sockets[0].getsockname()[1]}"
    try:
        async with upstreams("a") as (a,), running_balancer([rude_base, a.base]) as lb:
            async with client() as http:
                assert (await http.post(lb.url("/who"), content=b"{}")).status_code == 502
                assert (await http.post(lb.url("/who"), content=b"{}")).json()["name"] == "a"
                assert (await http.get(lb.url("/who"))).json()["name"] == "a"
            assert len(taken) == 2 and lb.refused[rude_base] == 2
    finally:
        rude.close()
        await rude.wait_closed()


def _answered(lb: RoundRobinBalancer) -> dict[str, int]:
    return {base: n for base, n in lb.hits.items() if n}


async def test_three_replicas_answer_in_turn(tmp_path: Path) -> None:
    async with running_cluster(tmp_path, replicas=3, forwarding=False) as cluster:
        args = cluster.replicas[0].process.proc.args
        assert isinstance(args, list) and "--fleet-token-file" not in args
        async with connect(cluster.url, "auto", TOKENS["alice"]) as c:
            before = len(cluster.balancer.hops)
            infos = [await c.ok("browser_runtime_info") for _ in range(3)]
            calls = cluster.balancer.hops[before:]
        answered = [info["fleet"]["replicaId"] for info in infos]
        assert sorted(answered) == ["r1", "r2", "r3"], answered
        # Sessionless: one POST per call, each to the next replica in turn.
        assert [cluster.by_base(hop.upstream).replica_id for hop in calls] == answered
        assert all(hop.method == "POST" and hop.status == 200 for hop in calls)
        assert set(_answered(cluster.balancer)) == {r.base for r in cluster.replicas}
        assert sum(cluster.balancer.hits.values()) == len(cluster.balancer.hops)
        assert all(info["fleet"]["directory"] == "connected" for info in infos)
        for replica in cluster.replicas:
            assert replica.url == f"{replica.base}/mcp" and replica.running


def test_the_replica_command_carries_the_fleet_token_file(tmp_path: Path) -> None:
    """With forwarding (the default) each replica gets `--fleet-token-file`: a 48-character
    token in a file only its owner can read."""
    token, path = write_fleet_token(tmp_path)
    assert len(token) == 48 and token.isascii() and " " not in token
    assert path.read_text() == token + "\n" and stat.S_IMODE(path.stat().st_mode) == 0o600
    cmd = replica_command(
        "r2", "redis://127.0.0.1:1/0", auth_token_file=None, fleet_token_file=path
    )
    assert cmd[cmd.index("--fleet-token-file") + 1] == str(path)
    assert cmd[cmd.index("--replica-id") + 1] == "r2" and "--auth-token-file" not in cmd
