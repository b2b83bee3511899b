"""The transport and HTTP listener variables (reference §18.2-18.5): transport, bind host, path,
token file, ``Host``/``Origin`` allowlists, and the rules that tie them together.

HTTP variables are validated even under stdio, so a bad value is reported before anyone
switches transports; the security rules (a token file off loopback, an explicit ``Host``
allowlist on a wildcard bind) apply only when HTTP is the transport.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from browsermesh.config.constants import DEFAULT_HTTP_HOST, DEFAULT_HTTP_PORT, TRANSPORTS
from browsermesh.config.hosts import (
    derive_allowed_hosts,
    derive_allowed_origins,
    is_loopback_host,
    is_wildcard_host,
    normalize_host,
    parse_host_entry,
    parse_origin_entry,
)
from browsermesh.config.reader import Reader, usable_text
from browsermesh.config.tokens import parse_auth_token_file, world_readable
from browsermesh.config.variables import (
    V_ALLOWED_HOSTS,
    V_ALLOWED_ORIGINS,
    V_AUTH_TOKEN_FILE,
    V_HTTP_HOST,
    V_HTTP_PATH,
    V_TRANSPORT,
    V_VIEW,
)

__all__ = ["VIEW_PATH", "read_http"]

_HTTP_PATH_RE: Final = re.compile(r"^/[A-Za-z0-9/_.-]{0,127}$")
VIEW_PATH: Final = "/view"
"""Where the live view is served (issue 21); the MCP endpoint may not sit on it."""


def read_http(reader: Reader) -> None:
    """Read every transport and HTTP variable into ``reader.values``."""
    transport = _read_transport(reader)
    host = _read_http_host(reader)
    _read_http_path(reader)
    path = str(reader.values.get("http_path", ""))
    if reader.values.get("view", True) and (path == VIEW_PATH or path.startswith(VIEW_PATH + "/")):
        reader.problem(V_VIEW, "the live view is served at /view: choose another HTTP path")
    token_file_given = _read_token_file(reader)
    hosts_given = _read_allowlists(reader, host)
    # HTTP security rules (§18.3, §18.5) apply only when HTTP is the transport.
    if transport == "http" and host is not None:
        if not is_loopback_host(host) and not token_file_given:
            reader.problem(
                V_HTTP_HOST,
                "a non-loopback host requires BROWSERMESH_AUTH_TOKEN_FILE or --auth-token-file",
            )
        if is_wildcard_host(host) and not hosts_given:
            reader.problem(
                V_ALLOWED_HOSTS,
                "is required when binding a wildcard address (0.0.0.0 or ::)",
            )


def _read_transport(reader: Reader) -> str | None:
    """The transport, or None when the value is invalid."""
    transport = reader.get(V_TRANSPORT)
    if transport is None:
        transport = "stdio"
    elif transport not in TRANSPORTS:
        reader.problem(V_TRANSPORT, "must be stdio or http")
        return None
    reader.values["transport"] = transport
    return transport


def _read_http_host(reader: Reader) -> str | None:
    """The normalized bind host, or None when the value is invalid."""
    raw = reader.get(V_HTTP_HOST)
    if raw is None:
        return DEFAULT_HTTP_HOST
    host = normalize_host(raw)
    if host is None:
        reader.problem(V_HTTP_HOST, "must be a host name or IP address")
    else:
        reader.values["http_host"] = host
    return host


def _read_http_path(reader: Reader) -> None:
    raw = reader.get(V_HTTP_PATH)
    if raw is None:
        return
    if _HTTP_PATH_RE.match(raw):
        reader.values["http_path"] = raw
    else:
        reader.problem(
            V_HTTP_PATH,
            "must start with / and have at most 128 characters of A-Z a-z 0-9 / _ . -",
        )


def _read_token_file(reader: Reader) -> bool:
    """Read the token file when one is named; True when the variable is set (even if bad)."""
    raw = reader.get(V_AUTH_TOKEN_FILE)
    if raw is None:
        return False
    if not usable_text(raw):
        reader.problem(V_AUTH_TOKEN_FILE, "must name a readable file")
        return True
    path = reader.path(raw)
    tokens, problems = parse_auth_token_file(path)
    for message in problems:
        reader.problem(V_AUTH_TOKEN_FILE, message)
    if not problems:
        reader.values["auth_token_file"] = path
        reader.values["auth_tokens"] = tokens
        reader.values["token_file_world_readable"] = world_readable(path)
    return True


def _read_allowlists(reader: Reader, host: str | None) -> bool:
    """The ``Host`` and ``Origin`` allowlists, given or derived from the bind address (§18.5).

    True when the ``Host`` allowlist is given (even if bad).
    """
    port = reader.values.get("http_port", DEFAULT_HTTP_PORT)
    raw = reader.get(V_ALLOWED_HOSTS)
    if raw is not None:
        parsed = _parse_allow_list(reader, V_ALLOWED_HOSTS, raw, "host[:port]", parse_host_entry)
        if parsed is not None:
            reader.values["allowed_hosts"] = parsed
    elif host is not None:
        reader.values["allowed_hosts"] = derive_allowed_hosts(host, port)

    raw_origins = reader.get(V_ALLOWED_ORIGINS)
    if raw_origins is not None:
        parsed = _parse_allow_list(
            reader, V_ALLOWED_ORIGINS, raw_origins, "http(s)://host[:port]", parse_origin_entry
        )
        if parsed is not None:
            reader.values["allowed_origins"] = parsed
    elif host is not None:
        reader.values["allowed_origins"] = derive_allowed_origins(host, port)
    return raw is not None


def _parse_allow_list(
    reader: Reader,
    variable: str,
    raw: str,
    what: str,
    parse: Callable[[str], str | None],
) -> tuple[str, ...] | None:
    entries = [part.strip() for part in raw.split(",")]
    entries = [entry for entry in entries if entry]
    if not entries:
        reader.problem(variable, f"must be * or a comma list of {what} entries")
        return None
    if "*" in entries:
        if len(entries) > 1:
            reader.problem(variable, "* must be used alone")
            return None
        return ("*",)
    result: list[str] = []
    ok = True
    for position, entry in enumerate(entries, start=1):
        normalized = parse(entry)
        if normalized is None:
            reader.problem(variable, f"entry {position} is not a valid {what} entry")
            ok = False
        elif normalized not in result:
            result.append(normalized)
    return tuple(result) if ok else None
