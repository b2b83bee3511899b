"""``browsermesh --doctor [--json]``: five installation checks (contract §20.2).

The checks run in a fixed order under one overall deadline of
``min(300000, max(15000, 3 × timeoutMs))`` ms; a check that would start after the deadline
fails with ``DIAGNOSTIC_DEADLINE_EXCEEDED`` without running. Every message and remediation is
a fixed sentence: no path, endpoint URL or raw exception text ever reaches the report (the raw
cause is only used to pick the failure code).

Playwright is imported lazily, inside the browser smoke check.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.metadata
import json
import os
import re
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias, TypeVar

from browsermesh._version import __version__
from browsermesh.config import (
    ChromiumLocation,
    Config,
    find_chromium,
    locate_chromium,
    process_environ,
)
from browsermesh.engine.playwright_engine import QUIET_FLAGS, running_as_root
from browsermesh.install_browser import INSTALL_REMEDIATION, SHELL_REMEDIATION
from browsermesh.persistence.states import audit_data_dir

if TYPE_CHECKING:
    from playwright.async_api import Browser, Playwright

__all__ = [
    "CHECK_IDS",
    "SCHEMA_VERSION",
    "CheckResult",
    "Deadline",
    "classify_smoke_failure",
    "describe_binaries",
    "diagnose",
    "doctor_deadline_ms",
    "format_json",
    "format_text",
    "probe_data_directory",
    "run_doctor",
]

_T = TypeVar("_T")

SCHEMA_VERSION: Final = "1"
CheckStatus: TypeAlias = Literal["passed", "failed"]
Clock: TypeAlias = Callable[[], float]

CHECK_IDS: Final = (
    "python-version",
    "version-consistency",
    "data-directory-access",
    "chromium-executable",
    "browser-smoke",
)

_MAX_TEXT: Final = 256
_DEADLINE_FLOOR_MS: Final = 15_000
_DEADLINE_CEILING_MS: Final = 300_000
# Cleanup (closing page, context, browser; stopping the driver) is bounded on its own, even
# after the overall deadline, so that a slow close never leaves a Chromium process behind.
_CLEANUP_CAP_MS: Final = 10_000
# Playwright's own launch/connect timeout fires first; the outer bound is only a safety net.
_SAFETY_SLACK_S: Final = 0.5

# ------------------------------------------------------------------------------ fixed texts

PYTHON_REMEDIATION: Final = "Install Python 3.11 or newer and reinstall BrowserMesh with it."
VERSION_REMEDIATION: Final = (
    "Reinstall BrowserMesh from one version, for example: "
    "python -m pip install --force-reinstall browsermesh"
)
DATA_DIR_REMEDIATION: Final = (
    "Choose a writable BROWSERMESH_DATA_DIR (or --data-dir) that this user can create, "
    "read and write."
)
UNTRUSTED_STATES_REMEDIATION: Final = (
    "Replace it with a real directory owned by this user and writable only by it (mode 0700), "
    "or choose another BROWSERMESH_DATA_DIR."
)
DEPENDENCY_REMEDIATION: Final = "Run: python -m playwright install-deps chromium"
SANDBOX_REMEDIATION: Final = (
    "Fix the kernel sandbox support, or run with --no-sandbox (BROWSERMESH_NO_SANDBOX=true) "
    "only inside a trusted container."
)
DISPLAY_REMEDIATION: Final = (
    "Run with --headless (BROWSERMESH_HEADLESS=true), or start BrowserMesh where a display "
    "server is available."
)
SMOKE_REMEDIATION: Final = (
    "Check that BROWSERMESH_BROWSER_PATH (if set) names a working Chromium, "
    "or run: browsermesh --install-browser"
)
CONNECT_REMEDIATION: Final = (
    "Check that every browser server is running, reachable from this machine, and runs a "
    "Playwright version compatible with this client."
)
CDP_CONNECT_REMEDIATION: Final = (
    "Check that Chrome is running with remote debugging enabled and that the CDP endpoint is "
    "reachable from this machine."
)
REMOTE_SMOKE_REMEDIATION: Final = (
    "Check the remote browser's health and logs, then run the doctor again."
)
CLEANUP_REMEDIATION: Final = (
    "Check for leftover Chromium processes and the browser's health, then run the doctor again."
)
DEADLINE_REMEDIATION: Final = (
    "Raise BROWSERMESH_TIMEOUT_MS (the doctor allows 3 x the timeout, 15 s to 300 s) "
    "and run the doctor again."
)


def _cut(text: str) -> str:
    return text if len(text) <= _MAX_TEXT else text[: _MAX_TEXT - 1] + "…"


@dataclass(frozen=True, slots=True)
class CheckResult:
    """One check's outcome; ``message`` and ``remediation`` are fixed sentences."""

    id: str
    status: CheckStatus
    code: str
    message: str
    remediation: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "status": self.status,
            "code": self.code,
            "message": _cut(self.message),
            "remediation": None if self.remediation is None else _cut(self.remediation),
        }


