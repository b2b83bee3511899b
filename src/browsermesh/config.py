"""Configuration, command-line parsing and Chromium lookup (contract §19, §18.2-18.6, §14.1).

This is the only module of the package that reads ``os.environ``. Every function takes the
environment as an explicit ``environ`` mapping; only :func:`process_environ` and
:func:`config_from_environment` hand over the real process environment.

Keep this module import-light (standard library only): ``browsermesh --version`` and
``--help`` go through it, and startup time matters.
"""

from __future__ import annotations

import dataclasses
import glob
import ipaddress
import json
import os
import re
import shutil
import stat
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.util import find_spec
from pathlib import Path
from typing import Any, Final, Literal, TypeAlias
from urllib.parse import urlsplit

from browsermesh._version import __version__

__all__ = [
    "ALL_PROFILES",
    "BINARY_KINDS",
    "DEFAULT_PROFILES",
    "ENV_PREFIX",
    "LOG_LEVELS",
    "Backend",
    "BinaryKind",
    "ChromiumLocation",
    "Config",
    "ConfigError",
    "DemoInvocation",
    "DoctorInvocation",
    "HelpInvocation",
    "InstallBrowserInvocation",
    "Invocation",
    "LogLevel",
    "Profile",
    "ServeInvocation",
    "Transport",
    "UsageError",
    "VersionInvocation",
    "binary_kind",
    "config_from_environment",
    "default_config",
    "derive_allowed_hosts",
    "derive_allowed_origins",
    "find_chromium",
    "help_text",
    "is_loopback_host",
    "is_wildcard_host",
    "load_config",
    "locate_chromium",
    "locate_full_chromium",
    "locate_headless_shell",
    "parse_auth_token_file",
    "parse_invocation",
    "process_environ",
    "system_chromium_candidates",
    "usage_summary",
]

# --------------------------------------------------------------------------------------------
# Literals and constants
# --------------------------------------------------------------------------------------------

Profile: TypeAlias = Literal["core", "observability", "persistence", "files", "eval"]
LogLevel: TypeAlias = Literal["debug", "info", "warn", "error", "silent"]
Transport: TypeAlias = Literal["stdio", "http"]
Backend: TypeAlias = Literal["local", "cdp", "browser-server"]

ALL_PROFILES: Final[tuple[Profile, ...]] = (
    "core",
    "observability",
    "persistence",
    "files",
    "eval",
)
DEFAULT_PROFILES: Final[tuple[Profile, ...]] = ("core", "observability", "persistence", "files")
LOG_LEVELS: Final[tuple[LogLevel, ...]] = ("debug", "info", "warn", "error", "silent")
TRANSPORTS: Final[tuple[Transport, ...]] = ("stdio", "http")

ENV_PREFIX: Final = "BROWSERMESH_"

DEFAULT_HTTP_HOST: Final = "127.0.0.1"
DEFAULT_HTTP_PORT: Final = 7331
DEFAULT_HTTP_PATH: Final = "/mcp"
DEFAULT_DATA_DIR: Final = "~/.browsermesh"

MAX_BROWSER_ENDPOINTS: Final = 16
TOKEN_FILE_MAX_BYTES: Final = 1024 * 1024
_MAX_TOKEN_FILE_PROBLEMS: Final = 20

_PRINCIPAL_RE: Final = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
_HTTP_PATH_RE: Final = re.compile(r"^/[A-Za-z0-9/_.-]{0,127}$")
_INT_RE: Final = re.compile(r"^[+-]?[0-9]{1,19}$")
_HOST_LABEL_RE: Final = re.compile(r"^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$")
_HOST_ENTRY_RE: Final = re.compile(r"^(?P<host>\[[^\]]*\]|[^:\[\]]+)(?::(?P<port>[0-9]{1,5}|\*))?$")
_ORIGIN_ENTRY_RE: Final = re.compile(
    r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://"
    r"(?P<host>\[[^\]]*\]|[^:/\[\]]+)(?::(?P<port>[0-9]{1,5}|\*))?/?$"
)
_TOKEN_MIN: Final = 16
_TOKEN_MAX: Final = 512

# Environment variable names (§19.1), in table order.
V_TIMEOUT_MS: Final = "BROWSERMESH_TIMEOUT_MS"
V_DATA_DIR: Final = "BROWSERMESH_DATA_DIR"
V_LOG_LEVEL: Final = "BROWSERMESH_LOG_LEVEL"
V_MAX_SESSIONS: Final = "BROWSERMESH_MAX_SESSIONS"
V_MAX_PAGES: Final = "BROWSERMESH_MAX_PAGES"
V_TOOLS: Final = "BROWSERMESH_TOOLS"
V_PERSISTENCE: Final = "BROWSERMESH_PERSISTENCE"
V_HEADLESS: Final = "BROWSERMESH_HEADLESS"
V_SCHEMA_REFS: Final = "BROWSERMESH_SCHEMA_REFS"
V_AUTO_INSTALL: Final = "BROWSERMESH_AUTO_INSTALL"
V_AGENT_GUIDELINES: Final = "BROWSERMESH_AGENT_GUIDELINES"
V_NO_SANDBOX: Final = "BROWSERMESH_NO_SANDBOX"
V_BROWSER_PATH: Final = "BROWSERMESH_BROWSER_PATH"
V_CDP_ENDPOINT: Final = "BROWSERMESH_CDP_ENDPOINT"
V_BROWSER_ENDPOINTS: Final = "BROWSERMESH_BROWSER_ENDPOINTS"
V_TRANSPORT: Final = "BROWSERMESH_TRANSPORT"
V_HTTP_HOST: Final = "BROWSERMESH_HTTP_HOST"
V_HTTP_PORT: Final = "BROWSERMESH_HTTP_PORT"
V_HTTP_PATH: Final = "BROWSERMESH_HTTP_PATH"
V_AUTH_TOKEN_FILE: Final = "BROWSERMESH_AUTH_TOKEN_FILE"
V_ALLOWED_HOSTS: Final = "BROWSERMESH_ALLOWED_HOSTS"
V_ALLOWED_ORIGINS: Final = "BROWSERMESH_ALLOWED_ORIGINS"
V_SESSION_IDLE_MS: Final = "BROWSERMESH_SESSION_IDLE_MS"
V_MAX_SESSIONS_PER_PRINCIPAL: Final = "BROWSERMESH_MAX_SESSIONS_PER_PRINCIPAL"
V_UPLOAD_ROOT: Final = "BROWSERMESH_UPLOAD_ROOT"


@dataclass(frozen=True, slots=True)
class _IntSpec:
    variable: str
    field: str
    default: int
    low: int
    high: int
    zero_allowed: bool = False


