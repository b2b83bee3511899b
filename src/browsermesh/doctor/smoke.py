"""Doctor check 5, ``browser-smoke`` (reference §20.2): a real launch (local) or connection
(remote), a context and a page, then a bounded cleanup.

The only module outside ``engine/`` that talks to Playwright, by design: the doctor tests the
installation itself, not the engine. Playwright is imported lazily, inside the check.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import TYPE_CHECKING, Any, Final, TypeVar

from browsermesh.config import Config, find_chromium
from browsermesh.doctor.checks import usable_executable
from browsermesh.doctor.report import (
    CDP_CONNECT_REMEDIATION,
    CLEANUP_REMEDIATION,
    CONNECT_REMEDIATION,
    DEPENDENCY_REMEDIATION,
    DISPLAY_REMEDIATION,
    REMOTE_SMOKE_REMEDIATION,
    SANDBOX_REMEDIATION,
    SMOKE_REMEDIATION,
    CheckResult,
    deadline_result,
    failed,
    passed,
)
from browsermesh.engine.playwright_engine import QUIET_FLAGS, running_as_root
from browsermesh.install_browser import INSTALL_REMEDIATION
from browsermesh.model.deadline import Deadline

if TYPE_CHECKING:
    from playwright.async_api import Browser, Playwright

__all__ = ["check_browser_smoke", "classify_smoke_failure"]

_T = TypeVar("_T")

# Cleanup (closing page, context, browser; stopping the driver) is bounded on its own, even
# after the overall deadline, so that a slow close never leaves a Chromium process behind.
_CLEANUP_CAP_MS: Final = 10_000
# Playwright's own launch/connect timeout fires first; the outer bound is only a safety net.
_SAFETY_SLACK_S: Final = 0.5

_LAUNCH_LINE_RE: Final = re.compile(r"^.*<launching>.*$", re.MULTILINE)
_DEPENDENCY_RE: Final = re.compile(
    r"missing (system )?(dependencies|dependency|libraries|library)|install-deps|"
    r"error while loading shared libraries|cannot open shared object file"
)
_SANDBOX_RE: Final = re.compile(r"sandbox")
_MISSING_RE: Final = re.compile(
    r"executable doesn't exist|executable does not exist|spawn \S.* (enoent|eacces)|"
    r"please run the following command to download new browsers"
)
_DISPLAY_RE: Final = re.compile(
    r"without having a xserver running|missing x server|\$display|cannot open display"
)


def _cause_text(exc: BaseException) -> str:
    # The command line Playwright logs (``<launching> … --no-sandbox …``) must not count as a
    # mention of the sandbox or of a missing file.
    return _LAUNCH_LINE_RE.sub("", f"{type(exc).__name__}: {exc}").lower()


def classify_smoke_failure(exc: BaseException) -> tuple[str, str, str]:
    """``(code, message, remediation)`` for a local launch/context/page failure."""
    text = _cause_text(exc)
    # A missing or non-executable file fails before any process runs, so it is checked first
    # (its message names the path, which must not be mistaken for a sandbox or library hint).
    if _MISSING_RE.search(text):
        return (
            "CHROMIUM_MISSING",
            "The Chromium executable is missing or cannot be started.",
            INSTALL_REMEDIATION,
        )
    if _DEPENDENCY_RE.search(text):
        return (
            "BROWSER_DEPENDENCY_MISSING",
            "Chromium could not start because system libraries it needs are missing.",
            DEPENDENCY_REMEDIATION,
        )
    if _SANDBOX_RE.search(text):
        return (
            "BROWSER_SANDBOX_UNAVAILABLE",
            "Chromium could not start its sandbox on this system.",
            SANDBOX_REMEDIATION,
        )
    if _DISPLAY_RE.search(text):
        return (
            "BROWSER_SMOKE_FAILED",
            "Chromium could not open a window because no display is available.",
            DISPLAY_REMEDIATION,
        )
    if isinstance(exc, TimeoutError) or type(exc).__name__ == "TimeoutError":
        return (
            "BROWSER_SMOKE_FAILED",
            "Chromium did not start or respond within the configured timeout.",
            SMOKE_REMEDIATION,
        )
    return (
        "BROWSER_SMOKE_FAILED",
        "Chromium could not be launched or could not open a page.",
        SMOKE_REMEDIATION,
    )


class _Smoke:
    """The ``browser-smoke`` check: launch or connect, context, page, then clean up."""

    def __init__(self, config: Config, environ: Mapping[str, str], deadline: Deadline) -> None:
        self.config = config
        self.environ = environ
        self.deadline = deadline
        self.cleanup_failed = False

    # Bounds ---------------------------------------------------------------------------

    def op_ms(self) -> float:
        """min(operation timeout, time left before the overall deadline)."""
        return min(float(self.config.timeout_ms), self.deadline.remaining_ms())

    def playwright_timeout_ms(self) -> float:
        # Playwright treats 0 as "no timeout": never pass it.
        return max(1.0, self.op_ms())

    async def step(self, awaitable: Awaitable[_T], *, slack: bool = False) -> _T:
        bound_s = self.op_ms() / 1000 + (_SAFETY_SLACK_S if slack else 0.0)
        return await asyncio.wait_for(awaitable, timeout=max(0.0, bound_s))

    async def cleanup(self, closer: Callable[[], Coroutine[Any, Any, object]]) -> None:
        bound_s = min(float(self.config.timeout_ms), float(_CLEANUP_CAP_MS)) / 1000
        try:
            await asyncio.wait_for(closer(), timeout=bound_s)
        except Exception:
            self.cleanup_failed = True

    # Results --------------------------------------------------------------------------

    def result(self, failure: CheckResult | None, success_message: str) -> CheckResult:
        if failure is not None:
            return failure
        if self.cleanup_failed:
            return failed(
                "browser-smoke",
                "BROWSER_CLEANUP_FAILED",
                "The smoke test passed, but closing the page, context or browser failed.",
                CLEANUP_REMEDIATION,
            )
        return passed("browser-smoke", "BROWSER_SMOKE_PASSED", success_message)

    def deadline_or(self, result: CheckResult) -> CheckResult:
        return deadline_result("browser-smoke", during=True) if self.deadline.expired() else result

    # Local ----------------------------------------------------------------------------

    async def run_local(self) -> CheckResult:
        executable = find_chromium(self.config, self.environ)
        if executable is None or not usable_executable(executable):
            return failed(
                "browser-smoke",
                "CHROMIUM_MISSING",
                "The smoke test did not run because no Chromium executable was found.",
                INSTALL_REMEDIATION,
            )
        from playwright.async_api import async_playwright

        failure: CheckResult | None = None
        pw: Playwright | None = None
        browser: Browser | None = None
        try:
            pw = await self.step(async_playwright().start())
            browser = await self.step(
                pw.chromium.launch(
                    executable_path=executable,
                    headless=self.config.headless,
                    chromium_sandbox=not (self.config.no_sandbox or running_as_root()),
                    args=list(QUIET_FLAGS),
                    timeout=self.playwright_timeout_ms(),
                    handle_sigint=False,
                    handle_sigterm=False,
                    handle_sighup=False,
                ),
                slack=True,
            )
            context = await self.step(browser.new_context())
            try:
                page = await self.step(context.new_page())
                await self.cleanup(page.close)
            finally:
                await self.cleanup(context.close)
        except Exception as exc:
            code, message, remediation = classify_smoke_failure(exc)
            failure = self.deadline_or(failed("browser-smoke", code, message, remediation))
        finally:
            if browser is not None:
                await self.cleanup(browser.close)
            if pw is not None:
                await self.cleanup(pw.stop)
        return self.result(
            failure, "Chromium launched, opened a context and a page, and closed cleanly."
        )

    # Remote ---------------------------------------------------------------------------

    async def run_remote(self) -> CheckResult:
        from playwright.async_api import async_playwright

        cdp = self.config.backend == "cdp"
        endpoints: tuple[str, ...] = (
            (self.config.cdp_endpoint,)
            if cdp and self.config.cdp_endpoint is not None
            else self.config.browser_endpoints
        )
        total = len(endpoints)
        failure: CheckResult | None = None
        pw: Playwright | None = None
        try:
            pw = await self.step(async_playwright().start())
            for index, endpoint in enumerate(endpoints, start=1):
                found = await self._remote_one(pw, endpoint, cdp, index, total)
                failure = failure or found
        except Exception:
            failure = failure or self.deadline_or(
                failed(
                    "browser-smoke",
                    "BROWSER_SMOKE_FAILED",
                    "The Playwright driver could not be started.",
                    REMOTE_SMOKE_REMEDIATION,
                )
            )
        finally:
            if pw is not None:
                await self.cleanup(pw.stop)
        what = "the CDP endpoint" if cdp else f"all {total} browser endpoint(s)"
        return self.result(
            failure,
            f"Connected to {what}, opened and closed a context and a page, and disconnected.",
        )

    async def _remote_one(
        self, pw: Playwright, endpoint: str, cdp: bool, index: int, total: int
    ) -> CheckResult | None:
        where = "the CDP endpoint" if cdp else f"browser endpoint {index} of {total}"
        try:
            if cdp:
                connecting = pw.chromium.connect_over_cdp(
                    endpoint, timeout=self.playwright_timeout_ms()
                )
            else:
                connecting = pw.chromium.connect(endpoint, timeout=self.playwright_timeout_ms())
            browser = await self.step(connecting, slack=True)
        except Exception:
            return self.deadline_or(
                failed(
                    "browser-smoke",
                    "BROWSER_CONNECT_FAILED",
                    f"Could not connect to {where}.",
                    CDP_CONNECT_REMEDIATION if cdp else CONNECT_REMEDIATION,
                )
            )
        failure: CheckResult | None = None
        try:
            context = await self.step(browser.new_context())
            try:
                page = await self.step(context.new_page())
                await self.cleanup(page.close)
            finally:
                await self.cleanup(context.close)
        except Exception:
            failure = self.deadline_or(
                failed(
                    "browser-smoke",
                    "BROWSER_SMOKE_FAILED",
                    f"Connected to {where}, but could not open a context and a page.",
                    REMOTE_SMOKE_REMEDIATION,
                )
            )
        finally:
            # For connected browsers, close() only disconnects: the remote browser keeps running.
            await self.cleanup(browser.close)
        return failure


async def check_browser_smoke(
    config: Config, environ: Mapping[str, str], deadline: Deadline
) -> CheckResult:
    """``browser-smoke``: a real launch (local) or connection (remote), context and page."""
    if config.backend == "selenium-grid":  # issue 22: a Grid session (doctor/grid.py)
        from browsermesh.doctor.grid import grid_smoke

        return await grid_smoke(config, deadline)
    smoke = _Smoke(config, environ, deadline)
    if config.backend == "local":
        return await smoke.run_local()
    return await smoke.run_remote()
