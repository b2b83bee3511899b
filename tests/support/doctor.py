"""Helpers for the doctor's tests (tests/unit/test_doctor.py without a browser,
tests/integration/test_doctor_smoke.py with one): its environment, its CLI, its report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from browsermesh.doctor.catalogue import CHECK_IDS

IDS = list(CHECK_IDS)
"""The checks of a run without a Selenium Grid, in order (the catalogue's unconditional ones)."""


def doctor_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BROWSERMESH_")}
    env.update(
        {
            "BROWSERMESH_HEADLESS": "true",
            "BROWSERMESH_DATA_DIR": str(tmp_path / "data"),
            "BROWSERMESH_TIMEOUT_MS": "10000",
        }
    )
    env.update(extra)
    return env


def run_cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "browsermesh", "--doctor", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def parse_json_report(stdout: str) -> dict[str, Any]:
    assert stdout.endswith("\n")
    assert stdout.count("\n") == 1, "JSON mode prints exactly one line"
    report: dict[str, Any] = json.loads(stdout)
    assert report["schemaVersion"] == "1"
    assert [check["id"] for check in report["checks"]] == IDS
    for check in report["checks"]:
        assert set(check) == {"id", "status", "code", "message", "remediation"}
        assert check["status"] in ("passed", "failed")
        assert isinstance(check["message"], str) and 0 < len(check["message"]) <= 256
        if check["status"] == "passed":
            assert check["remediation"] is None
        else:
            assert isinstance(check["remediation"], str) and len(check["remediation"]) <= 256
    expected = "passed" if all(c["status"] == "passed" for c in report["checks"]) else "failed"
    assert report["status"] == expected
    return report


def by_id(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {check["id"]: check for check in report["checks"]}


def assert_no_leak(text: str, *secrets: str) -> None:
    for secret in secrets:
        assert secret not in text
    assert "/tmp" not in text and str(Path.home()) + "/" not in text