def _passed(check_id: str, code: str, message: str) -> CheckResult:
    return CheckResult(check_id, "passed", code, message, None)


def _failed(check_id: str, code: str, message: str, remediation: str) -> CheckResult:
    return CheckResult(check_id, "failed", code, message, remediation)


# ------------------------------------------------------------------------------ deadline


def doctor_deadline_ms(timeout_ms: int) -> int:
    """The overall doctor deadline: ``min(300000, max(15000, 3 × timeoutMs))`` ms."""
    return min(_DEADLINE_CEILING_MS, max(_DEADLINE_FLOOR_MS, 3 * timeout_ms))


class Deadline:
    """A monotonic deadline ``budget_ms`` after construction (the clock is injectable)."""

    def __init__(self, budget_ms: float, clock: Clock = time.monotonic) -> None:
        self._clock = clock
        self._end = clock() + budget_ms / 1000

    def remaining_ms(self) -> float:
        """Milliseconds left, never negative."""
        return max(0.0, (self._end - self._clock()) * 1000)

    @property
    def expired(self) -> bool:
        return self.remaining_ms() <= 0


def _deadline_result(check_id: str, *, during: bool) -> CheckResult:
    message = (
        "The doctor's overall deadline passed while this check was running."
        if during
        else "The doctor's overall deadline passed before this check could start."
    )
    return _failed(check_id, "DIAGNOSTIC_DEADLINE_EXCEEDED", message, DEADLINE_REMEDIATION)


# ------------------------------------------------------------------------------ checks 1-3


def check_python_version(version_info: tuple[int, ...] | None = None) -> CheckResult:
    """``python-version``: 3.11 or newer."""
    info = tuple(sys.version_info[:3]) if version_info is None else tuple(version_info)
    if info >= (3, 11):
        return _passed("python-version", "PYTHON_SUPPORTED", "Python 3.11 or newer is running.")
    return _failed(
        "python-version",
        "PYTHON_UNSUPPORTED",
        "This Python is older than 3.11, the oldest supported version.",
        PYTHON_REMEDIATION,
    )


def check_version_consistency(installed: Callable[[str], str] | None = None) -> CheckResult:
    """``version-consistency``: distribution metadata vs the package's version constant."""
    read = importlib.metadata.version if installed is None else installed
    try:
        metadata_version = read("browsermesh")
    except Exception:
        return _failed(
            "version-consistency",
            "VERSION_MISMATCH",
            "The installed distribution metadata for browsermesh could not be read.",
            VERSION_REMEDIATION,
        )
    if metadata_version == __version__:
        return _passed(
            "version-consistency",
            "VERSION_CONSISTENT",
            "The installed distribution metadata matches the package version.",
        )
    return _failed(
        "version-consistency",
        "VERSION_MISMATCH",
        "The installed distribution metadata does not match the package version.",
        VERSION_REMEDIATION,
    )


_O_EXTRA: Final = (
    getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
)


def probe_data_directory(directory: Path) -> str | None:
    """The §20.2 data-directory probe. Returns None on success, else a fixed failure sentence.

    Creates the directory (0700) when missing, checks read/write access, exclusively creates a
    ``.doctor-<uuid4>.tmp`` sentinel (0600), reads it back and always deletes it. The directory
    is never listed.
    """
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
    except (OSError, ValueError):
        return "The data directory does not exist and could not be created."
    if not os.path.isdir(directory):
        return "The data directory path does not name a directory."
    if not os.access(directory, os.R_OK | os.W_OK | os.X_OK):
        return "The data directory is not readable and writable by this user."

    sentinel = directory / f".doctor-{uuid.uuid4()}.tmp"
    payload = f"browsermesh doctor {uuid.uuid4()}\n".encode()
    try:
        fd = os.open(sentinel, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_EXTRA, 0o600)
    except OSError:
        return "A probe file could not be created in the data directory."
    problem: str | None = None
    try:
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(payload)
                handle.flush()
        except OSError:
            problem = "A probe file could not be written in the data directory."
        if problem is None:
            try:
                read_fd = os.open(sentinel, os.O_RDONLY | _O_EXTRA)
                with os.fdopen(read_fd, "rb") as handle:
                    content = handle.read(len(payload) + 1)
            except OSError:
                problem = "A probe file could not be read back from the data directory."
            else:
                if content != payload:
                    problem = "A probe file read back from the data directory was different."
    finally:
        try:
            os.unlink(sentinel)
        except OSError:
            problem = problem or "A probe file could not be deleted from the data directory."
    return problem


