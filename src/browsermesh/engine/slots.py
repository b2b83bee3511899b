"""Browser slots (reference §14): one browser connection each — the local Chromium (launched by
us, installed on first need), a CDP-attached browser, or one Playwright browser-server endpoint.

A slot starts lazily, coalesces concurrent starts (a start that fails is shared by the callers
that waited for it) and keeps the set of contexts BrowserMesh created in it (the per-endpoint
live session count). The backends that choose among slots are in `engine.backends`.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import time
from collections.abc import Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from browsermesh.engine.bounded import first_done
from browsermesh.engine.failures import CONNECT, LAUNCH, browser_error, timed, translated
from browsermesh.errors import BrowserMeshError, ErrorCode
from browsermesh.model import progress
from browsermesh.model.deadline import Deadline
from browsermesh.model.tasks import TaskOwner, all_settled
from browsermesh.redact import ENDPOINT_SCHEMES, sanitize_url

if TYPE_CHECKING:
    from playwright.async_api import Browser, BrowserContext, Playwright

    from browsermesh.config import BinaryKind

    # `installer(report)`: install Chromium, reporting progress phases; the executable and its
    # kind afterwards, None when the install failed.
    Installer = Callable[
        [Callable[[str], None]], Coroutine[Any, Any, tuple[str, BinaryKind] | None]
    ]

# Chromium must not phone home on a closed network (and we promise no background traffic).
QUIET_FLAGS = (
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)

ENABLE_FEATURES = "--enable-features="
WEBMCP_FEATURE = "WebMCP"
"""Chromium's feature behind `document.modelContext` (page tools, issue 36 item 1)."""


def with_webmcp(args: Sequence[str], webmcp: bool) -> list[str]:
    """`args` with WebMCP enabled when `webmcp`: added to an `--enable-features=` switch the
    args already hold (Chromium honours only one), else as a switch of its own."""
    out = list(args)
    if not webmcp:
        return out
    for index, arg in enumerate(out):
        if arg.startswith(ENABLE_FEATURES):
            features = [f for f in arg[len(ENABLE_FEATURES) :].split(",") if f]
            if WEBMCP_FEATURE not in features:
                out[index] = ENABLE_FEATURES + ",".join([*features, WEBMCP_FEATURE])
            return out
    out.append(ENABLE_FEATURES + WEBMCP_FEATURE)
    return out


ENDPOINT_BACKOFF_S = 30.0
"""How long a failed browser-server endpoint is skipped by placement (§14.3)."""
BROWSER_CLOSE_MS = 5_000
"""Closing (or disconnecting from) a browser, or one of our contexts on it, may take this long:
shutdown goes on past a browser that does not answer."""

LAUNCH_OPTIONS_HEADER = "x-playwright-launch-options"
"""Request header a Playwright browser server reads the client's launch options from."""

ENDPOINT_URL_CHARS = 512

_ENDPOINT_STATES = {"not_started": "not_connected", "ready": "connected", "failed": "failed"}


def show_endpoint(url: str) -> str:
    """An endpoint URL as listings and logs may show it (§17.1, `ws`/`wss` allowed)."""
    return sanitize_url(url, max_chars=ENDPOINT_URL_CHARS, allowed_schemes=ENDPOINT_SCHEMES)


class SlotHost(Protocol):
    """What a slot needs from the engine."""

    async def playwright(self) -> Playwright: ...

    def browser_gone(self, slot: BrowserSlot, browser: Browser) -> None: ...


