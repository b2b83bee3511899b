"""A real Selenium Grid 4 on loopback for the tests and the benchmark (issue 22): one hub and
a few nodes, each with a small slot count, driving Debian's chromedriver and Chromium.

`scripts/grid.sh` installs Java, chromedriver and the Grid jar (idempotent, quick when present);
`start_grid` runs it and starts the processes, each leading its own process group (killed by
group id in `stop`), and waits for the hub's `/status` to report every node up.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from tests.support.eventually import eventually

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM_ARGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
)
# Small heaps and the quick JIT: three JVMs share two cores with the browsers.
JAVA_FLAGS = ("-Xmx160m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")


def grid_jar() -> str:
    """Install what the Grid needs (scripts/grid.sh) and return the jar's path."""
    out = subprocess.run(
        ["bash", str(ROOT / "scripts" / "grid.sh")],
        check=True,
        capture_output=True,
        text=True,
        timeout=600,
    )
    return out.stdout.strip().splitlines()[-1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def node_config(path: Path, max_sessions: int) -> Path:
    """A node TOML: Debian's chromedriver and Chromium, headless, no sandbox, quiet flags."""
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    driver = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    stereotype = {
        "browserName": "chrome",
        "platformName": "linux",
        "goog:chromeOptions": {"binary": chromium, "args": list(CHROMIUM_ARGS)},
    }
    path.write_text(
        "[node]\n"
        "detect-drivers = false\n"
        f"max-sessions = {max_sessions}\n"
        "override-max-sessions = true\n"
        "[[node.driver-configuration]]\n"
        'display-name = "chromium"\n'
        f'webdriver-executable = "{driver}"\n'
        f"max-sessions = {max_sessions}\n"
        f"stereotype = '{json.dumps(stereotype)}'\n"
    )
    return path


@dataclass
class Grid:
    """A running hub and its nodes (`nodes[i]` is None once killed)."""

    jar: str
    workdir: Path
    port: int
    bus: tuple[int, int]
    max_sessions: int
    env: dict[str, str]
    hub: subprocess.Popen[bytes] | None = None
    nodes: list[subprocess.Popen[bytes] | None] = field(default_factory=list)
    node_urls: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _spawn(self, args: list[str], log: str) -> subprocess.Popen[bytes]:
        with open(self.workdir / log, "ab") as out:
            return subprocess.Popen(
                ["java", *JAVA_FLAGS, "-jar", self.jar, *args],
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def start_hub(self) -> None:
        pub, sub = self.bus
        self.hub = self._spawn(
            [
                "hub",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--publish-events",
                f"tcp://127.0.0.1:{pub}",
                "--subscribe-events",
                f"tcp://127.0.0.1:{sub}",
                "--session-request-timeout",
                "60",
                # A killed node is marked down within seconds (default: two minutes).
                "--healthcheck-interval",
                "2",
            ],
            "hub.log",
        )

    def start_node(self, index: int | None = None) -> int:
        """Start a node (a new one, or again in place `index`); returns its index."""
        pub, sub = self.bus
        port = free_port()
        config = node_config(self.workdir / f"node-{port}.toml", self.max_sessions)
        proc = self._spawn(
            [
                "node",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--config",
                str(config),
                "--publish-events",
                f"tcp://127.0.0.1:{pub}",
                "--subscribe-events",
                f"tcp://127.0.0.1:{sub}",
                "--heartbeat-period",
                "1",
            ],
            f"node-{port}.log",
        )
        url = f"http://127.0.0.1:{port}"
        if index is None:
            self.nodes.append(proc)
            self.node_urls.append(url)
            return len(self.nodes) - 1
        self.nodes[index] = proc
        self.node_urls[index] = url
        return index

    def status(self) -> dict[str, Any]:
        with urllib.request.urlopen(self.url + "/status", timeout=5) as resp:
            value: dict[str, Any] = json.loads(resp.read())["value"]
        return value

    def sessions(self) -> dict[str, str]:
        """Grid session id -> the URL of the (live) node it runs on. A node that is down is
        still listed for a while, with the sessions it had."""
        found: dict[str, str] = {}
        for node in self.status()["nodes"]:
            if node["availability"] != "UP":
                continue
            for slot in node["slots"]:
                if slot["session"] is not None:
                    found[slot["session"]["sessionId"]] = node["uri"]
        return found

    def up_nodes(self) -> set[str]:
        try:
            nodes = self.status()["nodes"]
        except OSError:
            return set()
        return {n["uri"] for n in nodes if n["availability"] == "UP"}

    def wait(self, predicate: Any, seconds: float = 60, what: str = "the Grid") -> None:
        """Poll the condition (a /status read each time) until it holds; from sync code only
        (it runs its own event loop)."""

        def holds() -> Any:
            assert self.hub is not None and self.hub.poll() is None, "the hub exited"
            return predicate()

        anyio.run(eventually, holds, seconds, what)

    def wait_ready(self) -> None:
        live = {u for u, p in zip(self.node_urls, self.nodes, strict=True) if p is not None}
        self.wait(lambda: live <= self.up_nodes(), what="nodes registered")

    def kill_node(self, index: int) -> None:
        proc = self.nodes[index]
        assert proc is not None
        kill_group(proc)
        self.nodes[index] = None

    def stop(self) -> None:
        for proc in [*self.nodes, self.hub]:
            if proc is not None:
                kill_group(proc)


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the process group `proc` leads (the JVM, its chromedriver and Chromium)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)


def start_grid(workdir: Path, nodes: int = 2, max_sessions: int = 2, **env: str) -> Grid:
    """A hub and `nodes` nodes on free loopback ports, ready (every node registered)."""
    grid = Grid(
        jar=grid_jar(),
        workdir=workdir,
        port=free_port(),
        bus=(free_port(), free_port()),
        max_sessions=max_sessions,
        env={**os.environ, **env},
    )
    try:
        grid.start_hub()
        for _ in range(nodes):
            grid.start_node()
        grid.wait_ready()
    except BaseException:
        grid.stop()
        raise
    return grid
