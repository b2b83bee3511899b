"""A fleet on loopback for issue 37's tests: `running_cluster(tmp_path)` starts a real
redis-server, N `python -m browsermesh --transport http --fleet-redis ...` replica processes of
this checkout and a round-robin balancer (tests/support/balancer.py) in front of them.

Each replica logs JSON lines on stderr (`Replica.records()`); Chromium starts only at a
replica's first session, so a replica is listening within seconds. The balancer runs in the
test's event loop: what waits on a process here (`Replica.sigterm`, `sigkill`) waits in a
thread, and tests must do the same.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import sys
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import anyio.to_thread

from tests.support.balancer import RoundRobinBalancer, running_balancer
from tests.support.http_process import HttpServerProcess
from tests.support.http_transport import write_token_file
from tests.support.redis_server import RedisServer, running_redis

ROOT = Path(__file__).resolve().parents[2]
LISTEN_WITHIN_S = 90.0
"""Bounds a replica's start (to its `http.listening` line): a few seconds alone, far more with
three starting at once on a loaded 2-core machine."""
STOP_WITHIN_S = 30.0
"""Bounds a replica's exit after SIGTERM (its drain and the runtime's grace come first)."""
FLEET_TOKEN_CHARS = 48
_ANY_LOOPBACK = ("--allowed-hosts", "127.0.0.1:*", "--allowed-origins", "http://127.0.0.1:*")


class Replica:
    """One replica process: `replica_id` (r1, r2...), its own endpoint once it listens (`url`,
    `base`) and its stderr log (`records()`)."""

    def __init__(self, replica_id: str, process: HttpServerProcess) -> None:
        self.replica_id = replica_id
        self.process = process
        self.url = ""
        """The replica's own MCP URL, ``http://127.0.0.1:<port>/mcp`` (set once it listens)."""

    @property
    def base(self) -> str:
        """``http://127.0.0.1:<port>``: where the balancer and other replicas reach it."""
        parts = urlsplit(self.url)
        return f"{parts.scheme}://{parts.netloc}"

    @property
    def running(self) -> bool:
        """The process has not exited."""
        return self.process.proc.poll() is None

    def records(self) -> list[dict[str, Any]]:
        """Its JSON log lines so far, parsed (other stderr lines are left out)."""
        found: list[dict[str, Any]] = []
        for line in list(self.process.lines):
            if line.startswith("{"):
                try:
                    found.append(json.loads(line))
                except json.JSONDecodeError:
                    continue  # not one of its log records
        return found

    async def sigterm(self, within: float = STOP_WITHIN_S) -> int:
        """SIGTERM (a graceful stop: drain, tombstones), then its exit code; killed and failed
        when it has not exited `within` seconds."""
        if self.running:
            self.process.proc.send_signal(signal.SIGTERM)
        return await anyio.to_thread.run_sync(self.process.wait_exit, within)

    async def sigkill(self, within: float = STOP_WITHIN_S) -> int:
        """SIGKILL (a lost replica: no drain, its lease left to expire), then its exit code."""
        if self.running:
            self.process.proc.kill()
        return await anyio.to_thread.run_sync(self.process.wait_exit, within)

    def __repr__(self) -> str:
        return f"Replica({self.replica_id!r}, {self.url!r}, running={self.running})"


@dataclass
class FleetCluster:
    """A running fleet: its Redis, its replicas, the balancer in front and the shared secrets."""

    redis: RedisServer
    replicas: list[Replica]
    balancer: RoundRobinBalancer
    fleet_token: str
    fleet_token_file: Path
    auth_token_file: Path | None
    started_in_s: float
    """From the first replica spawned to the last one listening."""
    path: str = "/mcp"
    """The replicas' MCP path (the balancer passes paths through unchanged)."""

    @property
    def url(self) -> str:
        """The balancer's MCP URL: where a client of the fleet connects."""
        return self.balancer.url(self.path)

    def replica(self, replica_id: str) -> Replica:
        """The replica named `replica_id`."""
        for member in self.replicas:
            if member.replica_id == replica_id:
                return member
        raise KeyError(replica_id)

    def by_base(self, base: str) -> Replica:
        """The replica behind the balancer upstream `base` (keys of `balancer.hits`)."""
        for member in self.replicas:
            if member.base == base.rstrip("/"):
                return member
        raise KeyError(base)


def write_fleet_token(tmp_path: Path) -> tuple[str, Path]:
    """A random fleet token in `tmp_path/"fleet-token"`, created mode 0600 (never readable by
    others, even for a moment): the token and the file."""
    token = secrets.token_urlsafe(FLEET_TOKEN_CHARS)[:FLEET_TOKEN_CHARS]
    path = tmp_path / "fleet-token"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(token + "\n")
    return token, path


def replica_command(
    replica_id: str,
    redis_url: str,
    *,
    auth_token_file: Path | None,
    fleet_token_file: Path | None,
    extra_args: Sequence[str] = (),
    view: bool = False,
) -> list[str]:
    """The command line of one replica of this checkout (`view`: with the live view, §30;
    without it by default)."""
    cmd = [sys.executable, "-m", "browsermesh", "--transport", "http"]
    cmd += ["--host", "127.0.0.1", "--port", "0", "--headless"]
    if not view:
        cmd.append("--no-view")
    cmd += ["--fleet-redis", redis_url, "--replica-id", replica_id]
    if auth_token_file is not None:
        cmd += ["--auth-token-file", str(auth_token_file)]
    if fleet_token_file is not None:
        cmd += ["--fleet-token-file", str(fleet_token_file)]
    return [*cmd, *extra_args]