class BrowserSlot:
    """One browser connection. Concurrent starts coalesce; a start that fails is shared by
    the callers that waited for it (they do not retry it one after another)."""

    def __init__(self, key: str, endpoint: str | None = None) -> None:
        self.key = key
        self.endpoint = endpoint
        self.state = "not_started"
        self.browser: Browser | None = None
        self.version: str | None = None
        self.contexts: set[BrowserContext] = set()
        self.pending = 0
        self.failed_at: float | None = None
        self.stopping = False
        self._lock = asyncio.Lock()
        self._attempts = 0
        self._last_error: BrowserMeshError | None = None

    @property
    def live_version(self) -> str | None:
        browser = self.browser
        return self.version if browser is not None and browser.is_connected() else None

    def view(self) -> dict[str, Any]:
        """The `browser_runtime_info.endpoints` entry (§4.1)."""
        return {
            "endpoint": self.endpoint,
            "state": _ENDPOINT_STATES.get(self.state, "not_connected"),
            "activeSessions": len(self.contexts),
            "browserVersion": self.live_version,
        }

    def mark_failed(self) -> None:
        self.state = "failed"
        self.failed_at = time.monotonic()

    def backing_off(self, now: float, backoff_s: float) -> bool:
        return (
            self.state == "failed"
            and self.failed_at is not None
            and now - self.failed_at < backoff_s
        )

    def track(self, context: BrowserContext) -> None:
        self.contexts.add(context)
        context.on("close", lambda c: self.contexts.discard(c))

    def forget(self, context: BrowserContext) -> None:
        self.contexts.discard(context)

    async def ensure(self, host: SlotHost, timeout_ms: float) -> Browser:
        attempt = self._attempts
        async with self._lock:
            browser = self.browser
            if browser is not None:
                if browser.is_connected():
                    return browser
                host.browser_gone(self, browser)  # gone before its event was delivered
            if self._attempts != attempt and self._last_error is not None:
                raise self._last_error  # the start we waited for failed just now
            self._attempts += 1
            self._last_error = None
            progress.report(self.starting, total_ms=timeout_ms)
            pw = await host.playwright()
            try:
                browser = await self._start(pw, timeout_ms)
            except BrowserMeshError as err:
                self._last_error = err
                self.mark_failed()
                raise
            self._last_error = None
            self.browser = browser
            self.version = browser.version
            self.state = "ready"
            self.failed_at = None
            browser.on("disconnected", lambda _b: host.browser_gone(self, browser))
            return browser

    @property
    def starting(self) -> str:
        """The progress phase while this slot starts (model.progress)."""
        return "connecting to the browser"

    async def _start(self, pw: Playwright, timeout_ms: float) -> Browser:
        raise NotImplementedError

    def failure(self, exc: BaseException) -> BrowserMeshError:
        """The error for a start that did not finish in time."""
        return browser_error(exc, "connect")

    async def stop(self) -> None:
        """Close (local) or disconnect from (remote) the browser, after any in-flight start."""
        self.stopping = True
        try:
            async with self._lock:
                browser, self.browser = self.browser, None
                owned, self.contexts = list(self.contexts), set()
                if browser is not None:
                    await self._close(browser, owned)
        finally:
            self.state = "not_started"
            self.failed_at = None
            self.stopping = False

    async def _close(self, browser: Browser, owned: list[BrowserContext]) -> None:
        await timed(browser.close(), Deadline(BROWSER_CLOSE_MS))


