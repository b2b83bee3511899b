"""The per-principal saved-state repository on the file system (reference §11).

Layout: the principal ``local`` uses ``<data_dir>/states/``; any other principal ``p`` uses
``<data_dir>/principals/<p>/states/``. A state is ``<stateId>.json`` (compact UTF-8 JSON of the
Playwright storage-state shape). Directories are created on demand with mode 0700 and files are
written with mode 0600, both set explicitly so the umask does not matter.

All saves and removes of one principal run through that principal's mutation lock, so the quota
check and the write are atomic with respect to each other. Writes go to a temp file in the same
directory, are fsynced and then atomically replace the target; the temp file is always removed, and
a rejected or failed replacement leaves the previous file untouched.

Decisions where the reference is silent:

- Directory entries are examined without following symlinks. A candidate (a name ``<id>.json``
  whose stem matches the id regex) that is not a regular file is listed and counted against the
  state quota (it occupies an id), contributes 0 bytes to the aggregate, makes ``load`` and ``save``
  fail with ``LIMIT_EXCEEDED`` (never overwritten), and is unlinked by ``remove`` unless it is a
  directory (then ``LIMIT_EXCEEDED``).
- ``save`` validates the storage-state shape first (an invalid engine capture is
  ``BROWSER_ERROR``), so a saved state always loads again.
- Unexpected OS errors become ``INTERNAL_ERROR`` whose cause names only the exception type and
  errno: never a path (the data directory holds credentials) and never state contents.
- Extra keys inside the storage state (e.g. newer Playwright cookie fields) are kept.
- Origins per state (issue 12 #5): distinct `origins[].origin` values plus distinct cookie
  domains (lower-cased, leading `.` dropped) may not exceed `max_state_origins`
  (`BROWSERMESH_MAX_STATE_ORIGINS`), checked on save and on load (`LIMIT_EXCEEDED`, bound
  `stateOrigins`): Chromium restores each origin with a navigation, so a page with 200 iframes of
  different origins made a state that took 16 s to restore.
- Only what the server wrote is trusted (issue 12 #8; POSIX only): the rule and the audit the
  doctor and start-up report live in `persistence.trust`; a states directory it does not trust
  fails every operation of that principal with `PERSISTENCE_DISABLED` (details reason
  `untrusted_storage`), a data directory writable by group or others fails every operation of
  every principal the same way (reason `data_directory_writable`, whose next step is the
  `chmod`; issue 30 #11), and a state file it does not trust is treated as absent.

What a state is (its id, shape, origins and bytes) lives in `persistence.state_format`, the file
modes and the exclusive write shared with the artifact store in `persistence.fileio`; their
names the rest of the server imports from here are re-exported.

Persistence-disabled handling is the runtime's job, not this module's.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import errno
import os
import stat
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final, TypeVar

from browsermesh.errors import Bound, BrowserMeshError, ErrorCode
from browsermesh.model.clock import iso_from_epoch
from browsermesh.model.tasks import TaskOwner
from browsermesh.persistence.fileio import (
    DIR_MODE,
    FILE_MODE,
    NONBLOCK_OPEN,
    SAFE_OPEN,
    fsync_dir,
    os_failure,
    write_exclusive,
)
from browsermesh.persistence.state_format import (
    SAME_SITE_VALUES,
    STATE_ID_RE,
    count_state_origins,
    decode_state,
    encode_state,
    is_state_id,
    validate_state_id,
    validate_storage_state,
)
from browsermesh.persistence.trust import (
    LOCAL_PRINCIPAL,
    StorageAudit,
    audit_data_dir,
    data_dir_distrust,
    distrust,
    first_distrust,
)

__all__ = [
    "DIR_MODE",
    "FILE_MODE",
    "LOCAL_PRINCIPAL",
    "SAFE_OPEN",
    "SAME_SITE_VALUES",
    "STATE_ID_RE",
    "STATE_SUFFIX",
    "SavedStateView",
    "StateRepository",
    "StorageAudit",
    "audit_data_dir",
    "count_state_origins",
    "distrust",
    "is_state_id",
    "validate_state_id",
    "validate_storage_state",
    "write_exclusive",
]

STATE_SUFFIX: Final = ".json"

VAR_MAX_STATES: Final = "BROWSERMESH_MAX_SAVED_STATES"
VAR_MAX_STATE_BYTES: Final = "BROWSERMESH_MAX_STATE_BYTES"
VAR_MAX_TOTAL_BYTES: Final = "BROWSERMESH_MAX_STATE_TOTAL_BYTES"
VAR_MAX_STATE_ORIGINS: Final = "BROWSERMESH_MAX_STATE_ORIGINS"

_T = TypeVar("_T")

SavedStateView = dict[str, str]
"""`{"stateId": ..., "createdAt": ...}` (never contents)."""


# --- errors -------------------------------------------------------------------------------------


def _not_found(cause: str | None = None) -> BrowserMeshError:
    return BrowserMeshError(ErrorCode.SAVED_STATE_NOT_FOUND, cause=cause)


def _untrusted_file(reason: str) -> BrowserMeshError:
    return _not_found(f"saved state is not trusted: {reason}")


def _untrusted_dir(reason: str) -> BrowserMeshError:
    return BrowserMeshError(
        ErrorCode.PERSISTENCE_DISABLED,
        details={"reason": "untrusted_storage"},
        cause=f"saved-state directory is {reason}",
    )


def _open_data_dir(reason: str) -> BrowserMeshError:
    # Its own reason: the next step is the chmod that fixes it (issue 30 #11).
    return BrowserMeshError(
        ErrorCode.PERSISTENCE_DISABLED,
        details={"reason": "data_directory_writable"},
        cause=f"data directory is {reason}",
    )


# --- repository ---------------------------------------------------------------------------------


async def _run_to_completion(func: Callable[[], _T]) -> _T:
    """Run blocking `func` in a worker thread. If the caller is cancelled, still wait for the
    thread to finish (so a held mutation lock is not released mid-write), then re-raise."""
    # The thread's task is this call's own and always awaited here, cancelled or not (a thread
    # cannot be cancelled); its owner retrieves the outcome the cancellation discards.
    worker = TaskOwner()
    task = worker.spawn(asyncio.to_thread(func))
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        while not task.done():
            with contextlib.suppress(asyncio.CancelledError):
                await worker.drain()
        raise


class StateRepository:
    """Per-principal saved states under `data_dir` with count, per-state and total quotas."""

    def __init__(
        self,
        data_dir: Path,
        *,
        max_states: int,
        max_state_bytes: int,
        max_total_bytes: int,
        max_state_origins: int,
    ) -> None:
        for name, value in (
            ("max_states", max_states),
            ("max_state_bytes", max_state_bytes),
            ("max_total_bytes", max_total_bytes),
            ("max_state_origins", max_state_origins),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer")
        self._data_dir = Path(os.path.abspath(data_dir))
        self.max_states = max_states
        self.max_state_bytes = max_state_bytes
        self.max_total_bytes = max_total_bytes
        self.max_state_origins = max_state_origins
        self._locks: dict[str, asyncio.Lock] = {}

    # -- paths --

    def _states_dir(self, principal: str) -> Path:
        if principal == LOCAL_PRINCIPAL:
            return self._data_dir / "states"
        if (
            not isinstance(principal, str)
            or principal in ("", ".", "..")
            or any(ch in principal for ch in ("/", "\\", "\x00", ":"))
        ):
            raise BrowserMeshError(
                ErrorCode.INTERNAL_ERROR, cause="principal name is not a safe path component"
            )
        return self._data_dir / "principals" / principal / "states"

    def file_of(self, principal: str, state_id: str) -> Path:
        """The file `principal`'s state `state_id` is kept in (a test export names it)."""
        return self._states_dir(principal) / (validate_state_id(state_id) + STATE_SUFFIX)

    def _lock(self, principal: str) -> asyncio.Lock:
        lock = self._locks.get(principal)
        if lock is None:
            lock = self._locks[principal] = asyncio.Lock()
        return lock

    # -- quota errors --

    def _state_bytes_exceeded(self, cause: str | None = None) -> BrowserMeshError:
        return BrowserMeshError(
            ErrorCode.LIMIT_EXCEEDED,
            bound=Bound("stateBytes", "<=", self.max_state_bytes, VAR_MAX_STATE_BYTES),
            cause=cause,
        )

    def _states_exceeded(self) -> BrowserMeshError:
        return BrowserMeshError(
            ErrorCode.LIMIT_EXCEEDED,
            bound=Bound("states", "<=", self.max_states, VAR_MAX_STATES),
        )

    def _total_exceeded(self) -> BrowserMeshError:
        return BrowserMeshError(
            ErrorCode.LIMIT_EXCEEDED,
            bound=Bound("stateTotalBytes", "<=", self.max_total_bytes, VAR_MAX_TOTAL_BYTES),
        )

    def _not_regular(self) -> BrowserMeshError:
        return self._state_bytes_exceeded("saved state is not a regular file")

    def _check_origins(self, state: Mapping[str, Any]) -> None:
        if count_state_origins(state) > self.max_state_origins:
            raise BrowserMeshError(
                ErrorCode.LIMIT_EXCEEDED,
                bound=Bound("stateOrigins", "<=", self.max_state_origins, VAR_MAX_STATE_ORIGINS),
            )

    def _check_dirs(self, directory: Path) -> None:
        """Refuse a states directory the server cannot trust, or one in a data directory others
        can write (`PERSISTENCE_DISABLED`)."""
        reason = data_dir_distrust(self._data_dir)
        if reason is not None:
            raise _open_data_dir(reason)
        reason = first_distrust(self._data_dir, directory)
        if reason is not None:
            raise _untrusted_dir(reason)

    # -- public API --

    async def save(self, principal: str, state_id: str, state: dict[str, Any]) -> SavedStateView:
        """Write (or replace) a state; returns the SavedStateView `{stateId, createdAt}`."""
        state_id = validate_state_id(state_id)
        directory = self._states_dir(principal)
        payload = encode_state(state)
        if len(payload) > self.max_state_bytes:
            raise self._state_bytes_exceeded()
        self._check_origins(state)
        async with self._lock(principal):
            created = await _run_to_completion(
                lambda: self._save_sync(directory, state_id, payload)
            )
        return {"stateId": state_id, "createdAt": created}

    async def load(self, principal: str, state_id: str) -> dict[str, Any]:
        """Read and validate a state; missing → `SAVED_STATE_NOT_FOUND`."""
        state_id = validate_state_id(state_id)
        directory = self._states_dir(principal)
        raw = await asyncio.to_thread(self._read_sync, directory / (state_id + STATE_SUFFIX))
        state = decode_state(raw)
        self._check_origins(state)
        return state

    async def list(self, principal: str) -> list[SavedStateView]:
        """SavedStateViews of the principal, sorted by stateId in code-point order."""
        directory = self._states_dir(principal)
        return await asyncio.to_thread(self._list_sync, directory)

    async def remove(self, principal: str, state_id: str) -> None:
        """Delete a state; missing → `SAVED_STATE_NOT_FOUND`."""
        state_id = validate_state_id(state_id)
        directory = self._states_dir(principal)
        async with self._lock(principal):
            await _run_to_completion(
                lambda: self._remove_sync(directory / (state_id + STATE_SUFFIX))
            )

    # -- blocking parts (worker threads) --

    def _scan_sync(self, directory: Path) -> dict[str, os.stat_result]:
        """stateId → lstat of every candidate entry; `{}` when the directory is missing.

        Regular files the server cannot trust are not candidates (they are never listed)."""
        self._check_dirs(directory)
        found: dict[str, os.stat_result] = {}
        try:
            entries = os.scandir(directory)
        except (FileNotFoundError, NotADirectoryError):
            return found
        except OSError as exc:
            raise os_failure(exc, "saved-state directory scan failed") from None
        with entries:
            for entry in entries:
                name = entry.name
                if not name.endswith(STATE_SUFFIX):
                    continue
                stem = name[: -len(STATE_SUFFIX)]
                if not is_state_id(stem):
                    continue
                try:
                    info = entry.stat(follow_symlinks=False)
                except FileNotFoundError:
                    continue  # removed meanwhile
                except OSError as exc:
                    raise os_failure(exc, "saved-state stat failed") from None
                if stat.S_ISREG(info.st_mode) and distrust(info, directory=False):
                    continue
                if len(found) >= self.max_states:
                    raise self._states_exceeded()
                found[stem] = info
        return found

    def _list_sync(self, directory: Path) -> builtins.list[SavedStateView]:
        found = self._scan_sync(directory)
        return [
            {"stateId": state_id, "createdAt": iso_from_epoch(found[state_id].st_mtime)}
            for state_id in sorted(found)
        ]

    def _ensure_dir(self, directory: Path) -> None:
        """Create `directory` and missing ancestors with mode 0700 (existing ones are untouched)."""
        missing: builtins.list[Path] = []
        current = directory
        while not current.is_dir():
            missing.append(current)
            if current.parent == current:
                break
            current = current.parent
        for path in reversed(missing):
            try:
                os.mkdir(path, DIR_MODE)
            except FileExistsError:
                if not path.is_dir():
                    raise
                continue
            os.chmod(path, DIR_MODE)

    def _save_sync(self, directory: Path, state_id: str, payload: bytes) -> str:
        self._check_dirs(directory)  # before creating anything inside a symlinked directory
        try:
            self._ensure_dir(directory)
        except OSError as exc:
            raise os_failure(exc, "saved-state directory creation failed") from None
        # The scan itself raises LIMIT_EXCEEDED when there are more candidates than max_states.
        existing = self._scan_sync(directory)
        previous = existing.get(state_id)
        if len(existing) > self.max_states:
            raise self._states_exceeded()
        if previous is None and len(existing) >= self.max_states:
            raise self._states_exceeded()
        if previous is not None and not stat.S_ISREG(previous.st_mode):
            raise self._not_regular()
        total = sum(st.st_size for st in existing.values() if stat.S_ISREG(st.st_mode))
        if previous is not None:
            total -= previous.st_size
        if total + len(payload) > self.max_total_bytes:
            raise self._total_exceeded()

        target = directory / (state_id + STATE_SUFFIX)
        temp = directory / f"{target.name}.{os.getpid()}.{uuid.uuid4()}.tmp"
        try:
            write_exclusive(temp, payload, sync=True)
            os.replace(temp, target)
            mtime = os.stat(target, follow_symlinks=False).st_mtime
        except OSError as exc:
            raise os_failure(exc, "saved-state write failed") from None
        finally:
            with contextlib.suppress(OSError):
                os.unlink(temp)
        fsync_dir(directory)
        created: str = iso_from_epoch(mtime)
        return created

    def _read_sync(self, path: Path) -> bytes:
        limit = self.max_state_bytes
        self._check_dirs(path.parent)
        try:
            info = os.stat(path, follow_symlinks=False)
        except (FileNotFoundError, NotADirectoryError):
            raise _not_found() from None
        except OSError as exc:
            raise os_failure(exc, "saved-state stat failed") from None
        if not stat.S_ISREG(info.st_mode):
            raise self._not_regular()
        reason = distrust(info, directory=False)
        if reason is not None:
            raise _untrusted_file(reason)
        if info.st_size > limit:
            raise self._state_bytes_exceeded()
        flags = os.O_RDONLY | SAFE_OPEN | NONBLOCK_OPEN
        try:
            fd = os.open(path, flags)
        except FileNotFoundError:
            raise _not_found() from None
        except OSError as exc:
            if exc.errno == errno.ELOOP:  # swapped for a symlink after the stat
                raise self._not_regular() from None
            raise os_failure(exc, "saved-state open failed") from None
        try:
            opened = os.fstat(fd)
            if not stat.S_ISREG(opened.st_mode):
                raise self._not_regular()
            reason = distrust(opened, directory=False)  # replaced after the lstat
            if reason is not None:
                raise _untrusted_file(reason)
            chunks: builtins.list[bytes] = []
            remaining = limit + 1
            while remaining > 0:
                chunk = os.read(fd, min(remaining, 1 << 20))
                if not chunk:
                    break
                chunks.append(chunk)
                remaining -= len(chunk)
        except OSError as exc:
            raise os_failure(exc, "saved-state read failed") from None
        finally:
            os.close(fd)
        raw = b"".join(chunks)
        if len(raw) > limit:  # grew after the stat
            raise self._state_bytes_exceeded()
        return raw

    def _remove_sync(self, path: Path) -> None:
        self._check_dirs(path.parent)
        try:
            info = os.stat(path, follow_symlinks=False)
        except (FileNotFoundError, NotADirectoryError):
            raise _not_found() from None
        except OSError as exc:
            raise os_failure(exc, "saved-state stat failed") from None
        if stat.S_ISDIR(info.st_mode):
            raise self._not_regular()
        reason = distrust(info, directory=False) if stat.S_ISREG(info.st_mode) else None
        if reason is not None:
            raise _untrusted_file(reason)
        try:
            os.unlink(path)
        except FileNotFoundError:
            raise _not_found() from None
        except OSError as exc:
            raise os_failure(exc, "saved-state removal failed") from None
        fsync_dir(path.parent)
