"""Loading and validating the configuration (reference §19.1, §14): the one reader of the
environment.

This is the only module of the package that reads ``os.environ`` (:func:`process_environ`);
everything else takes the environment as an explicit ``environ`` mapping. :func:`build_config`
reads each variable once, command-line overrides first, with one small reader per area in the
order of the §19.1 table (so problems are listed in that order), and raises one
:class:`ConfigError` listing them all; a message never contains the rejected value. The
transport and HTTP variables are read by :mod:`browsermesh.config.http_options`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

from browsermesh.config.constants import (
    ALL_PROFILES,
    DEFAULT_DATA_DIR,
    DEFAULT_PROFILES,
    LOG_LEVELS,
    MAX_BROWSER_ENDPOINTS,
    Profile,
)
from browsermesh.config.fleet import read_fleet
from browsermesh.config.grid import read_grid
from browsermesh.config.hosts import is_endpoint_url
from browsermesh.config.http_options import read_http
from browsermesh.config.paths import is_executable_file
from browsermesh.config.reader import ConfigError, Overrides, Reader, usable_text
from browsermesh.config.secrets import read_secrets_setting
from browsermesh.config.settings import Config
from browsermesh.config.variables import (
    BOOL_SPECS,
    INT_SPECS,
    MAX_SESSIONS_PER_PRINCIPAL_SPEC,
    V_BROWSER_ENDPOINTS,
    V_BROWSER_PATH,
    V_CDP_ENDPOINT,
    V_DATA_DIR,
    V_LOG_LEVEL,
    V_SELENIUM_GRID,
    V_TOOLS,
    V_TRACE_SESSIONS,
    V_UPLOAD_ROOT,
    V_WEBMCP,
    WEBMCP_VALUES,
)
from browsermesh.model.tracing import TRACE_POLICIES

__all__ = [
    "build_config",
    "config_from_environment",
    "load_config",
    "process_environ",
]

_CDP_SCHEMES: Final = frozenset({"http", "https", "ws", "wss"})
_SERVER_SCHEMES: Final = frozenset({"ws", "wss"})


def process_environ() -> Mapping[str, str]:
    """The real process environment (the one place the package reads ``os.environ``)."""
    return os.environ


def load_config(environ: Mapping[str, str]) -> Config:
    """Load and validate the configuration from environment variables only (§19.1).

    Raises :class:`ConfigError` listing every problem found.
    """
    return build_config(environ, {}, None)


def config_from_environment() -> Config:
    """:func:`load_config` applied to the process environment."""
    return load_config(process_environ())


def build_config(
    environ: Mapping[str, str],
    overrides: Overrides,
    cli_endpoints: tuple[tuple[str, ...], str] | None,
) -> Config:
    """Validate ``overrides`` over ``environ`` into a :class:`Config`.

    ``cli_endpoints`` are the ``--browser-endpoint`` values and the flag (repeatable, so kept
    apart from ``overrides``). Raises :class:`ConfigError` listing every problem.
    """
    reader = Reader(environ, overrides)
    _read_numbers_and_flags(reader)
    _read_directories(reader)
    _read_log_level_and_tools(reader)
    remote = _read_backend(reader, cli_endpoints)
    _read_browser_path(reader, remote)
    read_http(reader)
    read_secrets_setting(reader)
    read_fleet(reader)
    if reader.problems:
        raise ConfigError(reader.problems)
    return Config(**reader.values)


# --------------------------------------------------------------------------------------------
# One reader per area, called in table order (the order of the problems)
# --------------------------------------------------------------------------------------------


def _read_numbers_and_flags(reader: Reader) -> None:
    for int_spec in INT_SPECS:
        number = reader.integer(int_spec)
        if number is not None:
            reader.values[int_spec.field] = number
    per_principal = reader.integer(MAX_SESSIONS_PER_PRINCIPAL_SPEC)
    if per_principal is not None:
        reader.values["max_sessions_per_principal"] = per_principal
    for bool_spec in BOOL_SPECS:
        flag = reader.boolean(bool_spec)
        if flag is not None:
            reader.values[bool_spec.field] = flag


def _read_directories(reader: Reader) -> None:
    raw = reader.get(V_DATA_DIR)
    if raw is None:
        reader.values["data_dir"] = reader.path(DEFAULT_DATA_DIR)
    elif not raw.strip():
        reader.problem(V_DATA_DIR, "must not be empty")
    elif "\0" in raw:
        reader.problem(V_DATA_DIR, "must be a valid path")
    else:
        reader.values["data_dir"] = reader.path(raw)

    raw = reader.get(V_UPLOAD_ROOT)
    if raw is not None:
        resolved = os.path.realpath(reader.path(raw)) if usable_text(raw) else ""
        if resolved and os.path.isdir(resolved):
            reader.values["upload_root"] = Path(resolved)
        else:
            reader.problem(V_UPLOAD_ROOT, "must name an existing directory")


def _read_log_level_and_tools(reader: Reader) -> None:
    raw = reader.get(V_LOG_LEVEL)
    if raw is not None:
        if raw in LOG_LEVELS:
            reader.values["log_level"] = raw
        else:
            reader.problem(V_LOG_LEVEL, "must be one of " + ", ".join(LOG_LEVELS))
    reader.values["tools"] = _parse_tools(reader)
    raw = reader.get(V_TRACE_SESSIONS)
    if raw is not None:
        if raw in TRACE_POLICIES:
            reader.values["trace_sessions"] = raw
        else:
            reader.problem(V_TRACE_SESSIONS, "must be one of " + ", ".join(TRACE_POLICIES))
    raw = reader.get(V_WEBMCP)
    if raw is not None:
        if raw in WEBMCP_VALUES:
            reader.values["webmcp"] = raw == "on"
        else:
            reader.problem(V_WEBMCP, "must be one of " + ", ".join(WEBMCP_VALUES))


def _parse_tools(reader: Reader) -> tuple[Profile, ...]:
    raw = reader.get(V_TOOLS)
    if raw is None:
        return DEFAULT_PROFILES
    names = [part.strip() for part in raw.split(",")]
    names = [name for name in names if name]
    if any(name not in ALL_PROFILES for name in names):
        reader.problem(V_TOOLS, "unknown profile; available profiles: " + ", ".join(ALL_PROFILES))
        return DEFAULT_PROFILES
    selected = tuple(profile for profile in ALL_PROFILES if profile in names)
    return selected or DEFAULT_PROFILES


def _read_backend(reader: Reader, cli_endpoints: tuple[tuple[str, ...], str] | None) -> bool:
    """Backends (§14): CDP, browser servers and the Selenium Grid are mutually exclusive. True
    when remote."""
    cdp_endpoint: str | None = None
    raw = reader.get(V_CDP_ENDPOINT)
    if raw is not None:
        if is_endpoint_url(raw, _CDP_SCHEMES):
            cdp_endpoint = raw
        else:
            reader.problem(V_CDP_ENDPOINT, "must be an absolute http, https, ws or wss URL")
    endpoints: tuple[str, ...] = ()
    endpoints_given = False
    if cli_endpoints is not None:
        reader.sources[V_BROWSER_ENDPOINTS] = cli_endpoints[1]
        endpoints = _parse_endpoint_list(reader, cli_endpoints[0], V_BROWSER_ENDPOINTS)
        endpoints_given = True
    else:
        raw = reader.get(V_BROWSER_ENDPOINTS)
        if raw is not None:
            entries = [part.strip() for part in raw.split(",") if part.strip()]
            endpoints = _parse_endpoint_list(reader, entries, V_BROWSER_ENDPOINTS)
            endpoints_given = True
    if reader.get(V_CDP_ENDPOINT) is not None and endpoints_given:
        reader.problem(
            V_CDP_ENDPOINT,
            "cannot be combined with BROWSERMESH_BROWSER_ENDPOINTS or --browser-endpoint",
        )
    reader.values["cdp_endpoint"] = cdp_endpoint
    reader.values["browser_endpoints"] = endpoints
    grid_given = read_grid(reader)
    if grid_given and (reader.get(V_CDP_ENDPOINT) is not None or endpoints_given):
        reader.problem(
            V_SELENIUM_GRID,
            "cannot be combined with a CDP endpoint or browser endpoints (one backend at a time)",
        )
    return reader.get(V_CDP_ENDPOINT) is not None or endpoints_given or grid_given


def _parse_endpoint_list(reader: Reader, entries: Sequence[str], variable: str) -> tuple[str, ...]:
    if not entries:
        reader.problem(variable, "must list 1 to 16 ws:// or wss:// URLs")
        return ()
    ok = True
    for position, entry in enumerate(entries, start=1):
        if not is_endpoint_url(entry, _SERVER_SCHEMES):
            reader.problem(variable, f"entry {position} is not an absolute ws:// or wss:// URL")
            ok = False
    if len(entries) > MAX_BROWSER_ENDPOINTS:
        reader.problem(variable, f"lists more than {MAX_BROWSER_ENDPOINTS} endpoints")
        ok = False
    if len(set(entries)) != len(entries):
        reader.problem(variable, "entries must be distinct")
        ok = False
    return tuple(entries) if ok else ()


def _read_browser_path(reader: Reader, remote: bool) -> None:
    # With a remote backend the browser path is ignored (§19.1), so it is not checked either.
    raw = reader.get(V_BROWSER_PATH)
    if raw is None or remote:
        return
    candidate = str(reader.path(raw)) if usable_text(raw) else ""
    if candidate and is_executable_file(candidate):
        reader.values["browser_path"] = candidate
    else:
        reader.problem(V_BROWSER_PATH, "must name an existing executable file")
