"""Browser backends (reference §14): the browsers sessions' BrowserContexts live in.

A *slot* is one browser connection: the local Chromium, the CDP-attached browser, or one
Playwright browser-server endpoint. Slots start lazily, coalesce concurrent starts and keep the
set of contexts BrowserMesh created in them (the per-endpoint live session count). A *backend*
groups the slots of the configured kind and chooses the slot a new context goes to.

Never touched: contexts and pages BrowserMesh did not create (the CDP browser's default context
and its pages are neither listed nor used nor closed), and a remote browser's process (stopping
a remote backend closes our own contexts and disconnects).

Browser servers (`python -m playwright run-server`) launch the browser for each client
connection from the JSON launch options in the `x-playwright-launch-options` request header.
Without `--unsafe` the server keeps only the safe options (headless, timeout, channel, proxy, ...)
and drops `executablePath`, `args` and `chromiumSandbox`; with `--unsafe` it honours them. The
server always adds `--no-sandbox` unless `chromiumSandbox: true` is passed.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from browsermesh.config.hosts import is_loopback_host
from browsermesh.engine.bounded import bounded
from browsermesh.engine.failures import browser_error
from browsermesh.engine.slots import BROWSER_CLOSE_MS as BROWSER_CLOSE_MS
from browsermesh.engine.slots import ENDPOINT_BACKOFF_S as ENDPOINT_BACKOFF_S
from browsermesh.engine.slots import LAUNCH_OPTIONS_HEADER as LAUNCH_OPTIONS_HEADER
from browsermesh.engine.slots import QUIET_FLAGS as QUIET_FLAGS
from browsermesh.engine.slots import BrowserSlot as BrowserSlot
from browsermesh.engine.slots import CdpSlot as CdpSlot
from browsermesh.engine.slots import LocalSlot as LocalSlot
from browsermesh.engine.slots import ServerSlot as ServerSlot
from browsermesh.engine.slots import SlotHost as SlotHost
from browsermesh.engine.slots import show_endpoint as show_endpoint
from browsermesh.engine.slots import with_webmcp
from browsermesh.errors import BrowserMeshError, ErrorCode
from browsermesh.model.deadline import Deadline
from browsermesh.model.tasks import all_settled
from browsermesh.redact import INVALID_URL, REDACTED_URL

if TYPE_CHECKING:
    from playwright.async_api import Browser

    from browsermesh.engine.slots import Installer as Installer

_BEHIND_START_MS = 1_000
"""A slot's start bounds itself by the budget; waiting for it (behind another caller's start)
gets this much more, so the start's own timeout, not this wait, is what the caller sees."""


def running_as_root() -> bool:
    return sys.platform.startswith("linux") and hasattr(os, "geteuid") and os.geteuid() == 0


def endpoint_keys(urls: Sequence[str]) -> list[str]:
    """Placement keys: the sanitized URL, or `endpoint-<index>` when that is a placeholder or
    collides with an earlier endpoint's (e.g. URLs differing only in credentials)."""
    keys: list[str] = []
    for index, url in enumerate(urls):
        shown = show_endpoint(url)
        if shown in (INVALID_URL, REDACTED_URL) or shown in keys:
            shown = f"endpoint-{index}"
        keys.append(shown)
    return keys


def is_loopback(url: str) -> bool:
    """True when the URL's host is this machine (``config.hosts.is_loopback_host``)."""
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return False
    return host is not None and is_loopback_host(host)


def server_launch_options(
    url: str, executable_path: str | None, webmcp: bool = True
) -> dict[str, Any]:
    """Launch options sent to a browser server.

    Always headless (a server has no display for us). A server on this machine (loopback
    endpoint) is also handed the local Chromium and our launch flags, which it honours only
    when started with `--unsafe` (otherwise it uses its own Playwright-managed browser). The
    args always carry `--enable-features=WebMCP` when `webmcp` (page tools, issue 36 item 1)."""
    options: dict[str, Any] = {"headless": True}
    if executable_path is not None and is_loopback(url):
        args = with_webmcp(QUIET_FLAGS, webmcp)
        if running_as_root():
            args.append("--no-sandbox")
        options["executablePath"] = executable_path
        options["args"] = args
    return options


def _connect_failure() -> BrowserMeshError:
    return BrowserMeshError(
        ErrorCode.BROWSER_ERROR,
        variant="connect",
        details={"reason": "connection"},
        cause="no browser endpoint could be connected",
    )


