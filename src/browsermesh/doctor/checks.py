"""Doctor checks (reference §20.2): Python version, version consistency, data directory access,
Chromium executable. Each is quick and local; none starts a browser. The data directory's
permissions, the upload root and the artifact storage (issue 23) are checked by
:mod:`~browsermesh.doctor.privacy` and :mod:`~browsermesh.doctor.storage`.
"""

from __future__ import annotations

import importlib.metadata
import os
import sys
import uuid
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Final

from browsermesh._version import __version__
from browsermesh.config import ChromiumLocation, Config, binary_kind, locate_chromium
from browsermesh.doctor.privacy import chmod_remediation
from browsermesh.doctor.report import (
    DATA_DIR_REMEDIATION,
    HEADED_SHELL_REMEDIATION,
    PYTHON_REMEDIATION,
    UNTRUSTED_STATES_REMEDIATION,
    VERSION_REMEDIATION,
    CheckResult,
    failed,
    passed,
)
from browsermesh.install_browser import INSTALL_REMEDIATION, SHELL_REMEDIATION
from browsermesh.persistence.states import audit_data_dir
from browsermesh.persistence.trust import DATA_DIR_WRITABLE

__all__ = [
    "check_chromium_executable",
    "check_data_directory",
    "check_python_version",
    "check_version_consistency",
    "describe_binaries",
    "probe_data_directory",
    "usable_executable",
]


def check_python_version(version_info: tuple[int, ...] | None = None) -> CheckResult:
    """``python-version``: 3.11 or newer."""
    info = tuple(sys.version_info[:3]) if version_info is None else tuple(version_info)
    if info >= (3, 11):
        return passed("python-version", "PYTHON_SUPPORTED", "Python 3.11 or newer is running.")
    return failed(
        "python-version",
        "PYTHON_UNSUPPORTED",
        "This Python is older than 3.11, the oldest supported version.",
        PYTHON_REMEDIATION,
    )


def check_version_consistency(installed: Callable[[str], str] | None = None) -> CheckResult:
    """``version-consistency``: distribution metadata vs the package's version constant."""
    read = importlib.metadata.version if installed is None else installed
    try:
        metadata_version = read("browsermesh")
    except Exception:
        return failed(
            "version-consistency",
            "VERSION_MISMATCH",
            "The installed distribution metadata for browsermesh could not be read.",
            VERSION_REMEDIATION,
        )
    if metadata_version == __version__:
        return passed(
            "version-consistency",
            "VERSION_CONSISTENT",
            "The installed distribution metadata matches the package version.",
        )
    return failed(
        "version-consistency",
        "VERSION_MISMATCH",
        "The installed distribution metadata does not match the package version.",
        VERSION_REMEDIATION,
    )


_O_EXTRA: Final = (
    getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
)


def probe_data_directory(directory: Path, what: str = "data directory") -> str | None:
    """The §20.2 data-directory probe. Returns None on success, else a fixed failure sentence
    naming the directory by ``what`` (the artifact check probes its directory the same way).

    Creates the directory (0700) when missing, checks read/write access, exclusively creates a
    ``.doctor-<uuid4>.tmp`` sentinel (0600), reads it back and always deletes it. The directory
    is never listed.
    """
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
    except (OSError, ValueError):
        return f"The {what} does not exist and could not be created."
    if not os.path.isdir(directory):
        return f"The {what} path does not name a directory."
    if not os.access(directory, os.R_OK | os.W_OK | os.X_OK):
        return f"The {what} is not readable and writable by this user."

    sentinel = directory / f".doctor-{uuid.uuid4()}.tmp"
    payload = f"browsermesh doctor {uuid.uuid4()}\n".encode()
    try:
        fd = os.open(sentinel, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_EXTRA, 0o600)
    except OSError:
        return f"A probe file could not be created in the {what}."
    problem: str | None = None
    try:
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(payload)
                handle.flush()
        except OSError:
            problem = f"A probe file could not be written in the {what}."
        if problem is None:
            try:
                read_fd = os.open(sentinel, os.O_RDONLY | _O_EXTRA)
                with os.fdopen(read_fd, "rb") as handle:
                    content = handle.read(len(payload) + 1)
            except OSError:
                problem = f"A probe file could not be read back from the {what}."
            else:
                if content != payload:
                    problem = f"A probe file read back from the {what} was different."
    finally:
        try:
            os.unlink(sentinel)
        except OSError:
            problem = problem or f"A probe file could not be deleted from the {what}."
    return problem


