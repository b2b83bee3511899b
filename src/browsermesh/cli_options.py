"""The command line's options, help text and parser (reference §19.2), beside cli.py.

:func:`parse_invocation` turns the arguments into one :class:`Invocation`: help and version
first, then ``demo``, ``--install-browser``, ``--doctor`` or serving, whose configuration comes
from :func:`browsermesh.config.build_config` with the options as overrides of their
``BROWSERMESH_*`` variables. Standard library only, like the configuration: ``--help`` and
``--version`` go through here and must stay fast.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, TypeAlias

from browsermesh._version import __version__
from browsermesh.config.constants import ALL_PROFILES, DEFAULT_PROFILES
from browsermesh.config.environment import build_config
from browsermesh.config.settings import Config
from browsermesh.config.variables import (
    V_AGENT_GUIDELINES,
    V_ALLOWED_HOSTS,
    V_ALLOWED_ORIGINS,
    V_AUTH_TOKEN_FILE,
    V_AUTO_INSTALL,
    V_BROWSER_ENDPOINTS,
    V_BROWSER_PATH,
    V_CDP_ENDPOINT,
    V_DATA_DIR,
    V_FLEET_REDIS,
    V_GRID_CAPABILITIES,
    V_GRID_CONTEXTS_PER_BROWSER,
    V_GRID_HEADER_FILE,
    V_HEADLESS,
    V_HTTP_HOST,
    V_HTTP_PATH,
    V_HTTP_PORT,
    V_LOG_LEVEL,
    V_MAX_MCP_SESSIONS_PER_PRINCIPAL,
    V_MAX_PAGES,
    V_MAX_SESSIONS,
    V_MAX_SESSIONS_PER_PRINCIPAL,
    V_NO_SANDBOX,
    V_PERSISTENCE,
    V_REPLICA_ID,
    V_SCHEMA_REFS,
    V_SECRETS_FILE,
    V_SELENIUM_GRID,
    V_SESSION_IDLE_MS,
    V_TIMEOUT_MS,
    V_TOOLS,
    V_TRACE_SESSIONS,
    V_TRANSPORT,
    V_UPLOAD_ROOT,
    V_VIEW,
)
from browsermesh.model.limits import MAX_TIMEOUT_MS

__all__ = [
    "DemoInvocation",
    "DoctorInvocation",
    "HelpInvocation",
    "InstallBrowserInvocation",
    "Invocation",
    "ServeInvocation",
    "UsageError",
    "VersionInvocation",
    "ViewLinkInvocation",
    "help_text",
    "parse_invocation",
    "usage_summary",
]


class UsageError(Exception):
    """An unknown or misused command-line option (exit 2). ``str(exc)`` is the reason."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


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


@dataclass(frozen=True, slots=True)
class ViewLinkInvocation:
    """``browsermesh view-link [--principal <name>] [options]``: a live view link of a running
    HTTP server (issue 21); ``config`` names the server and the token file."""

    config: Config
    principal: str | None = None


Invocation: TypeAlias = (
    HelpInvocation
    | VersionInvocation
    | InstallBrowserInvocation
    | DoctorInvocation
    | DemoInvocation
    | ServeInvocation
    | ViewLinkInvocation
)


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


