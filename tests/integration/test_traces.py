"""Traces of sessions on real Chromium (issue 35; reference §33.1): a traced two-session run
read back as Playwright's loader reads it, the agent's calls as groups in order, no password in
any file of the zip, quotas, and traces that survive their session's close."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from browsermesh.log import EventLog
from tests.fixtures.site import FixtureSite
from tests.support.clients import tool_client
from tests.support.runtimes import real_runtime
from tests.support.traces import load_trace, read_artifact, viewer_actions

pytestmark = pytest.mark.anyio

TESTING = ("core", "observability", "persistence", "files", "testing")
SERVER_CANARY = "srv-Canary-51d9"
TYPED_CANARY = 'typ"ed-Canary\\77e2'
LOGIN = f"""<!doctype html><title>Sign in</title>
<form id=form method=post action=/login-done>
<label>User <input name=user value=alice></label>
<label>Remembered <input type=password name=old value="{SERVER_CANARY}"></label>
<label>Password <input type=password name=password></label>
<button type=button onclick="console.log('typed ' + form.password.value)">Log</button>
</form>"""
ADMIN = "<!doctype html><title>Admin</title><h1>Orders</h1><button>Confirm order</button>"
BIG = "<!doctype html><title>Big</title>" + "".join(
    f"<p>paragraph {i} {os.urandom(24).hex()}</p>" for i in range(5000)
)


@pytest.fixture
def pages(site: FixtureSite) -> FixtureSite:
    site.pages.update({"/t/login": LOGIN, "/t/admin": ADMIN, "/t/big": BIG})
    return site


def _label(value: str) -> dict[str, str]:
    return {"strategy": "label", "value": value}


async def test_two_traced_sessions_open_with_their_steps_and_no_password(
    tmp_path: Path, pages: FixtureSite
) -> None:
    records: list[dict[str, Any]] = []
    log = EventLog("silent")
    log.sinks.append(records.append)
    async with real_runtime(tmp_path, log, tools=TESTING) as rt, tool_client(rt) as c:
        buyer, bp = await c.session(name="buyer")
        admin, ap = await c.session(name="admin")
        for sid in (buyer, admin):
            started = await c.ok("browser_trace", {"sessionId": sid, "action": "start"})
            assert started["tracing"] is True
        b = {"sessionId": buyer, "pageId": bp}
        a = {"sessionId": admin, "pageId": ap}
        await c.ok("browser_navigate", {**b, "url": pages.url("/t/login")})
        await c.ok("browser_navigate", {**a, "url": pages.url("/t/admin")})
        await c.ok("browser_fill", {**b, "locator": _label("Password"), "value": TYPED_CANARY})
        await c.ok("browser_click", {**b, "locator": {"strategy": "text", "value": "Log"}})
        missing = await c.err(
            "browser_click",
            {**b, "locator": {"strategy": "text", "value": "Nowhere"}, "timeoutMs": 10_000},
        )
        assert missing["code"] == "ELEMENT_NOT_FOUND"
        await c.ok("browser_snapshot", {**a, "format": "actions"})
        again = await c.err("browser_trace", {"sessionId": buyer, "action": "start"})
        assert again["code"] == "INVALID_ARGUMENT" and again["details"]["field"] == "action"

        saved = {}
        for sid in (buyer, admin):
            out = await c.ok("browser_trace", {"sessionId": sid, "action": "stop"})
            artifact = out["artifact"]
            assert artifact["kind"] == "trace" and artifact["state"] == "completed"
            assert artifact["name"].endswith(".zip") and artifact["size"] > 0
            # The local principal's own file (stdio: no view, so no download address).
            assert os.stat(out["path"]).st_size == artifact["size"] and "download" not in out
            saved[sid] = artifact["artifactId"]
        buyer_zip = await read_artifact(c, buyer, saved[buyer])
        buyer_trace = load_trace(buyer_zip)
        admin_trace = load_trace(await read_artifact(c, admin, saved[admin]))
        listed = await c.ok("browser_downloads", {"sessionId": buyer})
        assert [x["artifactId"] for x in listed["artifacts"]] == [saved[buyer]]

    groups = buyer_trace.groups()
    tools = [g.split(" ", 1)[0] for g in groups]
    assert tools == ["browser_navigate", "browser_fill", "browser_click", "browser_click"]
    assert groups[1] == 'browser_fill label="Password" → ok'
    assert groups[3] == 'browser_click text="Nowhere" → ELEMENT_NOT_FOUND'
    assert [g.rsplit(" → ", 1)[1] for g in groups] == ["ok", "ok", "ok", "ELEMENT_NOT_FOUND"]
    assert admin_trace.groups() == [
        f"browser_navigate {pages.url('/t/admin')} → ok",
        "browser_snapshot → ok",
    ]
    # Playwright's own Trace Viewer opens the rewritten zip and lists the agent's steps.
    shown = await viewer_actions(buyer_zip, tmp_path)
    assert [a for a in shown if a.startswith("browser_")] == groups
    # The page was really recorded: its DOM and the agent's typing are in there, minus secrets.
    assert buyer_trace.contains("Remembered")
    for secret in (SERVER_CANARY, TYPED_CANARY):
        assert buyer_trace.contains(secret) == []
        assert secret not in repr(records)
    # Files of the store: nothing half-written, files private.
    store = tmp_path / "data" / "artifacts"
    leftovers = [p.name for p in store.rglob("*") if p.suffix in (".raw", ".part")]
    assert leftovers == []


async def test_an_oversized_trace_is_refused_and_the_earlier_artifact_stays(
    tmp_path: Path, pages: FixtureSite
) -> None:
    async with (
        real_runtime(tmp_path, tools=TESTING, max_artifact_session_bytes=200_000) as rt,
        tool_client(rt) as c,
    ):
        sid, pid = await c.session()
        at = {"sessionId": sid, "pageId": pid}
        small = {"sessionId": sid, "action": "start", "screenshots": False, "snapshots": False}
        await c.ok("browser_trace", small)
        await c.ok("browser_navigate", {**at, "url": pages.url("/t/admin")})
        first = (await c.ok("browser_trace", {"sessionId": sid, "action": "stop"}))["artifact"]
        assert first["size"] < 200_000
        await c.ok("browser_trace", {"sessionId": sid, "action": "start"})
        await c.ok("browser_navigate", {**at, "url": pages.url("/t/big")})
        refused = await c.err("browser_trace", {"sessionId": sid, "action": "stop"})
        assert refused["code"] == "LIMIT_EXCEEDED"
        assert "artifactSessionBytes <= 200000" in refused["message"]
        listed = (await c.ok("browser_downloads", {"sessionId": sid}))["artifacts"]
        assert [(x["artifactId"], x["state"]) for x in listed][-1] == (
            first["artifactId"],
            "completed",
        )
        assert len(await read_artifact(c, sid, first["artifactId"])) == first["size"]
        # Tracing stopped with the refusal: a new trace can start.
        await c.ok("browser_trace", {"sessionId": sid, "action": "start"})
        await c.ok("browser_trace", {"sessionId": sid, "action": "discard"})
        assert [
            x["name"] for x in (await c.ok("browser_downloads", {"sessionId": sid}))["artifacts"]
        ]
        leftovers = [
            p.name for p in (tmp_path / "data").rglob("*") if p.suffix in (".raw", ".part")
        ]
        assert leftovers == []


async def test_close_saves_a_running_trace_that_outlives_the_session(
    tmp_path: Path, pages: FixtureSite
) -> None:
    async with real_runtime(tmp_path, tools=TESTING) as rt, tool_client(rt) as c:
        sid, pid = await c.session(name="closing")
        await c.ok("browser_trace", {"sessionId": sid, "action": "start"})
        await c.ok(
            "browser_navigate", {"sessionId": sid, "pageId": pid, "url": pages.url("/t/admin")}
        )
        await c.ok("browser_session_close", {"sessionId": sid})
        listed = (await c.ok("browser_downloads", {"sessionId": sid}))["artifacts"]
        assert [(x["kind"], x["state"]) for x in listed] == [("trace", "completed")]
        trace = load_trace(await read_artifact(c, sid, listed[0]["artifactId"]))
        assert any(g.startswith("browser_navigate") for g in trace.groups())
        leftovers = [
            p.name for p in (tmp_path / "data").rglob("*") if p.suffix in (".raw", ".part")
        ]
        assert leftovers == []


async def test_trace_sessions_retain_on_failure_keeps_only_failed_runs(
    tmp_path: Path, pages: FixtureSite
) -> None:
    async with (
        real_runtime(tmp_path, tools=TESTING, trace_sessions="retain-on-failure") as rt,
        tool_client(rt) as c,
    ):
        fine, fp = await c.session(name="fine")
        broken, bp = await c.session(name="broken")
        await c.ok(
            "browser_navigate", {"sessionId": fine, "pageId": fp, "url": pages.url("/t/admin")}
        )
        await c.ok(
            "browser_navigate", {"sessionId": broken, "pageId": bp, "url": pages.url("/t/admin")}
        )
        await c.err(
            "browser_click",
            {
                "sessionId": broken,
                "pageId": bp,
                "locator": {"strategy": "text", "value": "Nowhere"},
                "timeoutMs": 500,
            },
        )
        for sid in (fine, broken):
            await c.ok("browser_session_close", {"sessionId": sid})
        assert (await c.ok("browser_downloads", {"sessionId": fine})).get("artifacts", []) == []
        kept = (await c.ok("browser_downloads", {"sessionId": broken}))["artifacts"]
        assert [x["kind"] for x in kept] == ["trace"]
        trace = load_trace(await read_artifact(c, broken, kept[0]["artifactId"]))
        assert trace.groups()[-1].endswith("→ ELEMENT_NOT_FOUND")


async def test_shutdown_drops_a_running_trace_and_video(tmp_path: Path, pages: FixtureSite) -> None:
    records: list[dict[str, Any]] = []
    log = EventLog("silent")
    log.sinks.append(records.append)
    async with real_runtime(tmp_path, log, tools=TESTING) as rt, tool_client(rt) as c:
        sid, pid = await c.session()
        await c.ok("browser_trace", {"sessionId": sid, "action": "start"})
        await c.ok("browser_video", {"sessionId": sid, "action": "start"})
        await c.ok(
            "browser_navigate", {"sessionId": sid, "pageId": pid, "url": pages.url("/t/admin")}
        )
    events = [r["type"] for r in records if r.get("sessionId") == sid]
    assert "trace.discarded" in events and "session.closed" in events
    assert "trace.saved" not in events and "video.saved" not in events
    assert [p.name for p in (tmp_path / "data" / "artifacts").rglob("*") if p.is_file()] == []