# Integer variables, in table order. ``session_idle_ms`` also accepts 0 (= never reap).
_INT_SPECS: Final[tuple[_IntSpec, ...]] = (
    _IntSpec(V_TIMEOUT_MS, "timeout_ms", 10_000, 1, 300_000),
    _IntSpec(V_MAX_SESSIONS, "max_sessions", 50, 1, 1_000),
    _IntSpec(V_MAX_PAGES, "max_pages", 20, 1, 100),
    _IntSpec(V_HTTP_PORT, "http_port", DEFAULT_HTTP_PORT, 0, 65_535),
    _IntSpec(V_SESSION_IDLE_MS, "session_idle_ms", 1_800_000, 1_000, 604_800_000, True),
    _IntSpec("BROWSERMESH_OBSERVABILITY_EVENTS", "observability_events", 200, 1, 1_000),
    _IntSpec(
        "BROWSERMESH_OBSERVABILITY_STRING_CHARS", "observability_string_chars", 2048, 128, 8192
    ),
    _IntSpec("BROWSERMESH_OBSERVABILITY_PAGE_SIZE", "observability_page_size", 100, 1, 200),
    _IntSpec(
        "BROWSERMESH_OBSERVABILITY_RESPONSE_BYTES",
        "observability_response_bytes",
        65_536,
        1_024,
        262_144,
    ),
    _IntSpec(
        "BROWSERMESH_SCREENSHOT_MAX_DIMENSION", "screenshot_max_dimension", 10_000, 256, 32_768
    ),
    _IntSpec(
        "BROWSERMESH_SCREENSHOT_MAX_PIXELS",
        "screenshot_max_pixels",
        40_000_000,
        65_536,
        268_435_456,
    ),
    _IntSpec(
        "BROWSERMESH_SCREENSHOT_MAX_BYTES", "screenshot_max_bytes", 16_777_216, 1_024, 67_108_864
    ),
    _IntSpec(
        "BROWSERMESH_VISIBLE_TEXT_MAX_CHARS", "visible_text_max_chars", 20_000, 128, 1_000_000
    ),
    _IntSpec(
        "BROWSERMESH_VISIBLE_TEXT_MAX_BYTES", "visible_text_max_bytes", 65_536, 512, 4_194_304
    ),
    _IntSpec("BROWSERMESH_MAX_SAVED_STATES", "max_saved_states", 100, 1, 10_000),
    _IntSpec("BROWSERMESH_MAX_STATE_BYTES", "max_state_bytes", 1_048_576, 1_024, 67_108_864),
    _IntSpec(
        "BROWSERMESH_MAX_STATE_TOTAL_BYTES",
        "max_state_total_bytes",
        16_777_216,
        1_024,
        1_073_741_824,
    ),
    _IntSpec("BROWSERMESH_MAX_STATE_ORIGINS", "max_state_origins", 50, 1, 1_000),
    _IntSpec("BROWSERMESH_SHUTDOWN_GRACE_MS", "shutdown_grace_ms", 5_000, 0, 300_000),
    _IntSpec("BROWSERMESH_REF_TTL_MS", "ref_ttl_ms", 30_000, 1_000, 1_800_000),
    _IntSpec("BROWSERMESH_ACTIONABILITY_SETTLE_MS", "actionability_settle_ms", 1_000, 0, 30_000),
    _IntSpec("BROWSERMESH_MAX_ARTIFACTS", "max_artifacts", 100, 1, 10_000),
    _IntSpec(
        "BROWSERMESH_MAX_ARTIFACT_SESSION_BYTES",
        "max_artifact_session_bytes",
        104_857_600,
        1_024,
        10_737_418_240,
    ),
    _IntSpec(
        "BROWSERMESH_MAX_ARTIFACT_PRINCIPAL_BYTES",
        "max_artifact_principal_bytes",
        268_435_456,
        1_024,
        10_737_418_240,
    ),
    _IntSpec(
        "BROWSERMESH_MAX_ARTIFACT_TOTAL_BYTES",
        "max_artifact_total_bytes",
        1_073_741_824,
        1_024,
        10_737_418_240,
    ),
)

_MAX_SESSIONS_PER_PRINCIPAL_SPEC: Final = _IntSpec(
    V_MAX_SESSIONS_PER_PRINCIPAL, "max_sessions_per_principal", 0, 1, 1_000
)


@dataclass(frozen=True, slots=True)
class _BoolSpec:
    variable: str
    field: str
    default: bool


_BOOL_SPECS: Final[tuple[_BoolSpec, ...]] = (
    _BoolSpec(V_PERSISTENCE, "persistence", True),
    _BoolSpec(V_HEADLESS, "headless", False),
    _BoolSpec(V_SCHEMA_REFS, "schema_refs", True),
    _BoolSpec(V_AUTO_INSTALL, "auto_install", True),
    _BoolSpec(V_AGENT_GUIDELINES, "agent_guidelines", True),
    _BoolSpec(V_NO_SANDBOX, "no_sandbox", False),
)

# --------------------------------------------------------------------------------------------
# Host helpers (§18.3, §18.5)
# --------------------------------------------------------------------------------------------


def _normalize_host(value: str) -> str | None:
    """Return the canonical form of a host name or IP literal, or None when invalid.

    IPv6 literals may be given with or without brackets and are returned without them.
    Host names are lower-cased.
    """
    if not value or value != value.strip():
        return None
    bracketed = value.startswith("[") and value.endswith("]")
    inner = value[1:-1] if bracketed else value
    try:
        address = ipaddress.ip_address(inner)
    except ValueError:
        address = None
    if address is not None:
        if bracketed and address.version != 6:
            return None
        return address.compressed
    if bracketed:
        return None
    name = inner[:-1] if inner.endswith(".") else inner
    if not name or len(name) > 253:
        return None
    if not all(_HOST_LABEL_RE.match(label) for label in name.split(".")):
        return None
    return name.lower()


