"""A real `redis-server` on a free loopback port for the fleet directory's tests (issue 37).

`scripts/setup.sh` installs it when `BROWSERMESH_FLEET=1` (scripts/test.sh sets it), so a
missing binary fails the tests rather than skipping them. Nothing is saved to disk (`--save ''
--appendonly no`): a restarted server starts empty, like a Redis that lost its data.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from tests.support.eventually import eventually
from tests.support.ports import closed_port

START_WITHIN_S = 15.0


def redis_binary() -> str:
    """The `redis-server` executable (a failure, not a skip, when it is missing)."""
    found = shutil.which("redis-server") or (
        "/usr/bin/redis-server" if Path("/usr/bin/redis-server").exists() else None
    )
    assert found, "redis-server is missing: run BROWSERMESH_FLEET=1 bash scripts/setup.sh"
    return found


class RedisServer:
    """One redis-server process; `stop` and `start` again keep its port (an outage)."""

    def __init__(self, directory: Path, password: str | None = None) -> None:
        self.port = closed_port()
        self.directory = directory
        self.password = password
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """The URL a replica connects with (its password in the userinfo)."""
        auth = f":{self.password}@" if self.password else ""
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    def _answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                hello = f"AUTH {self.password}\r\nPING\r\n" if self.password else "PING\r\n"
                sock.sendall(hello.encode())
                return b"PONG" in sock.recv(256)
        except OSError:
            return False

    async def start(self) -> None:
        """Start the server and return once it answers PING."""
        args = [
            redis_binary(),
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(self.directory),
        ]
        if self.password:
            args += ["--requirepass", self.password]
        # Popen returns at once (the child starts on its own); the wait is the PING below.
        self._process = subprocess.Popen(  # noqa: ASYNC220
            args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        await eventually(self._answers, START_WITHIN_S, "redis-server answers PING")

    def stop(self) -> None:
        """Stop the server and wait until its process has ended."""
        process, self._process = self._process, None
        if process is not None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@asynccontextmanager
async def running_redis(directory: Path, password: str | None = None) -> AsyncIterator[RedisServer]:
    """A started `RedisServer`, stopped after."""
    server = RedisServer(directory, password)
    await server.start()
    try:
        yield server
    finally:
        server.stop()


async def dump(client: Any) -> list[tuple[str, Any]]:
    """Every key with its value, whatever its type."""
    found: list[tuple[str, Any]] = []
    async for key in client.scan_iter(match="*", count=500):
        kind = await client.type(key)
        if kind == "string":
            value: Any = await client.get(key)
        elif kind == "set":
            value = sorted(await client.smembers(key))
        elif kind == "hash":
            value = await client.hgetall(key)
        elif kind == "list":
            value = await client.lrange(key, 0, -1)
        elif kind == "zset":
            value = await client.zrange(key, 0, -1, withscores=True)
        else:
            value = kind
        found.append((key, value))
    return found
