"""File-system helpers shared by the environment reader and the Chromium lookup.

Both take the environment as an explicit mapping, so a test (or the doctor) can resolve paths
against an environment other than the process's own.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["expand_path", "is_executable_file"]


def expand_path(value: str, environ: Mapping[str, str]) -> Path:
    """Expand ``~`` for the current user (HOME from ``environ``) and make the path absolute."""
    home_var = "USERPROFILE" if os.name == "nt" else "HOME"
    home = environ.get(home_var)
    if home and (value == "~" or value.startswith(("~/", "~" + os.sep))):
        expanded = home + value[1:]
    else:
        expanded = os.path.expanduser(value)
    return Path(os.path.abspath(expanded))


def is_executable_file(path: str) -> bool:
    """True for an existing regular file this user may execute."""
    return os.path.isfile(path) and os.access(path, os.X_OK)
