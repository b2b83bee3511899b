"""The doctor's checks, in run order (reference §20.2; issue 22's Grid check; issue 23's storage
checks; issue 32): one :class:`DoctorCheck` per check, read by every part of the doctor.

The runner (:mod:`~browsermesh.doctor.runner`) runs ONE loop over :data:`CHECKS`; the report's
list of ids (:data:`CHECK_IDS`) and the tests' (tests/support/doctor.py) come from it. An entry
says what the check is called, how to run it, what the report says when the check itself
raises (its fallback: a fixed sentence, like every other one in the report) and, for a
conditional check, when it runs at all.

Adding a check: write its function in ``doctor/`` (it takes :class:`CheckInputs` and returns
the check's :class:`~browsermesh.doctor.report.CheckResult`, or an awaitable of it), then add
its entry here at its place in the run order. tests/unit/test_doctor.py checks that every entry
is complete, that no id appears twice and that the runner reaches every entry.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Final, TypeAlias

from browsermesh.config import Config
from browsermesh.doctor.checks import (
    check_chromium_executable,
    check_data_directory,
    check_python_version,
    check_version_consistency,
)
from browsermesh.doctor.privacy import check_data_directory_privacy
from browsermesh.doctor.report import (
    ARTIFACT_DIR_REMEDIATION,
    DATA_DIR_REMEDIATION,
    GRID_REMEDIATION,
    PYTHON_REMEDIATION,
    SMOKE_REMEDIATION,
    UPLOAD_ROOT_REMEDIATION,
    VERSION_REMEDIATION,
    CheckResult,
    failed,
)
from browsermesh.doctor.smoke import check_browser_smoke
from browsermesh.doctor.storage import check_artifact_storage, check_upload_root
from browsermesh.doctor.video import VIDEO_INSTALL_HINT, check_video_encoder
from browsermesh.install_browser import INSTALL_REMEDIATION
from browsermesh.model.deadline import Deadline

__all__ = [
    "CHECKS",
    "CHECK_IDS",
    "CheckFunction",
    "CheckInputs",
    "DoctorCheck",
    "Fallback",
]


@dataclass(frozen=True, slots=True)
class CheckInputs:
    """What a check may read: the configuration, the process environment (where Chromium is
    looked for) and the doctor's overall deadline (a long check bounds its steps by it)."""

    config: Config
    environ: Mapping[str, str]
    deadline: Deadline


CheckFunction: TypeAlias = Callable[[CheckInputs], CheckResult | Awaitable[CheckResult]]
"""A check: its result, or an awaitable of it (the checks that talk to a browser or a Grid)."""


@dataclass(frozen=True, slots=True)
class Fallback:
    """The failure the report shows when a check raises instead of answering: fixed sentences,
    so no raw exception text reaches the report."""

    code: str
    message: str
    remediation: str


@dataclass(frozen=True, slots=True, kw_only=True)
class DoctorCheck:
    """One check: its id (the report's), its function, its fallback, and when it applies."""

    id: str
    run: CheckFunction
    fallback: Fallback
    applies: Callable[[Config], bool] | None = None
    """None: every run reports the check; else only the runs whose configuration it accepts."""

    def runs_for(self, config: Config) -> bool:
        """Whether a run with ``config`` reports this check."""
        return self.applies is None or self.applies(config)

    def fallen_back(self) -> CheckResult:
        """The check's failure when it raised (its fallback, under its id)."""
        fallback = self.fallback
        return failed(self.id, fallback.code, fallback.message, fallback.remediation)


async def _grid_status(inputs: CheckInputs) -> CheckResult:
    # Imported only when a Grid is configured (its HTTP client is heavy), like the Grid's smoke
    # test (doctor/smoke.py).
    from browsermesh.doctor.grid import check_grid_status

    return await check_grid_status(inputs.config, inputs.deadline)


async def _fleet_redis(inputs: CheckInputs) -> CheckResult:
    # Imported only when a fleet directory is configured (it imports the Redis client).
    from browsermesh.doctor.fleet import check_fleet_redis

    return await check_fleet_redis(inputs.config, inputs.deadline)


async def _fleet_token(inputs: CheckInputs) -> CheckResult:
    from browsermesh.doctor.fleet import check_fleet_token

    return await check_fleet_token(inputs.config, inputs.deadline)


