"""Installing Playwright's Chromium (contract §20.1 and §19.4 step 2).

Both paths run ``python -m playwright install chromium`` with the current interpreter.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Final

__all__ = ["INSTALL_REMEDIATION", "auto_install_chromium", "install_browser", "install_command"]

INSTALL_REMEDIATION: Final = "Run: browsermesh --install-browser"


def install_command() -> list[str]:
    """The installer command line: the current interpreter running Playwright's CLI."""
    return [sys.executable, "-m", "playwright", "install", "chromium"]


def _exit_status(returncode: int) -> int:
    # subprocess reports "killed by signal N" as -N; a shell would report 128 + N.
    return 128 - returncode if returncode < 0 else returncode


def install_browser() -> int:
    """``browsermesh --install-browser``: run the installer with inherited stdio (progress
    visible) and return its exit status (128 + N when it was killed by signal N)."""
    try:
        completed = subprocess.run(install_command(), check=False)
    except OSError as exc:
        print(
            f"browsermesh: could not start the Chromium installer ({type(exc).__name__})",
            file=sys.stderr,
            flush=True,
        )
        return 1
    return _exit_status(completed.returncode)


def auto_install_chromium() -> bool:
    """Serve-startup auto-install (§19.4 step 2). Returns True when the installer succeeded.

    stdout is discarded (it belongs to MCP), stdin is not shared (the MCP client owns it), and
    stderr is inherited so the installer's own progress and errors stay visible. One-line
    notices go to stderr before and after.
    """
    print(
        "browsermesh: Chromium not found; installing it with 'python -m playwright install "
        "chromium' (the first run may download about 150 MB)",
        file=sys.stderr,
        flush=True,
    )
    try:
        completed = subprocess.run(
            install_command(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            check=False,
        )
    except OSError as exc:
        status: int | None = None
        reason = type(exc).__name__
    else:
        status = _exit_status(completed.returncode)
        reason = f"exit status {status}"
    if status == 0:
        print("browsermesh: Chromium installed", file=sys.stderr, flush=True)
        return True
    print(
        f"browsermesh: Chromium install failed ({reason}); {INSTALL_REMEDIATION}",
        file=sys.stderr,
        flush=True,
    )
    return False
