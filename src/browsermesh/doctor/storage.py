"""Doctor checks ``upload-root`` and ``artifact-storage`` (issue 23): where files come from and
where downloads and PDFs go.

- ``upload-root``: the configured ``--upload-root`` still exists, is a directory and this user
  can read it; it must not overlap the data directory or hold the token file, since every file
  inside it is readable by any client (saved logins, other sessions' downloads, tokens). A
  missing or non-directory root named at start-up is already a configuration error (exit 2).
- ``artifact-storage``: ``<data dir>/artifacts``, when it exists, is a directory the artifact
  store would trust (the same rule, :func:`~browsermesh.persistence.trust.distrust`) and passes
  the data-directory probe (a missing one is not created: the store makes it on the first
  download, in the data directory the access check wrote); the disk holds at least one
  session's byte quota (else the check fails) and the total quota (else a warning); a
  per-session quota above the per-principal one, or that above the total, is a warning (the
  smaller one binds first). Without a data directory there is nothing to check (the access
  check has failed already).

Messages are fixed sentences with sizes, never paths.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Final, Protocol, TypeAlias

from browsermesh.config import Config
from browsermesh.doctor.checks import probe_data_directory
from browsermesh.doctor.report import (
    ARTIFACT_DIR_REMEDIATION,
    ARTIFACT_DISK_REMEDIATION,
    UPLOAD_OVERLAP_REMEDIATION,
    UPLOAD_ROOT_REMEDIATION,
    CheckResult,
    failed,
    passed,
)
from browsermesh.persistence.artifacts import artifacts_root
from browsermesh.persistence.trust import distrust

__all__ = ["check_artifact_storage", "check_upload_root", "format_size"]

UPLOAD_ID: Final = "upload-root"
ARTIFACT_ID: Final = "artifact-storage"
_KIB: Final = 1024
_MIB: Final = 1024 * 1024
_GIB: Final = 1024 * 1024 * 1024


def format_size(size: int) -> str:
    """A byte count for a reader: ``512 KiB``, ``100 MiB``, ``1.5 GiB``."""
    if size >= _GIB:
        return f"{size / _GIB:.1f} GiB"
    if size >= _MIB:
        return f"{size // _MIB} MiB"
    return f"{size // _KIB} KiB"


def _inside(path: str, root: str) -> bool:
    return os.path.commonpath([path, root]) == root


def _upload_failure(message: str) -> CheckResult:
    return failed(UPLOAD_ID, "UPLOAD_ROOT_UNAVAILABLE", message, UPLOAD_ROOT_REMEDIATION)


def check_upload_root(config: Config) -> CheckResult:
    """``upload-root``: passes when none is configured or the configured one is usable and
    exposes nothing of the server's own."""
    if config.upload_root is None:
        return passed(
            UPLOAD_ID,
            "UPLOAD_ROOT_NOT_CONFIGURED",
            "No upload root is configured: uploads take file content or artifacts, not paths.",
        )
    try:
        info = os.stat(config.upload_root)
    except OSError:
        return _upload_failure("The upload root does not exist (any more).")
    if not stat.S_ISDIR(info.st_mode):
        return _upload_failure("The upload root is not a directory.")
    if not os.access(config.upload_root, os.R_OK | os.X_OK):
        return _upload_failure("This user cannot read the upload root.")
    root = os.path.realpath(config.upload_root)
    data_dir = os.path.realpath(config.data_dir)
    if _inside(data_dir, root) or _inside(root, data_dir):
        return failed(
            UPLOAD_ID,
            "UPLOAD_ROOT_EXPOSES_DATA",
            "The upload root and the data directory overlap, so a client could upload saved "
            "logins or other sessions' downloads.",
            UPLOAD_OVERLAP_REMEDIATION,
        )
    token_file = config.auth_token_file
    if token_file is not None and _inside(os.path.realpath(token_file), root):
        return failed(
            UPLOAD_ID,
            "UPLOAD_ROOT_EXPOSES_DATA",
            "The token file is inside the upload root, so a client could upload every token.",
            UPLOAD_OVERLAP_REMEDIATION,
        )
    return passed(
        UPLOAD_ID,
        "UPLOAD_ROOT_READY",
        "Upload paths resolve inside the upload root, a directory this user can read.",
    )


