"""The doctor's checks of what issue 23 added (no browser): the data directory's privacy, the
upload root, the artifact storage, and a headed server configured with a headless shell.

Every directory is a tmp dir; every report text is checked for paths (§20.2).
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections import namedtuple
from pathlib import Path

import pytest

from browsermesh import doctor
from browsermesh.config import Config, default_config
from browsermesh.doctor.privacy import exposed_states
from browsermesh.doctor.storage import format_size
from tests.support.doctor import assert_no_leak, by_id

posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX ownership and modes")
Usage = namedtuple("Usage", "total used free")
MIB = 1024 * 1024
GIB = 1024 * MIB


def _private_dir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    path.chmod(0o700)
    return path


def _texts(result: doctor.CheckResult) -> str:
    return f"{result.message} {result.remediation or ''}"


# ------------------------------------------------------------------------------------------
# data-directory-privacy
# ------------------------------------------------------------------------------------------


@posix_only
def test_a_private_data_directory_passes(tmp_path: Path) -> None:
    data = _private_dir(tmp_path / "data")
    _private_dir(data / "states")
    result = doctor.check_data_directory_privacy(default_config(data_dir=data))
    assert (result.status, result.code) == ("passed", "DATA_DIRECTORY_PRIVATE")
    assert result.message == "The data directory is private to this user (mode 0700)."


@posix_only
def test_saved_states_other_users_can_open_fail_with_chmod(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "states").mkdir(parents=True)
    data.chmod(0o755)
    (data / "states").chmod(0o755)  # restored from a backup, say
    config = default_config(data_dir=data)
    result = doctor.check_data_directory_privacy(config)
    assert (result.status, result.code) == ("failed", "DATA_DIRECTORY_NOT_PRIVATE")
    assert result.message.startswith("Other users can open the saved-states directory:")
    assert result.remediation == doctor.chmod_remediation(config)
    assert "chmod 700" in result.remediation
    assert_no_leak(_texts(result), str(tmp_path))
    # One owner-only directory on the way is enough: here the data directory itself.
    data.chmod(0o700)
    assert doctor.check_data_directory_privacy(config).code == "DATA_DIRECTORY_PRIVATE"


@posix_only
def test_a_principals_open_states_count(tmp_path: Path) -> None:
    data = tmp_path / "data"
    states = data / "principals" / "alice" / "states"
    states.mkdir(parents=True)
    for path in (data, data / "principals", data / "principals" / "alice", states):
        path.chmod(0o750)
    assert doctor.check_data_directory_privacy(default_config(data_dir=data)).status == "passed"
    alice = default_config(data_dir=data, auth_tokens=(("alice", "t" * 20),))
    result = doctor.check_data_directory_privacy(alice)
    assert result.code == "DATA_DIRECTORY_NOT_PRIVATE"
    assert exposed_states(data, ("alice", "bob")) == 1  # bob has saved nothing yet
    (data / "states").mkdir(mode=0o755)
    (data / "states").chmod(0o755)
    assert exposed_states(data, ("alice",)) == 2
    assert "directories (2)" in doctor.check_data_directory_privacy(alice).message


@posix_only
def test_an_open_data_directory_over_private_states_warns(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    data.chmod(0o755)
    _private_dir(data / "states")
    config = default_config(data_dir=data)
    result = doctor.check_data_directory_privacy(config)
    assert (result.status, result.code, result.remediation) == (
        "passed",
        "DATA_DIRECTORY_PRIVATE",
        None,
    )
    assert result.message == (
        "Saved states are private to this user. Warning (mode 0755): the data directory is "
        "readable by group or others. " + doctor.chmod_remediation(config)
    )
    assert len(result.message) <= 256
    assert_no_leak(result.message, str(tmp_path))


@posix_only
def test_a_data_directory_of_another_user_warns_without_chmod(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _private_dir(tmp_path / "data")
    config = default_config(data_dir=data)
    monkeypatch.setattr(os, "geteuid", lambda: data.stat().st_uid + 1)
    result = doctor.check_data_directory_privacy(config)
    assert (result.status, result.code) == ("passed", "DATA_DIRECTORY_PRIVATE")
    assert result.message == (
        "Saved states are private to this user. Warning (mode 0700): the data directory is "
        "owned by another user."
    )


def test_chmod_remediation_names_the_setting_not_the_path(tmp_path: Path) -> None:
    assert doctor.chmod_remediation(default_config()) == (
        "Run: chmod 700 ~/.browsermesh so that only this user can open it."
    )
    custom = doctor.chmod_remediation(default_config(data_dir=tmp_path / "data"))
    assert "BROWSERMESH_DATA_DIR" in custom and str(tmp_path) not in custom


def test_privacy_is_not_checked_without_a_data_directory(tmp_path: Path) -> None:
    missing = doctor.check_data_directory_privacy(default_config(data_dir=tmp_path / "none"))
    (tmp_path / "file").write_text("x")
    a_file = doctor.check_data_directory_privacy(default_config(data_dir=tmp_path / "file"))
    for result in (missing, a_file):
        assert (result.status, result.code) == ("passed", "PERMISSIONS_NOT_CHECKED")


def test_privacy_is_not_checked_off_posix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = default_config(data_dir=tmp_path)
    monkeypatch.setattr(os, "name", "nt")  # pathlib would refuse a Path now: undo at once
    try:
        result = doctor.check_data_directory_privacy(config)
    finally:
        monkeypatch.undo()
    assert result.code == "PERMISSIONS_NOT_CHECKED"


# ------------------------------------------------------------------------------------------
# upload-root
# ------------------------------------------------------------------------------------------


def _with_root(tmp_path: Path, root: Path, **extra: object) -> Config:
    return default_config(data_dir=tmp_path / "data", upload_root=root, **extra)


def test_no_upload_root_passes() -> None:
    result = doctor.check_upload_root(default_config())
    assert (result.status, result.code) == ("passed", "UPLOAD_ROOT_NOT_CONFIGURED")


def test_a_readable_upload_root_apart_from_the_data_passes(tmp_path: Path) -> None:
    root = _private_dir(tmp_path / "uploads")
    result = doctor.check_upload_root(_with_root(tmp_path, root))
    assert (result.status, result.code) == ("passed", "UPLOAD_ROOT_READY")
    assert "Warning" not in result.message


@pytest.mark.parametrize("problem", ["missing", "file", "unreadable"])
def test_an_unusable_upload_root_fails(tmp_path: Path, problem: str) -> None:
    root = tmp_path / "uploads"
    if problem == "file":
        root.write_text("x")
    elif problem == "unreadable":
        root.mkdir(mode=0o700)
    config = _with_root(tmp_path, root)
    if problem == "unreadable":
        # As root every directory is readable: make os.access say what it says to other users.
        real_access = os.access
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(os, "access", lambda p, m: False if p == root else real_access(p, m))
            result = doctor.check_upload_root(config)
    else:
        result = doctor.check_upload_root(config)
    expected = {
        "missing": "The upload root does not exist (any more).",
        "file": "The upload root is not a directory.",
        "unreadable": "This user cannot read the upload root.",
    }[problem]
    assert (result.status, result.code, result.message) == (
        "failed",
        "UPLOAD_ROOT_UNAVAILABLE",
        expected,
    )
    assert result.remediation == doctor.UPLOAD_ROOT_REMEDIATION
    assert "--upload-root" in result.remediation


@pytest.mark.parametrize("where", ["root-holds-data", "data-holds-root", "same"])
def test_an_upload_root_overlapping_the_data_directory_fails(tmp_path: Path, where: str) -> None:
    data = tmp_path / "data"
    root = {"root-holds-data": tmp_path, "data-holds-root": data / "states", "same": data}[where]
    root.mkdir(parents=True, exist_ok=True)
    result = doctor.check_upload_root(default_config(data_dir=data, upload_root=root))
    assert (result.status, result.code) == ("failed", "UPLOAD_ROOT_EXPOSES_DATA")
    assert "saved logins" in result.message
    assert result.remediation == doctor.UPLOAD_OVERLAP_REMEDIATION
    assert_no_leak(_texts(result), str(tmp_path))


def test_an_upload_root_holding_the_token_file_fails(tmp_path: Path) -> None:
    root = _private_dir(tmp_path / "uploads")
    tokens = root / "tokens"
    tokens.write_text("alice:" + "t" * 20 + "\n")
    result = doctor.check_upload_root(_with_root(tmp_path, root, auth_token_file=tokens))
    assert (result.status, result.code) == ("failed", "UPLOAD_ROOT_EXPOSES_DATA")
    assert "token file" in result.message
    elsewhere = _with_root(tmp_path, root, auth_token_file=tmp_path / "tokens")
    assert doctor.check_upload_root(elsewhere).status == "passed"


def test_the_file_system_root_as_upload_root_fails(tmp_path: Path) -> None:
    # Every data directory lies below it, and so would every saved login.
    config = default_config(data_dir=tmp_path / "data", upload_root=Path(os.sep))
    assert doctor.check_upload_root(config).code == "UPLOAD_ROOT_EXPOSES_DATA"


# ------------------------------------------------------------------------------------------
# artifact-storage
# ------------------------------------------------------------------------------------------


def _usage(free: int) -> object:
    return lambda _path: Usage(total=free * 2, used=free, free=free)


def test_artifact_storage_passes_and_leaves_no_trace(tmp_path: Path) -> None:
    data = _private_dir(tmp_path / "data")
    config = default_config(data_dir=data)
    result = doctor.check_artifact_storage(config, _usage(8 * GIB))
    assert (result.status, result.code) == ("passed", "ARTIFACT_STORAGE_READY")
    assert result.message == (
        "The artifacts directory is writable and 8.0 GiB is free for quotas of 100 MiB per "
        "session, 256 MiB per principal and 1.0 GiB in all."
    )
    assert list(data.iterdir()) == []  # a missing artifacts directory is not created
    artifacts = _private_dir(data / "artifacts")
    assert doctor.check_artifact_storage(config, _usage(8 * GIB)).code == "ARTIFACT_STORAGE_READY"
    assert list(artifacts.iterdir()) == []  # the probe file is gone


def test_an_artifacts_directory_that_fails_the_probe_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    artifacts = _private_dir(tmp_path / "data" / "artifacts")
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, m: p != artifacts and real_access(p, m))
    result = doctor.check_artifact_storage(default_config(data_dir=tmp_path / "data"))
    assert (result.status, result.code) == ("failed", "ARTIFACT_STORAGE_UNAVAILABLE")
    assert result.message == "The artifacts directory is not readable and writable by this user."
    assert result.remediation == doctor.ARTIFACT_DIR_REMEDIATION


def test_artifact_storage_measures_the_real_disk(tmp_path: Path) -> None:
    data = _private_dir(tmp_path / "data")
    result = doctor.check_artifact_storage(default_config(data_dir=data))
    assert result.status == "passed" or result.code == "ARTIFACT_DISK_LOW", result


@posix_only
@pytest.mark.parametrize("problem", ["symlink", "file", "group-writable"])
def test_an_untrusted_artifacts_directory_fails(tmp_path: Path, problem: str) -> None:
    data = _private_dir(tmp_path / "data")
    artifacts = data / "artifacts"
    if problem == "symlink":
        artifacts.symlink_to(_private_dir(tmp_path / "elsewhere"), target_is_directory=True)
    elif problem == "file":
        artifacts.write_text("x")
    else:
        artifacts.mkdir()
        artifacts.chmod(0o770)
    result = doctor.check_artifact_storage(default_config(data_dir=data), _usage(8 * GIB))
    assert (result.status, result.code) == ("failed", "ARTIFACT_STORAGE_UNAVAILABLE")
    reason = {
        "symlink": "a symbolic link",
        "file": "not a directory",
        "group-writable": "writable by group or others",
    }[problem]
    assert result.message == (
        f"The artifacts directory is {reason}; downloads and PDFs fail until it is fixed."
    )
    assert result.remediation == doctor.ARTIFACT_DIR_REMEDIATION
    assert_no_leak(_texts(result), str(tmp_path))


def test_artifact_storage_is_not_checked_without_a_data_directory(tmp_path: Path) -> None:
    (tmp_path / "data").write_text("a file where the data directory should be")
    config = default_config(data_dir=tmp_path / "data")
    result = doctor.check_artifact_storage(config, _usage(8 * GIB))
    assert (result.status, result.code) == ("passed", "ARTIFACT_STORAGE_NOT_CHECKED")


def test_less_disk_than_one_sessions_quota_fails(tmp_path: Path) -> None:
    config = default_config(data_dir=_private_dir(tmp_path / "data"))
    result = doctor.check_artifact_storage(config, _usage(50 * MIB))
    assert (result.status, result.code) == ("failed", "ARTIFACT_DISK_LOW")
    assert result.message == (
        "Only 50 MiB is free on the artifacts' disk, less than one session's artifact quota "
        "(100 MiB)."
    )
    assert result.remediation == doctor.ARTIFACT_DISK_REMEDIATION


def test_less_disk_than_the_total_quota_warns(tmp_path: Path) -> None:
    config = default_config(data_dir=_private_dir(tmp_path / "data"))
    result = doctor.check_artifact_storage(config, _usage(500 * MIB))
    assert (result.status, result.code) == ("passed", "ARTIFACT_STORAGE_READY")
    assert result.message == (
        "The artifacts directory is writable. Warning: 500 MiB free on disk is less than the "
        "total quota (1.0 GiB): lower BROWSERMESH_MAX_ARTIFACT_TOTAL_BYTES."
    )


def test_quotas_in_the_wrong_order_warn(tmp_path: Path) -> None:
    data = _private_dir(tmp_path / "data")
    config = default_config(
        data_dir=data,
        max_artifact_session_bytes=300 * MIB,
        max_artifact_principal_bytes=200 * MIB,
        max_artifact_total_bytes=100 * MIB,
    )
    result = doctor.check_artifact_storage(config, _usage(150 * MIB))
    assert result.code == "ARTIFACT_DISK_LOW"  # not even one session's quota fits
    result = doctor.check_artifact_storage(config, _usage(8 * GIB))
    assert result.status == "passed"
    assert "the per-session quota (300 MiB) is above the per-principal one (200 MiB)" in (
        result.message
    )
    assert "the per-principal quota (200 MiB) is above the total one (100 MiB)" in result.message
    worst = default_config(
        data_dir=data,
        max_artifact_session_bytes=2 * GIB,
        max_artifact_principal_bytes=1 * GIB,
        max_artifact_total_bytes=10 * GIB,
    )
    longest = doctor.check_artifact_storage(worst, _usage(3 * GIB))
    assert longest.message.count(";") == 1 and len(longest.message) <= 256


def test_format_size() -> None:
    assert [format_size(n) for n in (1024, 1_048_575, MIB, 100 * MIB, GIB, 3 * GIB // 2)] == [
        "1 KiB",
        "1023 KiB",
        "1 MiB",
        "100 MiB",
        "1.0 GiB",
        "1.5 GiB",
    ]


# ------------------------------------------------------------------------------------------
# chromium-executable: a configured headless shell (expected or not)
# ------------------------------------------------------------------------------------------


def _shell(tmp_path: Path) -> str:
    path = tmp_path / "chrome-headless-shell"
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return str(path)


def test_a_headed_server_with_a_configured_headless_shell_fails(tmp_path: Path) -> None:
    config = default_config(browser_path=_shell(tmp_path))
    result = doctor.check_chromium_executable(config, {})
    assert (result.status, result.code) == ("failed", "CHROMIUM_MISSING")
    assert result.message == (
        "Headed sessions (this server) are configured to use a headless shell, which cannot "
        "open a window."
    )
    assert result.remediation == doctor.HEADED_SHELL_REMEDIATION
    headless = doctor.check_chromium_executable(config.replace(headless=True), {})
    assert headless.status == "passed"
    assert headless.message.startswith(
        "Headless sessions (this server) use the headless shell (configured)."
    )


# ------------------------------------------------------------------------------------------
# The new checks in the doctor's run
# ------------------------------------------------------------------------------------------


def test_the_run_reports_the_new_checks_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "playwright.async_api", None)  # nothing may launch
    root = _private_dir(tmp_path / "uploads")
    config = default_config(data_dir=tmp_path / "data", upload_root=root)
    report = asyncio.run(doctor.diagnose(config, {"PATH": str(tmp_path / "no-bin")}))
    ids = [check["id"] for check in report["checks"]]
    assert ids == list(doctor.CHECK_IDS)
    assert ids.index("data-directory-access") < ids.index("data-directory-privacy")
    assert ids.index("artifact-storage") < ids.index("chromium-executable")
    checks = by_id(report)
    assert checks["data-directory-privacy"]["code"] == "DATA_DIRECTORY_PRIVATE"
    assert checks["upload-root"]["code"] == "UPLOAD_ROOT_READY"
    assert checks["artifact-storage"]["status"] == "passed" or (
        checks["artifact-storage"]["code"] == "ARTIFACT_DISK_LOW"
    )
    assert_no_leak(str(report), str(tmp_path))


@pytest.mark.parametrize(
    ("check_id", "target"),
    [
        ("data-directory-privacy", "check_data_directory_privacy"),
        ("upload-root", "check_upload_root"),
        ("artifact-storage", "check_artifact_storage"),
    ],
)
def test_a_new_check_that_raises_gets_its_fixed_fallback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, check_id: str, target: str
) -> None:
    monkeypatch.setitem(sys.modules, "playwright.async_api", None)

    def boom(*_args: object) -> doctor.CheckResult:
        raise RuntimeError(f"secret {tmp_path}")

    monkeypatch.setattr(f"browsermesh.doctor.catalogue.{target}", boom)  # issue 32
    report = asyncio.run(doctor.diagnose(default_config(data_dir=tmp_path / "data"), {}))
    check = by_id(report)[check_id]
    assert check["status"] == "failed"
    assert check["message"].endswith("could not be checked.")
    assert check["remediation"]
    assert_no_leak(str(report), str(tmp_path), "secret")
