"""The ``BROWSERMESH_*`` variables (reference §19.1): their names and the bounds of the plain ones.

Integer and boolean variables are described by a table (variable, ``Config`` field, bounds) that
:mod:`browsermesh.config.environment` walks; the others have a parser of their own there. The
defaults are the ``Config`` field defaults (:mod:`browsermesh.config.settings`), not repeated here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from browsermesh.model.limits import MAX_TIMEOUT_MS

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
V_MAX_MCP_SESSIONS_PER_PRINCIPAL: Final = "BROWSERMESH_MAX_MCP_SESSIONS_PER_PRINCIPAL"
V_UPLOAD_ROOT: Final = "BROWSERMESH_UPLOAD_ROOT"
# The Selenium Grid backend (issue 22), read by config.grid.
V_SELENIUM_GRID: Final = "BROWSERMESH_SELENIUM_GRID"
V_GRID_CONTEXTS_PER_BROWSER: Final = "BROWSERMESH_GRID_CONTEXTS_PER_BROWSER"
V_GRID_CAPABILITIES: Final = "BROWSERMESH_GRID_CAPABILITIES"
V_GRID_HEADER_FILE: Final = "BROWSERMESH_GRID_HEADER_FILE"
V_VIEW: Final = "BROWSERMESH_VIEW"
V_TRACE_SESSIONS: Final = "BROWSERMESH_TRACE_SESSIONS"
# Secrets filled by name (issue 36, reference §36), read by config.secrets.
V_SECRETS_FILE: Final = "BROWSERMESH_SECRETS_FILE"
V_WEBMCP: Final = "BROWSERMESH_WEBMCP"
WEBMCP_VALUES: Final = ("on", "off")
"""`BROWSERMESH_WEBMCP` / `--webmcp`: WebMCP in the browsers BrowserMesh starts (issue 36)."""
# The fleet's session directory (issue 37, reference §37), read by config.fleet.
V_FLEET_REDIS: Final = "BROWSERMESH_FLEET_REDIS"
V_REPLICA_ID: Final = "BROWSERMESH_REPLICA_ID"
V_FLEET_LEASE_MS: Final = "BROWSERMESH_FLEET_LEASE_MS"
V_FLEET_TOKEN_FILE: Final = "BROWSERMESH_FLEET_TOKEN_FILE"
V_FLEET_ADVERTISE: Final = "BROWSERMESH_FLEET_ADVERTISE"


@dataclass(frozen=True, slots=True)
class IntSpec:
    """An integer variable: accepted from ``low`` to ``high`` (and 0 when ``zero_allowed``)."""

    variable: str
    field: str
    low: int
    high: int
    zero_allowed: bool = False


@dataclass(frozen=True, slots=True)
class BoolSpec:
    """A ``true``/``false`` variable."""

    variable: str
    field: str


# Integer variables, in table order. ``session_idle_ms`` also accepts 0 (= never reap).
INT_SPECS: Final[tuple[IntSpec, ...]] = (
    IntSpec(V_TIMEOUT_MS, "timeout_ms", 1, MAX_TIMEOUT_MS),
    IntSpec(V_MAX_SESSIONS, "max_sessions", 1, 1_000),
    IntSpec(V_MAX_PAGES, "max_pages", 1, 100),
    IntSpec(V_HTTP_PORT, "http_port", 0, 65_535),
    IntSpec(V_SESSION_IDLE_MS, "session_idle_ms", 1_000, 604_800_000, True),
    IntSpec(V_MAX_MCP_SESSIONS_PER_PRINCIPAL, "max_mcp_sessions_per_principal", 1, 10_000),
    IntSpec("BROWSERMESH_OBSERVABILITY_EVENTS", "observability_events", 1, 1_000),
    IntSpec("BROWSERMESH_OBSERVABILITY_STRING_CHARS", "observability_string_chars", 128, 8192),
    IntSpec("BROWSERMESH_OBSERVABILITY_PAGE_SIZE", "observability_page_size", 1, 200),
    IntSpec(
        "BROWSERMESH_OBSERVABILITY_RESPONSE_BYTES", "observability_response_bytes", 1_024, 262_144
    ),
    IntSpec("BROWSERMESH_SCREENSHOT_MAX_DIMENSION", "screenshot_max_dimension", 256, 32_768),
    IntSpec("BROWSERMESH_SCREENSHOT_MAX_PIXELS", "screenshot_max_pixels", 65_536, 268_435_456),
    IntSpec("BROWSERMESH_SCREENSHOT_MAX_BYTES", "screenshot_max_bytes", 1_024, 67_108_864),
    IntSpec("BROWSERMESH_VISIBLE_TEXT_MAX_CHARS", "visible_text_max_chars", 128, 1_000_000),
    IntSpec("BROWSERMESH_VISIBLE_TEXT_MAX_BYTES", "visible_text_max_bytes", 512, 4_194_304),
    IntSpec("BROWSERMESH_MAX_SAVED_STATES", "max_saved_states", 1, 10_000),
    IntSpec("BROWSERMESH_MAX_STATE_BYTES", "max_state_bytes", 1_024, 67_108_864),
    IntSpec("BROWSERMESH_MAX_STATE_TOTAL_BYTES", "max_state_total_bytes", 1_024, 1_073_741_824),
    IntSpec("BROWSERMESH_MAX_STATE_ORIGINS", "max_state_origins", 1, 1_000),
    IntSpec("BROWSERMESH_SHUTDOWN_GRACE_MS", "shutdown_grace_ms", 0, 300_000),
    IntSpec("BROWSERMESH_REF_TTL_MS", "ref_ttl_ms", 1_000, 1_800_000),
    IntSpec("BROWSERMESH_ACTIONABILITY_SETTLE_MS", "actionability_settle_ms", 0, 30_000),
    IntSpec("BROWSERMESH_SETTLE_MS", "settle_ms", 0, 10_000),
    IntSpec("BROWSERMESH_HOLD_DROP_MS", "hold_drop_ms", 1_000, 600_000),
    IntSpec("BROWSERMESH_MAX_ARTIFACTS", "max_artifacts", 1, 10_000),
    IntSpec(
        "BROWSERMESH_MAX_ARTIFACT_SESSION_BYTES",
        "max_artifact_session_bytes",
        1_024,
        10_737_418_240,
    ),
    IntSpec(
        "BROWSERMESH_MAX_ARTIFACT_PRINCIPAL_BYTES",
        "max_artifact_principal_bytes",
        1_024,
        10_737_418_240,
    ),
    IntSpec(
        "BROWSERMESH_MAX_ARTIFACT_TOTAL_BYTES", "max_artifact_total_bytes", 1_024, 10_737_418_240
    ),
    IntSpec(V_FLEET_LEASE_MS, "fleet_lease_ms", 3_000, 300_000),
)

# Read after the table: unset means "no per-principal limit" (None), not a number.
MAX_SESSIONS_PER_PRINCIPAL_SPEC: Final = IntSpec(
    V_MAX_SESSIONS_PER_PRINCIPAL, "max_sessions_per_principal", 1, 1_000
)

BOOL_SPECS: Final[tuple[BoolSpec, ...]] = (
    BoolSpec(V_PERSISTENCE, "persistence"),
    BoolSpec(V_HEADLESS, "headless"),
    BoolSpec(V_SCHEMA_REFS, "schema_refs"),
    BoolSpec(V_AUTO_INSTALL, "auto_install"),
    BoolSpec(V_AGENT_GUIDELINES, "agent_guidelines"),
    BoolSpec(V_NO_SANDBOX, "no_sandbox"),
    BoolSpec(V_VIEW, "view"),
)
