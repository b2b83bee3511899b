"""The frozen configuration (reference §19.1): :class:`Config` and :func:`default_config`.

A ``Config`` is built once, by :mod:`browsermesh.config.environment` from the environment and
the command line (validated), or by :func:`default_config` for tests and library users (not
validated). Its field defaults are the documented defaults; nothing else repeats them.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from browsermesh.config.constants import (
    DEFAULT_DATA_DIR,
    DEFAULT_HTTP_HOST,
    DEFAULT_HTTP_PATH,
    DEFAULT_HTTP_PORT,
    DEFAULT_PROFILES,
    Backend,
    LogLevel,
    Profile,
    Transport,
)
from browsermesh.config.hosts import derive_allowed_hosts, derive_allowed_origins
from browsermesh.model.tracing import TracePolicy

__all__ = ["Config", "default_config"]


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
    # The Selenium Grid backend (issue 22, config/grid.py). The URL may carry credentials and the
    # headers are credentials: neither is shown in repr.
    selenium_grid: str | None = field(default=None, repr=False)
    grid_contexts_per_browser: int = 1
    # The capabilities file's JSON object as canonical JSON text ("" = the default capabilities).
    grid_capabilities: str = ""
    grid_headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)
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
    # A person's hold from the live view ends this long after its view's last input (issue 34).
    hold_drop_ms: int = 30_000
    # MCP sessions (2025-11-25) plus open subscriptions/listen streams (2026-07-28) one principal
    # may hold open on the HTTP transport (issue 30 #10).
    max_mcp_sessions_per_principal: int = 32
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
    # How long an element ref from browser_snapshot stays usable after its capture (reference
    # §5.5: 30 s); not refreshed by use.
    ref_ttl_ms: int = 30_000
    # How long a single match that is disabled, hidden or read-only may take to change before
    # the action answers with that reason (issue 13), instead of waiting the whole budget.
    actionability_settle_ms: int = 1_000
    # How long a page must show no DOM change and no pending request to count as quiet (issue
    # 31): a locator miss on a quiet page answers at once, and captures wait (at most 2 s) for
    # it. 0 turns the detector off.
    settle_ms: int = 500
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
    # The live view at /view on the HTTP transport (issue 21); --no-view turns it off.
    view: bool = True
    # Which sessions the server traces itself and keeps the trace of (issue 35,
    # model.tracing.TRACE_POLICIES): off, on, retain-on-failure.
    trace_sessions: TracePolicy = "off"
    # The dotenv file of secrets the client may fill by name (issue 36, §36); `{principal}` in
    # it is the caller's principal. None: no secrets.
    secrets_file: str | None = None
    # Whether browsers BrowserMesh starts get `--enable-features=WebMCP`, so pages can register
    # page tools (issue 36 item 1, profile `webmcp`); --webmcp off turns it off.
    webmcp: bool = True
    # The fleet's session directory (issue 37, §37): a redis://, rediss:// or unix:// URL
    # (its password never shown; config.fleet.show_fleet_url); None: no fleet.
    fleet_redis: str | None = field(default=None, repr=False)
    # This replica's name in the directory; None: `<hostname>-<pid>` (config.fleet.replica_name).
    replica_id: str | None = None
    # How long this replica's directory lease lasts unless renewed (renewed every third).
    fleet_lease_ms: int = 15_000
    # The fleet token (issue 37 item 2, §37.6): the shared secret of the replicas' internal
    # channel, read from --fleet-token-file; None: this replica neither forwards nor accepts.
    fleet_token: str | None = field(default=None, repr=False)
    # The base URL other replicas reach this one's channel at; None: derived from the bound
    # address when that is a loopback or private IP (config.fleet.derived_advertise).
    fleet_advertise: str | None = None

    @property
    def backend(self) -> Backend:
        """The active browser backend kind (§14)."""
        if self.cdp_endpoint is not None:
            return "cdp"
        if self.browser_endpoints:
            return "browser-server"
        if self.selenium_grid is not None:
            return "selenium-grid"
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