def replica_env(data_dir: Path, lease_ms: int, extra: Mapping[str, str] | None) -> dict[str, str]:
    """The test's environment without its BROWSERMESH_* variables (a developer's settings must
    not leak in), running this checkout's code, with the replica's data directory and lease."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BROWSERMESH_")}
    inherited = env.get("PYTHONPATH")
    src = str(ROOT / "src")
    env["PYTHONPATH"] = src if not inherited else f"{src}{os.pathsep}{inherited}"
    env["BROWSERMESH_DATA_DIR"] = str(data_dir)
    env["BROWSERMESH_FLEET_LEASE_MS"] = str(lease_ms)
    return {**env, **(extra or {})}


async def _wait_listening(members: Sequence[Replica]) -> None:
    """Wait for every replica's `http.listening` at once (each in a thread: the wait blocks);
    raise the first failure once all waits have ended."""
    failures: list[AssertionError] = []

    async def wait(member: Replica) -> None:
        try:
            member.url = await anyio.to_thread.run_sync(
                member.process.wait_listening, LISTEN_WITHIN_S
            )
        except AssertionError as exc:
            failures.append(AssertionError(f"replica {member.replica_id}: {exc}"))

    async with anyio.create_task_group() as group:
        for member in members:
            group.start_soon(wait, member)
    if failures:
        raise failures[0]


async def _stop_all(members: Sequence[Replica]) -> list[str]:
    """SIGTERM every replica still running and wait for all at once (a stuck one is killed);
    what went wrong, one entry per stuck replica."""
    problems: list[str] = []

    async def stop(member: Replica) -> None:
        try:
            await member.sigterm()
        except AssertionError as exc:
            problems.append(f"replica {member.replica_id}: {exc}")

    async with anyio.create_task_group() as group:
        for member in members:
            if member.running:
                group.start_soon(stop, member)
    return problems


@asynccontextmanager
async def running_cluster(
    tmp_path: Path,
    replicas: int = 3,
    *,
    lease_ms: int = 3000,
    auth_tokens: bool = True,
    forwarding: bool = True,
    view: bool = False,
    keep_host: bool = False,
    extra_args: Sequence[str] = (),
    extra_env: Mapping[str, str] | None = None,
) -> AsyncIterator[FleetCluster]:
    """Redis, `replicas` replica processes (r1..rN, data in `tmp_path/"r<i>"`) and a balancer
    over them, running until the block ends.

    `auth_tokens`: the replicas take alice's and bob's bearer tokens (tests.support.
    http_transport.TOKENS); `forwarding`: they get the fleet token file (`--fleet-token-file`);
    `view`: they serve the live view (`/view`, §30; off by default, `--no-view`);
    `keep_host`: the balancer passes the client's ``Host`` on, as the README's nginx does, and
    the replicas accept any loopback ``Host`` and ``Origin`` (`--allowed-hosts`,
    `--allowed-origins`), so a browser can use the view through the balancer;
    `extra_args`/`extra_env`: more flags and variables for every replica. At the end every
    replica still running gets SIGTERM (all at once), then the balancer and Redis stop; a
    replica that had to be killed fails the block (unless the block itself failed)."""
    async with running_redis(tmp_path) as redis:
        fleet_token, fleet_token_file = write_fleet_token(tmp_path)
        auth_file = write_token_file(tmp_path) if auth_tokens else None
        began = time.monotonic()
        members: list[Replica] = []
        stuck: list[str] = []
        try:
            for index in range(1, replicas + 1):
                replica_id = f"r{index}"
                cmd = replica_command(
                    replica_id,
                    redis.url,
                    auth_token_file=auth_file,
                    fleet_token_file=fleet_token_file if forwarding else None,
                    extra_args=[*(_ANY_LOOPBACK if keep_host else ()), *extra_args],
                    view=view,
                )
                env = replica_env(tmp_path / replica_id, lease_ms, extra_env)
                members.append(Replica(replica_id, HttpServerProcess(cmd, env, ROOT)))
            await _wait_listening(members)
            started_in_s = time.monotonic() - began
            paths = {urlsplit(m.url).path for m in members}
            assert len(paths) == 1, f"the replicas serve MCP on different paths: {paths}"
            bases = [m.base for m in members]
            async with running_balancer(bases, keep_host=keep_host) as balancer:
                try:
                    yield FleetCluster(
                        redis=redis,
                        replicas=members,
                        balancer=balancer,
                        fleet_token=fleet_token,
                        fleet_token_file=fleet_token_file,
                        auth_token_file=auth_file,
                        started_in_s=started_in_s,
                        path=paths.pop(),
                    )
                finally:
                    # Before the balancer stops: a replica draining may still answer through it.
                    stuck += await _stop_all(members)
        finally:
            stuck += await _stop_all(members)  # after a failed start: those that did start
    if stuck:
        raise AssertionError("replicas did not stop on SIGTERM:\n" + "\n\n".join(stuck))
