"""Running the doctor (contract §20.2): the checks in order under one overall deadline,
and ``browsermesh --doctor [--json]``.

The deadline is ``min(300000, max(15000, 3 × timeoutMs))`` ms; a check that would start after
it fails with ``DIAGNOSTIC_DEADLINE_EXCEEDED`` without running, and a check that raises is
reported with its fixed fallback sentence.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from collections.abc import Mapping
from typing import Any, Final

from browsermesh.config import Config, process_environ
from browsermesh.doctor.checks import (
    check_chromium_executable,
    check_data_directory,
    check_python_version,
    check_version_consistency,
)
from browsermesh.doctor.privacy import check_data_directory_privacy
from browsermesh.doctor.report import (
    ARTIFACT_DIR_REMEDIATION,
    CHECK_IDS,
    DATA_DIR_REMEDIATION,
    PYTHON_REMEDIATION,
    SCHEMA_VERSION,
    SMOKE_REMEDIATION,
    UPLOAD_ROOT_REMEDIATION,
    VERSION_REMEDIATION,
    CheckResult,
    CheckStatus,
    deadline_result,
    failed,
    format_json,
    format_text,
)
from browsermesh.doctor.smoke import check_browser_smoke
from browsermesh.doctor.storage import check_artifact_storage, check_upload_root
from browsermesh.install_browser import INSTALL_REMEDIATION
from browsermesh.model.deadline import Deadline, MonotonicClock

__all__ = ["diagnose", "doctor_deadline_ms", "run_doctor"]

_DEADLINE_FLOOR_MS: Final = 15_000
_DEADLINE_CEILING_MS: Final = 300_000


def doctor_deadline_ms(timeout_ms: int) -> int:
    """The overall doctor deadline: ``min(300000, max(15000, 3 × timeoutMs))`` ms."""
    return min(_DEADLINE_CEILING_MS, max(_DEADLINE_FLOOR_MS, 3 * timeout_ms))


_FALLBACKS: Final[dict[str, tuple[str, str, str]]] = {
    "python-version": (
        "PYTHON_UNSUPPORTED",
        "The Python version could not be checked.",
        PYTHON_REMEDIATION,
    ),
    "version-consistency": (
        "VERSION_MISMATCH",
        "The installed version could not be checked.",
        VERSION_REMEDIATION,
    ),
    "data-directory-access": (
        "DATA_DIRECTORY_UNAVAILABLE",
        "The data directory could not be checked.",
        DATA_DIR_REMEDIATION,
    ),
    "data-directory-privacy": (
        "DATA_DIRECTORY_NOT_PRIVATE",
        "The data directory's permissions could not be checked.",
        "Run: chmod 700 on the data directory so that only this user can open it.",
    ),
    "upload-root": (
        "UPLOAD_ROOT_UNAVAILABLE",
        "The upload root could not be checked.",
        UPLOAD_ROOT_REMEDIATION,
    ),
    "artifact-storage": (
        "ARTIFACT_STORAGE_UNAVAILABLE",
        "The artifact storage could not be checked.",
        ARTIFACT_DIR_REMEDIATION,
    ),
    "chromium-executable": (
        "CHROMIUM_MISSING",
        "The Chromium executable could not be located.",
        INSTALL_REMEDIATION,
    ),
    "browser-smoke": (
        "BROWSER_SMOKE_FAILED",
        "The browser smoke test failed unexpectedly.",
        SMOKE_REMEDIATION,
    ),
}


async def _run_check(
    check_id: str, config: Config, environ: Mapping[str, str], deadline: Deadline
) -> CheckResult:
    if check_id == "python-version":
        return check_python_version()
    if check_id == "version-consistency":
        return check_version_consistency()
    if check_id == "data-directory-access":
        return check_data_directory(config)
    if check_id == "data-directory-privacy":
        return check_data_directory_privacy(config)
    if check_id == "upload-root":
        return check_upload_root(config)
    if check_id == "artifact-storage":
        return check_artifact_storage(config)
    if check_id == "chromium-executable":
        if config.backend == "selenium-grid":  # the Grid's nodes run Chromium (doctor/grid.py)
            from browsermesh.doctor.grid import grid_configured

            return grid_configured()
        return check_chromium_executable(config, environ)
    return await check_browser_smoke(config, environ, deadline)


async def diagnose(
    config: Config, environ: Mapping[str, str], *, clock: MonotonicClock | None = None
) -> dict[str, Any]:
    """Run the checks in order and return the §20.2 JSON object.

    ``clock`` (seconds, monotonic) is injectable for tests of the deadline rule.
    """
    deadline = Deadline(doctor_deadline_ms(config.timeout_ms), clock=clock or time.monotonic)
    results: list[CheckResult] = []
    for check_id in CHECK_IDS:
        if deadline.expired():
            results.append(deadline_result(check_id, during=False))
            continue
        try:
            result = await _run_check(check_id, config, environ, deadline)
        except Exception:
            code, message, remediation = _FALLBACKS[check_id]
            result = failed(check_id, code, message, remediation)
        results.append(result)
    if config.selenium_grid is not None:  # issue 22: the Grid's /status (doctor/grid.py)
        results.append(await _grid_check(config, deadline))
    status: CheckStatus = (
        "passed" if all(result.status == "passed" for result in results) else "failed"
    )
    return {
        "schemaVersion": SCHEMA_VERSION,
        "status": status,
        "checks": [result.to_json() for result in results],
    }


async def _grid_check(config: Config, deadline: Deadline) -> CheckResult:
    from browsermesh.doctor.grid import GRID_CHECK_ID, GRID_REMEDIATION, check_grid_status

    if deadline.expired():
        return deadline_result(GRID_CHECK_ID, during=False)
    try:
        return await check_grid_status(config, deadline)
    except Exception:
        return failed(
            GRID_CHECK_ID, "GRID_UNREACHABLE", "The Selenium Grid could not be checked.",
            GRID_REMEDIATION,
        )  # fmt: skip


def _write(text: str) -> None:
    with contextlib.suppress(BrokenPipeError, ValueError, OSError):
        sys.stdout.write(text)
        sys.stdout.flush()


def run_doctor(config: Config, as_json: bool) -> int:
    """``browsermesh --doctor [--json]``: print the report; 0 when passed, 1 when failed.

    While the checks run, ``sys.stderr`` points at the null device, so neither the Playwright
    driver (which inherits it) nor any library warning writes to the real stderr.
    """
    environ = process_environ()
    with open(os.devnull, "w", encoding="utf-8") as sink, contextlib.redirect_stderr(sink):
        report = asyncio.run(diagnose(config, environ))
    _write(format_json(report) if as_json else format_text(report))
    return 0 if report["status"] == "passed" else 1