def check_data_directory(config: Config) -> CheckResult:
    """``data-directory-access``: the §20.2 probe, then whether saved states would be trusted
    (issue 12 #8): a symlinked or foreign states directory, or a data directory writable by
    group or others (issue 30 #11; its fix is the ``chmod 700``), fails the check (the server
    refuses those states). Who else may read the data directory is the next check's
    (:mod:`~browsermesh.doctor.privacy`)."""
    problem = probe_data_directory(Path(config.data_dir))
    if problem is not None:
        return failed(
            "data-directory-access", "DATA_DIRECTORY_UNAVAILABLE", problem, DATA_DIR_REMEDIATION
        )
    audit = audit_data_dir(config.data_dir, (name for name, _ in config.auth_tokens))
    if audit.refused:
        first = audit.refused[0]
        fix = chmod_remediation(config) if first == DATA_DIR_WRITABLE else None
        return failed(
            "data-directory-access",
            "DATA_DIRECTORY_UNAVAILABLE",
            f"{first.rstrip('.')}; saved states are refused until it is fixed.",
            fix or UNTRUSTED_STATES_REMEDIATION,
        )
    return passed(
        "data-directory-access",
        "DATA_DIRECTORY_ACCESSIBLE",
        "The data directory can be created, written, read back and cleaned up.",
    )


# ------------------------------------------------------------------------------ check 4


_SOURCE_TEXT: Final = {"configured": "configured", "playwright": "Playwright's", "system": "system"}
_KIND_TEXT: Final = {"headless-shell": "the headless shell", "chromium": "Chromium"}


def usable_executable(path: str) -> bool:
    """An existing file this user may run (on Windows: any existing file)."""
    return os.path.isfile(path) and (sys.platform.startswith("win") or os.access(path, os.X_OK))


def _usable(location: ChromiumLocation | None) -> ChromiumLocation | None:
    return location if location is not None and usable_executable(location.path) else None


def _binary_text(location: ChromiumLocation) -> str:
    return f"{_KIND_TEXT[location.kind]} ({_SOURCE_TEXT[location.source]})"


def describe_binaries(config: Config, environ: Mapping[str, str]) -> tuple[bool, str]:
    """Whether this server's mode has a binary, and a message (no paths, at most 256
    characters) naming the binary headless and headed sessions use, with how to install a
    missing one (issue 16)."""
    headless = _usable(locate_chromium(replace(config, headless=True), environ))
    headed = _usable(locate_chromium(replace(config, headless=False), environ))
    here = " (this server)"
    headless_mark, headed_mark = (here, "") if config.headless else ("", here)
    if headless is None:
        headless_text = f"Headless sessions{headless_mark}: no Chromium found."
    else:
        headless_text = f"Headless sessions{headless_mark} use {_binary_text(headless)}"
        if headless.kind == "headless-shell" or headless.source == "configured":
            headless_text += "."
        else:
            headless_text += f"; no headless shell found, {SHELL_REMEDIATION}."
    if headed is None:
        headed_text = f"Headed sessions{headed_mark}: no full Chromium found."
    else:
        headed_text = f"Headed sessions{headed_mark} use {_binary_text(headed)}."
    available = (headless if config.headless else headed) is not None
    return available, f"{headless_text} {headed_text}"


def check_chromium_executable(config: Config, environ: Mapping[str, str]) -> CheckResult:
    """``chromium-executable``: the local executable, or the configured remote backend."""
    backend = config.backend
    if backend == "selenium-grid":  # the Grid's nodes run Chromium (doctor/grid.py)
        from browsermesh.doctor.grid import grid_configured  # its HTTP client is heavy

        return grid_configured()
    if backend == "cdp":
        return passed(
            "chromium-executable",
            "REMOTE_BROWSER_CONFIGURED",
            "A remote browser is configured (CDP endpoint); no local Chromium is needed.",
        )
    if backend == "browser-server":
        count = len(config.browser_endpoints)
        noun = "endpoint" if count == 1 else "endpoints"
        return passed(
            "chromium-executable",
            "REMOTE_BROWSER_CONFIGURED",
            f"Remote browser servers are configured ({count} {noun}); no local Chromium is needed.",
        )
    if (
        not config.headless
        and config.browser_path is not None
        and binary_kind(config.browser_path) == "headless-shell"
    ):
        return failed(
            "chromium-executable",
            "CHROMIUM_MISSING",
            "Headed sessions (this server) are configured to use a headless shell, which cannot "
            "open a window.",
            HEADED_SHELL_REMEDIATION,
        )
    available, message = describe_binaries(config, environ)
    if not available:
        return failed("chromium-executable", "CHROMIUM_MISSING", message, INSTALL_REMEDIATION)
    return passed("chromium-executable", "CHROMIUM_AVAILABLE", message)
