"""Progress notifications and log lines sent to MCP clients (issue 17), with the real SDK
client in both eras, a real runtime and Chromium.

Progress: a call with a progress token gets readable phases in order, all before its result;
a call without one gets none. Log lines: at or above the client's level only (handshake era:
`logging/setLevel` on the connection; 2026-07-28: the `_meta` opt-in on each request), and never
page text, form values or URL secrets.
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest

from browsermesh import factory, install_browser
from browsermesh.config import locate_chromium, process_environ
from browsermesh.mcp.feed import MAX_PROGRESS_TOKEN_CHARS
from tests.fixtures.site import FixtureSite
from tests.support.clients import ERAS, ToolClient
from tests.support.eventually import eventually
from tests.support.http_transport import TOKENS, Running, connect, http_server
from tests.support.results import assert_clean
from tests.support.runtimes import real_config

pytestmark = pytest.mark.anyio

CANARY_TEXT = "page-text-canary-51ab"
CANARY_VALUE = "typed-value-canary-93cd"
CANARY_QUERY = "query-canary-0e77"
FORM_PAGE = f"""<!doctype html><title>Form</title><main><h1>{CANARY_TEXT}</h1>
<label>Note <input id=n></label><label>Secret <input type=password id=s></label>
<button onclick="document.title = n.value">Save</button></main>"""


class Seen:
    """Every server notification the client received, in order."""

    def __init__(self) -> None:
        self.items: list[types.ServerNotification | Any] = []

    async def handler(self, message: Any) -> None:
        if isinstance(message, types.ServerNotification | types.LoggingMessageNotification):
            self.items.append(message)

    def progress(self) -> list[types.ProgressNotificationParams]:
        return [m.params for m in self.items if isinstance(m, types.ProgressNotification)]


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[Running]:
    """The real HTTP transport on a real runtime (the SDK's in-memory dispatch carries no
    progress token, so both eras go over Streamable HTTP here)."""
    async with http_server(tmp_path) as running:
        yield running


def _wait_args(addr: dict[str, str], text: str, timeout_ms: int) -> dict[str, Any]:
    condition = {"kind": "text", "text": text, "state": "present"}
    return {**addr, "condition": condition, "timeoutMs": timeout_ms}


@pytest.mark.parametrize("mode", ERAS)
async def test_progress_arrives_in_order_and_stops_at_the_result(
    served: Running, mode: str
) -> None:
    async with connect(served.url, mode) as c:
        sid, pid = await c.session()
        seen: list[tuple[float, str | None, bool]] = []
        returned = False

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            assert total is None
            seen.append((value, message, returned))

        started = time.monotonic()
        args = _wait_args({"sessionId": sid, "pageId": pid}, "Saved", 1600)
        result = await c.raw("browser_wait", args, progress_callback=on_progress)
        elapsed = time.monotonic() - started
        returned = True
        assert result.is_error and "OPERATION_TIMEOUT" in result.content[0].text
        assert len(seen) >= 2, seen
        values = [v for v, _, _ in seen]
        assert values == sorted(values) and len(set(values)) == len(values)
        assert all(not late for _, _, late in seen)  # nothing after the result
        pattern = re.compile(r"waiting for text 'Saved' \(\d+(\.\d)? s of 1(\.\d)? s\)")
        assert all(m is not None and pattern.fullmatch(m) for _, m, _ in seen), seen
        assert len(seen) <= elapsed * 4 + 1  # rate-limited: at most a few per second


@pytest.mark.parametrize("mode", ERAS)
async def test_no_progress_without_a_token(served: Running, mode: str) -> None:
    seen = Seen()
    async with connect(served.url, mode, message_handler=seen.handler) as c:
        sid, pid = await c.session()
        args = _wait_args({"sessionId": sid, "pageId": pid}, "Saved", 800)
        await c.raw("browser_wait", args)
        assert seen.progress() == []


@pytest.mark.parametrize("mode", ERAS)
async def test_an_oversized_progress_token_is_never_echoed(served: Running, mode: str) -> None:
    """Issue 30 #10: a 1 MB progress token used to come back in every notification of the call.
    Now it gets none (the call runs); a token of the largest echoed size still gets progress."""
    seen = Seen()
    huge = "T" * 1_000_000
    longest = "t" * MAX_PROGRESS_TOKEN_CHARS
    async with connect(served.url, mode, message_handler=seen.handler) as c:
        sid, pid = await c.session()
        args = _wait_args({"sessionId": sid, "pageId": pid}, "Saved", 800)
        error = await c.err("browser_wait", args, meta={"progressToken": huge})
        assert error["code"] == "OPERATION_TIMEOUT"  # the call itself ran
        assert seen.progress() == []
        await c.err("browser_wait", args, meta={"progressToken": huge[: len(longest) + 1]})
        assert seen.progress() == []
        await c.err("browser_wait", args, meta={"progressToken": longest})
        tokens = {p.progress_token for p in seen.progress()}
    assert tokens == {longest}
    ignored = [r for r in served.records if r.get("type") == "progress.token_ignored"]
    assert len(ignored) == 2 and all(r["level"] == "warn" for r in ignored)
    assert "TTTT" not in json.dumps(served.records)


async def test_queue_wait_is_a_phase(served: Running) -> None:
    """A call behind another in the same session says so before it runs."""
    async with connect(served.url, "legacy") as c:
        sid, pid = await c.session()
        addr = {"sessionId": sid, "pageId": pid}
        messages: list[str] = []

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            messages.append(message or "")

        async with anyio.create_task_group() as group:
            group.start_soon(c.raw, "browser_wait", _wait_args(addr, "never", 1200))
            queue = served.runtime.sessions_snapshot()[sid].queue
            await eventually(lambda: queue.pending, 10, "the first call is queued")
            await c.raw("browser_snapshot", addr, progress_callback=on_progress)
        assert messages and messages[0].startswith("waiting in session queue (1 ahead)")


SLOW_INSTALLER = (
    "import time\n"
    "for n in (1, 4, 7, 10):\n"
    "    print(f'|{chr(9632) * n}   |  {n * 10}% of 167.3 MiB', flush=True)\n"
    "    time.sleep(0.4)\n"
)


async def test_the_first_session_installs_chromium_with_progress(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No Chromium found at start: the first session's call installs it (a stand-in for
    Playwright's installer printing its progress lines), reports the installer's real
    percentages, then launches."""
    real = locate_chromium(real_config(tmp_path), process_environ())
    assert real is not None
    lookups = iter([None])  # the factory's lookup finds nothing; the one after the install does
    monkeypatch.setattr(factory, "locate_chromium", lambda *_a: next(lookups, real))
    monkeypatch.setattr(
        install_browser, "install_command", lambda *_a: [sys.executable, "-c", SLOW_INSTALLER]
    )
    monkeypatch.setattr(install_browser, "apt_commands", lambda _p: None)
    async with http_server(tmp_path) as srv, connect(srv.url, "legacy") as c:
        messages: list[str] = []

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            messages.append(message or "")

        await c.ok("browser_session_create", {}, progress_callback=on_progress)
        phases = [m.rsplit(" (", 1)[0] for m in messages]
        percents = [p for p in phases if p.startswith("downloading Chromium ")]
        assert percents and percents[-1] == "downloading Chromium 100%", phases
        assert [int(p.split()[-1][:-1]) for p in percents] == sorted(
            int(p.split()[-1][:-1]) for p in percents
        )
        assert phases.index(percents[-1]) < phases.index("launching Chromium")
        assert (await c.ok("browser_runtime_info"))["browserBinary"] == real.kind


