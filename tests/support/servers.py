"""`python -m browsermesh` as a child process: for the SDK's stdio client, or spawned with
pipes and a marker that finds the Chromium it launches."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import anyio
from mcp import StdioServerParameters

from tests.support.eventually import eventually

CHECKOUT_ENV = {"PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
"""For the minimal environment of a stdio-spawned `python -m browsermesh`: run this checkout's
code, not whatever the interpreter's installed (possibly editable, elsewhere) copy is."""


def stdio_server(data_root: Path, *args: str, **env: str) -> StdioServerParameters:
    """`python -m browsermesh [args]` for the SDK's stdio client: headless, log level warn, its
    data below `data_root`, this checkout's code; `env` adds variables or overrides these."""
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "browsermesh", *args],
        env={
            "BROWSERMESH_HEADLESS": "true",
            "BROWSERMESH_DATA_DIR": str(data_root / "data"),
            "BROWSERMESH_LOG_LEVEL": "warn",
            **CHECKOUT_ENV,
            **env,
        },
    )


def spawn_stdio_server(
    tmp_path: Path, marker: str, extra_env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """A headless `python -m browsermesh` stdio server with pipes; its environment carries
    `marker` (BM_TEST_MARKER), so `chromium_pids_with_marker` finds the Chromium it launches."""
    env = {
        **os.environ,
        "BROWSERMESH_HEADLESS": "true",
        "BM_TEST_MARKER": marker,
        "BROWSERMESH_DATA_DIR": str(tmp_path / "d"),
        "BROWSERMESH_LOG_LEVEL": "info",
        **(extra_env or {}),
    }
    return subprocess.Popen(
        [sys.executable, "-m", "browsermesh"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )


def chromium_pids_with_marker(marker: str) -> list[int]:
    """Processes whose environment carries `marker` (Chromium inherits the server's env)."""
    found = []
    needle = marker.encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as fh:
                env = fh.read()
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                cmd = fh.read()
        except OSError:
            continue
        if needle in env and b"chrom" in cmd.lower():
            found.append(int(entry))
    return found


def assert_no_chromium_left(marker: str, within: float = 10) -> None:
    """From sync code (it runs its own event loop): no process carrying `marker` is left within
    `within` seconds (a server's Chromium exits after the server does, not with it)."""

    def left() -> list[int]:
        return chromium_pids_with_marker(marker)

    anyio.run(eventually, lambda: not left(), within, f"Chromium processes left: {left()}")