def _ip(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def is_loopback_host(host: str) -> bool:
    """True for ``localhost``, any 127.0.0.0/8 address and ``::1`` (§18.3)."""
    if host.lower().rstrip(".") == "localhost":
        return True
    address = _ip(host)
    return address is not None and address.is_loopback


def is_wildcard_host(host: str) -> bool:
    """True for the wildcard bind addresses ``0.0.0.0`` and ``::`` (§18.5)."""
    address = _ip(host)
    return address is not None and address.is_unspecified


def _host_for_authority(host: str) -> str:
    address = _ip(host)
    if address is not None and address.version == 6:
        return f"[{address.compressed}]"
    return host


def _port_text(port: int) -> str:
    # Port 0 binds an ephemeral port that is unknown until the server listens: match any port.
    return "*" if port == 0 else str(port)


def derive_allowed_hosts(host: str, port: int) -> tuple[str, ...]:
    """Default ``Host`` allowlist for a bind address (§18.5); empty for a wildcard bind.

    For port 0 the entries use ``:*`` (any port), because the actual port is not known yet.
    """
    p = _port_text(port)
    if is_wildcard_host(host):
        return ()
    if is_loopback_host(host):
        return (f"127.0.0.1:{p}", f"localhost:{p}", f"[::1]:{p}")
    return (f"{_host_for_authority(host)}:{p}",)


def derive_allowed_origins(host: str, port: int) -> tuple[str, ...]:
    """Default ``Origin`` allowlist for a bind address (§18.5); empty for a wildcard bind."""
    p = _port_text(port)
    if is_wildcard_host(host):
        return ()
    if is_loopback_host(host):
        return tuple(f"http://{entry}" for entry in derive_allowed_hosts(host, port))
    authority = f"{_host_for_authority(host)}:{p}"
    return (f"http://{authority}", f"https://{authority}")


# --------------------------------------------------------------------------------------------
# The frozen configuration
# --------------------------------------------------------------------------------------------


def _default_data_dir() -> Path:
    return Path(os.path.abspath(os.path.expanduser(DEFAULT_DATA_DIR)))


@dataclass(frozen=True, slots=True)
class Config:
    """The validated, frozen configuration (one field per §19.1 variable)."""

    timeout_ms: int = 10_000
    data_dir: Path = field(default_factory=_default_data_dir)
    log_level: LogLevel = "info"
    max_sessions: int = 50
    max_pages: int = 20
    tools: tuple[Profile, ...] = DEFAULT_PROFILES
    persistence: bool = True
    headless: bool = False
    schema_refs: bool = True
    auto_install: bool = True
    agent_guidelines: bool = True
    no_sandbox: bool = False
    browser_path: str | None = None
    cdp_endpoint: str | None = None
    browser_endpoints: tuple[str, ...] = ()
    transport: Transport = "stdio"
    http_host: str = DEFAULT_HTTP_HOST
    http_port: int = DEFAULT_HTTP_PORT
    http_path: str = DEFAULT_HTTP_PATH
    auth_token_file: Path | None = None
    # (principal, token) pairs. Never shown in repr: a printed config must not leak tokens.
    auth_tokens: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    allowed_hosts: tuple[str, ...] = derive_allowed_hosts(DEFAULT_HTTP_HOST, DEFAULT_HTTP_PORT)
    allowed_origins: tuple[str, ...] = derive_allowed_origins(DEFAULT_HTTP_HOST, DEFAULT_HTTP_PORT)
    session_idle_ms: int = 1_800_000
    observability_events: int = 200
    observability_string_chars: int = 2048
    observability_page_size: int = 100
    observability_response_bytes: int = 65_536
    screenshot_max_dimension: int = 10_000
    screenshot_max_pixels: int = 40_000_000
    screenshot_max_bytes: int = 16_777_216
    visible_text_max_chars: int = 20_000
    visible_text_max_bytes: int = 65_536
    max_saved_states: int = 100
    max_state_bytes: int = 1_048_576
    max_state_total_bytes: int = 16_777_216
    # Origins (cookie domains + localStorage origins) one saved state may hold: restoring
    # each costs Chromium a navigation, so a hostile page could make an unrestorable state.
    max_state_origins: int = 50
    # On SIGTERM/SIGINT/stdin close, in-flight calls get this long to finish before they are
    # cancelled (0 = cancel at once).
    shutdown_grace_ms: int = 5_000
    # How long an element ref from browser_snapshot stays usable after its capture (contract
    # §5.5: 30 s); not refreshed by use.
    ref_ttl_ms: int = 30_000
    # How long a single match that is disabled, hidden or read-only may take to change before
    # the action answers with that reason (issue 13), instead of waiting the whole budget.
    actionability_settle_ms: int = 1_000
    # Artifacts (issue 14: downloads and PDFs, kept under <data_dir>/artifacts while their
    # session lives): per session, bytes per session / principal / server.
    max_artifacts: int = 100
    max_artifact_session_bytes: int = 104_857_600
    max_artifact_principal_bytes: int = 268_435_456
    max_artifact_total_bytes: int = 1_073_741_824
    # The only directory browser_file_upload may read files from (its realpath); None = uploads
    # take inline content only.
    upload_root: Path | None = None
    max_sessions_per_principal: int | None = None
    token_file_world_readable: bool = False

    @property
    def backend(self) -> Backend:
        """The active browser backend kind (§14)."""
        if self.cdp_endpoint is not None:
            return "cdp"
        if self.browser_endpoints:
            return "browser-server"
        return "local"

    @property
    def eval_enabled(self) -> bool:
        """True when the ``eval`` profile is published."""
        return "eval" in self.tools

    def replace(self, **changes: Any) -> Config:
        """A copy with ``changes`` applied (``dataclasses.replace``; no re-validation)."""
        return dataclasses.replace(self, **changes)


def default_config(**overrides: Any) -> Config:
    """A configuration with every default, for tests and library users.

    ``data_dir`` may be a ``str`` or ``Path`` (made absolute). When ``http_host`` or
    ``http_port`` is overridden and the allowlists are not, the allowlists are re-derived.
    """
    if "data_dir" in overrides:
        overrides["data_dir"] = Path(os.path.abspath(os.path.expanduser(overrides["data_dir"])))
    host = str(overrides.get("http_host", DEFAULT_HTTP_HOST))
    port = int(overrides.get("http_port", DEFAULT_HTTP_PORT))
    overrides.setdefault("allowed_hosts", derive_allowed_hosts(host, port))
    overrides.setdefault("allowed_origins", derive_allowed_origins(host, port))
    return Config(**overrides)


# --------------------------------------------------------------------------------------------
# Errors and invocations
# --------------------------------------------------------------------------------------------


class UsageError(Exception):
    """An unknown or misused command-line option (exit 2). ``str(exc)`` is the reason."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ConfigError(Exception):
    """Invalid configuration (exit 2).

    ``problems`` holds ``(VARIABLE, validator message)`` pairs; messages never contain the
    offending value.
    """

    def __init__(self, problems: Sequence[tuple[str, str]]) -> None:
        self.problems: list[tuple[str, str]] = list(problems)
        super().__init__(
            "configuration is invalid: "
            + "; ".join(f"{variable}: {message}" for variable, message in self.problems)
        )


@dataclass(frozen=True, slots=True)
class HelpInvocation:
    """``browsermesh --help`` / ``-h``."""


@dataclass(frozen=True, slots=True)
class VersionInvocation:
    """``browsermesh --version`` / ``-v``."""


@dataclass(frozen=True, slots=True)
class InstallBrowserInvocation:
    """``browsermesh --install-browser`` (other options are ignored)."""


@dataclass(frozen=True, slots=True)
class DoctorInvocation:
    """``browsermesh --doctor [--json] [options]``."""

    config: Config
    as_json: bool = False


@dataclass(frozen=True, slots=True)
class DemoInvocation:
    """``browsermesh demo [--headed]``."""

    headed: bool = False


@dataclass(frozen=True, slots=True)
class ServeInvocation:
    """``browsermesh [options]``: serve MCP."""

    config: Config


Invocation: TypeAlias = (
    HelpInvocation
    | VersionInvocation
    | InstallBrowserInvocation
    | DoctorInvocation
    | DemoInvocation
    | ServeInvocation
)

# --------------------------------------------------------------------------------------------
# Command-line options
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Option:
    flag: str
    placeholder: str | None  # None = toggle (takes no value)
    summary: str
    variable: str | None = None
    toggle_value: str | None = None  # the raw variable value a toggle sets
    http_only: bool = False
    repeatable: bool = False
    alias: str | None = None


_OPTIONS: Final[tuple[_Option, ...]] = (
    _Option("--transport", "<kind>", "stdio or http (default stdio)", V_TRANSPORT),
    _Option("--host", "<host>", "HTTP bind host (default 127.0.0.1)", V_HTTP_HOST, http_only=True),
    _Option(
        "--port", "<port>", "HTTP port, 0 = ephemeral (default 7331)", V_HTTP_PORT, http_only=True
    ),
    _Option("--path", "<path>", "HTTP endpoint path (default /mcp)", V_HTTP_PATH, http_only=True),
    _Option(
        "--auth-token-file",
        "<path>",
        "HTTP bearer tokens, one name:token per line (required off loopback)",
        V_AUTH_TOKEN_FILE,
        http_only=True,
    ),
    _Option(
        "--allowed-hosts",
        "<list>",
        "Allowed Host headers, comma list or * (default derived from --host)",
        V_ALLOWED_HOSTS,
        http_only=True,
    ),
    _Option(
        "--allowed-origins",
        "<list>",
        "Allowed Origin headers, comma list or * (default derived from --host)",
        V_ALLOWED_ORIGINS,
        http_only=True,
    ),
    _Option(
        "--session-idle-ms",
        "<ms>",
        "Close HTTP sessions idle this long, 0 = never (default 1800000)",
        V_SESSION_IDLE_MS,
        http_only=True,
    ),
    _Option(
        "--tools",
        "<profiles>",
        "Profiles to publish: core, observability, persistence, eval (eval is off unless listed)",
        V_TOOLS,
    ),
    _Option(
        "--timeout", "<ms>", "Default operation timeout, 1..300000 (default 10000)", V_TIMEOUT_MS
    ),
    _Option("--data-dir", "<path>", "Private data directory (default ~/.browsermesh)", V_DATA_DIR),
    _Option(
        "--upload-root",
        "<dir>",
        "Directory whose files browser_file_upload may send (default: none)",
        V_UPLOAD_ROOT,
    ),
    _Option(
        "--log-level",
        "<level>",
        "debug, info, warn, error or silent (default info); logs go to stderr",
        V_LOG_LEVEL,
    ),
    _Option("--max-sessions", "<count>", "Live sessions, 1..1000 (default 50)", V_MAX_SESSIONS),
    _Option(
        "--max-sessions-per-principal",
        "<count>",
        "Live sessions per principal, 1..1000 (default: no per-principal limit)",
        V_MAX_SESSIONS_PER_PRINCIPAL,
    ),
    _Option("--max-pages", "<count>", "Pages per session, 1..100 (default 20)", V_MAX_PAGES),
    _Option("--no-persistence", None, "Disable saved browser states", V_PERSISTENCE, "false"),
    _Option(
        "--no-schema-refs", None, "Publish fully expanded input schemas", V_SCHEMA_REFS, "false"
    ),
    _Option(
        "--no-agent-guidelines",
        None,
        "Send no server instructions to the client",
        V_AGENT_GUIDELINES,
        "false",
    ),
    _Option("--headless", None, "Launch Chromium without a window", V_HEADLESS, "true"),
    _Option("--headed", None, "Launch Chromium with a window (default)", V_HEADLESS, "false"),
    _Option(
        "--no-sandbox",
        None,
        "Run Chromium without its sandbox (trusted containers only)",
        V_NO_SANDBOX,
        "true",
    ),
    _Option(
        "--no-auto-install",
        None,
        "Do not install Chromium at startup when it is missing",
        V_AUTO_INSTALL,
        "false",
    ),
    _Option("--browser-path", "<path>", "Chromium or Chrome executable to launch", V_BROWSER_PATH),
    _Option(
        "--cdp-endpoint",
        "<url>",
        "Attach to a running Chrome over CDP (http(s):// or ws(s)://)",
        V_CDP_ENDPOINT,
    ),
    _Option(
        "--browser-endpoint",
        "<url>",
        "Playwright browser server ws(s):// URL (repeatable, up to 16)",
        V_BROWSER_ENDPOINTS,
        repeatable=True,
    ),
    _Option("--doctor", None, "Check the installation and exit (add --json for one JSON line)"),
    _Option("--json", None, "With --doctor: print the report as JSON"),
    _Option("--install-browser", None, "Install Playwright's Chromium and exit"),
    _Option("--help", None, "Show this help and exit", alias="-h"),
    _Option("--version", None, "Print the version and exit", alias="-v"),
)

_OPTIONS_BY_FLAG: Final[dict[str, _Option]] = {o.flag: o for o in _OPTIONS}
_HELP_FLAGS: Final = frozenset({"--help", "-h"})
_VERSION_FLAGS: Final = frozenset({"--version", "-v"})
_HELP_COLUMN: Final = 32
_POSITIONAL_ECHO_RE: Final = re.compile(r"^[A-Za-z0-9_.-]{1,32}$")

_USAGE_FORMS: Final[tuple[tuple[str, str], ...]] = (
    ("browsermesh [options]", "Serve MCP over stdio (or HTTP with --transport http)"),
    ("browsermesh demo [--headed]", "Run the end-to-end demo"),
    ("browsermesh --install-browser", "Install Playwright's Chromium"),
    ("browsermesh --doctor [--json] [options]", "Diagnose the installation"),
    ("browsermesh --help|-h", "Show this help"),
    ("browsermesh --version|-v", "Print the version"),
)


def usage_summary() -> str:
    """The ``Usage:`` block listing the invocation forms (§19.2), without a trailing newline."""
    width = max(len(form) for form, _ in _USAGE_FORMS) + 2
    lines = ["Usage:"]
    lines.extend(f"  {form.ljust(width)}{summary}" for form, summary in _USAGE_FORMS)
    return "\n".join(lines)


def help_text() -> str:
    """The full ``--help`` text (§19.2), ending with a newline."""
    lines = [
        f"BrowserMesh {__version__} - many isolated Chromium browser sessions for AI agents (MCP)",
        "",
        usage_summary(),
        "",
        "Options:",
    ]
    for option in _OPTIONS:
        label = option.flag if option.alias is None else f"{option.flag}, {option.alias}"
        if option.placeholder is not None:
            label = f"{label} {option.placeholder}"
        if len(label) < _HELP_COLUMN:
            lines.append(f"  {label.ljust(_HELP_COLUMN)}{option.summary}")
        else:
            lines.append(f"  {label}")
            lines.append(f"  {' ' * _HELP_COLUMN}{option.summary}")
    lines += [
        "",
        "Every configuration option maps to a BROWSERMESH_* environment variable (for example",
        "--timeout -> BROWSERMESH_TIMEOUT_MS, --no-persistence -> BROWSERMESH_PERSISTENCE=false,",
        "--headless/--headed -> BROWSERMESH_HEADLESS); the command line takes precedence over",
        "the environment. --host, --port, --path, --auth-token-file, --allowed-hosts,",
        "--allowed-origins and --session-idle-ms need --transport http. Output budgets",
        "(observability, screenshots, visible text, saved states, artifacts) and the element-ref",
        "lifetime (BROWSERMESH_REF_TTL_MS) and the actionability settle time",
        "(BROWSERMESH_ACTIONABILITY_SETTLE_MS) are set through BROWSERMESH_* variables only.",
    ]
    return "\n".join(lines) + "\n"


def parse_invocation(argv: Sequence[str], environ: Mapping[str, str]) -> Invocation:
    """Parse the command line (without the program name) against ``environ`` (§19.2).

    Raises :class:`UsageError` for misused options and :class:`ConfigError` for invalid
    configuration; both mean exit 2.
    """
    tokens = list(argv)
    if any(token in _HELP_FLAGS for token in tokens):
        return HelpInvocation()
    if any(token in _VERSION_FLAGS for token in tokens):
        return VersionInvocation()

    given: list[str] = []  # option flags in command-line order
    overrides: dict[str, tuple[str, str]] = {}  # variable -> (raw value, flag)
    endpoints: list[str] | None = None
    positionals: list[str] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        index += 1
        if not token.startswith("-") or token == "-":
            positionals.append(token)
            continue
        name, has_value, inline = token.partition("=")
        option = _OPTIONS_BY_FLAG.get(name) if name.startswith("--") else None
        if option is None:
            raise UsageError(f"unknown option {name}")
        if option.placeholder is None:
            if has_value:
                raise UsageError(f"option {name} does not take a value")
            value = option.toggle_value
        elif has_value:
            value = inline
        else:
            if index >= len(tokens) or tokens[index].startswith("--"):
                raise UsageError(f"option {name} requires a value")
            value = tokens[index]
            index += 1
        given.append(name)
        if option.variable is None or value is None:
            continue
        if option.repeatable:
            endpoints = [*(endpoints or []), value]
        else:
            overrides[option.variable] = (value, name)

    if positionals:
        if positionals[0] != "demo" or len(positionals) > 1:
            extra = positionals[1] if positionals[0] == "demo" else positionals[0]
            shown = f" '{extra}'" if _POSITIONAL_ECHO_RE.match(extra) else ""
            raise UsageError(f"unexpected argument{shown}")
        others = [flag for flag in given if flag != "--headed"]
        if others:
            raise UsageError(f"demo accepts only --headed, not {others[0]}")
        return DemoInvocation(headed="--headed" in given)

    if "--install-browser" in given and "--doctor" in given:
        raise UsageError("--install-browser cannot be combined with --doctor")
    if "--json" in given and "--doctor" not in given:
        raise UsageError("--json requires --doctor")
    if "--install-browser" in given:
        return InstallBrowserInvocation()

    http_flags = [flag for flag in given if _OPTIONS_BY_FLAG[flag].http_only]
    if http_flags:
        transport = overrides[V_TRANSPORT][0] if V_TRANSPORT in overrides else None
        if transport is None:
            transport = environ.get(V_TRANSPORT, "stdio")
        # An invalid transport value is reported as a configuration problem instead.
        if transport == "stdio":
            raise UsageError(f"option {http_flags[0]} requires --transport http")

    cli_endpoints = None if endpoints is None else (tuple(endpoints), "--browser-endpoint")
    config = _build_config(environ, overrides, cli_endpoints)
    if "--doctor" in given:
        return DoctorInvocation(config=config, as_json="--json" in given)
    return ServeInvocation(config=config)


# --------------------------------------------------------------------------------------------
# Loading and validation
# --------------------------------------------------------------------------------------------


def process_environ() -> Mapping[str, str]:
    """The real process environment (the one place the package reads ``os.environ``)."""
    return os.environ


def load_config(environ: Mapping[str, str]) -> Config:
    """Load and validate the configuration from environment variables only (§19.1).

    Raises :class:`ConfigError` listing every problem found.
    """
    return _build_config(environ, {}, None)


def config_from_environment() -> Config:
    """:func:`load_config` applied to the process environment."""
    return load_config(process_environ())


class _Reader:
    """Raw values (command line over environment) plus problem collection."""

    def __init__(
        self, environ: Mapping[str, str], overrides: Mapping[str, tuple[str, str]]
    ) -> None:
        self.environ = environ
        self.overrides = overrides
        self.problems: list[tuple[str, str]] = []
        self.sources: dict[str, str] = {variable: flag for variable, (_, flag) in overrides.items()}

    def get(self, variable: str) -> str | None:
        if variable in self.overrides:
            return self.overrides[variable][0]
        return self.environ.get(variable)

    def problem(self, variable: str, message: str) -> None:
        flag = self.sources.get(variable)
        suffix = f" (from {flag})" if flag else ""
        self.problems.append((variable, message + suffix))

    def integer(self, spec: _IntSpec) -> int | None:
        raw = self.get(spec.variable)
        if raw is None:
            return None
        value = int(raw) if _INT_RE.match(raw) else None
        if value is not None and (
            spec.low <= value <= spec.high or (spec.zero_allowed and value == 0)
        ):
            return value
        if spec.zero_allowed:
            self.problem(spec.variable, f"must be 0 or an integer from {spec.low} to {spec.high}")
        else:
            self.problem(spec.variable, f"must be an integer from {spec.low} to {spec.high}")
        return None

    def boolean(self, spec: _BoolSpec) -> bool | None:
        raw = self.get(spec.variable)
        if raw is None:
            return None
        if raw in ("true", "false"):
            return raw == "true"
        self.problem(spec.variable, "must be true or false")
        return None


def _expand_path(value: str, environ: Mapping[str, str]) -> Path:
    """Expand ``~`` for the current user (HOME from ``environ``) and make the path absolute."""
    home_var = "USERPROFILE" if os.name == "nt" else "HOME"
    home = environ.get(home_var)
    if home and (value == "~" or value.startswith(("~/", "~" + os.sep))):
        expanded = home + value[1:]
    else:
        expanded = os.path.expanduser(value)
    return Path(os.path.abspath(expanded))


def _is_executable_file(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def _valid_url(value: str, schemes: frozenset[str]) -> bool:
    if not value or value != value.strip() or any(ch.isspace() for ch in value):
        return False
    try:
        parts = urlsplit(value)
        port = parts.port  # raises ValueError when out of range or not numeric
    except ValueError:
        return False
    del port
    if parts.scheme.lower() not in schemes or not parts.hostname:
        return False
    return _normalize_host(parts.hostname) is not None


_CDP_SCHEMES: Final = frozenset({"http", "https", "ws", "wss"})
_SERVER_SCHEMES: Final = frozenset({"ws", "wss"})


def _parse_tools(reader: _Reader) -> tuple[Profile, ...]:
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


def _parse_endpoint_list(reader: _Reader, entries: Sequence[str], variable: str) -> tuple[str, ...]:
    if not entries:
        reader.problem(variable, "must list 1 to 16 ws:// or wss:// URLs")
        return ()
    ok = True
    for position, entry in enumerate(entries, start=1):
        if not _valid_url(entry, _SERVER_SCHEMES):
            reader.problem(variable, f"entry {position} is not an absolute ws:// or wss:// URL")
            ok = False
    if len(entries) > MAX_BROWSER_ENDPOINTS:
        reader.problem(variable, f"lists more than {MAX_BROWSER_ENDPOINTS} endpoints")
        ok = False
    if len(set(entries)) != len(entries):
        reader.problem(variable, "entries must be distinct")
        ok = False
    return tuple(entries) if ok else ()


def _parse_host_entry(entry: str) -> str | None:
    match = _HOST_ENTRY_RE.match(entry)
    if match is None:
        return None
    host = _normalize_host(match["host"])
    if host is None:
        return None
    port = match["port"]
    if port is not None and port != "*" and int(port) > 65_535:
        return None
    authority = _host_for_authority(host)
    return authority if port is None else f"{authority}:{port}"


def _parse_origin_entry(entry: str) -> str | None:
    match = _ORIGIN_ENTRY_RE.match(entry)
    if match is None or match["scheme"].lower() not in ("http", "https"):
        return None
    host = _normalize_host(match["host"])
    if host is None:
        return None
    port = match["port"]
    if port is not None and port != "*" and int(port) > 65_535:
        return None
    authority = _host_for_authority(host)
    if port is not None:
        authority = f"{authority}:{port}"
    return f"{match['scheme'].lower()}://{authority}"


def _parse_allow_list(
    reader: _Reader,
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


def parse_auth_token_file(path: Path) -> tuple[tuple[tuple[str, str], ...], list[str]]:
    """Parse a token file (§18.3) into ``(principal, token)`` pairs and problem messages.

    Problem messages name line numbers but never contain a token or a principal name.
    """
    problems: list[str] = []
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            return (), ["must name a regular file"]
        if info.st_size > TOKEN_FILE_MAX_BYTES:
            return (), ["is larger than 1 MiB"]
        data = path.read_bytes()
    except OSError:
        return (), ["cannot be read"]
    if len(data) > TOKEN_FILE_MAX_BYTES:
        return (), ["is larger than 1 MiB"]
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return (), ["is not valid UTF-8"]

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
        if not colon:
            problems.append(f"line {number}: expected name:token")
        elif not _PRINCIPAL_RE.match(name):
            problems.append(
                f"line {number}: principal name must match ^[a-z0-9][a-z0-9_-]{{0,63}}$"
            )
        elif not (_TOKEN_MIN <= len(token) <= _TOKEN_MAX and all("!" <= ch <= "~" for ch in token)):
            problems.append(
                f"line {number}: token must be {_TOKEN_MIN} to {_TOKEN_MAX} printable ASCII "
                "characters without spaces"
            )
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


def _world_readable(path: Path) -> bool:
    if os.name == "nt":
        return False
    try:
        return bool(path.stat().st_mode & (stat.S_IRGRP | stat.S_IROTH))
    except OSError:
        return False


def _build_config(
    environ: Mapping[str, str],
    overrides: Mapping[str, tuple[str, str]],
    cli_endpoints: tuple[tuple[str, ...], str] | None,
) -> Config:
    reader = _Reader(environ, overrides)
    values: dict[str, Any] = {}

    for int_spec in _INT_SPECS:
        number = reader.integer(int_spec)
        if number is not None:
            values[int_spec.field] = number
    per_principal = reader.integer(_MAX_SESSIONS_PER_PRINCIPAL_SPEC)
    if per_principal is not None:
        values["max_sessions_per_principal"] = per_principal

    for bool_spec in _BOOL_SPECS:
        flag = reader.boolean(bool_spec)
        if flag is not None:
            values[bool_spec.field] = flag

    raw = reader.get(V_DATA_DIR)
    if raw is None:
        values["data_dir"] = _expand_path(DEFAULT_DATA_DIR, environ)
    elif not raw.strip():
        reader.problem(V_DATA_DIR, "must not be empty")
    elif "\0" in raw:
        reader.problem(V_DATA_DIR, "must be a valid path")
    else:
        values["data_dir"] = _expand_path(raw, environ)

    raw = reader.get(V_UPLOAD_ROOT)
    if raw is not None:
        resolved = (
            os.path.realpath(_expand_path(raw, environ)) if raw.strip() and "\0" not in raw else ""
        )
        if resolved and os.path.isdir(resolved):
            values["upload_root"] = Path(resolved)
        else:
            reader.problem(V_UPLOAD_ROOT, "must name an existing directory")

    raw = reader.get(V_LOG_LEVEL)
    if raw is not None:
        if raw in LOG_LEVELS:
            values["log_level"] = raw
        else:
            reader.problem(V_LOG_LEVEL, "must be one of " + ", ".join(LOG_LEVELS))

    values["tools"] = _parse_tools(reader)

    # Backends (§14): CDP and browser servers are mutually exclusive.
    cdp_endpoint: str | None = None
    raw = reader.get(V_CDP_ENDPOINT)
    if raw is not None:
        if _valid_url(raw, _CDP_SCHEMES):
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
    values["cdp_endpoint"] = cdp_endpoint
    values["browser_endpoints"] = endpoints
    remote = reader.get(V_CDP_ENDPOINT) is not None or endpoints_given

    # With a remote backend the browser path is ignored (§19.1), so it is not checked either.
    raw = reader.get(V_BROWSER_PATH)
    if raw is not None and not remote:
        candidate = str(_expand_path(raw, environ)) if raw.strip() and "\0" not in raw else ""
        if candidate and _is_executable_file(candidate):
            values["browser_path"] = candidate
        else:
            reader.problem(V_BROWSER_PATH, "must name an existing executable file")

    # Transport and HTTP options (§18). HTTP variables are validated even under stdio.
    transport: str | None = reader.get(V_TRANSPORT)
    if transport is None:
        transport = "stdio"
    elif transport not in TRANSPORTS:
        reader.problem(V_TRANSPORT, "must be stdio or http")
        transport = None
    if transport is not None:
        values["transport"] = transport

    host: str | None = DEFAULT_HTTP_HOST
    raw = reader.get(V_HTTP_HOST)
    if raw is not None:
        host = _normalize_host(raw)
        if host is None:
            reader.problem(V_HTTP_HOST, "must be a host name or IP address")
        else:
            values["http_host"] = host

    raw = reader.get(V_HTTP_PATH)
    if raw is not None:
        if _HTTP_PATH_RE.match(raw):
            values["http_path"] = raw
        else:
            reader.problem(
                V_HTTP_PATH,
                "must start with / and have at most 128 characters of A-Z a-z 0-9 / _ . -",
            )

    token_file_given = False
    raw = reader.get(V_AUTH_TOKEN_FILE)
    if raw is not None:
        token_file_given = True
        if not raw.strip() or "\0" in raw:
            reader.problem(V_AUTH_TOKEN_FILE, "must name a readable file")
        else:
            path = _expand_path(raw, environ)
            tokens, problems = parse_auth_token_file(path)
            for message in problems:
                reader.problem(V_AUTH_TOKEN_FILE, message)
            if not problems:
                values["auth_token_file"] = path
                values["auth_tokens"] = tokens
                values["token_file_world_readable"] = _world_readable(path)

    port = values.get("http_port", DEFAULT_HTTP_PORT)
    hosts_given = False
    raw = reader.get(V_ALLOWED_HOSTS)
    if raw is not None:
        hosts_given = True
        parsed = _parse_allow_list(reader, V_ALLOWED_HOSTS, raw, "host[:port]", _parse_host_entry)
        if parsed is not None:
            values["allowed_hosts"] = parsed
    elif host is not None:
        values["allowed_hosts"] = derive_allowed_hosts(host, port)

    raw = reader.get(V_ALLOWED_ORIGINS)
    if raw is not None:
        parsed = _parse_allow_list(
            reader, V_ALLOWED_ORIGINS, raw, "http(s)://host[:port]", _parse_origin_entry
        )
        if parsed is not None:
            values["allowed_origins"] = parsed
    elif host is not None:
        values["allowed_origins"] = derive_allowed_origins(host, port)

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

    if reader.problems:
        raise ConfigError(reader.problems)
    return Config(**values)


# --------------------------------------------------------------------------------------------
# Chromium executable resolution (§14.1 steps 1-3)
# --------------------------------------------------------------------------------------------

BinaryKind: TypeAlias = Literal["headless-shell", "chromium"]
"""Which Chromium binary a local browser runs: the headless shell (the old headless mode, a
separate build that cannot open windows and does less work per page) or the full browser."""
BINARY_KINDS: Final[tuple[BinaryKind, ...]] = ("headless-shell", "chromium")


@dataclass(frozen=True, slots=True)
class ChromiumLocation:
    """Where a Chromium executable was found.

    ``source`` is ``configured`` (BROWSERMESH_BROWSER_PATH), ``playwright`` (a build in
    Playwright's browser cache) or ``system``; ``kind`` says whether it is a headless shell.
    """

    path: str
    source: Literal["configured", "playwright", "system"]
    kind: BinaryKind = "chromium"


_SYSTEM_NAMES: Final = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
_SYSTEM_SHELL_NAMES: Final = ("chromium-headless-shell", "chrome-headless-shell")
# Debian's /usr/bin/chromium-headless-shell is a shell script that runs
# /usr/lib/chromium/chromium-headless-shell as a child (no exec): launching the real binary
# saves a process per browser and keeps Playwright's pid the browser's own.
_DEBIAN_SHELL: Final = ("lib", "chromium", "chromium-headless-shell")

# Executable paths inside a Playwright ``chromium-<revision>`` directory, per platform family,
# newest layouts first (Chrome for Testing builds, then the older Chromium builds).
_PLAYWRIGHT_LAYOUTS: Final[dict[str, tuple[str, ...]]] = {
    "linux": ("chrome-linux64/chrome", "chrome-linux-arm64/chrome", "chrome-linux*/chrome"),
    "darwin": (
        "chrome-mac-*/Google Chrome for Testing.app/Contents/MacOS/Google Chrome for Testing",
        "chrome-mac*/Chromium.app/Contents/MacOS/Chromium",
    ),
    "win32": ("chrome-win64/chrome.exe", "chrome-win*/chrome.exe"),
}
# The same inside a ``chromium_headless_shell-<revision>`` directory (Playwright >= 1.49).
_PLAYWRIGHT_SHELL_LAYOUTS: Final[dict[str, tuple[str, ...]]] = {
    "linux": (
        "chrome-headless-shell-linux64/chrome-headless-shell",
        "chrome-headless-shell-linux-arm64/chrome-headless-shell",
        "chrome-headless-shell-linux*/chrome-headless-shell",
        "chrome-linux/headless_shell",
    ),
    "darwin": ("chrome-headless-shell-mac-*/chrome-headless-shell",),
    "win32": ("chrome-headless-shell-win64/chrome-headless-shell.exe",),
}
_PLAYWRIGHT_BUILDS: Final[dict[BinaryKind, tuple[str, dict[str, tuple[str, ...]]]]] = {
    "chromium": ("chromium", _PLAYWRIGHT_LAYOUTS),
    "headless-shell": ("chromium-headless-shell", _PLAYWRIGHT_SHELL_LAYOUTS),
}


def binary_kind(path: str) -> BinaryKind:
    """The kind of a configured executable, from its file name (``chrome-headless-shell``,
    ``chromium-headless-shell``, Playwright's older ``headless_shell``)."""
    name = os.path.basename(path).lower().replace("_", "-")
    return "headless-shell" if "headless-shell" in name else "chromium"


def _platform_family(platform: str) -> str:
    if platform.startswith("win"):
        return "win32"
    if platform == "darwin":
        return "darwin"
    return "linux"


def _playwright_package_dir() -> Path | None:
    try:
        spec = find_spec("playwright")  # locates the package without importing it
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _playwright_registry_dir(
    environ: Mapping[str, str], platform: str, package_dir: Path | None
) -> Path | None:
    configured = environ.get("PLAYWRIGHT_BROWSERS_PATH")
    if configured == "0":
        if package_dir is None:
            return None
        return package_dir / "driver" / "package" / ".local-browsers"
    if configured:
        return _expand_path(configured, environ)
    family = _platform_family(platform)
    if family == "win32":
        base = environ.get("LOCALAPPDATA")
        if not base:
            home = environ.get("USERPROFILE")
            base = os.path.join(home, "AppData", "Local") if home else None
        return Path(base, "ms-playwright") if base else None
    home = environ.get("HOME") or os.path.expanduser("~")
    if family == "darwin":
        return Path(home, "Library", "Caches", "ms-playwright")
    cache = environ.get("XDG_CACHE_HOME") or os.path.join(home, ".cache")
    return Path(cache, "ms-playwright")


def _playwright_revision(package_dir: Path | None, name: str = "chromium") -> str | None:
    """The revision of build ``name`` the installed Playwright launches (its browsers.json)."""
    if package_dir is None:
        return None
    try:
        text = (package_dir / "driver" / "package" / "browsers.json").read_text("utf-8")
        for browser in json.loads(text)["browsers"]:
            if browser.get("name") == name:
                return str(browser["revision"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return None


def _revision_key(directory: str) -> tuple[int, str]:
    suffix = os.path.basename(directory).rpartition("-")[2]
    return (int(suffix) if suffix.isdigit() else -1, directory)


def _find_playwright_build(
    environ: Mapping[str, str], platform: str, kind: BinaryKind = "chromium"
) -> str | None:
    name, layouts = _PLAYWRIGHT_BUILDS[kind]
    package_dir = _playwright_package_dir()
    registry = _playwright_registry_dir(environ, platform, package_dir)
    if registry is None or not registry.is_dir():
        return None
    revision = _playwright_revision(package_dir, name)
    prefix = name.replace("-", "_")  # Playwright's directory names use underscores
    root = glob.escape(str(registry))
    if revision is not None:
        # The revision the installed Playwright launches; an older leftover does not count.
        directories = [os.path.join(str(registry), f"{prefix}-{revision}")]
    else:
        directories = sorted(glob.glob(os.path.join(root, f"{prefix}-*")), key=_revision_key)
        directories.reverse()
    for directory in directories:
        for layout in layouts[_platform_family(platform)]:
            pattern = os.path.join(glob.escape(directory), *layout.split("/"))
            for candidate in sorted(glob.glob(pattern)):
                if _is_executable_file(candidate):
                    return candidate
    return None


def system_chromium_candidates(environ: Mapping[str, str], platform: str) -> list[str]:
    """Fixed well-known absolute locations checked on macOS and Windows (§14.1 step 3)."""
    family = _platform_family(platform)
    if family == "darwin":
        return [
            "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
            "/Applications/Chromium.app/Contents/MacOS/Chromium",
        ]
    if family == "win32":
        roots = [
            environ.get("PROGRAMFILES") or environ.get("ProgramFiles") or r"C:\Program Files",
            environ.get("PROGRAMFILES(X86)")
            or environ.get("ProgramFiles(x86)")
            or r"C:\Program Files (x86)",
            environ.get("LOCALAPPDATA") or environ.get("LocalAppData") or "",
        ]
        return [
            "\\".join((root.rstrip("\\/"), "Google", "Chrome", "Application", "chrome.exe"))
            for root in roots
            if root
        ]
    return []


def _find_system_chromium(environ: Mapping[str, str], platform: str) -> str | None:
    family = _platform_family(platform)
    if family == "linux":
        search_path = environ.get("PATH", os.defpath)
        for name in _SYSTEM_NAMES:
            found = shutil.which(name, path=search_path)
            if found is not None:
                return os.path.abspath(found)
        return None
    for candidate in system_chromium_candidates(environ, platform):
        if os.path.isfile(candidate) and (family == "win32" or os.access(candidate, os.X_OK)):
            return candidate
    return None


def _find_system_shell(environ: Mapping[str, str], platform: str) -> str | None:
    """A system headless shell on ``PATH`` (Linux; Debian's ``chromium-headless-shell``)."""
    if _platform_family(platform) != "linux":
        return None
    search_path = environ.get("PATH", os.defpath)
    for name in _SYSTEM_SHELL_NAMES:
        found = shutil.which(name, path=search_path)
        if found is None:
            continue
        found = os.path.abspath(found)
        prefix = os.path.dirname(os.path.dirname(found))
        real = os.path.join(prefix, *_DEBIAN_SHELL)
        return real if _is_executable_file(real) else found
    return None


def locate_headless_shell(
    environ: Mapping[str, str], *, platform: str | None = None
) -> ChromiumLocation | None:
    """A headless shell: Playwright's cached build, then a system one; None when neither."""
    platform = sys.platform if platform is None else platform
    managed = _find_playwright_build(environ, platform, "headless-shell")
    if managed is not None:
        return ChromiumLocation(managed, "playwright", "headless-shell")
    system = _find_system_shell(environ, platform)
    if system is not None:
        return ChromiumLocation(system, "system", "headless-shell")
    return None


def locate_full_chromium(
    environ: Mapping[str, str], *, platform: str | None = None
) -> ChromiumLocation | None:
    """The full browser: Playwright's cached Chromium, then a system Chromium or Chrome."""
    platform = sys.platform if platform is None else platform
    managed = _find_playwright_build(environ, platform, "chromium")
    if managed is not None:
        return ChromiumLocation(managed, "playwright")
    system = _find_system_chromium(environ, platform)
    if system is not None:
        return ChromiumLocation(system, "system")
    return None


def locate_chromium(
    config: Config, environ: Mapping[str, str], *, platform: str | None = None
) -> ChromiumLocation | None:
    """Resolve the local Chromium executable (§14.1 steps 1-3); None when nothing is found.

    The configured path wins for both modes. Otherwise headless sessions get a headless shell
    when one is found (it does less work per page) and the full browser when not; headed
    sessions get the full browser only (a headless shell cannot open a window).
    """
    if config.browser_path is not None:
        return ChromiumLocation(config.browser_path, "configured", binary_kind(config.browser_path))
    if config.headless:
        shell = locate_headless_shell(environ, platform=platform)
        if shell is not None:
            return shell
    return locate_full_chromium(environ, platform=platform)


def find_chromium(
    config: Config, environ: Mapping[str, str], *, platform: str | None = None
) -> str | None:
    """The path of the local Chromium executable (§14.1 steps 1-3), or None."""
    location = locate_chromium(config, environ, platform=platform)
    return None if location is None else location.path
