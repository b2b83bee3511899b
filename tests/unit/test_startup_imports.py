"""Start-up stays lean (issue 33): the stdio server answers `initialize` and `tools/list`
without importing what only a tool call, another transport or another command needs.

The real serve path runs in a child process (`browsermesh.cli.main`, as `python -m browsermesh`
runs it): the test initializes it, lists the tools, closes stdin, and reads the names in
`sys.modules` the child wrote when it exited. Not timed: a module that comes back into the
start-up path fails it on any machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.stdio_peer import StdioPeer
from tests.support.servers import CHECKOUT_ENV

# Writes the names of every imported module to the file named by argv[1] when the process
# exits normally (stdin closed), after the server's shutdown.
DRIVER = """
import atexit, json, sys
out = sys.argv.pop(1)
atexit.register(lambda: open(out, "w").write(json.dumps(sorted(sys.modules))))
from browsermesh.cli import main
raise SystemExit(main(sys.argv[1:]))
"""

ABSENT = (
    # The browser: the engine imports Playwright on first browser use.
    "playwright",
    # Other commands.
    "browsermesh.doctor",
    "browsermesh.demo",
    "browsermesh.install_browser",
    # Our HTTP transport and the live view (--transport http only).
    "browsermesh.transports.http",
    "browsermesh.transports.http_app",
    "browsermesh.transports.view",
    # The test export's renderer (browser_test_export).
    "browsermesh.model.test_export",
    "browsermesh.model.export_python",
    # Libraries only a tool call uses: argument validation (first call of each tool),
    # browser_find's patterns, the snapshot's YAML reader, language tags. (The SDK's `mcp` and
    # `mcp.server` package initialisers still import its client and high-level server.)
    "jsonschema",
    "regex",
    "ruamel",
    "langcodes",
    # The fleet directory's Redis client (issue 37: only with --fleet-redis).
    "redis",
    "browsermesh.persistence.fleet_directory",
)
"""Modules (and their submodules) the stdio server must not import before it exits.

Starlette and uvicorn are not listed: the SDK's low-level `Server` imports them at module level
(mcp.server.lowlevel.server -> mcp.server.streamable_http -> sse_starlette -> uvicorn)."""


def imported_by_stdio_server(tmp_path: Path) -> list[str]:
    """The modules a stdio server imported by the time it exited, after `initialize`,
    `tools/list` and the close of its stdin."""
    out = tmp_path / "modules.json"
    env = {
        **os.environ,
        **CHECKOUT_ENV,
        "BROWSERMESH_DATA_DIR": str(tmp_path / "data"),
        "BROWSERMESH_LOG_LEVEL": "warn",
    }
    proc = subprocess.Popen(
        [sys.executable, "-c", DRIVER, str(out), "--headless"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        peer = StdioPeer(proc)
        assert "result" in peer.initialize()
        tools = peer.request("tools/list")["result"]["tools"]
        assert len(tools) > 10
        assert proc.stdin
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0, peer.rest_of_stderr()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    names: list[str] = json.loads(out.read_text())
    return names


def test_stdio_start_up_imports_only_what_serving_needs(tmp_path: Path) -> None:
    imported = imported_by_stdio_server(tmp_path)
    # The probe works: what serving needs is there.
    assert "browsermesh.serve" in imported
    assert "browsermesh.mcp.server" in imported
    present = [
        prefix
        for prefix in ABSENT
        if any(name == prefix or name.startswith(prefix + ".") for name in imported)
    ]
    assert present == []
