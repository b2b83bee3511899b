"""The fleet's settings (issue 37, reference §37): the session directory's Redis URL and this
replica's name.

- ``BROWSERMESH_FLEET_REDIS`` / ``--fleet-redis``: a ``redis://``, ``rediss://`` or ``unix://``
  URL. Its userinfo (and a ``password=`` query parameter) are secrets: a problem message never
  quotes the value, and :func:`show_fleet_url` is how logs and runtime_info may show it.
- ``BROWSERMESH_REPLICA_ID`` / ``--replica-id``: 1 to 64 of ``a-z``, ``0-9`` and ``-``; by
  default :func:`replica_name` of the host name and the process id.
- ``BROWSERMESH_FLEET_LEASE_MS``: an integer variable of the table (config.variables).

Standard library only.
"""

from __future__ import annotations

import os
import re
import socket
from typing import Final
from urllib.parse import urlsplit

from browsermesh.config.reader import Reader
from browsermesh.config.variables import V_FLEET_REDIS, V_REPLICA_ID

__all__ = [
    "FLEET_URL_SCHEMES",
    "read_fleet",
    "replica_name",
    "show_fleet_url",
    "valid_fleet_url",
]

FLEET_URL_SCHEMES: Final = frozenset({"redis", "rediss", "unix"})
_REPLICA_RE: Final = re.compile(r"^[a-z0-9-]{1,64}$")
_URL_MAX_CHARS: Final = 2_048
_SHOWN_MAX_CHARS: Final = 512


def read_fleet(reader: Reader) -> None:
    """Read the fleet URL and the replica id into ``reader.values`` (the lease is in the
    integer table)."""
    raw = reader.get(V_FLEET_REDIS)
    if raw is not None:
        if valid_fleet_url(raw):
            reader.values["fleet_redis"] = raw
        else:
            reader.problem(V_FLEET_REDIS, "must be a redis://, rediss:// or unix:// URL")
    raw = reader.get(V_REPLICA_ID)
    if raw is not None:
        if _REPLICA_RE.match(raw):
            reader.values["replica_id"] = raw
        else:
            reader.problem(V_REPLICA_ID, "must be 1 to 64 characters of a-z, 0-9 and -")


def valid_fleet_url(value: str) -> bool:
    """Whether ``value`` is a URL the Redis client can connect to (checked without it)."""
    if len(value) > _URL_MAX_CHARS or any(c.isspace() or ord(c) < 0x20 for c in value):
        return False
    try:
        parts = urlsplit(value)
        port = parts.port  # raises on a bad port
        host = parts.hostname
    except ValueError:
        return False
    scheme = parts.scheme.lower()
    if scheme not in FLEET_URL_SCHEMES or parts.fragment:
        return False
    if scheme == "unix":
        return bool(parts.path) and port is None
    if not host:
        return False
    path = parts.path.strip("/")
    return not path or path.isdigit()  # the database number


def show_fleet_url(value: str) -> str:
    """The fleet URL as logs and runtime_info may show it: never its userinfo or query."""
    from browsermesh.redact import sanitize_url  # standard library; kept off the config path

    parts = urlsplit(value)
    if parts.scheme.lower() == "unix":
        return "unix://" + parts.path[:_SHOWN_MAX_CHARS]
    shown = sanitize_url(
        value, max_chars=_SHOWN_MAX_CHARS, allowed_schemes=frozenset({"redis", "rediss"})
    )
    return shown.split("?", 1)[0]


def replica_name(configured: str | None) -> str:
    """This replica's id: the configured one, else ``<hostname>-<pid>`` lower-cased, every other
    character a ``-``, cut to 64."""
    if configured is not None:
        return configured
    raw = f"{socket.gethostname()}-{os.getpid()}".lower()
    cleaned = re.sub(r"[^a-z0-9-]+", "-", raw).strip("-")
    suffix = f"-{os.getpid()}"
    if len(cleaned) > 64:
        cleaned = cleaned[: 64 - len(suffix)].rstrip("-") + suffix
    return cleaned or f"replica{suffix}"
