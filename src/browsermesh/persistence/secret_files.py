"""Secrets files (issue 36 item 2, reference §36): a dotenv file of ``NAME=value`` lines per
principal, read when a call names a secret or asks which names it may use.

The file is the operator's, like the token file, but holds values the model must never see, so
it is trusted only as a saved state is (§11): a regular file (a symlink is followed: mounted
secrets are links) owned by the server's user and neither readable nor writable by group or
others (0600 or 0400). Anything else is refused whole, in fixed words that never quote a line.
Lines are read by python-dotenv's parser (quotes, ``export``, comments, escapes); ``${VAR}`` is
NOT expanded, so a value is exactly what the file says and never another variable's.

A read is cached by the file's identity (device, inode, size, times, owner, mode): a call that
names a secret costs one ``stat`` while the file is unchanged, and an edited file is read again
at its next use (no restart to rotate a secret).
"""

from __future__ import annotations

import io
import os
import stat
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from dotenv.parser import parse_stream

from browsermesh.model.secret_refs import SECRET_NAME

__all__ = [
    "MAX_SECRETS",
    "MAX_SECRETS_FILE_BYTES",
    "MAX_SECRET_VALUE_CHARS",
    "PrivateFile",
    "SecretFiles",
    "SecretsRead",
    "read_private_file",
    "read_secrets_file",
]

MAX_SECRETS_FILE_BYTES: Final = 65_536
MAX_SECRETS: Final = 256
MAX_SECRET_VALUE_CHARS: Final = 4_096
_GROUP_OR_OTHER: Final = 0o077


@dataclass(frozen=True, slots=True)
class SecretsRead:
    """One read of a secrets file: its values by name, or why none may be used (`problem`,
    fixed words with at most a line number; never a value). A missing file is no secrets and
    no problem (`missing`)."""

    values: Mapping[str, str] = field(default_factory=dict)
    problem: str | None = None
    missing: bool = False

    def __repr__(self) -> str:  # never show the values
        return f"SecretsRead(<{len(self.values)} names>, problem={self.problem!r})"


def _identity(info: os.stat_result) -> tuple[int, ...]:
    """What must not change for a cached read to stand: the file, its content (size, mtime)
    and what decides trust (owner, mode; ctime moves with either)."""
    return (
        info.st_dev,
        info.st_ino,
        info.st_size,
        info.st_mtime_ns,
        info.st_ctime_ns,
        info.st_mode,
        info.st_uid,
    )


def _distrust(info: os.stat_result) -> str | None:
    if not stat.S_ISREG(info.st_mode):
        return "is not a regular file"
    if os.name == "posix":
        if info.st_uid != os.geteuid():
            return "is owned by another user"
        if info.st_mode & _GROUP_OR_OTHER:
            return "is readable or writable by group or others (chmod 600 it)"
    if info.st_size > MAX_SECRETS_FILE_BYTES:
        return f"is larger than {MAX_SECRETS_FILE_BYTES} bytes"
    return None


def _parse(text: str) -> SecretsRead:
    values: dict[str, str] = {}
    for binding in parse_stream(io.StringIO(text)):
        line = binding.original.line
        if binding.error:
            return SecretsRead(problem=f"line {line} is not NAME=value")
        if binding.key is None:
            continue  # blank or comment
        if SECRET_NAME.fullmatch(binding.key) is None:
            return SecretsRead(
                problem=f"line {line}: a name is letters, digits and _, not starting with a digit"
            )
        if not binding.value:
            return SecretsRead(problem=f"line {line} has no value")
        if len(binding.value) > MAX_SECRET_VALUE_CHARS:
            return SecretsRead(
                problem=f"line {line}: a value has at most {MAX_SECRET_VALUE_CHARS} characters"
            )
        if binding.key in values:
            return SecretsRead(problem=f"line {line} repeats a name")
        values[binding.key] = binding.value
        if len(values) > MAX_SECRETS:
            return SecretsRead(problem=f"holds more than {MAX_SECRETS} secrets")
    return SecretsRead(values=values)


@dataclass(frozen=True, slots=True)
class PrivateFile:
    """A private file's text as read once: `text`, or why not (`missing`, `problem`); `key` is
    the file's identity (None when missing or unreadable)."""

    text: str | None = field(default=None, repr=False)
    problem: str | None = None
    missing: bool = False
    key: tuple[int, ...] | None = None


def read_private_file(path: Path) -> PrivateFile:
    """`path`'s UTF-8 text when it is trusted like a saved state: a regular file (symlinks
    followed) of this user, not readable or writable by group or others, at most
    `MAX_SECRETS_FILE_BYTES` (the secrets file, the fleet token file)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return PrivateFile(missing=True)
    except OSError:
        return PrivateFile(problem="cannot be read")
    try:
        info = os.fstat(fd)  # the file opened, not whatever the path names a moment later
        key = _identity(info)
        reason = _distrust(info)
        if reason is not None:
            return PrivateFile(problem=reason, key=key)
        with os.fdopen(os.dup(fd), "rb") as stream:
            data = stream.read(MAX_SECRETS_FILE_BYTES + 1)
    except OSError:
        return PrivateFile(problem="cannot be read")
    finally:
        os.close(fd)
    try:
        return PrivateFile(text=data.decode("utf-8-sig"), key=key)
    except UnicodeDecodeError:
        return PrivateFile(problem="is not valid UTF-8", key=key)


def _read(path: Path) -> tuple[SecretsRead, tuple[int, ...] | None]:
    """The file's secrets and its identity (None when missing or unreadable)."""
    read = read_private_file(path)
    if read.missing:
        return SecretsRead(missing=True), None
    if read.text is None:
        return SecretsRead(problem=read.problem), read.key
    return _parse(read.text), read.key


def read_secrets_file(path: Path) -> SecretsRead:
    """Read `path` once, uncached (start-up checks and the doctor)."""
    return _read(path)[0]


class SecretFiles:
    """Cached reads of secrets files, one entry per path (thread-safe: the doctor and the
    event loop may read at once)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cache: dict[Path, tuple[tuple[int, ...], SecretsRead]] = {}

    def read(self, path: Path) -> SecretsRead:
        """The secrets of `path` now: from the cache while the file is the same one, unchanged."""
        try:
            key: tuple[int, ...] | None = _identity(os.stat(path))
        except OSError:
            key = None
        with self._lock:
            cached = self._cache.get(path)
        if key is not None and cached is not None and cached[0] == key:
            return cached[1]
        result, read_key = _read(path)
        with self._lock:
            if read_key is None:
                self._cache.pop(path, None)
            else:
                self._cache[path] = (read_key, result)
        return result