def check_data_directory(config: Config) -> CheckResult:
    """``data-directory-access``: the §20.2 probe, then whether saved states would be trusted
    (issue 12 #8): a symlinked or foreign states directory fails the check (the server refuses
    those states); a data directory others can write passes with a warning."""
    problem = probe_data_directory(Path(config.data_dir))
    if problem is not None:
        return _failed(
            "data-directory-access", "DATA_DIRECTORY_UNAVAILABLE", problem, DATA_DIR_REMEDIATION
        )
    audit = audit_data_dir(config.data_dir, (name for name, _ in config.auth_tokens))
    if audit.refused:
        refused = audit.refused[0].rstrip(".")
        return _failed(
            "data-directory-access",
            "DATA_DIRECTORY_UNAVAILABLE",
            f"{refused}; saved states are refused until it is fixed.",
            UNTRUSTED_STATES_REMEDIATION,
        )
    message = "The data directory can be created, written, read back and cleaned up."
    for warning in audit.warnings:
        message += " Warning: " + warning[0].lower() + warning[1:]
    return _passed("data-directory-access", "DATA_DIRECTORY_ACCESSIBLE", message)


# ------------------------------------------------------------------------------ check 4


_SOURCE_TEXT: Final = {"configured": "configured", "playwright": "Playwright's", "system": "system"}
_KIND_TEXT: Final = {"headless-shell": "the headless shell", "chromium": "Chromium"}


def _usable_executable(path: str) -> bool:
    return os.path.isfile(path) and (sys.platform.startswith("win") or os.access(path, os.X_OK))


def _usable(location: ChromiumLocation | None) -> ChromiumLocation | None:
    return location if location is not None and _usable_executable(location.path) else None


def _binary_text(location: ChromiumLocation) -> str:
    return f"{_KIND_TEXT[location.kind]} ({_SOURCE_TEXT[location.source]})"


def describe_binaries(config: Config, environ: Mapping[str, str]) -> tuple[bool, str]:
    """Whether this server's mode has a binary, and a message (no paths, at most 256
    characters) naming the binary headless and headed sessions use, with how to install a
    missing one (issue 16)."""
    headless = _usable(locate_chromium(replace(config, headless=True), environ))
    headed = _usable(locate_chromium(replace(config, headless=False), environ))
    here = " (this server)"
    headless_mark, headed_mark = (here, "") if config.headless else ("", here)
    if headless is None:
        headless_text = f"Headless sessions{headless_mark}: no Chromium found."
    else:
        headless_text = f"Headless sessions{headless_mark} use {_binary_text(headless)}"
        if headless.kind == "headless-shell" or headless.source == "configured":
            headless_text += "."
        else:
            headless_text += f"; no headless shell found, {SHELL_REMEDIATION}."
    if headed is None:
        headed_text = f"Headed sessions{headed_mark}: no full Chromium found."
    else:
        headed_text = f"Headed sessions{headed_mark} use {_binary_text(headed)}."
    available = (headless if config.headless else headed) is not None
    return available, f"{headless_text} {headed_text}"


def check_chromium_executable(config: Config, environ: Mapping[str, str]) -> CheckResult:
    """``chromium-executable``: the local executable, or the configured remote backend."""
    backend = config.backend
    if backend == "cdp":
        return _passed(
            "chromium-executable",
            "REMOTE_BROWSER_CONFIGURED",
            "A remote browser is configured (CDP endpoint); no local Chromium is needed.",
        )
    if backend == "browser-server":
        count = len(config.browser_endpoints)
        noun = "endpoint" if count == 1 else "endpoints"
        return _passed(
            "chromium-executable",
            "REMOTE_BROWSER_CONFIGURED",
            f"Remote browser servers are configured ({count} {noun}); no local Chromium is needed.",
        )
    available, message = describe_binaries(config, environ)
    if not available:
        return _failed("chromium-executable", "CHROMIUM_MISSING", message, INSTALL_REMEDIATION)
    return _passed("chromium-executable", "CHROMIUM_AVAILABLE", message)


