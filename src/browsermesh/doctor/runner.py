"""Running the doctor (reference §20.2): the checks in order under one overall deadline,
and ``browsermesh --doctor [--json]``.

The checks are the catalogue's (:mod:`~browsermesh.doctor.catalogue`), run in one loop. The
deadline is ``min(300000, max(15000, 3 × timeoutMs))`` ms; a check that would start after it
fails with ``DIAGNOSTIC_DEADLINE_EXCEEDED`` without running, and a check that raises is reported
with its fixed fallback sentence.
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
from browsermesh.doctor.catalogue import CHECKS, CheckInputs, DoctorCheck
from browsermesh.doctor.report import (
    SCHEMA_VERSION,
    CheckResult,
    CheckStatus,
    deadline_result,
    format_json,
    format_text,
)
from browsermesh.model.deadline import Deadline, MonotonicClock

__all__ = ["diagnose", "doctor_deadline_ms", "run_doctor"]

_DEADLINE_FLOOR_MS: Final = 15_000
_DEADLINE_CEILING_MS: Final = 300_000


def doctor_deadline_ms(timeout_ms: int) -> int:
    """The overall doctor deadline: ``min(300000, max(15000, 3 × timeoutMs))`` ms."""
    return min(_DEADLINE_CEILING_MS, max(_DEADLINE_FLOOR_MS, 3 * timeout_ms))


async def _run(check: DoctorCheck, inputs: CheckInputs) -> CheckResult:
    """One check's result: skipped past the deadline, its fallback when it raises."""
    if inputs.deadline.expired():
        return deadline_result(check.id, during=False)
    try:
        outcome = check.run(inputs)
        return outcome if isinstance(outcome, CheckResult) else await outcome
    except Exception:
        return check.fallen_back()


async def diagnose(
    config: Config, environ: Mapping[str, str], *, clock: MonotonicClock | None = None
) -> dict[str, Any]:
    """Run the catalogue's checks that apply to ``config``, in order, and return the §20.2
    JSON object.

    ``clock`` (seconds, monotonic) is injectable for tests of the deadline rule.
    """
    deadline = Deadline(doctor_deadline_ms(config.timeout_ms), clock=clock or time.monotonic)
    inputs = CheckInputs(config, environ, deadline)
    results = [await _run(check, inputs) for check in CHECKS if check.runs_for(config)]
    status: CheckStatus = (
        "passed" if all(result.status == "passed" for result in results) else "failed"
    )
    return {
        "schemaVersion": SCHEMA_VERSION,
        "status": status,
        "checks": [result.to_json() for result in results],
    }


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
