"""``browsermesh --doctor [--json]``: the installation checks (reference §20.2, and issue 23's
data-directory permissions, upload root and artifact storage).

The checks run in a fixed order under one overall deadline of
``min(300000, max(15000, 3 × timeoutMs))`` ms; a check that would start after the deadline
fails with ``DIAGNOSTIC_DEADLINE_EXCEEDED`` without running. Every message and remediation is
a fixed sentence: no path, endpoint URL or raw exception text ever reaches the report (the raw
cause is only used to pick the failure code).

- :mod:`~browsermesh.doctor.catalogue`: every check in run order (id, function, fallback, when
  it applies): what the runner, the report's ids and the tests read;
- :mod:`~browsermesh.doctor.report`: check results, fixed sentences, text and JSON formats;
- :mod:`~browsermesh.doctor.checks`: Python, version, data directory access, Chromium (local);
- :mod:`~browsermesh.doctor.privacy`: who else can open the data directory;
- :mod:`~browsermesh.doctor.storage`: the upload root and the artifact storage;
- :mod:`~browsermesh.doctor.smoke`: the browser smoke test, last (Playwright, imported lazily);
- :mod:`~browsermesh.doctor.grid`: the Selenium Grid's status and smoke test (issue 22);
- :mod:`~browsermesh.doctor.fleet`: the fleet directory's PING (issue 37);
- :mod:`~browsermesh.doctor.runner`: the deadline, one loop over the catalogue, and
  :func:`run_doctor`.

This module only re-exports their public names.
"""

from __future__ import annotations

from browsermesh.doctor.catalogue import CHECK_IDS, CHECKS, DoctorCheck
from browsermesh.doctor.checks import (
    check_chromium_executable,
    check_data_directory,
    check_python_version,
    check_version_consistency,
    describe_binaries,
    probe_data_directory,
)
from browsermesh.doctor.privacy import check_data_directory_privacy, chmod_remediation
from browsermesh.doctor.report import (
    ARTIFACT_DIR_REMEDIATION,
    ARTIFACT_DISK_REMEDIATION,
    CDP_CONNECT_REMEDIATION,
    CLEANUP_REMEDIATION,
    CONNECT_REMEDIATION,
    DATA_DIR_REMEDIATION,
    DEADLINE_REMEDIATION,
    DEPENDENCY_REMEDIATION,
    DISPLAY_REMEDIATION,
    HEADED_SHELL_REMEDIATION,
    PYTHON_REMEDIATION,
    REMOTE_SMOKE_REMEDIATION,
    SANDBOX_REMEDIATION,
    SCHEMA_VERSION,
    SMOKE_REMEDIATION,
    UNTRUSTED_STATES_REMEDIATION,
    UPLOAD_OVERLAP_REMEDIATION,
    UPLOAD_ROOT_REMEDIATION,
    VERSION_REMEDIATION,
    CheckResult,
    format_json,
    format_text,
)
from browsermesh.doctor.runner import diagnose, doctor_deadline_ms, run_doctor
from browsermesh.doctor.smoke import check_browser_smoke, classify_smoke_failure
from browsermesh.doctor.storage import check_artifact_storage, check_upload_root

__all__ = [
    "ARTIFACT_DIR_REMEDIATION",
    "ARTIFACT_DISK_REMEDIATION",
    "CDP_CONNECT_REMEDIATION",
    "CHECKS",
    "CHECK_IDS",
    "CLEANUP_REMEDIATION",
    "CONNECT_REMEDIATION",
    "DATA_DIR_REMEDIATION",
    "DEADLINE_REMEDIATION",
    "DEPENDENCY_REMEDIATION",
    "DISPLAY_REMEDIATION",
    "HEADED_SHELL_REMEDIATION",
    "PYTHON_REMEDIATION",
    "REMOTE_SMOKE_REMEDIATION",
    "SANDBOX_REMEDIATION",
    "SCHEMA_VERSION",
    "SMOKE_REMEDIATION",
    "UNTRUSTED_STATES_REMEDIATION",
    "UPLOAD_OVERLAP_REMEDIATION",
    "UPLOAD_ROOT_REMEDIATION",
    "VERSION_REMEDIATION",
    "CheckResult",
    "DoctorCheck",
    "check_artifact_storage",
    "check_browser_smoke",
    "check_chromium_executable",
    "check_data_directory",
    "check_data_directory_privacy",
    "check_python_version",
    "check_upload_root",
    "check_version_consistency",
    "chmod_remediation",
    "classify_smoke_failure",
    "describe_binaries",
    "diagnose",
    "doctor_deadline_ms",
    "format_json",
    "format_text",
    "probe_data_directory",
    "run_doctor",
]
