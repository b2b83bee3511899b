"""Installed-package smoke (reference §26.2 "Package").

Once per session: build the sdist and the wheel from it, then install the wheel the way the
README tells a user to, with ``pipx install`` (dependencies from the index), into an isolated
location: ``PIPX_HOME``, ``PIPX_BIN_DIR`` and ``PIPX_MAN_DIR`` under the session's tmp dir, so
neither the user's pipx nor ``~/.local/bin`` is touched (issue 23). Then check the console script
(the one on ``PIPX_BIN_DIR``) and ``python -m browsermesh`` of pipx's venv, the version against
CHANGELOG.md, ``browsermesh --doctor --json`` of that install with real Chromium, the public
imports, and drive the INSTALLED server with the MCP Inspector CLI (2.x, Node 22):
discovery over stdio, a real-Chromium smoke over Streamable HTTP, and (issue 17) logging and
progress: ``logging/setLevel`` in both eras, the server's log lines as the Inspector package's
``mcpdo logging/tail`` shows them, and a progress-token call through the CLI — whose progress
notifications, since no Inspector tool prints them, are checked on the wire with a raw client.

The Inspector CLI makes one call per process and, over stdio, spawns a new server per call, so a
multi-step workflow (create → navigate → … → close) runs against one ``--transport http`` server
process instead; sessions live in that process and belong to the principal ``local``.

The Node tools come from ``scripts/node-tools.sh`` (run by ``scripts/test.sh``). When they are
missing the Inspector tests fail — they do not skip.

Select with ``pytest tests/package`` or ``-m package``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tarfile
import threading
import time
import uuid
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest

from browsermesh import __version__
from tests.fixtures.site import FixtureSite
from tests.support.clients import OPERATION_ID
from tests.support.doctor import assert_no_leak, by_id, parse_json_report
from tests.support.http_process import HttpServerProcess
from tests.support.jsonrpc import INITIALIZE
from tests.support.release import changelog_version
from tests.support.servers import assert_no_chromium_left

pytestmark = [pytest.mark.package, pytest.mark.long]

REPO = Path(__file__).resolve().parents[2]
NODE = REPO / ".tools/node22/node_modules/node/bin/node"
INSPECTOR_PACKAGE = REPO / ".tools/inspector/node_modules/@modelcontextprotocol/inspector"
BIN = "Scripts" if os.name == "nt" else "bin"
EXPECTED_TOOLS = 43  # default profiles: core (35) + observability (1) + persistence (3) + files (4)
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
    python: Path  # the interpreter of pipx's venv for browsermesh
    exe: Path  # the console script pipx put on PIPX_BIN_DIR


def _pipx_env(root: Path) -> dict[str, str]:
    """pipx confined to ``root``: its venvs, shared libraries, logs, scripts and man pages."""
    env = {k: v for k, v in _clean_env().items() if not k.startswith("PIPX_")}
    env.update(
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PIPX_HOME=str(root / "pipx"),
        PIPX_BIN_DIR=str(root / "bin"),
        PIPX_MAN_DIR=str(root / "man"),
        USE_EMOJI="0",
    )
    return env


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
    # pipx runs with this interpreter and makes its venv from it; pip inside that venv reads the
    # machine's pip configuration (index, find-links) like any user's pipx. `--no-compile`:
    # byte-compiling every dependency is the slowest step.
    pipx_env = _pipx_env(root)
    pipx = [sys.executable, "-m", "pipx", "install", "--pip-args=--no-compile", str(wheels[0])]
    _check(_run(pipx, timeout=300, env=pipx_env, cwd=root), "pipx install <wheel>")
    exe = root / "bin" / ("browsermesh.exe" if os.name == "nt" else "browsermesh")
    assert exe.is_file(), f"pipx installed no console script at {exe}"
    venv = root / "pipx" / "venvs" / "browsermesh"
    python = venv / BIN / ("python.exe" if os.name == "nt" else "python")
    assert python.is_file(), f"pipx made no venv at {venv}"
    listed = json.loads(
        _check(_run([sys.executable, "-m", "pipx", "list", "--json"], timeout=60, env=pipx_env),
               "pipx list")
    )  # fmt: skip
    assert list(listed["venvs"]) == ["browsermesh"], listed["venvs"]  # only ours, only here
    return Installed(root=root, wheel=wheels[0], sdist=sdists[0], python=python, exe=exe)


def test_wheel_carries_the_version(installed: Installed) -> None:
    assert installed.wheel.name.startswith(f"browsermesh-{__version__}-py3-none-any")


def test_sdist_carries_sources_and_tests_but_no_caches(installed: Installed) -> None:
    assert installed.sdist.name == f"browsermesh-{__version__}.tar.gz"
    with tarfile.open(installed.sdist) as tar:
        names = {name.split("/", 1)[1] for name in tar.getnames() if "/" in name}
    pkg = "src/browsermesh/"
    needed_files = ("pyproject.toml", "README.md", "CHANGELOG.md", "LICENSE", f"{pkg}py.typed")
    for needed in (*needed_files, f"{pkg}cli.py"):
        assert needed in names, needed
    assert any(name.startswith("tests/unit/") for name in names)
    unwanted = (".hypothesis", "__pycache__", ".mypy_cache", ".venv", "benchmarks/results")
    assert not [name for name in names if any(part in name for part in unwanted)]


def test_wheel_carries_the_live_view_files(installed: Installed) -> None:
    with zipfile.ZipFile(installed.wheel) as wheel:
        names = set(wheel.namelist())
    for name in ("index.html", "view.css", "view.js"):
        assert f"browsermesh/transports/view_static/{name}" in names, name


def test_console_script_version(installed: Installed) -> None:
    proc = _run([str(installed.exe), "--version"], timeout=60, env=_clean_env(), cwd=installed.root)
    assert _check(proc, "browsermesh --version").strip() == __version__ == changelog_version()
    assert proc.stderr == ""
    # The script pipx put on PIPX_BIN_DIR runs pipx's venv, not this checkout.
    assert installed.exe.resolve().is_relative_to((installed.root / "pipx").resolve())


def test_doctor_json_of_the_installed_package(installed: Installed) -> None:
    """``browsermesh --doctor --json`` of the pipx install passes every check, real Chromium's
    smoke test included: what a new user runs first (README)."""
    env = _clean_env(
        BROWSERMESH_HEADLESS="true",
        BROWSERMESH_AUTO_INSTALL="false",
        BROWSERMESH_DATA_DIR=str(installed.root / "data-doctor"),
    )
    doctor = [str(installed.exe), "--doctor", "--json"]
    proc = _run(doctor, timeout=120, env=env, cwd=installed.root)
    assert proc.stderr == ""
    report = parse_json_report(proc.stdout)
    failed = {c["id"]: c for c in report["checks"] if c["status"] != "passed"}
    assert proc.returncode == 0 and report["status"] == "passed", failed
    assert by_id(report)["version-consistency"]["code"] == "VERSION_CONSISTENT"
    assert_no_leak(proc.stdout, str(installed.root))


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
    mcpdo: Path  # the package's connection CLI (one daemon-held connection, many commands)

    def invoke(
        self, *args: str, cwd: Path, timeout: float = CALL_TIMEOUT
    ) -> subprocess.CompletedProcess[str]:
        """One Inspector CLI invocation with ``--format json -q``, whatever its exit code."""
        cmd = [str(self.node), str(self.entry), "--cli", "--format", "json", "-q", *args]
        return _run(cmd, timeout=timeout, env=_clean_env(), cwd=cwd)

    def run(self, *args: str, cwd: Path, timeout: float = CALL_TIMEOUT) -> dict[str, Any]:
        """One Inspector CLI invocation that must exit 0; returns its ``result``."""
        proc = self.invoke(*args, cwd=cwd, timeout=timeout)
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
    mcpdo = INSPECTOR_PACKAGE / meta["bin"]["mcpdo"]
    assert entry.is_file(), entry
    assert mcpdo.is_file(), mcpdo
    return Inspector(node=NODE, entry=entry, mcpdo=mcpdo)


def _stdio_target(installed: Installed, data: Path) -> list[str]:
    """Inspector arguments that spawn the installed server over stdio."""
    return [
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
    ]


@pytest.mark.parametrize("era", ["legacy", "auto", "modern"])
def test_stdio_discovery(installed: Installed, era: str) -> None:
    inspector = find_inspector()
    target = _stdio_target(installed, installed.root / f"data-stdio-{era}")
    listing = ("--method", "tools/list", "--protocol-era", era)
    result = inspector.run(*listing, *target, cwd=installed.root)
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


class HttpServer(HttpServerProcess):
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
        super().__init__(cmd, env, installed.root, stdout=subprocess.PIPE)


@pytest.fixture
def http_server(installed: Installed) -> Iterator[HttpServer]:
    server = HttpServer(installed, marker=f"bm-package-{uuid.uuid4().hex}")
    try:
        yield server
    finally:
        if server.proc.poll() is None:
            # SIGTERM first, so a failed test does not orphan the server's Chromium.
            with contextlib.suppress(AssertionError):  # stop() kills it after the timeout
                server.stop(timeout=15)


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

    runtime_info = ("--method", "tools/call", "--tool-name", "browser_runtime_info", url)
    info = inspector.run(*runtime_info, cwd=installed.root)["structuredContent"]
    assert info["serverVersion"] == __version__ == changelog_version()  # its text is a summary

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
        # Lean results: a click whose page change is only text no alert shows has no `changes`.
        call("browser_click", {**page, "locator": submit})
        status = {"strategy": "testId", "value": "status"}
        assert call("browser_visible_text", {**page, "locator": status})["text"] == "clicked"

        closed = call("browser_session_close", {"sessionId": sid})
        assert closed["session"]["status"] == "closed"

    code = http_server.stop()
    assert code == 0, f"exit {code} after SIGTERM\n{http_server.log_tail()}"
    assert http_server.proc.stdout is not None
    assert http_server.proc.stdout.read() == ""  # logs go to stderr only
    events = [json.loads(line) for line in http_server.lines if line.startswith("{")]
    assert any(e.get("type") == "session.closed" for e in events)
    if Path("/proc").is_dir():
        assert_no_chromium_left(http_server.marker, 10)


# --------------------------------------------------------------------------------------------
# Log lines and progress through the Inspector's tools (issue 17)
# --------------------------------------------------------------------------------------------

MCP_LEVELS = {"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}
SET_LEVEL_REFUSED = (
    "Method 'logging/setLevel' is not supported by the negotiated protocol version"
    " (wire era 2026-07-28)"
)
TOOL_IS_ERROR_EXIT = 5  # the Inspector's exit code for a tools/call whose result has isError
NEVER = "Never shown anywhere"
WAIT_MS = 2000  # long enough for two progress lines (at 0.25 s, then each second) with margin


def _assert_set_level_refused(proc: subprocess.CompletedProcess[str]) -> None:
    assert proc.returncode == 1, (proc.returncode, proc.stdout, proc.stderr)
    assert proc.stdout == ""
    assert json.loads(proc.stderr) == {"error": {"code": "error", "message": SET_LEVEL_REFUSED}}


def test_logging_set_level_over_stdio(installed: Installed) -> None:
    """``logging/setLevel`` through the Inspector CLI, installed server over stdio: the handshake
    era answers ``{}``. With ``--protocol-era modern`` the *Inspector* refuses and exits 1 with
    its own error envelope: setLevel is not a 2026-07-28 method (a request opts in with ``_meta``
    ``io.modelcontextprotocol/logLevel`` instead), and the CLI checks that against the negotiated
    era before sending anything — our server never sees the request."""
    inspector = find_inspector()
    target = _stdio_target(installed, installed.root / "data-stdio-logging")
    set_level = ("--method", "logging/setLevel", "--log-level", "info")
    legacy = inspector.run(*set_level, "--protocol-era", "legacy", *target, cwd=installed.root)
    assert legacy == {}
    modern = inspector.invoke(*set_level, "--protocol-era", "modern", *target, cwd=installed.root)
    _assert_set_level_refused(modern)


def test_logging_set_level_over_http(installed: Installed, http_server: HttpServer) -> None:
    """The same over Streamable HTTP: ``{}`` in the handshake era; refused by the Inspector (exit
    1, no request sent) in the 2026-07-28 era, which ``--protocol-era auto`` also negotiates with
    this server."""
    inspector = find_inspector()
    url = http_server.wait_listening()
    set_level = ("--method", "logging/setLevel", "--log-level", "debug")
    assert inspector.run(*set_level, "--protocol-era", "legacy", url, cwd=installed.root) == {}
    for era in ("modern", "auto"):
        refused = inspector.invoke(*set_level, "--protocol-era", era, url, cwd=installed.root)
        _assert_set_level_refused(refused)


class Mcpdo:
    """The Inspector package's ``mcpdo`` (connect once, many commands through a daemon) with a
    private daemon: ``mcpdo private`` makes its directory under ``root`` (it honours TMPDIR), and
    HOME (catalog, secrets, client config) is ``root/home`` — nothing is shared between tests or
    with the user's own Inspector state."""

    def __init__(self, inspector: Inspector, root: Path) -> None:
        self.cmd = [str(inspector.node), str(inspector.mcpdo)]
        self.root = root
        home = root / "home"
        home.mkdir()
        self.env = {k: v for k, v in _clean_env().items() if not k.startswith("MCP_")}
        self.env.update(
            HOME=str(home),
            TMPDIR=str(root),
            MCP_CATALOG_PATH=str(root / "catalog.json"),
            MCP_INSPECTOR_SECRET_STORE="file",  # no keychain probe; the file lands in HOME
        )
        exports = _check(_run([*self.cmd, "private"], timeout=30, env=self.env), "mcpdo private")
        for line in exports.splitlines():  # export MCP_INSPECTOR_DAEMON_DIR='…' (and _TOKEN)
            keyword, assignment = shlex.split(line)
            assert keyword == "export", line
            name, _, value = assignment.partition("=")
            self.env[name] = value
        daemon_dir = Path(self.env["MCP_INSPECTOR_DAEMON_DIR"])
        assert daemon_dir.is_relative_to(root), daemon_dir
        assert self.env["MCP_INSPECTOR_DAEMON_TOKEN"]

    def invoke(self, *args: str) -> subprocess.CompletedProcess[str]:
        cmd = [*self.cmd, "--format", "json", *args]
        return _run(cmd, timeout=CALL_TIMEOUT, env=self.env, cwd=self.root)

    def check(self, *args: str) -> Any:
        return json.loads(_check(self.invoke(*args), "mcpdo " + " ".join(args)))

    def popen(self, *args: str) -> subprocess.Popen[str]:
        cmd = [*self.cmd, "--format", "json", *args]
        return subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=self.env,
            cwd=self.root,
        )

    def stop_daemon(self) -> None:
        _check(self.invoke("daemon", "stop"), "mcpdo daemon stop")


