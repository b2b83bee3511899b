"""Installed-package smoke (contract §26.2 "Package").

Once per session: build the wheel, create a fresh virtual environment, ``pip install`` the wheel
there (dependencies from the index). Then check the console script and ``python -m browsermesh``,
the public imports, and drive the INSTALLED server with the MCP Inspector CLI (2.x, Node 22):
discovery over stdio, and a real-Chromium smoke over Streamable HTTP.

The Inspector CLI makes one call per process and, over stdio, spawns a new server per call, so a
multi-step workflow (create → navigate → … → close) runs against one ``--transport http`` server
process instead; sessions live in that process and belong to the principal ``local``.

The Node tools come from ``scripts/node-tools.sh`` (run by ``scripts/test.sh``). When they are
missing the Inspector tests fail — they do not skip.

Select with ``pytest tests/package`` or ``-m package``.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import tarfile
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from browsermesh import __version__
from tests.conftest import OPERATION_ID, chromium_pids_with_marker
from tests.fixtures.site import FixtureSite

pytestmark = [pytest.mark.package, pytest.mark.chromium]

REPO = Path(__file__).resolve().parents[2]
NODE = REPO / ".tools/node22/node_modules/node/bin/node"
INSPECTOR_PACKAGE = REPO / ".tools/inspector/node_modules/@modelcontextprotocol/inspector"
BIN = "Scripts" if os.name == "nt" else "bin"
EXPECTED_TOOLS = 40  # default profiles: core (32) + observability (1) + persistence (3) + files (4)
CALL_TIMEOUT = 60.0


def _clean_env(**extra: str) -> dict[str, str]:
    """The environment without anything that could make the dev checkout leak into the venv."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP"}
        and not k.startswith("BROWSERMESH_")
    }
    env.update(extra)
    return env


def _run(cmd: list[str], *, timeout: float, **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cmd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL, **kw
    )


def _check(proc: subprocess.CompletedProcess[str], what: str) -> str:
    assert proc.returncode == 0, (
        f"{what} exited {proc.returncode}\n--- stdout ---\n{proc.stdout[-3000:]}"
        f"\n--- stderr ---\n{proc.stderr[-3000:]}"
    )
    return proc.stdout


