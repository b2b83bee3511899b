"""``browsermesh --doctor [--json]`` (reference §20.2), without a browser.

The three real-Chromium runs (the passing JSON run, the unwritable data directory run and the CDP
attach run) are in tests/integration/test_doctor_smoke.py. The wrong-browser-path run here starts
a shell script.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import json
import re
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from browsermesh import doctor
from browsermesh._version import __version__
from browsermesh.config import default_config
from browsermesh.doctor.catalogue import CHECKS, CheckInputs, DoctorCheck, Fallback
from browsermesh.model.deadline import Deadline
from tests.support.doctor import (
    assert_no_leak,
    by_id,
    doctor_env,
    parse_json_report,
    run_cli,
)
from tests.support.ports import closed_port

# ------------------------------------------------------------------------------------------
# A real run without a browser (subprocess, as a user would run it)
# ------------------------------------------------------------------------------------------


def test_wrong_browser_path_fails_smoke(tmp_path: Path) -> None:
    fake = tmp_path / "not-a-browser"
    fake.write_text("#!/bin/sh\nexit 1\n")
    fake.chmod(0o755)
    env = doctor_env(tmp_path, BROWSERMESH_BROWSER_PATH=str(fake))
    result = run_cli(env, "--json")
    assert result.returncode == 1
    assert result.stderr == ""
    report = parse_json_report(result.stdout)
    checks = by_id(report)
    assert report["status"] == "failed"
    assert checks["chromium-executable"]["code"] == "CHROMIUM_AVAILABLE"
    smoke = checks["browser-smoke"]
    assert smoke["status"] == "failed"
    # The launch line Playwright logs contains --no-sandbox (we run as root): that must not
    # be mistaken for a sandbox failure.
    assert smoke["code"] == "BROWSER_SMOKE_FAILED"
    assert "browsermesh --install-browser" in smoke["remediation"]
    assert [c["id"] for c in report["checks"] if c["status"] == "failed"] == ["browser-smoke"]
    assert_no_leak(result.stdout, str(fake), str(tmp_path))


# ------------------------------------------------------------------------------------------
# Remote connection failures (driver only, no browser)
# ------------------------------------------------------------------------------------------


def test_cdp_connect_failure_hides_endpoint(tmp_path: Path) -> None:
    endpoint = f"http://user:s3cret-token@127.0.0.1:{closed_port()}/"
    # A closed port refuses at once; the budget only has to cover starting Playwright's driver,
    # which can take seconds on a loaded machine (2 s was flaky there).
    config = default_config(timeout_ms=15_000, data_dir=tmp_path / "data", cdp_endpoint=endpoint)
    report = asyncio.run(doctor.diagnose(config, {}))
    checks = by_id(report)
    assert checks["chromium-executable"]["code"] == "REMOTE_BROWSER_CONFIGURED"
    smoke = checks["browser-smoke"]
    assert (smoke["status"], smoke["code"]) == ("failed", "BROWSER_CONNECT_FAILED")
    assert smoke["remediation"] == doctor.CDP_CONNECT_REMEDIATION
    text = json.dumps(report) + doctor.format_text(report)
    assert_no_leak(text, "s3cret-token", "127.0.0.1", str(tmp_path))


def test_browser_server_connect_failure(tmp_path: Path) -> None:
    endpoints = (f"ws://127.0.0.1:{closed_port()}/a", f"ws://127.0.0.1:{closed_port()}/b")
    config = default_config(
        timeout_ms=15_000, data_dir=tmp_path / "data", browser_endpoints=endpoints
    )
    report = asyncio.run(doctor.diagnose(config, {}))
    checks = by_id(report)
    assert checks["chromium-executable"]["code"] == "REMOTE_BROWSER_CONFIGURED"
    assert "2 endpoints" in checks["chromium-executable"]["message"]
    smoke = checks["browser-smoke"]
    assert (smoke["status"], smoke["code"]) == ("failed", "BROWSER_CONNECT_FAILED")
    assert smoke["message"] == "Could not connect to browser endpoint 1 of 2."
    assert_no_leak(json.dumps(report), "127.0.0.1", "ws://")


# ------------------------------------------------------------------------------------------
# Missing executable: both checks fail, nothing is launched
# ------------------------------------------------------------------------------------------


def test_missing_chromium_skips_launch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Any attempt to import Playwright (and so to launch) would fail with another code.
    monkeypatch.setitem(sys.modules, "playwright.async_api", None)
    environ = {
        "PATH": str(tmp_path / "empty-bin"),
        "HOME": str(tmp_path),
        "PLAYWRIGHT_BROWSERS_PATH": str(tmp_path / "no-browsers"),
    }
    config = default_config(data_dir=tmp_path / "data")
    report = asyncio.run(doctor.diagnose(config, environ))
    checks = by_id(report)
    for check_id in ("chromium-executable", "browser-smoke"):
        assert checks[check_id]["code"] == "CHROMIUM_MISSING"
        assert checks[check_id]["remediation"] == "Run: browsermesh --install-browser"
    assert report["status"] == "failed"


# ------------------------------------------------------------------------------------------
# Deadline rule
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("timeout_ms", "expected"),
    [(1, 15_000), (5_000, 15_000), (5_001, 15_003), (10_000, 30_000), (100_000, 300_000)],
)
def test_deadline_formula(timeout_ms: int, expected: int) -> None:
    assert doctor.doctor_deadline_ms(timeout_ms) == expected


def test_deadline_with_fake_clock() -> None:
    now = [100.0]
    deadline = Deadline(15_000, clock=lambda: now[0])  # the one Deadline type (issue 18)
    assert deadline.remaining_ms() == 15_000 and not deadline.expired()
    now[0] = 114.5
    assert deadline.remaining_ms() == pytest.approx(500) and not deadline.expired()
    now[0] = 115.0
    assert deadline.expired()
    now[0] = 200.0
    assert deadline.remaining_ms() == 0 and deadline.expired()


def test_checks_started_after_deadline_fail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "playwright.async_api", None)  # nothing may launch
    ticks = itertools.chain([0.0, 1.0, 2.0], itertools.count(16.0))
    config = default_config(timeout_ms=1000, data_dir=tmp_path / "data")  # 15 s deadline
    report = asyncio.run(doctor.diagnose(config, {}, clock=lambda: next(ticks)))
    codes = [c["code"] for c in report["checks"]]
    assert codes[:2] == ["PYTHON_SUPPORTED", "VERSION_CONSISTENT"]
    assert codes[2:] == ["DIAGNOSTIC_DEADLINE_EXCEEDED"] * (len(doctor.CHECK_IDS) - 2)
    for check in report["checks"][2:]:
        assert check["status"] == "failed"
        assert check["remediation"] == doctor.DEADLINE_REMEDIATION
    assert report["status"] == "failed"
    assert not (tmp_path / "data").exists(), "a check after the deadline does not run"


# ------------------------------------------------------------------------------------------
# Individual checks and classification
# ------------------------------------------------------------------------------------------


def test_python_version_check() -> None:
    assert doctor.check_python_version((3, 11, 0)).code == "PYTHON_SUPPORTED"
    failed = doctor.check_python_version((3, 10, 9))
    assert (failed.status, failed.code) == ("failed", "PYTHON_UNSUPPORTED")
    assert failed.remediation is not None and "3.11" in failed.remediation


def test_version_consistency_check() -> None:
    assert doctor.check_version_consistency().code == "VERSION_CONSISTENT"
    assert doctor.check_version_consistency(lambda _: __version__).status == "passed"
    mismatch = doctor.check_version_consistency(lambda _: "0.0.1")
    assert (mismatch.status, mismatch.code) == ("failed", "VERSION_MISMATCH")

    def missing(_: str) -> str:
        raise LookupError("no metadata")

    assert doctor.check_version_consistency(missing).code == "VERSION_MISMATCH"


def test_data_directory_probe(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b"
    assert doctor.probe_data_directory(target) is None
    assert stat.S_IMODE(target.stat().st_mode) == 0o700
    assert list(target.iterdir()) == []
    # An existing directory keeps its mode and contents.
    (target / "keep.json").write_text("{}")
    assert doctor.probe_data_directory(target) is None
    assert [p.name for p in target.iterdir()] == ["keep.json"]

    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert doctor.probe_data_directory(blocker) is not None
    assert doctor.probe_data_directory(blocker / "sub") is not None


def _launch_error(body: str) -> Exception:
    return Exception(
        "BrowserType.launch: " + body + "\nCall log:\n  - <launching> /opt/sandbox/chrome "
        "--no-sandbox --user-data-dir=/tmp/x\n  - <launched> pid=1\n"
    )


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ("Host system is missing dependencies to run browsers.", "BROWSER_DEPENDENCY_MISSING"),
        ("Please install them with: sudo playwright install-deps", "BROWSER_DEPENDENCY_MISSING"),
        (
            "[err] chrome: error while loading shared libraries: libnss3.so: cannot open "
            "shared object file: No such file or directory",
            "BROWSER_DEPENDENCY_MISSING",
        ),
        ("[err] No usable sandbox! Update your kernel", "BROWSER_SANDBOX_UNAVAILABLE"),
        (
            "[err] Running as root without --no-sandbox is not supported.",
            "BROWSER_SANDBOX_UNAVAILABLE",
        ),
        (
            "Failed to launch chromium because executable doesn't exist at /x/sandbox/chrome",
            "CHROMIUM_MISSING",
        ),
        ("Failed to launch: Error: spawn /x/chrome ENOENT", "CHROMIUM_MISSING"),
        ("Failed to launch: Error: spawn /x/chrome EACCES", "CHROMIUM_MISSING"),
        ("Target page, context or browser has been closed", "BROWSER_SMOKE_FAILED"),
        (
            "Looks like you launched a headed browser without having a XServer running.",
            "BROWSER_SMOKE_FAILED",
        ),
    ],
)
def test_classify_smoke_failure(body: str, code: str) -> None:
    got, message, remediation = doctor.classify_smoke_failure(_launch_error(body))
    assert got == code
    assert "/x" not in message and "/opt" not in message and "/x" not in remediation
    assert len(message) <= 256 and len(remediation) <= 256
    expected_remediation = {
        "BROWSER_DEPENDENCY_MISSING": "Run: python -m playwright install-deps chromium",
        "CHROMIUM_MISSING": "Run: browsermesh --install-browser",
    }.get(code)
    if expected_remediation is not None:
        assert remediation == expected_remediation
    if code == "BROWSER_SANDBOX_UNAVAILABLE":
        assert "--no-sandbox" in remediation and "trusted container" in remediation


def test_classify_timeout() -> None:
    code, _, _ = doctor.classify_smoke_failure(TimeoutError())
    assert code == "BROWSER_SMOKE_FAILED"


# ------------------------------------------------------------------------------------------
# Output formats
# ------------------------------------------------------------------------------------------

SAMPLE: dict[str, Any] = {
    "schemaVersion": "1",
    "status": "failed",
    "checks": [
        {
            "id": "python-version",
            "status": "passed",
            "code": "PYTHON_SUPPORTED",
            "message": "Fine.",
            "remediation": None,
        },
        {
            "id": "data-directory-access",
            "status": "failed",
            "code": "DATA_DIRECTORY_UNAVAILABLE",
            "message": "Broken.",
            "remediation": "Fix it.",
        },
    ],
}


def test_format_text() -> None:
    assert doctor.format_text(SAMPLE) == (
        f"BrowserMesh {__version__} doctor\n"
        "ok   python-version           Fine.\n"
        "FAIL data-directory-access    Broken.\n"
        "     Fix it.\n"
        "\n"
        "Result: failed\n"
    )


def test_format_json_is_one_line() -> None:
    text = doctor.format_json(SAMPLE)
    assert text.endswith("\n") and text.count("\n") == 1
    assert json.loads(text) == SAMPLE


def test_check_result_bounds_text() -> None:
    long = doctor.CheckResult("browser-smoke", "failed", "X", "m" * 400, "r" * 400).to_json()
    assert len(long["message"]) == 256 and len(long["remediation"]) == 256


# ------------------------------------------------------------------------------------------
# Which binary each mode uses (issue 16)
# ------------------------------------------------------------------------------------------


def _executable(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)


@pytest.fixture
def empty_env(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "bin").mkdir()
    (tmp_path / "pw").mkdir()
    return {
        "HOME": str(tmp_path / "home"),
        "PATH": str(tmp_path / "bin"),
        "PLAYWRIGHT_BROWSERS_PATH": str(tmp_path / "pw"),
    }


def test_chromium_check_names_both_binaries(empty_env: dict[str, str]) -> None:
    bin_dir = Path(empty_env["PATH"])
    _executable(bin_dir / "chromium")
    _executable(bin_dir / "chromium-headless-shell")
    result = doctor.check_chromium_executable(default_config(headless=True), empty_env)
    assert result.code == "CHROMIUM_AVAILABLE" and result.remediation is None
    assert result.message == (
        "Headless sessions (this server) use the headless shell (system). "
        "Headed sessions use Chromium (system)."
    )
    headed = doctor.check_chromium_executable(default_config(), empty_env)
    assert headed.message.endswith("Headed sessions (this server) use Chromium (system).")


def test_chromium_check_says_how_to_install_the_shell(empty_env: dict[str, str]) -> None:
    _executable(Path(empty_env["PATH"]) / "chromium")
    result = doctor.check_chromium_executable(default_config(headless=True), empty_env)
    assert result.status == "passed"
    assert "Headless sessions (this server) use Chromium (system); no headless shell" in (
        result.message
    )
    assert "browsermesh --install-browser" in result.message
    assert "apt-get install chromium-headless-shell" in result.message
    assert len(result.message) <= 256


def test_headed_server_without_a_full_browser_fails(empty_env: dict[str, str]) -> None:
    _executable(Path(empty_env["PATH"]) / "chromium-headless-shell")
    headed = doctor.check_chromium_executable(default_config(), empty_env)
    assert headed.status == "failed" and headed.code == "CHROMIUM_MISSING"
    assert headed.remediation == "Run: browsermesh --install-browser"
    assert "Headed sessions (this server): no full Chromium found." in headed.message
    headless = doctor.check_chromium_executable(default_config(headless=True), empty_env)
    assert headless.status == "passed"
    assert "Headed sessions: no full Chromium found." in headless.message


def test_chromium_check_without_any_browser(empty_env: dict[str, str]) -> None:
    result = doctor.check_chromium_executable(default_config(headless=True), empty_env)
    assert result.status == "failed" and result.code == "CHROMIUM_MISSING"
    assert "/" not in result.message


# ------------------------------------------------------------------------------------------
# The catalogue (doctor/catalogue.py, issue 32): complete entries, one loop over all of them
# ------------------------------------------------------------------------------------------

KEBAB = re.compile(r"[a-z]+(?:-[a-z]+)*")
CODE = re.compile(r"[A-Z]+(?:_[A-Z]+)*")


@pytest.mark.parametrize("check", CHECKS, ids=[check.id for check in CHECKS])
def test_every_check_has_an_id_a_function_and_a_fallback(check: DoctorCheck) -> None:
    assert isinstance(check.id, str) and KEBAB.fullmatch(check.id), check.id
    assert callable(check.run)
    assert check.applies is None or callable(check.applies)
    fallback = check.fallback
    assert isinstance(fallback, Fallback)
    assert CODE.fullmatch(fallback.code), fallback.code
    for sentence in (fallback.message, fallback.remediation):
        # Fixed sentences within the report's bound (a raw cause never reaches the report).
        assert isinstance(sentence, str) and 0 < len(sentence) <= 256
        assert "{" not in sentence and "/tmp" not in sentence
    assert fallback.message.endswith(".")
    assert check.fallen_back() == doctor.CheckResult(
        check.id, "failed", fallback.code, fallback.message, fallback.remediation
    )


def test_no_check_appears_twice() -> None:
    ids = [check.id for check in CHECKS]
    assert len(set(ids)) == len(ids), ids
    assert len({check.run for check in CHECKS}) == len(CHECKS), "one function per check"
    # The checks every run reports are the unconditional ones, in catalogue order.
    assert list(doctor.CHECK_IDS) == [check.id for check in CHECKS if check.applies is None]
    assert doctor.CHECK_IDS[-1] == "browser-smoke", "the smoke test is the last §20.2 check"


def _recording(calls: list[str], *, raising: bool) -> tuple[DoctorCheck, ...]:
    """The catalogue with every function replaced by one that records its call; half answer
    at once, half through an awaitable (a check may be either)."""

    def fake(check: DoctorCheck, index: int) -> DoctorCheck:
        def answer(inputs: CheckInputs) -> doctor.CheckResult:
            assert isinstance(inputs.deadline, Deadline)
            calls.append(check.id)
            if raising:
                raise RuntimeError(f"secret from {check.id}")
            return doctor.CheckResult(check.id, "passed", "FAKE_PASSED", "Fine.")

        async def later(inputs: CheckInputs) -> doctor.CheckResult:
            return answer(inputs)

        if index % 2:
            return dataclasses.replace(check, run=later)
        return dataclasses.replace(check, run=answer)

    return tuple(fake(check, index) for index, check in enumerate(CHECKS))


def test_the_runner_runs_every_entry_once_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    monkeypatch.setattr("browsermesh.doctor.runner.CHECKS", _recording(calls, raising=False))
    # A configuration every conditional check applies to (the Grid's, the fleet's).
    config = default_config(
        data_dir=tmp_path / "data",
        selenium_grid="http://127.0.0.1:9/",
        fleet_redis="redis://:secret@127.0.0.1:9/0",
    )
    assert all(check.runs_for(config) for check in CHECKS)
    report = asyncio.run(doctor.diagnose(config, {}))
    assert calls == [check.id for check in CHECKS]
    assert [c["id"] for c in report["checks"]] == calls
    assert {c["code"] for c in report["checks"]} == {"FAKE_PASSED"}
    assert report["status"] == "passed"


def test_the_runner_skips_a_check_that_does_not_apply(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    monkeypatch.setattr("browsermesh.doctor.runner.CHECKS", _recording(calls, raising=False))
    report = asyncio.run(doctor.diagnose(default_config(data_dir=tmp_path / "data"), {}))
    assert calls == list(doctor.CHECK_IDS)
    assert [c["id"] for c in report["checks"]] == list(doctor.CHECK_IDS)
    assert "selenium-grid" not in calls and "fleet-redis" not in calls


def test_the_runner_reports_each_fallback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr("browsermesh.doctor.runner.CHECKS", _recording(calls, raising=True))
    config = default_config(
        data_dir=tmp_path / "data",
        selenium_grid="http://127.0.0.1:9/",
        fleet_redis="redis://:secret@127.0.0.1:9/0",
    )
    report = asyncio.run(doctor.diagnose(config, {}))
    assert calls == [check.id for check in CHECKS]
    assert report["checks"] == [check.fallen_back().to_json() for check in CHECKS]
    assert report["status"] == "failed"
    assert "secret" not in json.dumps(report)