class LocalSlot(BrowserSlot):
    """The local Chromium (§14.1): launched by us, one process for every session.

    With no executable found and an `installer` (auto-install on), the first start installs
    Chromium. The install is the slot's own task: a call whose budget ends meanwhile fails
    with a retry hint while the install goes on, later calls wait for the same install, and
    every waiting call reports the installer's progress as its own phase."""

    @property
    def starting(self) -> str:
        return self._install_phase if self._must_install else "launching Chromium"

    @property
    def _must_install(self) -> bool:
        return self.executable_path is None and self._installer is not None

    def __init__(
        self,
        executable_path: str | None,
        headless: bool,
        sandbox: bool,
        *,
        binary: BinaryKind | None = None,
        installer: Installer | None = None,
        webmcp: bool = True,
    ) -> None:
        super().__init__("local")
        self.webmcp = webmcp  # --enable-features=WebMCP in the launch args (issue 36 item 1)
        self.executable_path = executable_path
        self.headless = headless
        self.sandbox = sandbox
        # The kind of binary the executable is (`browser_runtime_info.browserBinary`);
        # None when no executable was found (Playwright's own default then applies).
        self.binary = binary
        self._installer = installer
        self._install: asyncio.Task[tuple[str, BinaryKind] | None] | None = None
        # The install outlives the call that started it: the slot owns it and `stop` cancels
        # and awaits it.
        self._tasks = TaskOwner()
        self._install_phase = "installing Chromium"
        self._install_changed = asyncio.Event()

    def _phase(self, message: str) -> None:
        self._install_phase = message
        self._install_changed.set()

    async def _installed(self, timeout_ms: float) -> None:
        """Wait (within the budget) for the install, started on first need."""
        assert self._installer is not None
        if self._install is None or (self._install.done() and self._install.result() is None):
            # A fresh context: the install belongs to the slot, not to the call that started it.
            self._install = self._tasks.spawn(
                self._installer(self._phase), name="install Chromium", context=contextvars.Context()
            )
        install = self._install
        deadline = Deadline(max(1, int(timeout_ms)))
        while not install.done():
            progress.report(self._install_phase, total_ms=timeout_ms)
            self._install_changed.clear()
            remaining_ms = deadline.remaining_ms()
            if remaining_ms <= 0:
                raise BrowserMeshError(
                    ErrorCode.BROWSER_ERROR,
                    variant="installing",
                    details={"reason": "installing"},
                    cause=self._install_phase,
                )
            waits = TaskOwner()  # this call's: cancelled and awaited before it goes on
            changed = waits.spawn(self._install_changed.wait())
            try:
                await first_done({install, changed}, remaining_ms)
            finally:
                await waits.aclose()
        found = install.result()
        if found is None:
            raise browser_error(RuntimeError("Chromium could not be installed"), "launch")
        self.executable_path, self.binary = found

    async def stop(self) -> None:
        self._install = None
        await self._tasks.aclose()  # an install still running is cancelled and awaited
        await super().stop()

    async def _start(self, pw: Playwright, timeout_ms: float) -> Browser:
        if self._must_install:
            began = time.monotonic()
            await self._installed(timeout_ms)
            # What is left of the budget launches (at least a second: the wait was the install's).
            timeout_ms = max(1000.0, timeout_ms - (time.monotonic() - began) * 1000)
            progress.report("launching Chromium", total_ms=timeout_ms)
        with translated(LAUNCH):
            return await pw.chromium.launch(
                executable_path=self.executable_path,
                headless=self.headless,
                chromium_sandbox=self.sandbox,
                args=with_webmcp(QUIET_FLAGS, self.webmcp),
                timeout=timeout_ms,
                handle_sigint=False,
                handle_sigterm=False,
                handle_sighup=False,
            )

    def failure(self, exc: BaseException) -> BrowserMeshError:
        return browser_error(exc, "launch")


class CdpSlot(BrowserSlot):
    """A running Chrome attached over CDP (§14.2): `http(s)` discovery URL or `ws(s)` URL."""

    def __init__(self, url: str, key: str) -> None:
        super().__init__(key, show_endpoint(url))
        self._url = url

    async def _start(self, pw: Playwright, timeout_ms: float) -> Browser:
        with translated(CONNECT):
            return await pw.chromium.connect_over_cdp(self._url, timeout=timeout_ms)

    async def _close(self, browser: Browser, owned: list[BrowserContext]) -> None:
        # Only the contexts we created; the browser's own contexts and pages stay as they are,
        # and closing a CDP connection only disconnects (the remote process keeps running).
        results = await all_settled(*(timed(c.close(), Deadline(BROWSER_CLOSE_MS)) for c in owned))
        failed = next((r for r in results if isinstance(r, BrowserMeshError)), None)
        await super()._close(browser, owned)
        if failed is not None:
            raise failed


class ServerSlot(BrowserSlot):
    """One Playwright browser server (§14.3). The server launches a browser for our
    connection and closes it when the connection ends."""

    def __init__(self, url: str, key: str, launch_options: dict[str, Any]) -> None:
        super().__init__(key, show_endpoint(url))
        self._url = url
        self.launch_options = launch_options

    async def _start(self, pw: Playwright, timeout_ms: float) -> Browser:
        options = {**self.launch_options, "timeout": max(1, int(timeout_ms))}
        with translated(CONNECT):
            return await pw.chromium.connect(
                self._url,
                timeout=timeout_ms,
                headers={LAUNCH_OPTIONS_HEADER: json.dumps(options)},
            )
