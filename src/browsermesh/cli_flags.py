"""The command line's options (reference §19.2): one entry per flag, with the `BROWSERMESH_*`
variable it sets, read by the parser and the help text in :mod:`browsermesh.cli_options`.

A new setting is one `CliOption` here (and its variable in `config.variables`). Standard library
only, like the parser: ``--help`` goes through here and must stay fast.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from browsermesh.config.constants import ALL_PROFILES, DEFAULT_PROFILES
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
    V_FLEET_ADVERTISE,
    V_FLEET_REDIS,
    V_FLEET_TOKEN_FILE,
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
    V_WEBMCP,
)
from browsermesh.model.limits import MAX_TIMEOUT_MS

__all__ = ["OPTIONS", "OPTIONS_BY_FLAG", "CliOption"]


@dataclass(frozen=True, slots=True)
class CliOption:
    """One flag: its value placeholder (None: a toggle), help summary and the variable it sets."""

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

OPTIONS: Final[tuple[CliOption, ...]] = (
    CliOption("--transport", "<kind>", "stdio or http (default stdio)", V_TRANSPORT),
    CliOption(
        "--host", "<host>", "HTTP bind host (default 127.0.0.1)", V_HTTP_HOST, http_only=True
    ),
    CliOption(
        "--port", "<port>", "HTTP port, 0 = ephemeral (default 7331)", V_HTTP_PORT, http_only=True
    ),
    CliOption("--path", "<path>", "HTTP endpoint path (default /mcp)", V_HTTP_PATH, http_only=True),
    CliOption(
        "--auth-token-file",
        "<path>",
        "HTTP bearer tokens, one name:token per line (required off loopback)",
        V_AUTH_TOKEN_FILE,
        http_only=True,
    ),
    CliOption(
        "--allowed-hosts",
        "<list>",
        "Allowed Host headers, comma list or * (default derived from --host)",
        V_ALLOWED_HOSTS,
        http_only=True,
    ),
    CliOption(
        "--allowed-origins",
        "<list>",
        "Allowed Origin headers, comma list or * (default derived from --host)",
        V_ALLOWED_ORIGINS,
        http_only=True,
    ),
    CliOption(
        "--session-idle-ms",
        "<ms>",
        "Close HTTP sessions idle this long, 0 = never (default 1800000)",
        V_SESSION_IDLE_MS,
        http_only=True,
    ),
    CliOption(
        "--max-mcp-sessions-per-principal",
        "<count>",
        "Open MCP sessions per principal over HTTP, 1..10000 (default 32)",
        V_MAX_MCP_SESSIONS_PER_PRINCIPAL,
        http_only=True,
    ),
    CliOption(
        "--no-view", None, "Do not serve the live view at /view", V_VIEW, "false", http_only=True
    ),
    CliOption("--principal", "<name>", "With view-link: whose sessions the link shows"),
    CliOption(
        "--trace-sessions",
        "<when>",
        "Trace every new session: on, retain-on-failure or off (default off)",
        V_TRACE_SESSIONS,
    ),
    CliOption(
        "--secrets-file",
        "<path>",
        "Secrets filled by name, NAME=value lines, 0600; {principal} = one per principal",
        V_SECRETS_FILE,
    ),
    CliOption(
        "--webmcp",
        "<on|off>",
        "WebMCP in launched Chromium, for page tools: on or off (default on)",
        V_WEBMCP,
    ),
    CliOption(
        "--fleet-redis", "<url>", "Fleet directory: redis(s):// or unix:// URL", V_FLEET_REDIS
    ),
    CliOption("--replica-id", "<id>", "Replica id in the fleet (default host-pid)", V_REPLICA_ID),
    CliOption(
        "--fleet-token-file",
        "<path>",
        "Fleet token (0600 file) for forwarding calls between replicas",
        V_FLEET_TOKEN_FILE,
    ),
    CliOption(
        "--fleet-advertise",
        "<url>",
        "http://host:port other replicas reach this one at (default: bound address)",
        V_FLEET_ADVERTISE,
    ),
    CliOption(
        "--tools",
        "<profiles>",
        f"Profiles: {', '.join(ALL_PROFILES)} ({', '.join(_OPT_IN)} opt-in)",
        V_TOOLS,
    ),
    CliOption(
        "--timeout",
        "<ms>",
        f"Default operation timeout, 1..{MAX_TIMEOUT_MS} (default 10000)",
        V_TIMEOUT_MS,
    ),
    CliOption(
        "--data-dir", "<path>", "Private data directory (default ~/.browsermesh)", V_DATA_DIR
    ),
    CliOption(
        "--upload-root",
        "<dir>",
        "Directory whose files browser_file_upload may send (default: none)",
        V_UPLOAD_ROOT,
    ),
    CliOption(
        "--log-level",
        "<level>",
        "debug, info, warn, error or silent (default info); logs go to stderr",
        V_LOG_LEVEL,
    ),
    CliOption("--max-sessions", "<count>", "Live sessions, 1..1000 (default 50)", V_MAX_SESSIONS),
    CliOption(
        "--max-sessions-per-principal",
        "<count>",
        "Live sessions per principal, 1..1000 (default: no per-principal limit)",
        V_MAX_SESSIONS_PER_PRINCIPAL,
    ),
    CliOption("--max-pages", "<count>", "Pages per session, 1..100 (default 20)", V_MAX_PAGES),
    CliOption("--no-persistence", None, "Disable saved browser states", V_PERSISTENCE, "false"),
    CliOption(
        "--no-schema-refs", None, "Publish fully expanded input schemas", V_SCHEMA_REFS, "false"
    ),
    CliOption(
        "--no-agent-guidelines",
        None,
        "Send no server instructions to the client",
        V_AGENT_GUIDELINES,
        "false",
    ),
    CliOption("--headless", None, "Launch Chromium without a window", V_HEADLESS, "true"),
    CliOption("--headed", None, "Launch Chromium with a window (default)", V_HEADLESS, "false"),
    CliOption(
        "--no-sandbox",
        None,
        "Run Chromium without its sandbox (trusted containers only)",
        V_NO_SANDBOX,
        "true",
    ),
    CliOption(
        "--no-auto-install",
        None,
        "Do not install Chromium at startup when it is missing",
        V_AUTO_INSTALL,
        "false",
    ),
    CliOption(
        "--browser-path", "<path>", "Chromium or Chrome executable to launch", V_BROWSER_PATH
    ),
    CliOption(
        "--cdp-endpoint",
        "<url>",
        "Attach to a running Chrome over CDP (http(s):// or ws(s)://)",
        V_CDP_ENDPOINT,
    ),
    CliOption(
        "--browser-endpoint",
        "<url>",
        "Playwright browser server ws(s):// URL (repeatable, up to 16)",
        V_BROWSER_ENDPOINTS,
        repeatable=True,
    ),
    CliOption(
        "--selenium-grid",
        "<url>",
        "Selenium Grid 4 http(s):// URL to get Chromium browsers from",
        V_SELENIUM_GRID,
    ),
    CliOption(
        "--grid-contexts-per-browser",
        "<n>",
        "Sessions per Grid browser, 1..50 (default 1)",
        V_GRID_CONTEXTS_PER_BROWSER,
    ),
    CliOption(
        "--grid-capabilities",
        "<path>",
        "JSON file of Grid capabilities (alwaysMatch)",
        V_GRID_CAPABILITIES,
    ),
    CliOption(
        "--grid-header-file",
        "<path>",
        "File of Name: value headers for the Grid",
        V_GRID_HEADER_FILE,
    ),
    CliOption("--doctor", None, "Check the installation and exit (add --json for one JSON line)"),
    CliOption("--json", None, "With --doctor: print the report as JSON"),
    CliOption("--install-browser", None, "Install Playwright's Chromium and exit"),
    CliOption("--help", None, "Show this help and exit", alias="-h"),
    CliOption("--version", None, "Print the version and exit", alias="-v"),
)

OPTIONS_BY_FLAG: Final[dict[str, CliOption]] = {o.flag: o for o in OPTIONS}