class Backend:
    """One slot (local launch); subclasses override what differs."""

    kind = "local"

    def __init__(self, slots: Sequence[BrowserSlot]) -> None:
        self.slots = list(slots)
        self.backoff_s = ENDPOINT_BACKOFF_S

    @property
    def sandbox(self) -> bool | None:
        return None

    @property
    def browser_binary(self) -> str | None:
        """`headless-shell` or `chromium` for a local launch; None for remote backends."""
        return None

    @property
    def launch_state(self) -> str:
        return self.slots[0].state

    @property
    def browser_version(self) -> str | None:
        return self.slots[0].live_version

    def endpoints(self) -> list[dict[str, Any]]:
        return [slot.view() for slot in self.slots]

    async def acquire(
        self, host: SlotHost, timeout_ms: float, live_by_placement: dict[str, int]
    ) -> tuple[BrowserSlot, Browser]:
        """A connected slot for a new context; the caller owns one `pending` count on it."""
        slot = self.slots[0]
        slot.pending += 1
        try:
            # The start bounds itself; this bounds a wait behind another caller's start.
            browser = await bounded(slot.ensure(host, timeout_ms), timeout_ms + _BEHIND_START_MS)
        except TimeoutError as exc:
            slot.pending -= 1
            slot.mark_failed()
            raise slot.failure(exc) from None
        except BaseException:
            slot.pending -= 1
            raise
        return slot, browser

    async def settle(self, slot: BrowserSlot) -> None:
        """A context of `slot` closed or a creation on it ended (the Grid backend ends a Grid
        browser left without contexts); the fixed slots of the other backends stay."""

    async def stop(self) -> None:
        results = await all_settled(*(s.stop() for s in self.slots))
        for result in results:
            if isinstance(result, BrowserMeshError):
                raise result
            if isinstance(result, Exception):
                raise browser_error(result, timeout_ms=BROWSER_CLOSE_MS) from None


class LocalBackend(Backend):
    kind = "local"

    def __init__(self, slot: LocalSlot) -> None:
        super().__init__([slot])
        self.local = slot

    @property
    def sandbox(self) -> bool | None:
        return self.local.sandbox

    @property
    def browser_binary(self) -> str | None:
        return self.local.binary

    def endpoints(self) -> list[dict[str, Any]]:
        return []


class CdpBackend(Backend):
    kind = "cdp"

    def __init__(self, url: str) -> None:
        super().__init__([CdpSlot(url, endpoint_keys([url])[0])])


class ServerPool(Backend):
    """Browser-server endpoints: placement by fewest live sessions, failure backoff."""

    kind = "browser-server"

    def __init__(
        self, urls: Sequence[str], executable_path: str | None = None, webmcp: bool = True
    ) -> None:
        keys = endpoint_keys(urls)
        super().__init__(
            [
                ServerSlot(url, key, server_launch_options(url, executable_path, webmcp))
                for url, key in zip(urls, keys, strict=True)
            ]
        )

    @property
    def launch_state(self) -> str:
        if any(s.state == "ready" for s in self.slots):
            return "ready"
        if all(s.state == "failed" for s in self.slots):
            return "failed"
        return "not_started"

    @property
    def browser_version(self) -> str | None:
        return next((v for s in self.slots if (v := s.live_version) is not None), None)

    def candidates(self, live_by_placement: dict[str, int]) -> list[BrowserSlot]:
        """Endpoints not backing off, fewest live sessions first, ties in configured order."""
        now = time.monotonic()
        usable = [s for s in self.slots if not s.backing_off(now, self.backoff_s)]
        return sorted(usable, key=lambda s: live_by_placement.get(s.key, 0) + s.pending)

    async def acquire(
        self, host: SlotHost, timeout_ms: float, live_by_placement: dict[str, int]
    ) -> tuple[BrowserSlot, Browser]:
        deadline = Deadline(max(1, int(timeout_ms)))
        last: BrowserMeshError | None = None
        for slot in self.candidates(live_by_placement):
            remaining_ms = deadline.remaining_ms()
            if remaining_ms <= 0:
                break
            slot.pending += 1
            try:
                browser = await bounded(
                    slot.ensure(host, remaining_ms), remaining_ms + _BEHIND_START_MS
                )
            except BrowserMeshError as err:
                slot.pending -= 1
                last = err  # ensure() marked the endpoint failed; try the next one
                continue
            except TimeoutError as exc:
                slot.pending -= 1
                slot.mark_failed()
                last = slot.failure(exc)
                continue
            except BaseException:
                slot.pending -= 1
                raise
            return slot, browser
        raise last if last is not None else _connect_failure()


def release(slot: BrowserSlot) -> None:
    """Drop the `pending` count `acquire` handed out."""
    slot.pending = max(0, slot.pending - 1)
