"""``browsermesh --doctor [--json]``: five installation checks (contract §20.2).

The checks run in a fixed order under one overall deadline of
``min(300000, max(15000, 3 × timeoutMs))`` ms; a check that would start after the deadline
fails with ``DIAGNOSTIC_DEADLINE_EXCEEDED`` without running. Every message and remediation is
a fixed sentence: no path, endpoint URL or raw exception text ever reaches the report (the raw
cause is only used to pick the failure code).

- :mod:`~browsermesh.doctor.report`: check results, fixed sentences, text and JSON formats;
- :mod:`~browsermesh.doctor.checks`: checks 1-4 (local, no browser);
- :mod:`~browsermesh.doctor.smoke`: check 5, the browser smoke test (Playwright, imported lazily);
- :mod:`~browsermesh.doctor.runner`: the deadline, the order, and :func:`run_doctor`.

This module only re-exports their public names.
"""

from __future__ import annotations

from browsermesh.doctor.checks import (
    check_chromium_executable,
    check_data_directory,
    check_python_version,
    check_version_consistency,
    describe_binaries,
    probe_data_directory,
)
from browsermesh.doctor.report import (
    CDP_CONNECT_REMEDIATION,
    CHECK_IDS,
    CLEANUP_REMEDIATION,
    CONNECT_REMEDIATION,
    DATA_DIR_REMEDIATION,
    DEADLINE_REMEDIATION,
    DEPENDENCY_REMEDIATION,
    DISPLAY_REMEDIATION,
    PYTHON_REMEDIATION,
    REMOTE_SMOKE_REMEDIATION,
    SANDBOX_REMEDIATION,
    SCHEMA_VERSION,
    SMOKE_REMEDIATION,
    UNTRUSTED_STATES_REMEDIATION,
    VERSION_REMEDIATION,
    CheckResult,
    format_json,
    format_text,
)
from browsermesh.doctor.runner import diagnose, doctor_deadline_ms, run_doctor
from browsermesh.doctor.smoke import check_browser_smoke, classify_smoke_failure

__all__ = [
    "CDP_CONNECT_REMEDIATION",
    "CHECK_IDS",
    "CLEANUP_REMEDIATION",
    "CONNECT_REMEDIATION",
    "DATA_DIR_REMEDIATION",
    "DEADLINE_REMEDIATION",
    "DEPENDENCY_REMEDIATION",
    "DISPLAY_REMEDIATION",
    "PYTHON_REMEDIATION",
    "REMOTE_SMOKE_REMEDIATION",
    "SANDBOX_REMEDIATION",
    "SCHEMA_VERSION",
    "SMOKE_REMEDIATION",
    "UNTRUSTED_STATES_REMEDIATION",
    "VERSION_REMEDIATION",
    "CheckResult",
    "check_browser_smoke",
    "check_chromium_executable",
    "check_data_directory",
    "check_python_version",
    "check_version_consistency",
    "classify_smoke_failure",
    "describe_binaries",
    "diagnose",
    "doctor_deadline_ms",
    "format_json",
    "format_text",
    "probe_data_directory",
    "run_doctor",
]