class JsonTail:
    """A process whose stdout is a stream of JSON values (``mcpdo --format json logging/tail``
    pretty-prints one object per notification), collected by a reader thread."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self.text = ""  # everything it printed, for the canary checks
        self.stderr: list[str] = []
        self.items: list[dict[str, Any]] = []
        self._eof = False
        self._cond = threading.Condition()
        self._threads = [
            threading.Thread(target=self._read, daemon=True),
            threading.Thread(target=self._drain, daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        decoder = json.JSONDecoder()
        pending = ""
        for line in self.proc.stdout:
            with self._cond:
                self.text += line
                pending += line
                while pending.strip():
                    pending = pending.lstrip()
                    try:
                        item, end = decoder.raw_decode(pending)
                    except json.JSONDecodeError:
                        break  # an object still arriving
                    self.items.append(item)
                    pending = pending[end:]
                self._cond.notify_all()
        with self._cond:
            self._eof = True
            self._cond.notify_all()

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        self.stderr.extend(self.proc.stderr)

    def wait_for(self, predicate: Callable[[list[dict[str, Any]]], bool], timeout: float) -> bool:
        """Whether ``predicate(items)`` became true within ``timeout`` seconds."""
        with self._cond:
            self._cond.wait_for(lambda: self._eof or predicate(self.items), timeout)
            return predicate(self.items)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for thread in self._threads:
            thread.join(timeout=5)

    def describe(self) -> str:
        return f"exit {self.proc.poll()}\n{self.text[-3000:]}\n{''.join(self.stderr)[-2000:]}"


def _data(item: dict[str, Any]) -> dict[str, Any]:
    data: dict[str, Any] = item["message"]["params"]["data"]
    return data


def _wait_args(page: dict[str, Any]) -> dict[str, Any]:
    never = {"kind": "text", "text": NEVER, "state": "present"}
    return {**page, "condition": never, "timeoutMs": WAIT_MS}


def test_log_lines_through_mcpdo_tail(
    installed: Installed, http_server: HttpServer, tmp_path: Path
) -> None:
    """Server log lines as the Inspector's ``mcpdo logging/tail`` shows them, installed server
    over HTTP (handshake era; the daemon's connection sets level debug): the navigate's
    ``operation.completed`` arrives; every line has logger ``browsermesh`` and an MCP level (the
    record's own level mapped: warn → warning); neither a secret query value of the navigated URL
    nor text the page shows ever appears in a line. On the same connection a call carrying a
    progress token ends as a normal isError result and the next call still works."""
    inspector = find_inspector()
    url = http_server.wait_listening()
    mcpdo = Mcpdo(inspector, tmp_path)
    tail: JsonTail | None = None
    try:
        assert mcpdo.check("connect", url)["protocolEra"] == "legacy"
        assert mcpdo.check("--connection", url, "logging/setLevel", "debug") == {}
        tail = JsonTail(mcpdo.popen("--connection", url, "logging/tail"))

        def call(tool: str, args: dict[str, Any], *extra: str) -> subprocess.CompletedProcess[str]:
            payload = json.dumps(args)
            return mcpdo.invoke(
                "--connection", url, "tools/call", tool, *extra, "--tool-args-json", payload
            )

        def ok(tool: str, args: dict[str, Any]) -> dict[str, Any]:
            result = json.loads(_check(call(tool, args), f"mcpdo tools/call {tool}"))
            assert result["isError"] is False, result
            data: dict[str, Any] = result["structuredContent"]
            return data

        def completed(items: list[dict[str, Any]]) -> dict[str, str]:
            return {
                _data(i)["operationId"]: _data(i)["tool"]
                for i in items
                if _data(i).get("type") == "operation.completed"
            }

        secret = f"canary-url-{uuid.uuid4().hex}"
        shown = f"canary-page-{uuid.uuid4().hex}"
        with FixtureSite() as site:
            page = dict(ok("browser_session_create", {"name": "package-logging"})["initialPage"])

            # The tail subscribes a moment after its process starts and says nothing when it has:
            # probe with a cheap session call (only those are logged) until its line shows up.
            deadline = time.monotonic() + 30
            while True:
                probe = ok("browser_get_url", page)["operationId"]
                if tail.wait_for(lambda items, probe=probe: probe in completed(items), timeout=2):
                    break
                assert time.monotonic() < deadline, f"no log line in the tail\n{tail.describe()}"

            target = site.url(f"/?value={shown}&token={secret}")
            navigated = ok("browser_navigate", {**page, "url": target})
            assert navigated["url"] == target
            state = {"strategy": "testId", "value": "state"}
            text = ok("browser_visible_text", {**page, "locator": state})["text"]
            assert shown in text  # the page really shows it (the identity page echoes `value`)

            waited = call("browser_wait", _wait_args(page), "--tool-metadata", "progressToken=p1")
            assert waited.returncode == TOOL_IS_ERROR_EXIT, (waited.stdout, waited.stderr)
            result = json.loads(waited.stdout)
            assert result["isError"] is True
            failure = json.loads(result["content"][0]["text"])["error"]
            assert failure["code"] == "OPERATION_TIMEOUT", failure

            closed = ok("browser_session_close", {"sessionId": page["sessionId"]})
            assert closed["session"]["status"] == "closed"

        expected = {
            (navigated["operationId"], "operation.completed"),
            (closed["operationId"], "session.closed"),  # the close is not a queued operation
        }

        def arrived_all(items: list[dict[str, Any]]) -> bool:
            return expected <= {(_data(i).get("operationId"), _data(i)["type"]) for i in items}

        arrived = tail.wait_for(arrived_all, 15)
        assert arrived, f"the navigate's and close's lines did not arrive\n{tail.describe()}"
        tail.stop()

        items = tail.items
        assert all(i["direction"] == "notification" for i in items), items
        assert all(i["message"]["method"] == "notifications/message" for i in items), items
        for item in items:
            params = item["message"]["params"]
            assert params["logger"] == "browsermesh", params
            assert params["level"] in MCP_LEVELS, params
            own = params["data"]["level"]  # the record's level: debug, info, warn or error
            assert params["level"] == {"warn": "warning"}.get(own, own), params
        records = [_data(i) for i in items]
        nav = [r for r in records if r.get("operationId") == navigated["operationId"]]
        assert [r["type"] for r in nav] == ["operation.started", "operation.completed"], nav
        assert nav[-1]["sessionId"] == page["sessionId"], nav
        assert isinstance(nav[-1]["durationMs"], int), nav
        failed = [r for r in records if r.get("operationId") == failure["operationId"]]
        assert [r["type"] for r in failed] == ["operation.started", "operation.failed"], failed
        assert failed[-1]["code"] == "OPERATION_TIMEOUT", failed

        everything = tail.text + "".join(tail.stderr)
        assert secret not in everything and shown not in everything
        assert not [line for line in http_server.lines if secret in line or shown in line]
    finally:
        if tail is not None:
            tail.stop()
        mcpdo.stop_daemon()


def _sse_messages(response: httpx2.Response) -> Iterator[dict[str, Any]]:
    """The JSON-RPC messages of an SSE response, in order."""
    data: list[str] = []
    for line in response.iter_lines():
        if line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
        elif not line and data:
            yield json.loads("\n".join(data))
            data = []
    if data:
        yield json.loads("\n".join(data))


def _raw_tools_call(
    url: str, name: str, arguments: dict[str, Any], meta: dict[str, Any]
) -> list[dict[str, Any]]:
    """A raw handshake-era Streamable HTTP client: ``initialize``, ``notifications/initialized``,
    one ``tools/call``; every message of that call's SSE response, in order."""
    headers = {"Accept": "application/json, text/event-stream"}
    with httpx2.Client(timeout=httpx2.Timeout(30, read=60)) as http:
        opened = http.post(url, json=INITIALIZE, headers=headers)
        assert opened.status_code == 200, opened.text
        headers["Mcp-Session-Id"] = opened.headers["mcp-session-id"]
        headers["MCP-Protocol-Version"] = INITIALIZE["params"]["protocolVersion"]
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert http.post(url, json=initialized, headers=headers).status_code == 202
        params = {"name": name, "arguments": arguments, "_meta": meta}
        request = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}
        with http.stream("POST", url, json=request, headers=headers) as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            messages = list(_sse_messages(response))
        http.delete(url, headers=headers)
    return messages


def test_progress_through_the_inspector_and_on_the_wire(
    installed: Installed, http_server: HttpServer
) -> None:
    """A ``browser_wait`` that times out, through the Inspector CLI with ``--tool-metadata
    progressToken=p1``: it exits 5 with the isError result, exactly as the same wait without a
    token does — the progress notifications do not break the Inspector's connection or its
    result. The CLI prints no progress (it runs one call per process, so "the next call on the
    same connection" is shown through mcpdo in the logging test), so the notifications are checked
    on the wire for the same installed server with a raw HTTP client: at least two for the token,
    strictly increasing ``progress``, readable phases, all before the response."""
    inspector = find_inspector()
    url = http_server.wait_listening()

    def ok(tool: str, args: dict[str, Any]) -> dict[str, Any]:
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
        assert result["isError"] is False, result
        data: dict[str, Any] = result["structuredContent"]
        return data

    def inspector_wait(page: dict[str, Any], *meta: str) -> dict[str, Any]:
        proc = inspector.invoke(
            "--method",
            "tools/call",
            "--tool-name",
            "browser_wait",
            "--tool-args-json",
            json.dumps(_wait_args(page)),
            *meta,  # variadic: the URL goes after --server-url, not as the target
            "--server-url",
            url,
            cwd=installed.root,
        )
        assert proc.returncode == TOOL_IS_ERROR_EXIT, (proc.returncode, proc.stdout, proc.stderr)
        assert json.loads(proc.stderr)["error"]["code"] == "tool_is_error", proc.stderr
        result = json.loads(proc.stdout)["result"]
        assert result["isError"] is True, result
        error: dict[str, Any] = json.loads(result["content"][0]["text"])["error"]
        return error

    with FixtureSite() as site:
        page = dict(ok("browser_session_create", {"name": "package-progress"})["initialPage"])
        ok("browser_navigate", {**page, "url": site.url("/")})

        with_token = inspector_wait(page, "--tool-metadata", "progressToken=p1")
        without = inspector_wait(page)
        assert with_token["code"] == "OPERATION_TIMEOUT", with_token
        assert with_token["details"] == {"reason": "timeout", "timeoutMs": WAIT_MS}
        same = {k: v for k, v in without.items() if k != "operationId"}
        assert {k: v for k, v in with_token.items() if k != "operationId"} == same

        messages = _raw_tools_call(url, "browser_wait", _wait_args(page), {"progressToken": "p1"})
        *progress, response = messages
        assert response["id"] == 2 and response["result"]["isError"] is True, response
        assert "OPERATION_TIMEOUT" in response["result"]["content"][0]["text"]
        assert len(progress) >= 2, messages
        assert all(m["method"] == "notifications/progress" for m in progress), messages
        params = [m["params"] for m in progress]
        assert all(p["progressToken"] == "p1" and "total" not in p for p in params), params
        values = [p["progress"] for p in params]
        assert values == sorted(set(values)), values  # strictly increasing
        phase = re.compile(rf"waiting for text '{NEVER}' \(\d+(\.\d)? s of {WAIT_MS // 1000} s\)")
        assert all(phase.fullmatch(p["message"]) for p in params), params

        assert ok("browser_get_title", page)["title"] == "Identity"
        ok("browser_session_close", {"sessionId": page["sessionId"]})
