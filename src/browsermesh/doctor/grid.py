"""The doctor's Selenium Grid checks (issue 22), run when a Grid is configured.

- ``selenium-grid`` (after the five checks of reference §20.2): the Grid's ``/status`` answers
  and reports ready, with at least one node up.
- the ``browser-smoke`` check for the Grid backend: a real Grid browser session (created and
  ended over HTTP), a CDP connection, a context and a page, like the smoke test of the other
  remote backends.

Every message and remediation is a fixed sentence: neither the Grid URL (it may carry
credentials) nor the Grid's own words reach the report.
"""

from __future__ import annotations

import asyncio
from typing import Final

from browsermesh.config import Config
from browsermesh.doctor.report import (
    GRID_REMEDIATION,
    CheckResult,
    deadline_result,
    failed,
    passed,
)
from browsermesh.engine.grid import grid_capabilities
from browsermesh.engine.grid_client import GridClient, GridError
from browsermesh.model.deadline import Deadline

__all__ = [
    "GRID_CHECK_ID",
    "GRID_REMEDIATION",
    "check_grid_status",
    "grid_configured",
    "grid_smoke",
]

GRID_CHECK_ID: Final = "selenium-grid"
_CLEANUP_S: Final = 10.0


def _budget_s(config: Config, deadline: Deadline) -> float:
    return max(0.001, min(float(config.timeout_ms), deadline.remaining_ms()) / 1000)


def grid_configured() -> CheckResult:
    """``chromium-executable`` with a Grid: the nodes run Chromium, none is needed here."""
    return passed(
        "chromium-executable",
        "REMOTE_BROWSER_CONFIGURED",
        "A Selenium Grid is configured; its nodes run Chromium, none is needed locally.",
    )


async def check_grid_status(config: Config, deadline: Deadline) -> CheckResult:
    """``selenium-grid``: ``GET /status`` within the budget; ready with a node up."""
    assert config.selenium_grid is not None
    client = GridClient(config.selenium_grid, config.grid_headers)
    try:
        status = await asyncio.wait_for(
            client.status(_budget_s(config, deadline)), _budget_s(config, deadline) + 0.5
        )
    except (GridError, TimeoutError) as err:
        if deadline.expired():
            return deadline_result(GRID_CHECK_ID, during=True)
        rejected = isinstance(err, GridError) and err.kind == "rejected"
        return failed(
            GRID_CHECK_ID,
            "GRID_REJECTED" if rejected else "GRID_UNREACHABLE",
            "The Selenium Grid refused the status request (check its credentials)."
            if rejected
            else "The Selenium Grid's /status could not be read.",
            GRID_REMEDIATION,
        )
    finally:
        await client.aclose()
    nodes = [n for n in status.get("nodes") or [] if isinstance(n, dict)]
    if status.get("ready") is not True or not any(n.get("availability") == "UP" for n in nodes):
        return failed(
            GRID_CHECK_ID,
            "GRID_NOT_READY",
            "The Selenium Grid answered, but it is not ready (no node is up).",
            GRID_REMEDIATION,
        )
    return passed(GRID_CHECK_ID, "GRID_READY", "The Selenium Grid is ready, with a node up.")


async def grid_smoke(config: Config, deadline: Deadline) -> CheckResult:
    """``browser-smoke`` on the Grid: a Grid session, CDP, a context and a page, then the
    Grid session is ended (even after a failure)."""
    assert config.selenium_grid is not None
    from playwright.async_api import async_playwright

    client = GridClient(config.selenium_grid, config.grid_headers)
    caps = grid_capabilities(config.grid_capabilities, config.headless, config.webmcp)
    session_id: str | None = None
    failure: CheckResult | None = None
    try:
        session = await client.new_session(caps, _budget_s(config, deadline))
        session_id = session.session_id
        async with async_playwright() as pw:
            timeout_ms = _budget_s(config, deadline) * 1000
            browser = await pw.chromium.connect_over_cdp(
                session.cdp_url, timeout=timeout_ms, headers=client.headers
            )
            try:
                context = await asyncio.wait_for(browser.new_context(), timeout_ms / 1000)
                page = await asyncio.wait_for(context.new_page(), timeout_ms / 1000)
                await asyncio.wait_for(page.close(), _CLEANUP_S)
                await asyncio.wait_for(context.close(), _CLEANUP_S)
            finally:
                await asyncio.wait_for(browser.close(), _CLEANUP_S)
    except Exception:
        failure = (
            deadline_result("browser-smoke", during=True)
            if deadline.expired()
            else failed(
                "browser-smoke",
                "BROWSER_SMOKE_FAILED",
                "The Selenium Grid did not give a working Chromium (session, CDP, page).",
                GRID_REMEDIATION,
            )
        )
    finally:
        if session_id is not None:
            try:
                await client.delete_session(session_id, _CLEANUP_S)
            except GridError:
                failure = failure or failed(
                    "browser-smoke",
                    "BROWSER_CLEANUP_FAILED",
                    "The smoke test passed, but the Grid session could not be ended.",
                    GRID_REMEDIATION,
                )
        await client.aclose()
    return failure or passed(
        "browser-smoke",
        "BROWSER_SMOKE_PASSED",
        "The Selenium Grid started Chromium; a context and a page opened and closed cleanly.",
    )
