"""Public factories: a runtime wired to the configured backend, and the MCP server for it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from browsermesh.config import Config, find_chromium, locate_chromium, process_environ
from browsermesh.log import EventLog
from browsermesh.runtime.runtime import Runtime

if TYPE_CHECKING:
    from browsermesh.config import BinaryKind
    from browsermesh.engine.backends import Installer
    from browsermesh.engine.protocol import Engine
    from browsermesh.persistence.states import StateRepository


def create_engine(config: Config) -> Engine[Any, Any]:
    """The engine for the configured backend (Playwright is imported only on first use).

    Remote backends ignore the browser path, headless, sandbox and auto-install settings
    (§19.1), except that a Selenium Grid browser is asked for headless when BrowserMesh runs
    headless (BrowserMesh requests that browser, issue 22). A browser server on this machine
    (loopback endpoint) is offered the locally discovered Chromium (§14.1 steps 2-3), which it
    uses when started with `--unsafe`."""
    from browsermesh.engine.backends import Backend, CdpBackend, LocalBackend, LocalSlot, ServerPool
    from browsermesh.engine.playwright_engine import PlaywrightEngine, running_as_root

    backend: Backend
    if config.cdp_endpoint is not None:
        backend = CdpBackend(config.cdp_endpoint)
    elif config.selenium_grid is not None:
        from browsermesh.engine.grid import GridBackend, grid_capabilities
        from browsermesh.engine.grid_client import GridClient

        backend = GridBackend(
            GridClient(config.selenium_grid, config.grid_headers),
            grid_capabilities(config.grid_capabilities, config.headless, config.webmcp),
            config.grid_contexts_per_browser,
        )
    elif config.browser_endpoints:
        local = find_chromium(replace(config, browser_path=None), process_environ())
        backend = ServerPool(config.browser_endpoints, executable_path=local, webmcp=config.webmcp)
    else:
        sandbox = not (config.no_sandbox or running_as_root())
        # Headless servers get a headless shell when one is found, headed ones the full
        # browser (§14.1); runtime_info reports which kind runs.
        found = locate_chromium(config, process_environ())
        backend = LocalBackend(
            LocalSlot(
                None if found is None else found.path,
                config.headless,
                sandbox,
                binary=None if found is None else found.kind,
                installer=installer_for(config) if found is None else None,
                webmcp=config.webmcp,
            )
        )
    return PlaywrightEngine(
        backend,
        ref_ttl_s=config.ref_ttl_ms / 1000,
        settle_ms=config.actionability_settle_ms,
        quiet_ms=config.settle_ms,
        webmcp=config.webmcp,
    )


def installer_for(config: Config) -> Installer | None:
    """The first-session Chromium install (§19.4 step 2), when auto-install is on."""
    if not config.auto_install:
        return None

    async def install(report: Callable[[str], None]) -> tuple[str, BinaryKind] | None:
        from browsermesh.install_browser import auto_install_chromium

        await auto_install_chromium(report)
        found = locate_chromium(config, process_environ())
        return None if found is None else (found.path, found.kind)

    return install


def warn_untrusted_storage(config: Config, log: EventLog) -> None:
    """At start-up, one `persistence.untrusted` warning per problem of the data directory
    (issue 12 #8): states the server refuses to use, or a directory others could write. The
    reason is a fixed sentence; the data directory is never logged (it holds credentials)."""
    if not config.persistence:
        return
    from browsermesh.persistence.states import audit_data_dir

    audit = audit_data_dir(config.data_dir, (name for name, _ in config.auth_tokens))
    for reason in (*audit.refused, *audit.warnings):
        log.warn("persistence.untrusted", reason=reason)


def create_states(config: Config) -> StateRepository:
    """The file-system state repository with the configured limits."""
    from browsermesh.persistence.states import StateRepository

    return StateRepository(
        config.data_dir,
        max_states=config.max_saved_states,
        max_state_bytes=config.max_state_bytes,
        max_total_bytes=config.max_state_total_bytes,
        max_state_origins=config.max_state_origins,
    )


def create_runtime(config: Config, log: EventLog | None = None) -> Runtime:
    """A runtime with the real engine and the file-system state repository."""
    log = log or EventLog(config.log_level)
    states = create_states(config)
    warn_untrusted_storage(config, log)
    engine = create_engine(config)
    return Runtime(config, engine, log, states=states)
