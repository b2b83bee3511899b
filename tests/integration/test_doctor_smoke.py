"""``browsermesh --doctor`` against a real Chromium (reference §20.2): the passing JSON run, the
unwritable data directory run and the CDP attach run (the rest is tests/unit/test_doctor.py)."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from browsermesh import doctor
from browsermesh._version import __version__
from browsermesh.config import default_config, find_chromium
from tests.support.doctor import (
    IDS,
    assert_no_leak,
    by_id,
    doctor_env,
    parse_json_report,
    run_cli,
)
from tests.support.servers import chromium_pids_with_marker


def test_doctor_passes_json(tmp_path: Path) -> None:
    marker = f"doctor-{uuid.uuid4()}"
    env = doctor_env(tmp_path, BROWSERMESH_TEST_MARKER=marker)
    result = run_cli(env, "--json")
    assert result.stderr == ""
    report = parse_json_report(result.stdout)
    assert report["status"] == "passed", report
    assert result.returncode == 0
    assert [c["code"] for c in report["checks"]] == [
        "PYTHON_SUPPORTED",
        "VERSION_CONSISTENT",
        "DATA_DIRECTORY_ACCESSIBLE",
        "DATA_DIRECTORY_PRIVATE",
        "UPLOAD_ROOT_NOT_CONFIGURED",
        "ARTIFACT_STORAGE_READY",
        "VIDEO_ENCODER_AVAILABLE",
        "CHROMIUM_AVAILABLE",
        "BROWSER_SMOKE_PASSED",
    ]
    data = tmp_path / "data"
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    assert list(data.iterdir()) == [], "the probe sentinel is always deleted"
    assert chromium_pids_with_marker(marker) == [], "the smoke browser is closed"
    assert_no_leak(result.stdout, str(tmp_path))


def test_unwritable_data_directory(tmp_path: Path) -> None:
    # Running as root, permission bits do not stop us: a path below a regular file does.
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    env = doctor_env(tmp_path, BROWSERMESH_DATA_DIR=str(blocker / "sub"))
    result = run_cli(env, "--json")
    assert result.returncode == 1
    assert result.stderr == ""
    report = parse_json_report(result.stdout)
    check = by_id(report)["data-directory-access"]
    assert check["status"] == "failed"
    assert check["code"] == "DATA_DIRECTORY_UNAVAILABLE"
    assert check["remediation"] == doctor.DATA_DIR_REMEDIATION
    assert "BROWSERMESH_DATA_DIR" in check["remediation"]
    assert [c["id"] for c in report["checks"] if c["status"] == "failed"] == [
        "data-directory-access"
    ]
    assert_no_leak(result.stdout, str(blocker))


@pytest.fixture
def cdp_chromium(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A Chromium started by the test with remote debugging; yields its ws endpoint."""
    executable = find_chromium(default_config(), os.environ)
    if executable is None:
        pytest.skip("no Chromium")
    process = subprocess.Popen(
        [
            executable,
            "--headless",
            "--no-sandbox",
            "--remote-debugging-port=0",
            f"--user-data-dir={tmp_path / 'cdp-profile'}",
            "--no-first-run",
            "--disable-background-networking",
            "about:blank",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        endpoint = None
        deadline = time.monotonic() + 30
        assert process.stderr is not None
        while time.monotonic() < deadline:
            line = process.stderr.readline().decode(errors="replace")
            if not line and process.poll() is not None:
                break
            match = re.search(r"DevTools listening on (ws://\S+)", line)
            if match:
                endpoint = match.group(1)
                break
        assert endpoint is not None, "Chromium did not report its DevTools endpoint"
        yield endpoint, process
    finally:
        process.kill()
        process.wait(timeout=10)


def test_cdp_text_mode_and_remote_browser_survives(
    tmp_path: Path,
    cdp_chromium: tuple[str, subprocess.Popen[bytes]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    endpoint, process = cdp_chromium
    config = default_config(
        headless=True, timeout_ms=10_000, data_dir=tmp_path / "data", cdp_endpoint=endpoint
    )
    assert doctor.run_doctor(config, as_json=False) == 0
    out, err = capsys.readouterr()
    assert err == ""
    lines = out.splitlines()
    assert lines[0] == f"BrowserMesh {__version__} doctor"
    assert len(lines) == 1 + len(IDS) + 2
    for line, check_id in zip(lines[1 : 1 + len(IDS)], IDS, strict=True):
        assert line.startswith(f"ok   {check_id:<24} ")
    assert "REMOTE" not in out  # codes are not printed in text mode; messages are
    assert "remote browser is configured" in lines[1 + IDS.index("chromium-executable")]
    assert lines[-2] == ""
    assert lines[-1] == "Result: passed"
    assert process.poll() is None, "the doctor never closes a remote browser"
    assert_no_leak(out, endpoint, endpoint.split("/devtools")[0])