def _log_data(seen: Seen) -> list[dict[str, Any]]:
    return [
        m.params.data
        for m in seen.items
        if isinstance(m, types.LoggingMessageNotification) and isinstance(m.params.data, dict)
    ]


async def _exercise(c: ToolClient, site: FixtureSite) -> str:
    """A session that reads a page with canary text, fills canary values and navigates to a
    URL with a canary query; then a failing call. Returns the session id."""
    sid, pid = await c.session()
    addr = {"sessionId": sid, "pageId": pid}
    await c.ok("browser_navigate", {**addr, "url": site.url(f"/form?q={CANARY_QUERY}")})
    await c.ok("browser_snapshot", addr)
    note = {"strategy": "label", "value": "Note"}
    secret = {"strategy": "label", "value": "Secret"}
    await c.ok("browser_fill", {**addr, "locator": note, "value": CANARY_VALUE})
    await c.ok("browser_fill_form", {**addr, "fields": [{"target": secret, "value": CANARY_VALUE}]})
    await c.err(
        "browser_click",
        {**addr, "locator": {"strategy": "text", "value": "Nope"}, "timeoutMs": 300},
    )
    return sid


def _levels(seen: Seen) -> set[str]:
    return {m.params.level for m in seen.items if isinstance(m, types.LoggingMessageNotification)}


