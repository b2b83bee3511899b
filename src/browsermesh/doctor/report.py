"""The doctor's report (reference §20.2): check results, their fixed sentences, both formats.

Every message and remediation is a fixed sentence: no path, endpoint URL or raw exception text
ever reaches the report (a raw cause only picks the failure code).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeAlias

from browsermesh._version import __version__

__all__ = [
    "GRID_REMEDIATION",
    "SCHEMA_VERSION",
    "CheckResult",
    "CheckStatus",
    "deadline_result",
    "failed",
    "format_json",
    "format_text",
    "passed",
]

SCHEMA_VERSION: Final = "1"
CheckStatus: TypeAlias = Literal["passed", "failed"]

_MAX_TEXT: Final = 256

# ------------------------------------------------------------------------------ fixed texts

PYTHON_REMEDIATION: Final = "Install Python 3.11 or newer and reinstall BrowserMesh with it."
# Not "pip install browsermesh": the package is not on PyPI yet (issue 23).
VERSION_REMEDIATION: Final = (
    "Reinstall BrowserMesh from one source: bash scripts/setup.sh in a checkout, or "
    "pipx install --force (or uv tool install --force) with the same checkout or Git URL."
)
DATA_DIR_REMEDIATION: Final = (
    "Choose a writable BROWSERMESH_DATA_DIR (or --data-dir) that this user can create, "
    "read and write."
)
UNTRUSTED_STATES_REMEDIATION: Final = (
    "Replace it with a real directory owned by this user and writable only by it (mode 0700), "
    "or choose another BROWSERMESH_DATA_DIR."
)
UPLOAD_ROOT_REMEDIATION: Final = (
    "Point BROWSERMESH_UPLOAD_ROOT (or --upload-root) at an existing directory this user can "
    "read, or unset it to take inline uploads only."
)
UPLOAD_OVERLAP_REMEDIATION: Final = (
    "Choose an upload root (BROWSERMESH_UPLOAD_ROOT) and a data directory (BROWSERMESH_DATA_DIR) "
    "apart from each other, with the token file outside the upload root."
)
ARTIFACT_DIR_REMEDIATION: Final = (
    "Remove the artifacts directory inside the data directory (the server recreates it, mode "
    "0700), or choose a writable BROWSERMESH_DATA_DIR (or --data-dir)."
)
ARTIFACT_DISK_REMEDIATION: Final = (
    "Free disk space where the data directory is, or lower BROWSERMESH_MAX_ARTIFACT_SESSION_BYTES "
    "and BROWSERMESH_MAX_ARTIFACT_TOTAL_BYTES below the free space."
)
HEADED_SHELL_REMEDIATION: Final = (
    "Point BROWSERMESH_BROWSER_PATH (or --browser-path) at a full Chromium, or run with "
    "--headless (BROWSERMESH_HEADLESS=true)."
)
DEPENDENCY_REMEDIATION: Final = "Run: python -m playwright install-deps chromium"
SANDBOX_REMEDIATION: Final = (
    "Fix the kernel sandbox support, or run with --no-sandbox (BROWSERMESH_NO_SANDBOX=true) "
    "only inside a trusted container."
)
DISPLAY_REMEDIATION: Final = (
    "Run with --headless (BROWSERMESH_HEADLESS=true), or start BrowserMesh where a display "
    "server is available."
)
SMOKE_REMEDIATION: Final = (
    "Check that BROWSERMESH_BROWSER_PATH (if set) names a working Chromium, "
    "or run: browsermesh --install-browser"
)
CONNECT_REMEDIATION: Final = (
    "Check that every browser server is running, reachable from this machine, and runs a "
    "Playwright version compatible with this client."
)
CDP_CONNECT_REMEDIATION: Final = (
    "Check that Chrome is running with remote debugging enabled and that the CDP endpoint is "
    "reachable from this machine."
)
REMOTE_SMOKE_REMEDIATION: Final = (
    "Check the remote browser's health and logs, then run the doctor again."
)
CLEANUP_REMEDIATION: Final = (
    "Check for leftover Chromium processes and the browser's health, then run the doctor again."
)
GRID_REMEDIATION: Final = (
    "Check that the Selenium Grid (BROWSERMESH_SELENIUM_GRID or --selenium-grid) is running and "
    "reachable from this machine, that its credentials are right, and that it has Chrome nodes."
)
DEADLINE_REMEDIATION: Final = (
    "Raise BROWSERMESH_TIMEOUT_MS (the doctor allows 3 x the timeout, 15 s to 300 s) "
    "and run the doctor again."
)


def _cut(text: str) -> str:
    return text if len(text) <= _MAX_TEXT else text[: _MAX_TEXT - 1] + "…"


@dataclass(frozen=True, slots=True)
class CheckResult:
    """One check's outcome; ``message`` and ``remediation`` are fixed sentences."""

    id: str
    status: CheckStatus
    code: str
    message: str
    remediation: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "status": self.status,
            "code": self.code,
            "message": _cut(self.message),
            "remediation": None if self.remediation is None else _cut(self.remediation),
        }


def passed(check_id: str, code: str, message: str) -> CheckResult:
    """A passed check (no remediation)."""
    return CheckResult(check_id, "passed", code, message, None)


def failed(check_id: str, code: str, message: str, remediation: str) -> CheckResult:
    """A failed check with its remediation."""
    return CheckResult(check_id, "failed", code, message, remediation)


def deadline_result(check_id: str, *, during: bool) -> CheckResult:
    """``DIAGNOSTIC_DEADLINE_EXCEEDED`` for a check started too late (or cut short)."""
    message = (
        "The doctor's overall deadline passed while this check was running."
        if during
        else "The doctor's overall deadline passed before this check could start."
    )
    return failed(check_id, "DIAGNOSTIC_DEADLINE_EXCEEDED", message, DEADLINE_REMEDIATION)


def format_json(report: Mapping[str, Any]) -> str:
    """The JSON report: exactly one line (with its newline)."""
    return json.dumps(report, ensure_ascii=True) + "\n"


def format_text(report: Mapping[str, Any]) -> str:
    """The human report: header, one line per check (+ remediation), blank line, result."""
    lines = [f"BrowserMesh {__version__} doctor"]
    for check in report["checks"]:
        mark = "ok  " if check["status"] == "passed" else "FAIL"
        lines.append(f"{mark} {check['id']:<24} {check['message']}")
        if check["remediation"] is not None:
            lines.append(f"     {check['remediation']}")
    lines.append("")
    lines.append(f"Result: {report['status']}")
    return "\n".join(lines) + "\n"