_OPT_IN: Final = tuple(p for p in ALL_PROFILES if p not in DEFAULT_PROFILES)
"""The profiles published only when named (the --tools help says which)."""

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
        "--max-mcp-sessions-per-principal",
        "<count>",
        "Open MCP sessions per principal over HTTP, 1..10000 (default 32)",
        V_MAX_MCP_SESSIONS_PER_PRINCIPAL,
        http_only=True,
    ),
    _Option(
        "--no-view", None, "Do not serve the live view at /view", V_VIEW, "false", http_only=True
    ),
    _Option("--principal", "<name>", "With view-link: whose sessions the link shows"),
    _Option(
        "--trace-sessions",
        "<when>",
        "Trace every new session: on, retain-on-failure or off (default off)",
        V_TRACE_SESSIONS,
    ),
    _Option(
        "--secrets-file",
        "<path>",
        "Secrets filled by name, NAME=value lines, 0600; {principal} = one per principal",
        V_SECRETS_FILE,
    ),
    _Option("--fleet-redis", "<url>", "Fleet directory: redis(s):// or unix:// URL", V_FLEET_REDIS),
    _Option("--replica-id", "<id>", "Replica id in the fleet (default host-pid)", V_REPLICA_ID),
    _Option(
        "--tools",
        "<profiles>",
        f"Profiles: {', '.join(ALL_PROFILES)} ({', '.join(_OPT_IN)} opt-in)",
        V_TOOLS,
    ),
    _Option(
        "--timeout",
        "<ms>",
        f"Default operation timeout, 1..{MAX_TIMEOUT_MS} (default 10000)",
        V_TIMEOUT_MS,
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
    _Option(
        "--selenium-grid",
        "<url>",
        "Selenium Grid 4 http(s):// URL to get Chromium browsers from",
        V_SELENIUM_GRID,
    ),
    _Option(
        "--grid-contexts-per-browser",
        "<n>",
        "Sessions per Grid browser, 1..50 (default 1)",
        V_GRID_CONTEXTS_PER_BROWSER,
    ),
    _Option(
        "--grid-capabilities",
        "<path>",
        "JSON file of Grid capabilities (alwaysMatch)",
        V_GRID_CAPABILITIES,
    ),
    _Option(
        "--grid-header-file",
        "<path>",
        "File of Name: value headers for the Grid",
        V_GRID_HEADER_FILE,
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
    ("browsermesh view-link [--principal <name>]", "Print a one-time link to the live view"),
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
        "--allowed-origins, --session-idle-ms, --max-mcp-sessions-per-principal and --no-view",
        "need --transport http. Output budgets (observability, screenshots, visible text, saved",
        "states, artifacts), the element-ref lifetime (BROWSERMESH_REF_TTL_MS) and the",
        "actionability settle time (BROWSERMESH_ACTIONABILITY_SETTLE_MS) and the page settle",
        "time (BROWSERMESH_SETTLE_MS) are set through",
        "BROWSERMESH_* variables only.",
    ]
    return "\n".join(lines) + "\n"


@dataclass(slots=True)
class _Scan:
    """The command line read once, left to right."""

    given: list[str]  # option flags in command-line order
    overrides: dict[str, tuple[str, str]]  # variable -> (raw value, flag)
    endpoints: list[str] | None  # --browser-endpoint values (repeatable)
    positionals: list[str]
    principal: str | None = None  # --principal (view-link)


def _scan(tokens: Sequence[str]) -> _Scan:
    scan = _Scan([], {}, None, [])
    index = 0
    while index < len(tokens):
        token = tokens[index]
        index += 1
        if not token.startswith("-") or token == "-":
            scan.positionals.append(token)
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
        scan.given.append(name)
        if name == "--principal":
            scan.principal = value
        if option.variable is None or value is None:
            continue
        if option.repeatable:
            scan.endpoints = [*(scan.endpoints or []), value]
        else:
            scan.overrides[option.variable] = (value, name)
    return scan


def _demo(scan: _Scan) -> DemoInvocation:
    positionals = scan.positionals
    if positionals[0] != "demo" or len(positionals) > 1:
        extra = positionals[1] if positionals[0] == "demo" else positionals[0]
        shown = f" '{extra}'" if _POSITIONAL_ECHO_RE.match(extra) else ""
        raise UsageError(f"unexpected argument{shown}")
    others = [flag for flag in scan.given if flag != "--headed"]
    if others:
        raise UsageError(f"demo accepts only --headed, not {others[0]}")
    return DemoInvocation(headed="--headed" in scan.given)


_VIEW_LINK_FLAGS: Final = frozenset({"--host", "--port", "--auth-token-file", "--principal"})


def _view_link(scan: _Scan, environ: Mapping[str, str]) -> ViewLinkInvocation:
    """``view-link``: the running server's address and token file, read as serving reads them."""
    if len(scan.positionals) > 1:
        raise UsageError("view-link takes no arguments")
    others = [flag for flag in scan.given if flag not in _VIEW_LINK_FLAGS]
    if others:
        raise UsageError(
            f"view-link accepts --host, --port, --auth-token-file and --principal, not {others[0]}"
        )
    overrides = {**scan.overrides, V_TRANSPORT: ("http", "view-link")}
    return ViewLinkInvocation(build_config(environ, overrides, None), scan.principal)


def _check_http_flags(scan: _Scan, environ: Mapping[str, str]) -> None:
    http_flags = [flag for flag in scan.given if _OPTIONS_BY_FLAG[flag].http_only]
    if not http_flags:
        return
    transport = scan.overrides[V_TRANSPORT][0] if V_TRANSPORT in scan.overrides else None
    if transport is None:
        transport = environ.get(V_TRANSPORT, "stdio")
    # An invalid transport value is reported as a configuration problem instead.
    if transport == "stdio":
        raise UsageError(f"option {http_flags[0]} requires --transport http")


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

    scan = _scan(tokens)
    if scan.positionals and scan.positionals[0] == "view-link":
        return _view_link(scan, environ)
    if "--principal" in scan.given:
        raise UsageError("--principal requires view-link")
    if scan.positionals:
        return _demo(scan)
    given = scan.given
    if "--install-browser" in given and "--doctor" in given:
        raise UsageError("--install-browser cannot be combined with --doctor")
    if "--json" in given and "--doctor" not in given:
        raise UsageError("--json requires --doctor")
    if "--install-browser" in given:
        return InstallBrowserInvocation()
    _check_http_flags(scan, environ)

    endpoints = scan.endpoints
    cli_endpoints = None if endpoints is None else (tuple(endpoints), "--browser-endpoint")
    config = build_config(environ, scan.overrides, cli_endpoints)
    if "--doctor" in given:
        return DoctorInvocation(config=config, as_json="--json" in given)
    return ServeInvocation(config=config)
