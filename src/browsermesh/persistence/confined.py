"""Reading a file of the server's ``--upload-root`` (issue 14; issue 30 items 5 and 7).

The path a client names is relative to the root. It is opened exactly once, with an
``openat``-style walk: the root is opened as a directory, then each component below it with
``dir_fd`` of the one before, ``O_NOFOLLOW`` everywhere (``O_DIRECTORY`` for the directories) so
no symbolic link is ever followed, and the content is read from that one descriptor. There is no
second lookup by name, so a file swapped for a symlink after a check cannot be read in its place.

What was opened is then checked with ``fstat``: a regular file, on the root's device, with one
link. A hard link inside the root to a file outside it is the same inode as the outside file; it
cannot be told from a real one by its name, so any file with more than one link is refused.

Every refusal is `INVALID_ARGUMENT` naming the caller's field, with a rule that never repeats the
path or the OS error (the root is the server's, not the client's, to see). Any `OSError` on the
way (a missing component, ``ELOOP`` for a symlink, ``ENAMETOOLONG`` for a 256-character
component, ``EACCES``) is such a refusal, never an internal error.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Final

from browsermesh.errors import BrowserMeshError, invalid_argument

__all__ = ["ROOT_RULE", "read_in_root"]

ROOT_RULE: Final = "a path of a file inside the server's --upload-root"
_LINK_RULE: Final = "a path without symbolic links, inside the server's --upload-root"
_PARENT_RULE: Final = "a path inside the server's --upload-root, with no '..' component"
_FILE_RULE: Final = "a regular file inside the server's --upload-root"
_HARD_LINK_RULE: Final = "a file with a single link (a hard link can name a file outside the root)"
_DEVICE_RULE: Final = "a file on the file system of the server's --upload-root"
PATH_MAX_CHARS: Final = 4096

_CLOEXEC: Final = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY: Final = getattr(os, "O_DIRECTORY", 0)
_NONBLOCK: Final = getattr(os, "O_NONBLOCK", 0)  # a FIFO in the root cannot block the read
_DIR_FLAGS: Final = os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC
_FILE_FLAGS: Final = os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC | getattr(os, "O_BINARY", 0)


def _components(root: Path, raw: object, field: str) -> list[str]:
    """The components of `raw` below the root; `..` anywhere and an absolute path that does not
    start with the root are refused (an absolute path inside it is taken relative to it)."""
    if not isinstance(raw, str) or not 1 <= len(raw) <= PATH_MAX_CHARS or "\x00" in raw:
        raise invalid_argument(field, ROOT_RULE)
    text = raw
    if text.startswith("/"):
        for prefix in dict.fromkeys((str(root), os.path.realpath(root))):
            base = prefix.rstrip("/") + "/"
            if text.startswith(base):
                text = text[len(base) :]
                break
        else:
            raise invalid_argument(field, ROOT_RULE)
    parts = [part for part in text.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise invalid_argument(field, _PARENT_RULE)
    if not parts:
        raise invalid_argument(field, _FILE_RULE)
    return parts


def _refusal(exc: OSError, field: str) -> BrowserMeshError:
    # ELOOP is O_NOFOLLOW meeting a symlink (EMLINK on some BSDs); anything else (missing,
    # ENOTDIR, ENAMETOOLONG, EACCES) is the generic rule: the OS error is not the client's.
    if exc.errno in (errno.ELOOP, errno.EMLINK):
        return invalid_argument(field, _LINK_RULE)
    return invalid_argument(field, ROOT_RULE)


def read_in_root(root: Path, raw: object, field: str, max_bytes: int) -> tuple[str, bytes]:
    """The file `raw` of the upload root, read through one descriptor: (its name, at most
    `max_bytes + 1` of its bytes, so the caller can tell a file over its bound).

    Refused (`INVALID_ARGUMENT` at `field`) unless every component is a real directory or, last,
    a regular file with one link on the root's device."""
    parts = _components(root, raw, field)
    fds: list[int] = []
    try:
        fds.append(os.open(root, os.O_RDONLY | _DIRECTORY | _CLOEXEC))  # the operator's root
        root_dev = os.fstat(fds[0]).st_dev
        for part in parts[:-1]:
            fds.append(_open_directory(part, fds[-1], field))
        fd = os.open(parts[-1], _FILE_FLAGS, dir_fd=fds[-1])
        fds.append(fd)
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise invalid_argument(field, _FILE_RULE)
        if info.st_dev != root_dev:
            raise invalid_argument(field, _DEVICE_RULE)
        if info.st_nlink != 1:
            raise invalid_argument(field, _HARD_LINK_RULE)
        data = _read_at_most(fd, max_bytes + 1)
    except OSError as exc:
        raise _refusal(exc, field) from None
    finally:
        for opened in reversed(fds):
            os.close(opened)
    return parts[-1], data


def _open_directory(name: str, parent: int, field: str) -> int:
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=parent)
    except NotADirectoryError:
        # O_DIRECTORY | O_NOFOLLOW answers ENOTDIR for a symlink too; which rule it broke is
        # read from the entry itself (for the message only: nothing is opened through it).
        if stat.S_ISLNK(os.lstat(name, dir_fd=parent).st_mode):
            raise invalid_argument(field, _LINK_RULE) from None
        raise


def _read_at_most(fd: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    left = limit
    while left > 0:
        chunk = os.read(fd, min(left, 1_048_576))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
