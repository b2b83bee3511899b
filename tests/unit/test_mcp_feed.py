"""The per-call feed (progress pacing, log flushing, cancellation) and the routing rules of
`mcp.clients`, without a browser."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp.server import ServerRequestContext
from mcp.server.connection import Connection

from browsermesh.mcp import clients as clients_module
from browsermesh.mcp import feed
from browsermesh.mcp.clients import Clients, at_or_above, mcp_level
from browsermesh.model import progress
from tests.support.eventually import eventually

pytestmark = pytest.mark.anyio


class Sent:
    def __init__(self) -> None:
        self.progress: list[tuple[float, str, float]] = []
        self.logs: list[tuple[str, dict[str, Any]]] = []

    async def send_progress(self, value: float, message: str) -> None:
        self.progress.append((value, message, anyio.current_time()))

    async def send_log(self, level: str, data: dict[str, Any]) -> None:
        self.logs.append((level, data))


def _feed(sent: Sent, *, logs: bool = False) -> feed.CallFeed:
    return feed.CallFeed(
        send_progress=sent.send_progress,
        send_log=sent.send_log if logs else None,
        log_threshold="info" if logs else None,
    )


async def test_a_short_call_sends_no_progress() -> None:
    sent = Sent()
    async with feed.running(_feed(sent)):
        progress.report("launching Chromium")
        await anyio.sleep(feed.GRACE_S / 5)
    assert sent.progress == []


async def test_phases_are_paced_and_heartbeat_with_elapsed_time() -> None:
    sent = Sent()
    started = anyio.current_time()
    async with feed.running(_feed(sent)):
        for n in range(50):  # a burst of phases: at most one per interval goes out
            progress.report(f"phase {n}", total_ms=10_000)
        await eventually(lambda: len(sent.progress) >= 2, within=5)
    first, second = sent.progress[0], sent.progress[1]
    assert first[2] - started >= feed.GRACE_S - 0.01
    assert first[1].startswith("phase 49 (") and first[1].endswith(" s of 10 s)")
    # the same phase again, a heartbeat later, with its elapsed time grown
    assert second[2] - first[2] >= feed.HEARTBEAT_S - 0.05
    assert second[1].startswith("phase 49 (") and second[1] != first[1]
    assert second[0] > first[0]


async def test_nothing_is_sent_after_cancellation_or_close() -> None:
    sent = Sent()
    the_feed = _feed(sent)
    with anyio.move_on_after(0.5):
        async with feed.running(the_feed):
            progress.report("waiting for text 'x'")
            await anyio.Event().wait()  # a call that outlasts the grace, until cancelled
    count = len(sent.progress)
    assert count == 1
    the_feed.phase("late phase", None)  # a job still running after its caller went away
    the_feed.log("info", {"type": "late"})
    assert len(sent.progress) == count and sent.logs == []
    assert progress.active() is False  # the sink does not outlive the call


async def test_log_lines_are_flushed_before_the_call_returns_and_bounded() -> None:
    sent = Sent()
    async with feed.running(_feed(sent, logs=True)) as _:
        call = feed.current()
        assert call is not None and call.wants_logs
        for n in range(feed.MAX_CALL_LOGS + 10):
            call.log("info", {"n": n})
    assert [d["n"] for _, d in sent.logs] == list(range(feed.MAX_CALL_LOGS))


async def test_without_a_feed_progress_is_a_no_op() -> None:
    async with feed.running(None):
        assert feed.current() is None
        assert progress.active() is False
        progress.report("nobody listens")


def test_levels() -> None:
    assert mcp_level({"level": "warn"}) == "warning"
    assert mcp_level({"level": "odd"}) == "info"
    assert at_or_above("error", "warning") and at_or_above("info", "info")
    assert not at_or_above("info", "warning")
    assert not at_or_above("emergency", None) and not at_or_above("info", "loud")


def test_records_belong_to_their_principal_or_their_sessions_owner() -> None:
    owners = {"s1": "alice"}
    routing = Clients(owners.get)
    assert routing.principal_of({"principal": "bob", "sessionId": "s1"}) == "bob"
    assert routing.principal_of({"sessionId": "s1"}) == "alice"
    assert routing.principal_of({"sessionId": "s9"}) == "local"
    assert routing.principal_of({"type": "browser.disconnected"}) == "local"


def test_the_sdk_still_keeps_the_connection_on_the_request_session() -> None:
    """`connection_of` reads a private SDK attribute; this fails first if the SDK changes."""

    class Session:
        _connection = object.__new__(Connection)

    ctx = ServerRequestContext.__new__(ServerRequestContext)
    ctx.session = Session()  # type: ignore[assignment]
    assert clients_module.connection_of(ctx) is Session._connection
    from mcp.server.session import ServerSession

    assert "_connection" in ServerSession.__init__.__code__.co_names


@pytest.mark.parametrize(
    ("token", "echoed"),
    [
        ("t" * feed.MAX_PROGRESS_TOKEN_CHARS, True),
        ("t" * (feed.MAX_PROGRESS_TOKEN_CHARS + 1), False),
        (0, True),
        (2**63 - 1, True),
        (-(2**63), True),
        (2**63, False),
        (10**4000, False),
        (True, False),
        (1.5, False),
    ],
)
def test_only_small_progress_tokens_are_echoed(token: object, echoed: bool) -> None:
    """Issue 30 #10: every notification repeats the token, so long ones are not used."""
    assert feed.echoable_progress_token(token) is echoed
