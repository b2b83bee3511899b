"""What in the data directory the server trusts (issue 12 #8), and the audit of it.

Only what the server wrote is trusted (POSIX only). Every directory below the data directory on
the way to a principal's states (`states`, `principals`, `principals/<p>`,
`principals/<p>/states`) must be a real directory (not a symlink) owned by the server's effective
uid and not writable by group or others; otherwise every save, list, load and remove of that
principal fails `PERSISTENCE_DISABLED` (the store cannot be used until the operator fixes it; the
doctor and a start-up warning say why). A regular state file owned by another user or writable by
group or others is treated as absent: never listed, counted, loaded (`SAVED_STATE_NOT_FOUND`) or
removed, and a save of its id replaces it with a file of ours. The data directory itself may be a
symlink (the operator's choice). If it is writable by group or others (a 0777 directory, issue 30
#11), anyone could swap what is below it between the check and the use, so saved states are
refused as for an untrusted states directory (`data_dir_distrust`); owned by another user is
only a warning (that user could as well have made the directory below it).

`distrust` is the rule for one entry (the artifact store applies it to its directories too);
`first_distrust` walks the directories on the way to a states directory (the repository asks
before every operation); `audit_data_dir` is what the doctor and start-up report, in fixed
sentences that never name a path.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from browsermesh.persistence.fileio import os_failure

__all__ = [
    "DATA_DIR_WRITABLE",
    "LOCAL_PRINCIPAL",
    "StorageAudit",
    "audit_data_dir",
    "data_dir_distrust",
    "directories_below",
    "distrust",
    "first_distrust",
    "states_directories",
]

LOCAL_PRINCIPAL: Final = "local"
"""The principal whose states live in ``<data_dir>/states/``; any other principal ``p`` has
``<data_dir>/principals/<p>/states/`` (the layout the repository writes and the audit checks)."""

_GROUP_OR_OTHER_WRITE: Final = stat.S_IWGRP | stat.S_IWOTH
DATA_DIR_WRITABLE: Final = "The data directory is writable by group or others."
"""The audit's refusal for a data directory others can write (the doctor keys its chmod fix on
it)."""


def distrust(info: os.stat_result, *, directory: bool) -> str | None:
    """Why an entry the server did not write must not be trusted (fixed words, never a path), or
    None. POSIX only: elsewhere ownership and mode bits do not mean the same and nothing is
    refused."""
    if os.name != "posix":
        return None
    if stat.S_ISLNK(info.st_mode):
        return "a symbolic link"
    if directory and not stat.S_ISDIR(info.st_mode):
        return "not a directory"
    if info.st_uid != os.geteuid():
        return "owned by another user"
    if info.st_mode & _GROUP_OR_OTHER_WRITE:
        return "writable by group or others"
    return None


def data_dir_distrust(data_dir: Path) -> str | None:
    """Why saved states must not be kept in `data_dir` itself (fixed words), or None. The data
    directory may be a symlink, so its target is what counts; a missing one is fine (it is
    created 0700). POSIX only, like `distrust`."""
    if os.name != "posix":
        return None
    try:
        info = os.stat(data_dir)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise os_failure(exc, "data directory check failed") from None
    if stat.S_ISDIR(info.st_mode) and info.st_mode & _GROUP_OR_OTHER_WRITE:
        return "writable by group or others"
    return None


def directories_below(data_dir: Path, directory: Path) -> list[Path]:
    """The directories from just below `data_dir` down to `directory` (inclusive)."""
    out: list[Path] = []
    current = data_dir
    for part in directory.relative_to(data_dir).parts:
        current = current / part
        out.append(current)
    return out


def first_distrust(data_dir: Path, directory: Path) -> str | None:
    """The first reason not to trust a directory on the way to `directory`; missing ones are
    fine (nothing in them to trust yet)."""
    for path in directories_below(data_dir, directory):
        try:
            info = os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            raise os_failure(exc, "saved-state directory check failed") from None
        reason = distrust(info, directory=True)
        if reason is not None:
            return reason
    return None


@dataclass(frozen=True, slots=True)
class StorageAudit:
    """What the doctor and start-up report about the data directory (fixed sentences, no paths).

    `refused`: saved states of someone cannot be used until it is fixed. `warnings`: usable, but
    other users could read or replace what is stored."""

    refused: tuple[str, ...]
    warnings: tuple[str, ...]


def _safe_principal(principal: str) -> bool:
    return principal not in ("", ".", "..", LOCAL_PRINCIPAL) and not any(
        ch in principal for ch in ("/", "\\", "\x00", ":")
    )


def states_directories(data_dir: Path, principals: Iterable[str] = ()) -> list[Path]:
    """The states directories of `local` and of `principals` (the token file's names; unsafe
    names are skipped), whether they exist or not."""
    out = [data_dir / "states"]
    for principal in sorted(set(principals)):
        if _safe_principal(principal):
            out.append(data_dir / "principals" / principal / "states")
    return out


def audit_data_dir(data_dir: Path, principals: Iterable[str] = ()) -> StorageAudit:
    """Check the data directory and the states directories of `local` and of `principals`
    (the token file's names) without listing any directory."""
    data_dir = Path(os.path.abspath(data_dir))
    warnings: list[str] = []
    try:
        info = os.stat(data_dir)  # the data directory itself may be a symlink
    except OSError:
        return StorageAudit((), ())
    refused: list[str] = []
    if os.name == "posix" and stat.S_ISDIR(info.st_mode):
        if info.st_uid != os.geteuid():
            warnings.append("The data directory is owned by another user.")
        if info.st_mode & _GROUP_OR_OTHER_WRITE:
            refused.append(DATA_DIR_WRITABLE)
    local, *others = states_directories(data_dir, principals)
    reason = first_distrust(data_dir, local)
    if reason is not None:
        refused.append(f"The saved-states directory is {reason}.")
    for directory in others:
        reason = first_distrust(data_dir, directory)
        line = f"A principal's saved-states directory is {reason}."
        if reason is not None and line not in refused:
            refused.append(line)
    return StorageAudit(tuple(refused), tuple(warnings))