async def _until_logged(seen: Seen, kind: str) -> None:
    await eventually(lambda: any(d.get("type") == kind for d in _log_data(seen)), 10, kind)


@pytest.mark.parametrize("mode", ERAS)
async def test_log_lines_respect_the_level_and_carry_no_secrets(
    served: Running, site: FixtureSite, mode: str
) -> None:
    site.pages["/form"] = FORM_PAGE
    quiet, chatty = Seen(), Seen()
    # Handshake era: logging/setLevel on the connection; 2026-07-28: the _meta opt-in.
    legacy = mode == "legacy"
    async with connect(
        served.url,
        mode,
        message_handler=quiet.handler,
        **({} if legacy else {"log_level": "warning"}),
    ) as c:
        if legacy:
            await c.client.set_logging_level("warning")
        await _exercise(c, site)
        # Every record of these calls is info-level: none may arrive at "warning".
        assert _log_data(quiet) == []
    async with connect(
        served.url,
        mode,
        message_handler=chatty.handler,
        **({} if legacy else {"log_level": "info"}),
    ) as c:
        if legacy:
            await c.client.set_logging_level("info")
        sid = await _exercise(c, site)
        await _until_logged(chatty, "operation.failed")
        records = _log_data(chatty)
        kinds = {d["type"] for d in records}
        assert {"operation.started", "operation.completed", "operation.failed"} <= kinds
        assert {"session.created", "page.created"} <= kinds
        assert _levels(chatty) == {"info"}
        failed = [d for d in records if d["type"] == "operation.failed"]
        assert failed[-1]["code"] == "ELEMENT_NOT_FOUND" and failed[-1]["sessionId"] == sid
        assert all(
            m.params.logger == "browsermesh"
            for m in chatty.items
            if isinstance(m, types.LoggingMessageNotification)
        )
    assert_clean(_log_data(chatty), CANARY_TEXT, CANARY_VALUE, CANARY_QUERY)


async def test_no_log_lines_without_asking(served: Running, site: FixtureSite) -> None:
    site.pages["/form"] = FORM_PAGE
    for mode in ERAS:
        seen = Seen()
        async with connect(served.url, mode, message_handler=seen.handler) as c:
            await _exercise(c, site)
        assert _log_data(seen) == []


async def test_principals_hear_only_about_their_own_sessions(
    tmp_path: Path, site: FixtureSite
) -> None:
    """Over HTTP with tokens: alice's second connection (which makes no calls) hears alice's
    operations on the connection-wide stream; bob, listening at debug, never hears of them."""
    site.pages["/form"] = FORM_PAGE
    idle_alice, bob_seen = Seen(), Seen()
    async with http_server(tmp_path, tokens=True) as srv:
        async with (
            connect(srv.url, "legacy", TOKENS["alice"]) as alice,
            connect(
                srv.url, "legacy", TOKENS["alice"], message_handler=idle_alice.handler
            ) as alice2,
            connect(srv.url, "legacy", TOKENS["bob"], message_handler=bob_seen.handler) as bob,
        ):
            await alice2.client.set_logging_level("info")
            await bob.client.set_logging_level("debug")
            alice_sid = await _exercise(alice, site)
            await _until_logged(idle_alice, "operation.failed")
            heard = _log_data(idle_alice)
            assert {d["sessionId"] for d in heard if "sessionId" in d} == {alice_sid}
            assert {d["principal"] for d in heard if "principal" in d} == {"alice"}
            # bob's own call proves bob's channel works; only bob's records ever reach it
            bob_sid, _ = await bob.session()
            await _until_logged(bob_seen, "session.created")
            sessions = {d.get("sessionId") for d in _log_data(bob_seen)}
            assert sessions == {bob_sid}
            assert alice_sid not in json.dumps(_log_data(bob_seen))
        assert_clean(_log_data(idle_alice), CANARY_TEXT, CANARY_VALUE, CANARY_QUERY)
