"""The fleet's settings (issue 37, reference §37): the session directory's Redis URL and this
replica's name.

- ``BROWSERMESH_FLEET_REDIS`` / ``--fleet-redis``: a ``redis://``, ``rediss://`` or ``unix://``
  URL. Its userinfo (and a ``password=`` query parameter) are secrets: a problem message never
  quotes the value, and :func:`show_fleet_url` is how logs and runtime_info may show it.
- ``BROWSERMESH_REPLICA_ID`` / ``--replica-id``: 1 to 64 of ``a-z``, ``0-9`` and ``-``; by
  default :func:`replica_name` of the host name and the process id.
- ``BROWSERMESH_FLEET_LEASE_MS``: an integer variable of the table (config.variables).
- ``BROWSERMESH_FLEET_TOKEN_FILE`` / ``--fleet-token-file``: the fleet token, one line of 32 to
  256 printable ASCII characters without spaces, in a private file (0600, this user's): the
  secret of the replicas' internal channel (§37.6). Never shown.
- ``BROWSERMESH_FLEET_ADVERTISE`` / ``--fleet-advertise``: ``http://HOST:PORT`` other replicas
  reach this one at; HOST a loopback, private or link-local IP, or a host name (the channel is
  for loopback and private networks only, so a public IP literal is refused).

Standard library only.
"""

from __future__ import annotations

import ipaddress
import os
import re
import socket
from typing import Final
from urllib.parse import urlsplit

from browsermesh.config.reader import Reader, usable_text
from browsermesh.config.variables import (
    V_FLEET_ADVERTISE,
    V_FLEET_REDIS,
    V_FLEET_TOKEN_FILE,
    V_REPLICA_ID,
)

__all__ = [
    "FLEET_URL_SCHEMES",
    "derived_advertise",
    "private_host",
    "read_fleet",
    "replica_name",
    "show_fleet_url",
    "valid_advertise",
    "valid_fleet_url",
]

FLEET_URL_SCHEMES: Final = frozenset({"redis", "rediss", "unix"})
_REPLICA_RE: Final = re.compile(r"^[a-z0-9-]{1,64}$")
_URL_MAX_CHARS: Final = 2_048
_SHOWN_MAX_CHARS: Final = 512
_TOKEN_MIN: Final = 32
_TOKEN_MAX: Final = 256


def read_fleet(reader: Reader) -> None:
    """Read the fleet URL and the replica id into ``reader.values`` (the lease is in the
    integer table)."""
    reader.parsed(V_FLEET_REDIS, "fleet_redis", _read_url)
    reader.parsed(V_REPLICA_ID, "replica_id", _read_replica)
    _read_channel(reader)


def _read_url(reader: Reader, raw: str) -> tuple[str, str | None]:
    if valid_fleet_url(raw):
        return raw, None
    return "", "must be a redis://, rediss:// or unix:// URL"


def _read_replica(reader: Reader, raw: str) -> tuple[str, str | None]:
    if _REPLICA_RE.match(raw):
        return raw, None
    return "", "must be 1 to 64 characters of a-z, 0-9 and -"


def _read_channel(reader: Reader) -> None:
    """The fleet token and the advertised address (both need the fleet URL)."""
    for variable in (V_FLEET_TOKEN_FILE, V_FLEET_ADVERTISE):
        if reader.get(variable) is not None and reader.get(V_FLEET_REDIS) is None:
            reader.problem(variable, f"needs {V_FLEET_REDIS} (the fleet's directory)")
            return
    reader.parsed(V_FLEET_TOKEN_FILE, "fleet_token", _read_token)
    reader.parsed(V_FLEET_ADVERTISE, "fleet_advertise", _read_advertise)


def _read_advertise(reader: Reader, raw: str) -> tuple[str, str | None]:
    if valid_advertise(raw):
        return raw.rstrip("/"), None
    return "", "must be http://HOST:PORT with a loopback, private or link-local IP or a host name"


def _read_token(reader: Reader, raw: str) -> tuple[str, str | None]:
    """The token of the file ``raw`` names, or the problem (never quoting the file)."""
    from browsermesh.persistence.secret_files import read_private_file

    if not usable_text(raw):
        return "", "must name a file"
    read = read_private_file(reader.path(raw))
    if read.missing:
        return "", "must name an existing file"
    if read.text is None:
        return "", f"the file {read.problem}"
    token = read.text.strip()
    if not (_TOKEN_MIN <= len(token) <= _TOKEN_MAX and all("!" <= c <= "~" for c in token)):
        return "", (
            f"the file must hold one token of {_TOKEN_MIN} to {_TOKEN_MAX} printable ASCII "
            "characters without spaces"
        )
    return token, None


def private_host(host: str) -> bool | None:
    """True for a loopback, private or link-local IP literal, False for any other IP literal,
    None for a host name (which the operator vouches for)."""
    try:
        ip = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None
    return ip.is_loopback or ip.is_private or ip.is_link_local


def valid_advertise(value: str) -> bool:
    """Whether ``value`` is ``http://HOST:PORT`` with a host the channel may use."""
    if len(value) > _SHOWN_MAX_CHARS or any(c.isspace() for c in value):
        return False
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError:
        return False
    if parts.scheme != "http" or not parts.hostname or port is None:
        return False
    if parts.username or parts.password or parts.query or parts.fragment:
        return False
    if parts.path not in ("", "/"):
        return False
    return private_host(parts.hostname) is not False


def derived_advertise(host: str, port: int) -> str | None:
    """The channel's address from the bound one: only a loopback or private IP literal (a
    wildcard or public address says nothing about how other replicas reach this one)."""
    if private_host(host) is not True or host in ("0.0.0.0", "::"):
        return None
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


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
