"""Public factories: a runtime wired to the configured backend, and the MCP server for it."""

from __future__ import annotations

from browsermesh.config import Config, find_chromium, process_environ
from browsermesh.log import EventLog
from browsermesh.runtime.runtime import Runtime


def create_engine(config: Config) -> object:
    """The engine for the configured backend (Playwright is imported only on first use)."""
    from browsermesh.engine.playwright_engine import PlaywrightEngine

    return PlaywrightEngine(
        executable_path=find_chromium(config, process_environ()),
        headless=config.headless,
        no_sandbox=config.no_sandbox,
    )


def create_runtime(config: Config, log: EventLog | None = None) -> Runtime:
    """A runtime with the real engine and the file-system state repository."""
    from browsermesh.persistence.states import StateRepository

    states = StateRepository(
        config.data_dir,
        max_states=config.max_saved_states,
        max_state_bytes=config.max_state_bytes,
        max_total_bytes=config.max_state_total_bytes,
    )
    engine = create_engine(config)
    return Runtime(config, engine, log or EventLog(config.log_level), states=states)  # type: ignore[arg-type]
