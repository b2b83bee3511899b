"""Installing the browsers (reference §20.1, §19.4 step 2, issue 16): the full Chromium and,
beside it, the headless shell headless sessions prefer.

Playwright's installer comes first: ``python -m playwright install chromium`` with the current
interpreter fetches both builds (Playwright >= 1.49 installs ``chromium-headless-shell`` with
``chromium``). Where its download is unavailable and we run as root on a Debian-like system,
Debian's ``chromium`` and ``chromium-headless-shell`` packages are installed with apt-get
instead, only the ones still missing.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from typing import IO, Any, Final

from browsermesh.config import locate_full_chromium, locate_headless_shell, process_environ
from browsermesh.errors import INSTALL_REMEDIATION

__all__ = [
    "INSTALL_REMEDIATION",
    "SHELL_REMEDIATION",
    "apt_commands",
    "auto_install_chromium",
    "ensure_browsers",
    "install_browser",
    "install_command",
    "missing_packages",
    "progress_line",
]

SHELL_REMEDIATION: Final = (
    "install it with browsermesh --install-browser or, as root on Debian, apt-get install "
    "chromium-headless-shell"
)
_PLAYWRIGHT_TIMEOUT_S: Final = 300.0
_APT_TIMEOUT_S: Final = 900.0


def install_command(missing: list[str] | None = None) -> list[str]:
    """The installer command line: the current interpreter running Playwright's CLI. By
    default it installs the full Chromium and the headless shell; given the ``missing``
    package names, only those (``--only-shell`` / ``--no-shell``)."""
    command = [sys.executable, "-m", "playwright", "install"]
    if missing == ["chromium-headless-shell"]:
        command.append("--only-shell")
    elif missing == ["chromium"]:
        command.append("--no-shell")
    return [*command, "chromium"]


def missing_packages() -> list[str]:
    """The Debian package names of the binaries no lookup finds: ``chromium`` (the full
    browser) and ``chromium-headless-shell``; empty when both are found."""
    environ = process_environ()
    missing = []
    if locate_full_chromium(environ) is None:
        missing.append("chromium")
    if locate_headless_shell(environ) is None:
        missing.append("chromium-headless-shell")
    return missing


def apt_commands(packages: list[str]) -> list[list[str]] | None:
    """The apt-get commands installing ``packages``; None when apt-get cannot be used here
    (not Linux, not root, or no apt-get)."""
    from browsermesh.engine.backends import running_as_root

    apt = shutil.which("apt-get")
    if not packages or apt is None or not running_as_root():
        return None
    # Status-Fd=1: machine-readable progress lines on stdout (auto-install reports them).
    install = [apt, "install", "-y", "-qq", "-o", "APT::Status-Fd=1", *packages]
    return [[apt, "update", "-qq"], install]


def _exit_status(returncode: int) -> int:
    # subprocess reports "killed by signal N" as -N; a shell would report 128 + N.
    return 128 - returncode if returncode < 0 else returncode


def _note(text: str) -> None:
    print(f"browsermesh: {text}", file=sys.stderr, flush=True)


_Stream = int | IO[str] | None


def _run(
    command: list[str],
    *,
    stdin: _Stream = None,
    stdout: _Stream = None,
    stderr: _Stream = None,
    timeout_s: float | None = None,
) -> tuple[int, str]:
    """Run one installer step: its exit status (1 when it cannot start or runs out of time)
    and the failure's reason. A stream left None is inherited."""
    streams: dict[str, Any] = {"stdin": stdin, "stdout": stdout, "stderr": stderr}
    try:
        completed = subprocess.run(
            command,
            **{name: value for name, value in streams.items() if value is not None},
            env={**process_environ(), "DEBIAN_FRONTEND": "noninteractive"},
            timeout=timeout_s,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        program = os.path.basename(command[0])
        _note(f"could not run the installer {program!r} ({type(exc).__name__})")
        return 1, type(exc).__name__
    status = _exit_status(completed.returncode)
    return status, f"exit status {status}"


def _apt_fallback(*, stdout: _Stream) -> int | None:
    """Debian's packages for whatever is still missing; None when nothing is missing or
    apt-get cannot be used here."""
    missing = missing_packages()
    commands = apt_commands(missing)
    if commands is None:
        return None
    _note(f"Playwright's download is unavailable; installing Debian's {' and '.join(missing)}")
    for command in commands:
        status, _ = _run(command, stdin=subprocess.DEVNULL, stdout=stdout, timeout_s=_APT_TIMEOUT_S)
        if status != 0:
            return status
    return 0 if not missing_packages() else 1


def install_browser() -> int:
    """``browsermesh --install-browser``: Playwright's installer with inherited stdio (progress
    visible); when it fails, Debian's packages as root. Returns the exit status (128 + N when
    the installer was killed by signal N)."""
    status, _ = _run(install_command())
    if status == 0:
        return 0
    fallback = _apt_fallback(stdout=None)
    return status if fallback is None else fallback


_PLAYWRIGHT_PERCENT = re.compile(r"\b(\d{1,3})% of \d")


def progress_line(line: str) -> str | None:
    """The progress phase an installer output line reports, or None.

    Playwright's installer prints ``|■■■■   |  40% of 167.3 MiB`` while it downloads; apt-get
    with ``APT::Status-Fd`` prints ``dlstatus:<n>:<percent>:<text>`` while it downloads and
    ``pmstatus:<package>:<percent>:<text>`` while it installs.
    """
    if line.startswith(("dlstatus:", "pmstatus:")):
        fields = line.split(":", 3)
        try:
            percent = float(fields[2])
        except (IndexError, ValueError):
            return None
        verb = "downloading" if line.startswith("dl") else "installing"
        return f"{verb} Chromium {min(100.0, max(0.0, percent)):.0f}%"
    match = _PLAYWRIGHT_PERCENT.search(line)
    return None if match is None else f"downloading Chromium {min(100, int(match[1]))}%"


async def _stream(command: list[str], report: Callable[[str], None], timeout_s: float) -> int:
    """Run one installer step, its progress lines to `report` and its other output to stderr
    (stdout belongs to MCP, stdin to the MCP client); its exit status (1 when it cannot
    start or runs out of time). A cancelled step ends its process before it returns."""
    try:
        proc = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            env={**process_environ(), "DEBIAN_FRONTEND": "noninteractive"},
        )
    except OSError as exc:
        _note(
            f"could not run the installer {os.path.basename(command[0])!r} ({type(exc).__name__})"
        )
        return 1
    assert proc.stdout is not None
    try:
        async with asyncio.timeout(timeout_s):
            async for raw in proc.stdout:
                line = raw.decode(errors="replace").rstrip()
                phase = progress_line(line)
                if phase is not None:
                    report(phase)
                elif line:
                    print(line, file=sys.stderr, flush=True)
            return _exit_status(await proc.wait())
    except TimeoutError:
        _note(f"the installer {os.path.basename(command[0])!r} ran out of time")
        return 1
    finally:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await asyncio.shield(proc.wait())


