"""The per-principal saved-state repository on the file system (contract §11).

Layout: the principal ``local`` uses ``<data_dir>/states/``; any other principal ``p`` uses
``<data_dir>/principals/<p>/states/``. A state is ``<stateId>.json`` (compact UTF-8 JSON of the
Playwright storage-state shape). Directories are created on demand with mode 0700 and files are
written with mode 0600, both set explicitly so the umask does not matter.

All saves and removes of one principal run through that principal's mutation lock, so the quota
check and the write are atomic with respect to each other. Writes go to a temp file in the same
directory, are fsynced and then atomically replace the target; the temp file is always removed, and
a rejected or failed replacement leaves the previous file untouched.

Decisions where the contract is silent:

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
- Only what the server wrote is trusted (issue 12 #8; POSIX only). Every directory below the data
  directory on the way to a principal's states (`states`, `principals`, `principals/<p>`,
  `principals/<p>/states`) must be a real directory (not a symlink) owned by the server's
  effective uid and not writable by group or others; otherwise every save, list, load and remove
  of that principal fails `PERSISTENCE_DISABLED` (the store cannot be used until the operator
  fixes it; the doctor and a start-up warning say why). A regular state file owned by another
  user or writable by group or others is treated as absent: never listed, counted, loaded
  (`SAVED_STATE_NOT_FOUND`) or removed, and a save of its id replaces it with a file of ours.
  The data directory itself may be a symlink (the operator's choice); if it is writable by group
  or others, or owned by another user, that is only a warning.

Persistence-disabled handling is the runtime's job, not this module's.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import errno
import json
import math
import os
import re
import stat
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, NoReturn, TypeVar

from browsermesh.errors import Bound, BrowserMeshError, ErrorCode, invalid_argument
from browsermesh.model.clock import iso_from_epoch
from browsermesh.model.tasks import TaskOwner

STATE_ID_RE: Final = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9._-]{0,127}$")
SAME_SITE_VALUES: Final = frozenset({"Strict", "Lax", "None"})
LOCAL_PRINCIPAL: Final = "local"
STATE_SUFFIX: Final = ".json"
DIR_MODE: Final = 0o700
FILE_MODE: Final = 0o600

VAR_MAX_STATES: Final = "BROWSERMESH_MAX_SAVED_STATES"
VAR_MAX_STATE_BYTES: Final = "BROWSERMESH_MAX_STATE_BYTES"
VAR_MAX_TOTAL_BYTES: Final = "BROWSERMESH_MAX_STATE_TOTAL_BYTES"
VAR_MAX_STATE_ORIGINS: Final = "BROWSERMESH_MAX_STATE_ORIGINS"
_GROUP_OR_OTHER_WRITE: Final = stat.S_IWGRP | stat.S_IWOTH

_O_BINARY: Final = getattr(os, "O_BINARY", 0)
_O_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_O_NONBLOCK: Final = getattr(os, "O_NONBLOCK", 0)
_O_CLOEXEC: Final = getattr(os, "O_CLOEXEC", 0)
SAFE_OPEN: Final = _O_NOFOLLOW | _O_BINARY | _O_CLOEXEC
"""Flags every open of a persistence file adds: no symlink, binary, not inherited."""

_T = TypeVar("_T")

SavedStateView = dict[str, str]
"""`{"stateId": ..., "createdAt": ...}` (never contents)."""


# --- validation ---------------------------------------------------------------------------------


def is_state_id(value: object) -> bool:
    """Whether `value` is a valid stateId (full match: a trailing newline is not allowed)."""
    return isinstance(value, str) and STATE_ID_RE.fullmatch(value) is not None


def validate_state_id(state_id: object) -> str:
    """Return `state_id` if it matches `STATE_ID_RE`; otherwise raise `INVALID_ARGUMENT`."""
    if not is_state_id(state_id):
        raise invalid_argument(
            "stateId",
            "1..128 characters of A-Z, a-z, 0-9, '.', '_' or '-'; the first a letter or digit",
        )
    assert isinstance(state_id, str)
    return state_id


def _corrupted(where: str) -> NoReturn:
    raise BrowserMeshError(
        ErrorCode.BROWSER_ERROR,
        cause="saved state is corrupted: invalid storage-state shape",
        internal={"field": where, "requirement": "Playwright storage-state shape"},
    )


def _require_str(item: Mapping[str, Any], key: str, where: str) -> None:
    if not isinstance(item.get(key), str):
        _corrupted(f"{where}.{key}")


def _require_bool(item: Mapping[str, Any], key: str, where: str) -> None:
    if not isinstance(item.get(key), bool):
        _corrupted(f"{where}.{key}")


def validate_storage_state(data: object) -> dict[str, Any]:
    """Check the Playwright storage-state shape; failure → `BROWSER_ERROR` (corrupted state).

    Shape: ``{cookies: [{name, value, domain, path, expires (finite number), httpOnly, secure,
    sameSite ∈ Strict|Lax|None}], origins: [{origin, localStorage: [{name, value}]}]}``. Extra keys
    are allowed and kept. Returns `data` itself (typed). Error details name the failing field path
    only, never a value.
    """
    if not isinstance(data, dict):
        _corrupted("$")
    cookies = data.get("cookies")
    if not isinstance(cookies, list):
        _corrupted("cookies")
    for index, cookie in enumerate(cookies):
        where = f"cookies[{index}]"
        if not isinstance(cookie, dict):
            _corrupted(where)
        for key in ("name", "value", "domain", "path"):
            _require_str(cookie, key, where)
        expires = cookie.get("expires")
        if (
            isinstance(expires, bool)
            or not isinstance(expires, int | float)
            or (isinstance(expires, float) and not math.isfinite(expires))
        ):
            _corrupted(f"{where}.expires")
        _require_bool(cookie, "httpOnly", where)
        _require_bool(cookie, "secure", where)
        if cookie.get("sameSite") not in SAME_SITE_VALUES:
            _corrupted(f"{where}.sameSite")
    origins = data.get("origins")
    if not isinstance(origins, list):
        _corrupted("origins")
    for index, origin in enumerate(origins):
        where = f"origins[{index}]"
        if not isinstance(origin, dict):
            _corrupted(where)
        _require_str(origin, "origin", where)
        storage = origin.get("localStorage")
        if not isinstance(storage, list):
            _corrupted(f"{where}.localStorage")
        for item_index, item in enumerate(storage):
            item_where = f"{where}.localStorage[{item_index}]"
            if not isinstance(item, dict):
                _corrupted(item_where)
            _require_str(item, "name", item_where)
            _require_str(item, "value", item_where)
    return data


def count_state_origins(state: Mapping[str, Any]) -> int:
    """Distinct `origins[].origin` values plus distinct cookie domains (case-insensitive, a
    leading `.` ignored) of a shape-valid storage state: what a restore has to visit."""
    origins = {item["origin"] for item in state.get("origins", ())}
    domains = {cookie["domain"].lower().lstrip(".") for cookie in state.get("cookies", ())}
    return len(origins) + len(domains)


# --- trust ----------------------------------------------------------------------------------------


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


def _below(data_dir: Path, directory: Path) -> list[Path]:
    """The directories from just below `data_dir` down to `directory` (inclusive)."""
    out: list[Path] = []
    current = data_dir
    for part in directory.relative_to(data_dir).parts:
        current = current / part
        out.append(current)
    return out


def _first_distrust(data_dir: Path, directory: Path) -> str | None:
    """The first reason not to trust a directory on the way to `directory`; missing ones are
    fine (nothing in them to trust yet)."""
    for path in _below(data_dir, directory):
        try:
            info = os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            raise _os_failure(exc, "saved-state directory check failed") from None
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


def audit_data_dir(data_dir: Path, principals: Iterable[str] = ()) -> StorageAudit:
    """Check the data directory and the states directories of `local` and of `principals`
    (the token file's names) without listing any directory."""
    data_dir = Path(os.path.abspath(data_dir))
    warnings: list[str] = []
    try:
        info = os.stat(data_dir)  # the data directory itself may be a symlink
    except OSError:
        return StorageAudit((), ())
    if os.name == "posix" and stat.S_ISDIR(info.st_mode):
        if info.st_uid != os.geteuid():
            warnings.append("The data directory is owned by another user.")
        if info.st_mode & _GROUP_OR_OTHER_WRITE:
            warnings.append("The data directory is writable by group or others.")
    refused: list[str] = []
    reason = _first_distrust(data_dir, data_dir / "states")
    if reason is not None:
        refused.append(f"The saved-states directory is {reason}.")
    for principal in sorted(set(principals)):
        if not _safe_principal(principal):
            continue
        reason = _first_distrust(data_dir, data_dir / "principals" / principal / "states")
        line = f"A principal's saved-states directory is {reason}."
        if reason is not None and line not in refused:
            refused.append(line)
    return StorageAudit(tuple(refused), tuple(warnings))


def _reject_constant(name: str) -> Any:
    raise ValueError("non-finite number")


def _decode_state(raw: bytes) -> dict[str, Any]:
    try:
        data = json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise BrowserMeshError(
            ErrorCode.BROWSER_ERROR,
            cause="saved state is corrupted: not valid UTF-8 JSON",
            internal={"field": "$", "requirement": "UTF-8 JSON"},
        ) from None
    return validate_storage_state(data)


def _encode_state(state: dict[str, Any]) -> bytes:
    validate_storage_state(state)
    try:
        text = json.dumps(state, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        return text.encode("utf-8")
    except (TypeError, ValueError, RecursionError, UnicodeEncodeError):
        raise BrowserMeshError(
            ErrorCode.BROWSER_ERROR,
            cause="captured storage state is not serializable as JSON",
            internal={"field": "$", "requirement": "JSON-serializable storage state"},
        ) from None


# --- errors -------------------------------------------------------------------------------------


def _os_failure(exc: OSError, what: str) -> BrowserMeshError:
    """An unexpected OS error, without the path (never logged: the data dir holds credentials)."""
    name = errno.errorcode.get(exc.errno, str(exc.errno)) if exc.errno is not None else "-"
    return BrowserMeshError(ErrorCode.INTERNAL_ERROR, cause=f"{what}: {type(exc).__name__} {name}")


def _not_found(cause: str | None = None) -> BrowserMeshError:
    return BrowserMeshError(ErrorCode.SAVED_STATE_NOT_FOUND, cause=cause)


def _untrusted_file(reason: str) -> BrowserMeshError:
    return _not_found(f"saved state is not trusted: {reason}")


def _untrusted_dir(reason: str) -> BrowserMeshError:
    return BrowserMeshError(
        ErrorCode.PERSISTENCE_DISABLED, cause=f"saved-state directory is {reason}"
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
        """Refuse a states directory the server cannot trust (`PERSISTENCE_DISABLED`)."""
        reason = _first_distrust(self._data_dir, directory)
        if reason is not None:
            raise _untrusted_dir(reason)

    # -- public API --

    async def save(self, principal: str, state_id: str, state: dict[str, Any]) -> SavedStateView:
        """Write (or replace) a state; returns the SavedStateView `{stateId, createdAt}`."""
        state_id = validate_state_id(state_id)
        directory = self._states_dir(principal)
        payload = _encode_state(state)
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
        state = _decode_state(raw)
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
            raise _os_failure(exc, "saved-state directory scan failed") from None
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
                    raise _os_failure(exc, "saved-state stat failed") from None
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
            raise _os_failure(exc, "saved-state directory creation failed") from None
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
            raise _os_failure(exc, "saved-state write failed") from None
        finally:
            with contextlib.suppress(OSError):
                os.unlink(temp)
        _fsync_dir(directory)
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
            raise _os_failure(exc, "saved-state stat failed") from None
        if not stat.S_ISREG(info.st_mode):
            raise self._not_regular()
        reason = distrust(info, directory=False)
        if reason is not None:
            raise _untrusted_file(reason)
        if info.st_size > limit:
            raise self._state_bytes_exceeded()
        flags = os.O_RDONLY | _O_NOFOLLOW | _O_NONBLOCK | _O_BINARY | _O_CLOEXEC
        try:
            fd = os.open(path, flags)
        except FileNotFoundError:
            raise _not_found() from None
        except OSError as exc:
            if exc.errno == errno.ELOOP:  # swapped for a symlink after the stat
                raise self._not_regular() from None
            raise _os_failure(exc, "saved-state open failed") from None
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
            raise _os_failure(exc, "saved-state read failed") from None
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
            raise _os_failure(exc, "saved-state stat failed") from None
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
            raise _os_failure(exc, "saved-state removal failed") from None
        _fsync_dir(path.parent)


def write_exclusive(path: Path, data: bytes, *, sync: bool) -> None:
    """Create `path` (never an existing file or a symlink) with mode 0600 whatever the umask,
    write all of `data`, and with `sync` flush it to disk before closing (saved states and
    artifacts both write this way)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | SAFE_OPEN, FILE_MODE)
    try:
        os.chmod(path, FILE_MODE)  # umask-independent
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(directory: Path) -> None:
    """Best-effort durability of a rename/unlink (POSIX only)."""
    if os.name != "posix":
        return
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY | _O_CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
