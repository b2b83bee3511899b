"""File primitives shared by the saved-state repository and the artifact store.

The modes (directories 0700, files 0600, set explicitly so the umask does not matter), the flags
every open of a persistence file adds, the exclusive write both stores create files with, the
best-effort directory fsync after a rename or unlink, the bounded read of a range, and the
path-free error an unexpected OS error becomes. Used on every write and read of
`persistence.states` and `persistence.artifacts`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path
from typing import Final

from browsermesh.errors import BrowserMeshError, ErrorCode

__all__ = [
    "DIR_MODE",
    "FILE_MODE",
    "NONBLOCK_OPEN",
    "SAFE_OPEN",
    "fsync_dir",
    "os_failure",
    "read_range",
    "write_exclusive",
]

DIR_MODE: Final = 0o700
FILE_MODE: Final = 0o600

_O_BINARY: Final = getattr(os, "O_BINARY", 0)
_O_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_O_CLOEXEC: Final = getattr(os, "O_CLOEXEC", 0)
SAFE_OPEN: Final = _O_NOFOLLOW | _O_BINARY | _O_CLOEXEC
"""Flags every open of a persistence file adds: no symlink, binary, not inherited."""
NONBLOCK_OPEN: Final = getattr(os, "O_NONBLOCK", 0)
"""Added to the open of a file to read: one swapped for a FIFO after its check cannot block."""


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


def fsync_dir(directory: Path) -> None:
    """Best-effort durability of a rename/unlink (POSIX only)."""
    if os.name != "posix":
        return
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY | _O_CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def os_failure(exc: OSError, what: str) -> BrowserMeshError:
    """An unexpected OS error, without the path (never logged: the data dir holds credentials)."""
    name = errno.errorcode.get(exc.errno, str(exc.errno)) if exc.errno is not None else "-"
    return BrowserMeshError(ErrorCode.INTERNAL_ERROR, cause=f"{what}: {type(exc).__name__} {name}")


def read_range(path: Path, offset: int, max_bytes: int, what: str) -> bytes:
    """At most `max_bytes` of the regular file `path` from `offset` (never through a symlink);
    an OS error or another kind of file is `INTERNAL_ERROR` naming `what`, never the path."""
    try:
        fd = os.open(path, os.O_RDONLY | SAFE_OPEN)
    except OSError as exc:
        raise os_failure(exc, f"{what} open failed") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise BrowserMeshError(ErrorCode.INTERNAL_ERROR, cause=f"{what} is not a file")
        os.lseek(fd, offset, os.SEEK_SET)
        chunks: list[bytes] = []
        remaining = max_bytes
        while remaining > 0:
            chunk = os.read(fd, remaining)
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise os_failure(exc, f"{what} read failed") from None
    finally:
        os.close(fd)


def utf8_cut(chunk: bytes) -> int:
    """The length of the longest prefix of `chunk` that does not end inside a UTF-8 sequence
    (0 when the whole chunk is one incomplete sequence)."""
    end = len(chunk)
    for back in range(1, min(4, end) + 1):
        byte = chunk[end - back]
        if byte & 0xC0 == 0x80:  # a continuation byte: keep looking for the lead
            continue
        if byte >= 0xF0:
            need = 4
        elif byte >= 0xE0:
            need = 3
        elif byte >= 0xC0:
            need = 2
        else:
            need = 1
        return end - back if need > back else end
    return end  # only continuation bytes: invalid anyway, nothing to protect