async def auto_install_chromium(report: Callable[[str], None]) -> bool:
    """Install Chromium for the first session that needs one (§19.4 step 2, issue 17):
    Playwright's installer, then Debian's packages as root. Real progress goes to `report`
    ("downloading Chromium 40%"); one-line notices to stderr. True when it installed."""
    _note(
        "Chromium not found; installing it with 'python -m playwright install chromium' "
        "(the first run may download about 300 MB)"
    )
    report("installing Chromium")
    status = await _stream(install_command(), report, _PLAYWRIGHT_TIMEOUT_S)
    reason = f"exit status {status}"
    if status != 0:
        commands = apt_commands(missing_packages())
        if commands is not None:
            _note("Playwright's download is unavailable; installing Debian's packages")
            for command in commands:
                status = await _stream(command, report, _APT_TIMEOUT_S)
                if status != 0:
                    break
            reason = f"apt-get exit status {status}"
    if status == 0:
        _note("Chromium installed")
        return True
    _note(f"Chromium install failed ({reason}); {INSTALL_REMEDIATION}")
    return False


def ensure_browsers() -> int:
    """``scripts/setup.sh``: install whichever of the full Chromium and the headless shell is
    missing (quiet, and nothing at all runs when both are found). Returns 0 when the full
    browser is there afterwards (a missing headless shell only costs speed: it is a warning),
    1 when it is not."""
    missing = missing_packages()
    if not missing:
        return 0
    _note(f"installing {' and '.join(missing)} (Playwright's download first)")
    # Quiet: where the download is unavailable, Playwright's error is expected (apt follows).
    _run(
        install_command(missing),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout_s=_PLAYWRIGHT_TIMEOUT_S,
    )
    if missing_packages():
        _apt_fallback(stdout=subprocess.DEVNULL)
    missing = missing_packages()
    if "chromium-headless-shell" in missing:
        _note(f"no headless shell; headless sessions use the full Chromium ({SHELL_REMEDIATION})")
    if "chromium" in missing:
        _note("could not install Chromium; install it and set BROWSERMESH_BROWSER_PATH")
        return 1
    return 0