class _Usage(Protocol):
    @property
    def free(self) -> int: ...


DiskUsage: TypeAlias = Callable[[Path], _Usage]
"""What ``shutil.disk_usage`` is to the check: a directory's file system, its free bytes."""


def _free_bytes(directory: Path, disk_usage: DiskUsage | None) -> int:
    measure: DiskUsage = shutil.disk_usage if disk_usage is None else disk_usage
    return int(measure(directory).free)


def _quota_warnings(config: Config, free: int) -> list[str]:
    session = config.max_artifact_session_bytes
    principal = config.max_artifact_principal_bytes
    total = config.max_artifact_total_bytes
    warnings: list[str] = []
    if free < total:
        warnings.append(
            f"{format_size(free)} free on disk is less than the total quota "
            f"({format_size(total)}): lower BROWSERMESH_MAX_ARTIFACT_TOTAL_BYTES"
        )
    if session > principal:
        warnings.append(
            f"the per-session quota ({format_size(session)}) is above the per-principal one "
            f"({format_size(principal)}), which binds first"
        )
    if principal > total:
        warnings.append(
            f"the per-principal quota ({format_size(principal)}) is above the total one "
            f"({format_size(total)}), which binds first"
        )
    return warnings


def check_artifact_storage(config: Config, disk_usage: DiskUsage | None = None) -> CheckResult:
    """``artifact-storage``: the artifacts directory, the disk space and the quotas.

    ``disk_usage`` (``shutil.disk_usage`` by default) is injectable for tests."""
    data_dir = Path(config.data_dir)
    if not data_dir.is_dir():
        return passed(
            ARTIFACT_ID,
            "ARTIFACT_STORAGE_NOT_CHECKED",
            "There is no data directory to keep artifacts in (data-directory-access says why).",
        )
    root = artifacts_root(data_dir)
    try:
        info: os.stat_result | None = os.lstat(root)
    except FileNotFoundError:
        info = None  # the store creates it (0700) in the data directory, which the probe wrote
    if info is not None:
        reason = distrust(info, directory=True)
        if reason is not None:
            return failed(
                ARTIFACT_ID,
                "ARTIFACT_STORAGE_UNAVAILABLE",
                f"The artifacts directory is {reason}; downloads and PDFs fail until it is fixed.",
                ARTIFACT_DIR_REMEDIATION,
            )
        problem = probe_data_directory(root, "artifacts directory")
        if problem is not None:
            return failed(
                ARTIFACT_ID, "ARTIFACT_STORAGE_UNAVAILABLE", problem, ARTIFACT_DIR_REMEDIATION
            )
    free = _free_bytes(root if info is not None else data_dir, disk_usage)
    session = config.max_artifact_session_bytes
    if free < session:
        return failed(
            ARTIFACT_ID,
            "ARTIFACT_DISK_LOW",
            f"Only {format_size(free)} is free on the artifacts' disk, less than one session's "
            f"artifact quota ({format_size(session)}).",
            ARTIFACT_DISK_REMEDIATION,
        )
    warnings = _quota_warnings(config, free)
    if warnings:
        message = "The artifacts directory is writable. Warning: " + "; ".join(warnings) + "."
    else:
        message = (
            f"The artifacts directory is writable and {format_size(free)} is free for quotas of "
            f"{format_size(session)} per session, "
            f"{format_size(config.max_artifact_principal_bytes)} per principal and "
            f"{format_size(config.max_artifact_total_bytes)} in all."
        )
    return passed(ARTIFACT_ID, "ARTIFACT_STORAGE_READY", message)
