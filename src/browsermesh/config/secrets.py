"""`BROWSERMESH_SECRETS_FILE` / `--secrets-file` (issue 36, reference §36): where the secrets a
client may fill by name are.

The value is a path; ``{principal}`` in it stands for the caller's principal, so each principal
has its own file. With an auth token file (several principals) the placeholder is required: one
file for all would give every principal every other's secrets. A path without it is read now,
and a file that is missing, not private (0600) or malformed stops the start (exit 2), in words
that never quote a line. A path with it is read at each use (a principal's file may come later).
"""

from __future__ import annotations

from browsermesh.config.reader import Reader, usable_text
from browsermesh.config.variables import V_SECRETS_FILE
from browsermesh.persistence.secret_files import read_secrets_file

__all__ = ["PRINCIPAL_PLACEHOLDER", "read_secrets_setting"]

PRINCIPAL_PLACEHOLDER = "{principal}"


def read_secrets_setting(reader: Reader) -> None:
    """Read the setting into ``secrets_file`` (after the HTTP options: it needs the tokens)."""
    raw = reader.get(V_SECRETS_FILE)
    if raw is None:
        return
    if not usable_text(raw):
        reader.problem(V_SECRETS_FILE, "must name a file")
        return
    template = str(reader.path(raw))
    if PRINCIPAL_PLACEHOLDER not in template:
        if reader.values.get("auth_tokens"):
            reader.problem(
                V_SECRETS_FILE,
                "must contain {principal} with an auth token file (one file per principal)",
            )
            return
        read = read_secrets_file(reader.path(raw))
        if read.missing:
            reader.problem(V_SECRETS_FILE, "must name an existing file")
            return
        if read.problem is not None:
            reader.problem(V_SECRETS_FILE, f"the file {read.problem}")
            return
    reader.values["secrets_file"] = template
