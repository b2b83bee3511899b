"""Doctor check ``data-directory-privacy`` (issue 23): who else can open what the data
directory holds.

Saved states are signed-in sessions (cookies, storage), so another user who can open one holds
the login. They are private when some directory on the way to them, the data directory
included, is owner-only (no group or other bits): the server makes every directory it creates
0700, so a failure means someone widened the modes by hand or restored a backup. A data
directory others can write fails too (the server refuses to keep saved states in it, issue 30
#11); one others can only read, while everything below it is private, passes with a warning;
all say ``chmod 700``. The data directory is named by its setting (or as ``~/.browsermesh``, the
default), never by its path (§20.2: no paths in the report). POSIX only.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Final

from browsermesh.config import DEFAULT_DATA_DIR, Config, default_config
from browsermesh.doctor.report import CheckResult, failed, passed
from browsermesh.persistence.trust import audit_data_dir, directories_below, states_directories

__all__ = ["check_data_directory_privacy", "chmod_remediation", "exposed_states"]

CHECK_ID: Final = "data-directory-privacy"
_GROUP_OR_OTHER: Final = 0o077
_GROUP_OR_OTHER_WRITE: Final = stat.S_IWGRP | stat.S_IWOTH


def chmod_remediation(config: Config) -> str:
    """The fixed ``chmod 700`` sentence for this configuration's data directory."""
    if Path(os.path.abspath(config.data_dir)) == default_config().data_dir:
        return f"Run: chmod 700 {DEFAULT_DATA_DIR} so that only this user can open it."
    return (
        "Run: chmod 700 on the data directory (the BROWSERMESH_DATA_DIR or --data-dir value) "
        "so that only this user can open it."
    )


def _owner_only(path: Path, *, follow: bool) -> bool | None:
    """Whether ``path`` is a directory without group or other bits; None when it is missing."""
    try:
        info = os.stat(path) if follow else os.lstat(path)
    except OSError:
        return None
    return stat.S_ISDIR(info.st_mode) and info.st_mode & _GROUP_OR_OTHER == 0


def exposed_states(data_dir: Path, principals: tuple[str, ...] = ()) -> int:
    """How many existing states directories (``local``'s and the principals') have no owner-only
    directory on the way from ``data_dir`` (which may be a symlink) down to them."""
    data_dir = Path(os.path.abspath(data_dir))
    count = 0
    for directory in states_directories(data_dir, principals):
        if _owner_only(directory, follow=False) is None:
            continue  # nothing saved there yet
        chain = [(data_dir, True)] + [(p, False) for p in directories_below(data_dir, directory)]
        if not any(_owner_only(path, follow=follow) for path, follow in chain):
            count += 1
    return count


def check_data_directory_privacy(config: Config) -> CheckResult:
    """``data-directory-privacy``: fails when other users can open saved states or write the
    data directory; passes with a warning when the data directory itself is only readable by
    others or is not this user's."""
    if os.name != "posix":
        return passed(
            CHECK_ID, "PERMISSIONS_NOT_CHECKED", "File permissions are not checked on this system."
        )
    data_dir = Path(os.path.abspath(config.data_dir))
    try:
        info = os.stat(data_dir)
    except OSError:
        info = None
    if info is None or not stat.S_ISDIR(info.st_mode):
        return passed(
            CHECK_ID,
            "PERMISSIONS_NOT_CHECKED",
            "There is no data directory to check (data-directory-access says why).",
        )
    principals = tuple(name for name, _ in config.auth_tokens)
    exposed = exposed_states(data_dir, principals)
    if exposed:
        noun = "directory" if exposed == 1 else f"directories ({exposed})"
        return failed(
            CHECK_ID,
            "DATA_DIRECTORY_NOT_PRIVATE",
            f"Other users can open the saved-states {noun}: no directory on the way to them is "
            "private to this user, and saved states hold signed-in sessions.",
            chmod_remediation(config),
        )
    mode = stat.S_IMODE(info.st_mode)
    if mode & _GROUP_OR_OTHER == 0 and info.st_uid == os.geteuid():
        return passed(
            CHECK_ID,
            "DATA_DIRECTORY_PRIVATE",
            f"The data directory is private to this user (mode {mode:04o}).",
        )
    if mode & _GROUP_OR_OTHER_WRITE:
        # The server refuses saved states here (issue 30 #11; data-directory-access fails too).
        return failed(
            CHECK_ID,
            "DATA_DIRECTORY_NOT_PRIVATE",
            f"Other users can write to the data directory (mode {mode:04o}), so the server "
            "refuses to keep saved states in it.",
            chmod_remediation(config),
        )
    warnings = list(audit_data_dir(data_dir).warnings)  # another owner
    if mode & _GROUP_OR_OTHER:
        warnings.append("The data directory is readable by group or others.")
    message = f"Saved states are private to this user. Warning (mode {mode:04o}):"
    for warning in warnings:
        message += " " + warning[0].lower() + warning[1:]
    if mode & _GROUP_OR_OTHER:
        message += " " + chmod_remediation(config)
    return passed(CHECK_ID, "DATA_DIRECTORY_PRIVATE", message)