def _fleet_configured(config: Config) -> bool:
    return config.fleet_redis is not None


def _grid_configured(config: Config) -> bool:
    return config.selenium_grid is not None


CHECKS: Final[tuple[DoctorCheck, ...]] = (
    DoctorCheck(
        id="python-version",
        run=lambda _: check_python_version(),
        fallback=Fallback(
            "PYTHON_UNSUPPORTED", "The Python version could not be checked.", PYTHON_REMEDIATION
        ),
    ),
    DoctorCheck(
        id="version-consistency",
        run=lambda _: check_version_consistency(),
        fallback=Fallback(
            "VERSION_MISMATCH", "The installed version could not be checked.", VERSION_REMEDIATION
        ),
    ),
    DoctorCheck(
        id="data-directory-access",
        run=lambda inputs: check_data_directory(inputs.config),
        fallback=Fallback(
            "DATA_DIRECTORY_UNAVAILABLE",
            "The data directory could not be checked.",
            DATA_DIR_REMEDIATION,
        ),
    ),
    DoctorCheck(
        id="data-directory-privacy",
        run=lambda inputs: check_data_directory_privacy(inputs.config),
        fallback=Fallback(
            "DATA_DIRECTORY_NOT_PRIVATE",
            "The data directory's permissions could not be checked.",
            "Run: chmod 700 on the data directory so that only this user can open it.",
        ),
    ),
    DoctorCheck(
        id="upload-root",
        run=lambda inputs: check_upload_root(inputs.config),
        fallback=Fallback(
            "UPLOAD_ROOT_UNAVAILABLE",
            "The upload root could not be checked.",
            UPLOAD_ROOT_REMEDIATION,
        ),
    ),
    DoctorCheck(
        id="artifact-storage",
        run=lambda inputs: check_artifact_storage(inputs.config),
        fallback=Fallback(
            "ARTIFACT_STORAGE_UNAVAILABLE",
            "The artifact storage could not be checked.",
            ARTIFACT_DIR_REMEDIATION,
        ),
    ),
    # issue 35: optional, so it passes with a warning when missing.
    DoctorCheck(
        id="video-encoder",
        run=lambda _: check_video_encoder(),
        fallback=Fallback(
            "VIDEO_ENCODER_MISSING",
            "The video encoder could not be checked.",
            "Install ffmpeg: " + VIDEO_INSTALL_HINT,
        ),
    ),
    DoctorCheck(
        id="chromium-executable",
        run=lambda inputs: check_chromium_executable(inputs.config, inputs.environ),
        fallback=Fallback(
            "CHROMIUM_MISSING",
            "The Chromium executable could not be located.",
            INSTALL_REMEDIATION,
        ),
    ),
    # Last of the §20.2 checks: the only one that starts a browser.
    DoctorCheck(
        id="browser-smoke",
        run=lambda inputs: check_browser_smoke(inputs.config, inputs.environ, inputs.deadline),
        fallback=Fallback(
            "BROWSER_SMOKE_FAILED",
            "The browser smoke test failed unexpectedly.",
            SMOKE_REMEDIATION,
        ),
    ),
    # issue 22: after the §20.2 checks, and only when a Grid is configured.
    DoctorCheck(
        id="selenium-grid",
        run=_grid_status,
        fallback=Fallback(
            "GRID_UNREACHABLE", "The Selenium Grid could not be checked.", GRID_REMEDIATION
        ),
        applies=_grid_configured,
    ),
    # issue 37: only with a fleet directory.
    DoctorCheck(
        id="fleet-redis",
        run=_fleet_redis,
        fallback=Fallback(
            "FLEET_REDIS_UNREACHABLE",
            "The fleet directory could not be checked.",
            "Check that the Redis server of --fleet-redis is running and reachable.",
        ),
        applies=_fleet_configured,
    ),
    DoctorCheck(
        id="fleet-token",
        run=_fleet_token,
        fallback=Fallback(
            "FLEET_TOKEN_UNCHECKED",
            "The fleet token could not be checked.",
            "Check that the other replicas run and share this replica's --fleet-token-file.",
        ),
        applies=_fleet_configured,
    ),
)
"""Every check, in run order."""

CHECK_IDS: Final = tuple(check.id for check in CHECKS if check.applies is None)
"""The ids every run reports, in order (a conditional check comes on top when it applies)."""
