"""The doctor and start-up report untrusted saved-state storage (issue 12 #8).

The repository's own refusals are tested in `test_states.py`; these check the operator-facing
messages: a failed `data-directory-access` check for refused states directories, a passed
`data-directory-privacy` one with a warning for a data directory others can write, and
`persistence.untrusted` warnings at start-up. None of them names a path.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from browsermesh import doctor
from browsermesh.config import default_config
from browsermesh.factory import warn_untrusted_storage
from browsermesh.log import EventLog

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX ownership and modes")


def symlinked_states(tmp_path: Path) -> Path:
    data_dir = tmp_path / "data"
    data_dir.mkdir(mode=0o700)
    (tmp_path / "elsewhere").mkdir()
    (data_dir / "states").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    return data_dir


def startup_warnings(config: Any) -> list[dict[str, Any]]:
    log = EventLog("silent")
    records: list[dict[str, Any]] = []
    log.sinks.append(records.append)
    warn_untrusted_storage(config, log)
    return records


def test_doctor_fails_on_a_symlinked_states_directory(tmp_path: Path) -> None:
    data_dir = symlinked_states(tmp_path)
    result = doctor.check_data_directory(default_config(data_dir=data_dir))
    assert result.status == "failed"
    assert result.code == "DATA_DIRECTORY_UNAVAILABLE"
    assert result.message == (
        "The saved-states directory is a symbolic link; saved states are refused until it is fixed."
    )
    assert result.remediation == doctor.UNTRUSTED_STATES_REMEDIATION
    assert str(tmp_path) not in str(result.to_json())


def test_doctor_checks_the_token_file_principals(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    (data_dir / "principals" / "alice" / "states").mkdir(parents=True)
    os.chmod(data_dir / "principals" / "alice" / "states", 0o777)
    token = "t" * 20
    plain = default_config(data_dir=data_dir)
    assert doctor.check_data_directory(plain).status == "passed"  # alice is unknown here
    with_alice = default_config(data_dir=data_dir, auth_tokens=(("alice", token),))
    result = doctor.check_data_directory(with_alice)
    assert result.status == "failed"
    assert result.message.startswith(
        "A principal's saved-states directory is writable by group or others;"
    )


@pytest.mark.parametrize("mode", [0o777, 0o775])
def test_doctor_fails_a_writable_data_directory_with_the_chmod_fix(
    tmp_path: Path, mode: int
) -> None:
    """Issue 30 #11: both checks fail (the server refuses saved states there), both say chmod."""
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    os.chmod(data_dir, mode)
    config = default_config(data_dir=data_dir)
    access = doctor.check_data_directory(config)
    assert (access.status, access.code) == ("failed", "DATA_DIRECTORY_UNAVAILABLE")
    assert access.message == (
        "The data directory is writable by group or others; saved states are refused until it "
        "is fixed."
    )
    assert access.remediation == doctor.chmod_remediation(config)
    result = doctor.check_data_directory_privacy(config)
    assert (result.status, result.code) == ("failed", "DATA_DIRECTORY_NOT_PRIVATE")
    assert result.message == (
        f"Other users can write to the data directory (mode {mode:04o}), so the server refuses "
        "to keep saved states in it."
    )
    assert result.remediation == doctor.chmod_remediation(config)
    for check in (access, result):
        assert len(check.message) <= 256 and str(tmp_path) not in str(check.to_json())


def test_doctor_passes_a_clean_data_directory(tmp_path: Path) -> None:
    result = doctor.check_data_directory(default_config(data_dir=tmp_path / "data"))
    assert result.status == "passed" and "Warning" not in result.message


def test_startup_warns_once_per_problem_without_paths(tmp_path: Path) -> None:
    data_dir = symlinked_states(tmp_path)
    os.chmod(data_dir, 0o777)
    records = startup_warnings(default_config(data_dir=data_dir))
    assert [(r["level"], r["type"]) for r in records] == [("warn", "persistence.untrusted")] * 2
    assert [r["reason"] for r in records] == [
        "The data directory is writable by group or others.",
        "The saved-states directory is a symbolic link.",
    ]
    assert str(tmp_path) not in str(records)


def test_startup_is_quiet_for_clean_or_disabled_storage(tmp_path: Path) -> None:
    assert startup_warnings(default_config(data_dir=tmp_path / "data")) == []
    data_dir = symlinked_states(tmp_path)
    assert startup_warnings(default_config(data_dir=data_dir, persistence=False)) == []