# --------------------------------------------------------------------------------------------
# The installed package
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Installed:
    root: Path
    wheel: Path
    sdist: Path
    python: Path
    exe: Path


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    root = tmp_path_factory.mktemp("installed")
    env = _clean_env(PIP_DISABLE_PIP_VERSION_CHECK="1")
    dist = root / "dist"
    _check(
        _run(
            # No target flags: build the sdist, then the wheel *from the sdist*, which proves the
            # sdist carries everything a build needs.
            [sys.executable, "-m", "build", "--outdir", str(dist), str(REPO)],
            timeout=300,
            env=env,
            cwd=root,
        ),
        "python -m build",
    )
    sdists = sorted(dist.glob("browsermesh-*.tar.gz"))
    assert len(sdists) == 1, sdists
    wheels = sorted(dist.glob("browsermesh-*.whl"))
    assert len(wheels) == 1, wheels
    venv = root / "venv"
    # No pip inside the new venv (ensurepip costs seconds): this interpreter's pip installs into it
    # through `--python`. `--no-compile`: byte-compiling every dependency is the slowest step.
    _check(
        _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], timeout=120, env=env),
        "python -m venv",
    )
    python = venv / BIN / "python"
    install = [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet"]
    _check(
        _run([*install, "--no-compile", str(wheels[0])], timeout=300, env=env, cwd=root),
        "pip install <wheel>",
    )
    exe = venv / BIN / ("browsermesh.exe" if os.name == "nt" else "browsermesh")
    assert exe.is_file(), f"the wheel installed no console script at {exe}"
    return Installed(root=root, wheel=wheels[0], sdist=sdists[0], python=python, exe=exe)


def test_wheel_carries_the_version(installed: Installed) -> None:
    assert installed.wheel.name.startswith(f"browsermesh-{__version__}-py3-none-any")


def test_sdist_carries_sources_and_tests_but_no_caches(installed: Installed) -> None:
    assert installed.sdist.name == f"browsermesh-{__version__}.tar.gz"
    with tarfile.open(installed.sdist) as tar:
        names = {name.split("/", 1)[1] for name in tar.getnames() if "/" in name}
    pkg = "src/browsermesh/"
    for needed in ("pyproject.toml", "README.md", "LICENSE", f"{pkg}py.typed", f"{pkg}cli.py"):
        assert needed in names, needed
    assert any(name.startswith("tests/unit/") for name in names)
    unwanted = (".hypothesis", "__pycache__", ".mypy_cache", ".venv", "benchmarks/results")
    assert not [name for name in names if any(part in name for part in unwanted)]


def test_console_script_version(installed: Installed) -> None:
    proc = _run([str(installed.exe), "--version"], timeout=60, env=_clean_env(), cwd=installed.root)
    assert _check(proc, "browsermesh --version").strip() == __version__
    assert proc.stderr == ""


def test_module_version(installed: Installed) -> None:
    proc = _run(
        [str(installed.python), "-m", "browsermesh", "--version"],
        timeout=60,
        env=_clean_env(),
        cwd=installed.root,
    )
    assert _check(proc, "python -m browsermesh --version").strip() == __version__


_IMPORTS = """
import enum, json, sys
import browsermesh
from browsermesh import create_runtime, create_server, load_config, BrowserMeshError, ErrorCode
assert callable(create_runtime) and callable(create_server) and callable(load_config)
assert issubclass(BrowserMeshError, Exception)
assert issubclass(ErrorCode, enum.Enum) and len(list(ErrorCode)) > 0
from importlib.metadata import version
json.dump({"file": browsermesh.__file__, "version": browsermesh.__version__,
           "dist": version("browsermesh"), "prefix": sys.prefix}, sys.stdout)
"""


def test_public_imports_come_from_the_venv(installed: Installed) -> None:
    proc = _run(
        [str(installed.python), "-c", _IMPORTS], timeout=60, env=_clean_env(), cwd=installed.root
    )
    info = json.loads(_check(proc, "public imports"))
    assert info["version"] == info["dist"] == __version__
    venv = installed.python.parent.parent
    assert Path(info["prefix"]).resolve() == venv.resolve()
    assert Path(info["file"]).resolve().is_relative_to(venv.resolve()), info["file"]


# --------------------------------------------------------------------------------------------
# The MCP Inspector CLI
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Inspector:
    node: Path
    entry: Path

    def run(self, *args: str, cwd: Path, timeout: float = CALL_TIMEOUT) -> dict[str, Any]:
        """One Inspector CLI invocation with ``--format json -q``; returns its ``result``."""
        cmd = [str(self.node), str(self.entry), "--cli", "--format", "json", "-q", *args]
        proc = _run(cmd, timeout=timeout, env=_clean_env(), cwd=cwd)
        out = _check(proc, "inspector " + " ".join(args))
        payload: dict[str, Any] = json.loads(out)
        assert set(payload) == {"result"}, payload
        result: dict[str, Any] = payload["result"]
        return result


def find_inspector() -> Inspector:
    """The Node tools from scripts/node-tools.sh; their absence FAILS the calling test."""
    hint = "run `bash scripts/node-tools.sh` (scripts/test.sh does it) to install them"
    if not NODE.is_file():
        pytest.fail(f"Node 22 for the MCP Inspector is missing ({NODE}); {hint}", pytrace=False)
    manifest = INSPECTOR_PACKAGE / "package.json"
    if not manifest.is_file():
        pytest.fail(f"the MCP Inspector is missing ({INSPECTOR_PACKAGE}); {hint}", pytrace=False)
    meta = json.loads(manifest.read_text(encoding="utf-8"))
    assert meta["version"].startswith("2."), f"expected Inspector 2.x, found {meta['version']}"
    entry = INSPECTOR_PACKAGE / meta["bin"]["mcp-inspector"]
    assert entry.is_file(), entry
    return Inspector(node=NODE, entry=entry)


@pytest.mark.parametrize("era", ["legacy", "auto", "modern"])
def test_stdio_discovery(installed: Installed, era: str) -> None:
    inspector = find_inspector()
    data = installed.root / f"data-stdio-{era}"
    result = inspector.run(
        "--method",
        "tools/list",
        "--protocol-era",
        era,
        "--cwd",
        str(installed.root),
        # A stdio server gets only the -e variables (plus PATH, HOME, …), not our environment.
        "-e",
        "BROWSERMESH_HEADLESS=true",
        "-e",
        "BROWSERMESH_AUTO_INSTALL=false",
        "-e",
        f"BROWSERMESH_DATA_DIR={data}",
        str(installed.exe),
        cwd=installed.root,
    )
    names = [t["name"] for t in result["tools"]]
    assert len(names) == EXPECTED_TOOLS, names
    assert len(set(names)) == EXPECTED_TOOLS
    assert "browser_session_create" in names
    assert "browser_evaluate" not in names  # the eval profile is off by default
    assert all(n.startswith("browser_") for n in names)
    assert all(t["inputSchema"]["type"] == "object" for t in result["tools"])


# --------------------------------------------------------------------------------------------
# Real-Chromium smoke over HTTP
# --------------------------------------------------------------------------------------------


class HttpServer:
    """The installed ``browsermesh --transport http --port 0`` with its stderr drained."""

    def __init__(self, installed: Installed, marker: str) -> None:
        self.marker = marker  # in the environment Chromium inherits: finds leaked processes
        env = _clean_env(
            BROWSERMESH_HEADLESS="true",
            BROWSERMESH_AUTO_INSTALL="false",
            BROWSERMESH_DATA_DIR=str(installed.root / "data-http"),
            BM_PACKAGE_TEST_MARKER=marker,
        )
        cmd = [str(installed.exe), "--transport", "http", "--port", "0", "--headless"]
        self.proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=installed.root,
        )
        self.lines: list[str] = []
        self._listening: queue.Queue[dict[str, Any]] = queue.Queue()
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line.rstrip("\n"))
            if '"http.listening"' in line:
                self._listening.put(json.loads(line))

    def log_tail(self) -> str:
        return "\n".join(self.lines[-40:])

    def wait_listening(self, timeout: float = 30.0) -> str:
        try:
            event = self._listening.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(
                f"no http.listening within {timeout}s (exit {self.proc.poll()})\n{self.log_tail()}"
            ) from None
        assert event["host"] == "127.0.0.1" and event["port"] > 0, event
        return f"http://127.0.0.1:{event['port']}{event['path']}"

    def terminate(self, timeout: float = 30.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"no exit {timeout}s after SIGTERM\n{self.log_tail()}") from None
        self._reader.join(timeout=5)
        return code