# ------------------------------------------------------------------------------ check 5

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
            return _failed(
                "browser-smoke",
                "BROWSER_CLEANUP_FAILED",
                "The smoke test passed, but closing the page, context or browser failed.",
                CLEANUP_REMEDIATION,
            )
        return _passed("browser-smoke", "BROWSER_SMOKE_PASSED", success_message)

    def deadline_or(self, result: CheckResult) -> CheckResult:
        return _deadline_result("browser-smoke", during=True) if self.deadline.expired else result

    # Local ----------------------------------------------------------------------------

    async def run_local(self) -> CheckResult:
        executable = find_chromium(self.config, self.environ)
        if executable is None or not _usable_executable(executable):
            return _failed(
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
            failure = self.deadline_or(_failed("browser-smoke", code, message, remediation))
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
                _failed(
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
                _failed(
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
                _failed(
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
    smoke = _Smoke(config, environ, deadline)
    if config.backend == "local":
        return await smoke.run_local()
    return await smoke.run_remote()


# ------------------------------------------------------------------------------ driver

_FALLBACKS: Final[dict[str, tuple[str, str, str]]] = {
    "python-version": (
        "PYTHON_UNSUPPORTED",
        "The Python version could not be checked.",
        PYTHON_REMEDIATION,
    ),
    "version-consistency": (
        "VERSION_MISMATCH",
        "The installed version could not be checked.",
        VERSION_REMEDIATION,
    ),
    "data-directory-access": (
        "DATA_DIRECTORY_UNAVAILABLE",
        "The data directory could not be checked.",
        DATA_DIR_REMEDIATION,
    ),
    "chromium-executable": (
        "CHROMIUM_MISSING",
        "The Chromium executable could not be located.",
        INSTALL_REMEDIATION,
    ),
    "browser-smoke": (
        "BROWSER_SMOKE_FAILED",
        "The browser smoke test failed unexpectedly.",
        SMOKE_REMEDIATION,
    ),
}


async def _run_check(
    check_id: str, config: Config, environ: Mapping[str, str], deadline: Deadline
) -> CheckResult:
    if check_id == "python-version":
        return check_python_version()
    if check_id == "version-consistency":
        return check_version_consistency()
    if check_id == "data-directory-access":
        return check_data_directory(config)
    if check_id == "chromium-executable":
        return check_chromium_executable(config, environ)
    return await check_browser_smoke(config, environ, deadline)


async def diagnose(
    config: Config, environ: Mapping[str, str], *, clock: Clock | None = None
) -> dict[str, Any]:
    """Run the five checks in order and return the §20.2 JSON object.

    ``clock`` (seconds, monotonic) is injectable for tests of the deadline rule.
    """
    deadline = Deadline(doctor_deadline_ms(config.timeout_ms), clock or time.monotonic)
    results: list[CheckResult] = []
    for check_id in CHECK_IDS:
        if deadline.expired:
            results.append(_deadline_result(check_id, during=False))
            continue
        try:
            result = await _run_check(check_id, config, environ, deadline)
        except Exception:
            code, message, remediation = _FALLBACKS[check_id]
            result = _failed(check_id, code, message, remediation)
        results.append(result)
    status: CheckStatus = (
        "passed" if all(result.status == "passed" for result in results) else "failed"
    )
    return {
        "schemaVersion": SCHEMA_VERSION,
        "status": status,
        "checks": [result.to_json() for result in results],
    }


def format_json(report: Mapping[str, Any]) -> str:
    """The JSON report: exactly one line (with its newline)."""
    return json.dumps(report, ensure_ascii=True) + "\n"


def format_text(report: Mapping[str, Any]) -> str:
    """The human report: header, one line per check (+ remediation), blank line, result."""
    lines = [f"BrowserMesh {__version__} doctor"]
    for check in report["checks"]:
        mark = "ok  " if check["status"] == "passed" else "FAIL"
        lines.append(f"{mark} {check['id']:<24} {check['message']}")
        if check["remediation"] is not None:
            lines.append(f"     {check['remediation']}")
    lines.append("")
    lines.append(f"Result: {report['status']}")
    return "\n".join(lines) + "\n"


def _write(text: str) -> None:
    with contextlib.suppress(BrokenPipeError, ValueError, OSError):
        sys.stdout.write(text)
        sys.stdout.flush()


def run_doctor(config: Config, as_json: bool) -> int:
    """``browsermesh --doctor [--json]``: print the report; 0 when passed, 1 when failed.

    While the checks run, ``sys.stderr`` points at the null device, so neither the Playwright
    driver (which inherits it) nor any library warning writes to the real stderr.
    """
    environ = process_environ()
    with open(os.devnull, "w", encoding="utf-8") as sink, contextlib.redirect_stderr(sink):
        report = asyncio.run(diagnose(config, environ))
    _write(format_json(report) if as_json else format_text(report))
    return 0 if report["status"] == "passed" else 1
