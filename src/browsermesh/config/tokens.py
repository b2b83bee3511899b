"""The bearer-token file (reference §18.3): ``principal:token`` lines, read once at start-up.

Problem messages name line numbers but never a token or a principal name, so a rejected file
can be reported on stderr as it is.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Final

from browsermesh.config.constants import TOKEN_FILE_MAX_BYTES

__all__ = ["PRINCIPAL_RE", "parse_auth_token_file", "world_readable"]

PRINCIPAL_RE: Final = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
"""A principal's name: in the token files, and wherever a replica is told one (the fleet's
channel, the view's part of it)."""
_TOKEN_MIN: Final = 16
_TOKEN_MAX: Final = 512
_MAX_TOKEN_FILE_PROBLEMS: Final = 20


class _Unreadable(Exception):
    """The file cannot be used at all; ``str(exc)`` is the problem message."""


def _read_text(path: Path) -> str:
    """The file's text; raises :class:`_Unreadable` (not a regular file, too large, ...)."""
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            raise _Unreadable("must name a regular file")
        if info.st_size > TOKEN_FILE_MAX_BYTES:
            raise _Unreadable("is larger than 1 MiB")
        data = path.read_bytes()
    except OSError:
        raise _Unreadable("cannot be read") from None
    if len(data) > TOKEN_FILE_MAX_BYTES:
        raise _Unreadable("is larger than 1 MiB")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise _Unreadable("is not valid UTF-8") from None


def _line_problem(number: int, name: str, token: str, colon: str) -> str | None:
    if not colon:
        return f"line {number}: expected name:token"
    if not PRINCIPAL_RE.match(name):
        return f"line {number}: principal name must match {PRINCIPAL_RE.pattern}"
    if not (_TOKEN_MIN <= len(token) <= _TOKEN_MAX and all("!" <= ch <= "~" for ch in token)):
        return (
            f"line {number}: token must be {_TOKEN_MIN} to {_TOKEN_MAX} printable ASCII "
            "characters without spaces"
        )
    return None


def parse_auth_token_file(path: Path) -> tuple[tuple[tuple[str, str], ...], list[str]]:
    """Parse a token file (§18.3) into ``(principal, token)`` pairs and problem messages.

    Problem messages name line numbers but never contain a token or a principal name.
    """
    try:
        text = _read_text(path)
    except _Unreadable as exc:
        return (), [str(exc)]
    problems: list[str] = []
    tokens: list[tuple[str, str]] = []
    names: set[str] = set()
    secrets: set[str] = set()
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        name, colon, token = line.partition(":")
        name = name.strip()
        token = token.strip()
        problem = _line_problem(number, name, token, colon)
        if problem is not None:
            problems.append(problem)
        elif name in names:
            problems.append(f"line {number}: duplicate principal name")
        elif token in secrets:
            problems.append(f"line {number}: duplicate token")
        else:
            names.add(name)
            secrets.add(token)
            tokens.append((name, token))
    if len(problems) > _MAX_TOKEN_FILE_PROBLEMS:
        hidden = len(problems) - _MAX_TOKEN_FILE_PROBLEMS
        problems = [*problems[:_MAX_TOKEN_FILE_PROBLEMS], f"... and {hidden} more problems"]
    if not problems and not tokens:
        problems.append("contains no name:token lines")
    return (tuple(tokens) if not problems else ()), problems


def world_readable(path: Path) -> bool:
    """True when the group or others may read ``path`` (never on Windows)."""
    if os.name == "nt":
        return False
    try:
        return bool(path.stat().st_mode & (stat.S_IRGRP | stat.S_IROTH))
    except OSError:
        return False