@pytest.fixture
def http_server(installed: Installed) -> Iterator[HttpServer]:
    server = HttpServer(installed, marker=f"bm-package-{uuid.uuid4().hex}")
    try:
        yield server
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait()


def test_http_browser_smoke(installed: Installed, http_server: HttpServer) -> None:
    inspector = find_inspector()
    url = http_server.wait_listening()

    def call(tool: str, args: dict[str, Any]) -> dict[str, Any]:
        try:
            result = inspector.run(
                "--method",
                "tools/call",
                "--tool-name",
                tool,
                "--tool-args-json",
                json.dumps(args),
                url,
                cwd=installed.root,
            )
        except AssertionError as exc:
            tail = http_server.log_tail()
            raise AssertionError(f"{exc}\n--- server stderr ---\n{tail}") from None
        assert result["isError"] is False, result
        data: dict[str, Any] = result["structuredContent"]
        assert json.loads(result["content"][-1]["text"]) == data
        assert OPERATION_ID.fullmatch(data["operationId"])
        return data

    listed = inspector.run("--method", "tools/list", url, cwd=installed.root)
    assert len(listed["tools"]) == EXPECTED_TOOLS

    with FixtureSite() as site:
        created = call("browser_session_create", {"name": "package-smoke"})
        assert created["session"]["status"] == "ready"
        page = dict(created["initialPage"])
        sid = page["sessionId"]

        # Each Inspector run is a new MCP connection: the session lives in the server process.
        listed_sessions = call("browser_session_list", {})["sessions"]
        assert [s["sessionId"] for s in listed_sessions] == [sid]

        target = site.url("/")
        assert call("browser_navigate", {**page, "url": target})["url"] == target
        assert call("browser_get_title", page)["title"] == "Identity"

        snap = call("browser_snapshot", page)
        assert snap["contentFormat"] == "aria-yaml"
        assert 'button "Submit"' in snap["snapshot"], snap["snapshot"]

        name = {"strategy": "label", "value": "Name"}
        call("browser_fill", {**page, "locator": name, "value": "Ada"})
        submit = {"strategy": "role", "value": "button", "name": "Submit"}
        assert "changes" in call("browser_click", {**page, "locator": submit})
        status = {"strategy": "testId", "value": "status"}
        assert call("browser_visible_text", {**page, "locator": status})["text"] == "clicked"

        closed = call("browser_session_close", {"sessionId": sid})
        assert closed["session"]["status"] == "closed"

    code = http_server.terminate()
    assert code == 0, f"exit {code} after SIGTERM\n{http_server.log_tail()}"
    assert http_server.proc.stdout is not None
    assert http_server.proc.stdout.read() == ""  # logs go to stderr only
    events = [json.loads(line) for line in http_server.lines if line.startswith("{")]
    assert any(e.get("type") == "session.closed" for e in events)
    if Path("/proc").is_dir():
        deadline = time.monotonic() + 10
        while (left := chromium_pids_with_marker(http_server.marker)) and (
            time.monotonic() < deadline
        ):
            time.sleep(0.2)
        assert left == [], f"Chromium processes left after SIGTERM: {left}"
