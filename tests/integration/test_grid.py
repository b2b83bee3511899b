"""The Selenium Grid backend (issue 22) against a real Grid 4 on loopback: one hub and two nodes
with two slots each (tests/support/grid.py), started once for the module.

Through the MCP client: sessions land on both nodes; isolation across and within Grid browsers;
a session beyond the Grid's slots waits in its queue, answers OPERATION_TIMEOUT within its
budget and leaves no Grid session behind (and a later request gets the slot it would have
taken); the Grid URL's credentials and the header file's values never show; server SIGTERM
leaves no Grid session and no Chromium; killing one node fails only its sessions. The node
kill runs last (it changes the Grid); the module restarts nothing.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import signal
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from browsermesh.log import EventLog
from browsermesh.runtime.runtime import Runtime
from tests.fixtures.files_site import FilesSite
from tests.fixtures.site import FixtureSite
from tests.integration.test_binaries import check_pdf_and_download
from tests.support.clients import ToolClient, tool_client, whoami
from tests.support.eventually import eventually
from tests.support.grid import ROOT, Grid, start_grid
from tests.support.http_process import HttpServerProcess
from tests.support.http_transport import connect
from tests.support.ports import closed_port
from tests.support.procs import chromium_descendants
from tests.support.results import assert_clean
from tests.support.runtimes import real_runtime
from tests.support.servers import CHECKOUT_ENV

pytestmark = [pytest.mark.anyio, pytest.mark.long]

PASSWORD = "grid-pw-canary-7f3a"
HEADER_VALUE = "grid-header-canary-91bc"


@pytest.fixture(scope="module")
def grid(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Grid]:
    g = start_grid(tmp_path_factory.mktemp("grid"), nodes=2, max_sessions=2)
    try:
        yield g
    finally:
        g.stop()


@pytest.fixture
def header_file(tmp_path: Path) -> Path:
    path = tmp_path / "grid-headers"
    path.write_text(f"# sent to the Grid\nX-Grid-Token: {HEADER_VALUE}\n")
    return path


def with_password(url: str) -> str:
    return url.replace("http://", f"http://bm:{PASSWORD}@")


@asynccontextmanager
async def grid_runtime(
    tmp_path: Path, grid: Grid, records: list[dict[str, Any]], **overrides: Any
) -> AsyncIterator[Runtime]:
    log = EventLog("debug")
    log.sinks.append(records.append)
    overrides.setdefault("selenium_grid", with_password(grid.url))
    async with real_runtime(tmp_path, log, **overrides) as rt:
        yield rt


def grid_entry(info: dict[str, Any]) -> dict[str, Any]:
    (entry,) = info["endpoints"]
    assert isinstance(entry, dict)
    return entry


async def wait_status(tc: ToolClient, sid: str, status: str) -> dict[str, Any]:
    async def reached() -> dict[str, Any] | None:
        view: dict[str, Any] = (await tc.ok("browser_session_get", {"sessionId": sid}))["session"]
        return view if view["status"] == status else None

    view = await eventually(reached, 20, f"the session is {status}")
    assert view is not None
    return view


async def grid_sessions(grid: Grid, count: int) -> None:
    """The Grid's /status shows `count` sessions: a DELETE has ended the session when it
    answers, and /status follows once the node's event reaches the distributor."""
    await eventually(lambda: len(grid.sessions()) == count, 10, f"{count} Grid sessions")


# ------------------------------------------------------------------------------ placement


async def test_sessions_land_on_both_nodes_isolated_and_credentials_never_show(
    tmp_path: Path, grid: Grid, site: FixtureSite, files_site: FilesSite, header_file: Path
) -> None:
    records: list[dict[str, Any]] = []
    from browsermesh.config import build_config

    headers = build_config(
        {"BROWSERMESH_GRID_HEADER_FILE": str(header_file)}, {}, None
    ).grid_headers
    async with (
        grid_runtime(tmp_path, grid, records, grid_headers=headers) as rt,
        tool_client(rt) as tc,
    ):
        info = await tc.ok("browser_runtime_info")
        assert info["browserBackend"] == "selenium-grid" and "sandbox" not in info
        assert info["browserLaunchState"] == "not_started"
        assert grid_entry(info) == {
            "endpoint": grid.url,
            "state": "not_connected",
            "activeSessions": 0,
            "contextsPerBrowser": 1,
            "gridSessions": 0,
        }
        # One Grid browser per session, and the Grid's distributor spreads them over the nodes
        # (the least loaded first: one after the other, each sees the other's session).
        a, page_a = await tc.session()
        b, page_b = await tc.session()
        assert sorted(grid.sessions().values()) == sorted(grid.node_urls)
        assert await whoami(tc, site, a, page_a, "A") == "ls:A|cookie:identity=A"
        assert await whoami(tc, site, b, page_b, None) == "ls:|cookie:"
        info = await tc.ok("browser_runtime_info")
        entry = grid_entry(info)
        assert entry["state"] == "connected" and entry["gridSessions"] == 2
        assert entry["activeSessions"] == 2 and entry["browserVersion"]
        assert info["browserLaunchState"] == "ready"

        # What each backend supports (README table): PDF, downloads and uploads on the Grid
        # (this Grid's nodes share the machine, hence the file system, with BrowserMesh).
        await check_pdf_and_download(tc, files_site)  # in a session of its own
        # The upload in b's page (a Grid browser's start costs seconds; b has done its part).
        up = {"sessionId": b, "pageId": page_b}
        await tc.ok("browser_navigate", {**up, "url": files_site.url("/upload")})
        sent = await tc.ok(
            "browser_file_upload",
            {**up, "locator": {"strategy": "label", "value": "Attachment"},
             "files": [{"name": "n.txt", "contentBase64": base64.b64encode(b"hi").decode()}]},
        )  # fmt: skip
        assert sent["files"] == [{"name": "n.txt", "mimeType": "text/plain", "size": 2}]
        await grid_sessions(grid, 3)  # a, b and the PDF session's Grid browsers

        # Closed means ended at the Grid.
        await tc.ok("browser_session_close", {"sessionId": a})
        await grid_sessions(grid, 2)  # the last context closed: its Grid session ended
        await tc.ok("browser_session_close", {"sessionId": b})
        await grid_sessions(grid, 1)
        info = await tc.ok("browser_runtime_info")
        assert grid_entry(info)["gridSessions"] == 1
    await grid_sessions(grid, 0)  # shutdown ended the last one
    assert_clean([info, records], PASSWORD, HEADER_VALUE)


async def test_contexts_share_grid_browsers_and_stay_isolated(
    tmp_path: Path, grid: Grid, site: FixtureSite
) -> None:
    records: list[dict[str, Any]] = []
    async with (
        grid_runtime(tmp_path, grid, records, grid_contexts_per_browser=2) as rt,
        tool_client(rt) as tc,
    ):
        sessions = [await tc.session() for _ in range(3)]
        await grid_sessions(grid, 2)  # two per Grid browser: 2 + 1
        entry = grid_entry(await tc.ok("browser_runtime_info"))
        assert entry["contextsPerBrowser"] == 2 and entry["gridSessions"] == 2
        assert entry["activeSessions"] == 3
        placements = [rt.sessions_snapshot()[s].placement for s, _ in sessions]
        assert placements[0] == placements[1] != placements[2]
        # Within one Grid browser (0, 1) and across Grid browsers (0, 2): nothing is shared.
        (s0, p0), (s1, p1), (s2, p2) = sessions
        assert await whoami(tc, site, s0, p0, "zero") == "ls:zero|cookie:identity=zero"
        assert await whoami(tc, site, s1, p1, None) == "ls:|cookie:"
        assert await whoami(tc, site, s2, p2, None) == "ls:|cookie:"
        assert await whoami(tc, site, s1, p1, "one") == "ls:one|cookie:identity=one"
        assert await whoami(tc, site, s0, p0, None) == "ls:zero|cookie:identity=zero"

        await tc.ok("browser_session_close", {"sessionId": s0})
        await grid_sessions(grid, 2)  # s1 still uses the shared browser
        s3, _ = await tc.session()  # the room s0 left is taken before a new Grid browser
        assert rt.sessions_snapshot()[s3].placement == placements[1]
        await grid_sessions(grid, 2)
        for sid in (s1, s3):
            await tc.ok("browser_session_close", {"sessionId": sid})
        await grid_sessions(grid, 1)
    await grid_sessions(grid, 0)


async def test_a_session_beyond_the_grid_waits_then_times_out_leaving_nothing(
    tmp_path: Path, grid: Grid
) -> None:
    records: list[dict[str, Any]] = []
    capacity = len(grid.up_nodes()) * grid.max_sessions
    async with grid_runtime(tmp_path, grid, records) as rt, tool_client(rt) as tc:
        held = [await tc.session() for _ in range(capacity)]
        await grid_sessions(grid, capacity)

        # Another server whose calls have 2.5 s: its creation waits in the Grid's queue.
        async with (
            grid_runtime(tmp_path / "short", grid, records, timeout_ms=2500) as short,
            tool_client(short) as tc_short,
        ):
            started = time.monotonic()
            err = await tc_short.err("browser_session_create")
            took = time.monotonic() - started
            # timeoutMs: what was left of the call's budget when the engine got it.
            assert err["code"] == "OPERATION_TIMEOUT"
            assert 2400 < err["details"]["timeoutMs"] <= 2500
            assert 2.4 < took < 4.5, took
            await grid_sessions(grid, capacity)
            await later_request_takes_the_freed_slot(grid, tc, held[0][0], capacity)
    await grid_sessions(grid, 0)


async def later_request_takes_the_freed_slot(
    grid: Grid, tc: ToolClient, to_close: str, capacity: int
) -> None:
    """A later request waits in the queue and gets the slot a session frees. Had the timed-out
    request stayed queued, it would be ahead and take that slot (FIFO)."""
    assert not queued(grid)
    async with anyio.create_task_group() as tg:
        created: list[tuple[str, str]] = []

        async def create() -> None:
            created.append(await tc.session())

        tg.start_soon(create)
        await eventually(lambda: queued(grid), 10, "a queued Grid request")
        await tc.ok("browser_session_close", {"sessionId": to_close})
    ((sid, _),) = created
    view = (await tc.ok("browser_session_get", {"sessionId": sid}))["session"]
    assert view["status"] == "ready"
    await grid_sessions(grid, capacity)  # the new one, no orphan of the timed-out one
    assert not queued(grid)
    entry = grid_entry(await tc.ok("browser_runtime_info"))
    assert entry["gridSessions"] == capacity and entry["activeSessions"] == capacity


def queued(grid: Grid) -> int:
    """Requests waiting in the Grid's session queue (its GraphQL view)."""
    import urllib.request

    body = json.dumps({"query": "{ grid { sessionQueueSize } }"}).encode()
    req = urllib.request.Request(
        grid.url + "/graphql", data=body, headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=5) as resp:
        return int(json.loads(resp.read())["data"]["grid"]["sessionQueueSize"])


# ------------------------------------------------------------------------------ lifecycle


def grid_chromium(grid: Grid) -> dict[int, str]:
    """Chromium processes below the Grid's nodes (chromedriver starts them)."""
    found: dict[int, str] = {}
    for node in grid.nodes:
        if node is not None:
            found.update(chromium_descendants(node.pid))
    return found


async def test_sigterm_ends_every_grid_session_and_leaves_no_chromium(
    tmp_path: Path, grid: Grid, header_file: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BROWSERMESH_")}
    env.update(CHECKOUT_ENV)
    env.update(
        {
            "BROWSERMESH_DATA_DIR": str(tmp_path / "data"),
            "BROWSERMESH_SELENIUM_GRID": with_password(grid.url),
            "BROWSERMESH_GRID_HEADER_FILE": str(header_file),
            "BROWSERMESH_GRID_CONTEXTS_PER_BROWSER": "2",
            "BROWSERMESH_HEADLESS": "true",
            "BROWSERMESH_LOG_LEVEL": "debug",
        }
    )
    server = HttpServerProcess(
        [sys.executable, "-m", "browsermesh", "--transport", "http", "--port", "0"],
        env,
        ROOT,
    )
    try:
        url = server.wait_listening()
        # HTTP sessions outlive the connection (they belong to the principal): the client
        # leaves first, so nothing waits on a server that is going away.
        async with connect(url, "legacy") as tc:
            await asyncio.gather(*(tc.session() for _ in range(3)))
        await grid_sessions(grid, 2)
        assert grid_chromium(grid)
        server.proc.send_signal(signal.SIGTERM)
        code = await anyio.to_thread.run_sync(lambda: server.proc.wait(15))
        assert code == 0, server.log_tail()
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait()
    # Every slot is free again and every Chromium the Grid started for us has exited.
    await grid_sessions(grid, 0)
    await eventually(lambda: not grid_chromium(grid), 10, "no Chromium left on the nodes")
    log = "\n".join(server.lines)
    assert "Traceback" not in log
    assert PASSWORD not in log and HEADER_VALUE not in log


async def test_a_grid_that_is_down_is_a_browser_error_with_a_next_step(tmp_path: Path) -> None:
    records: list[dict[str, Any]] = []
    down = f"http://bm:{PASSWORD}@127.0.0.1:{closed_port()}"
    async with (
        real_runtime(tmp_path, EventLog("silent"), selenium_grid=down) as rt,
        tool_client(rt) as tc,
    ):
        started = time.monotonic()
        err = await tc.err("browser_session_create")
        assert time.monotonic() - started < 5
        assert err["code"] == "BROWSER_ERROR" and err["details"]["reason"] == "connection"
        assert err["message"] == "The Selenium Grid could not start a Chromium browser session."
        assert "/status" in err["nextStep"] and "--doctor" in err["nextStep"]
        info = await tc.ok("browser_runtime_info")
        assert info["browserLaunchState"] == "failed"
        assert grid_entry(info)["state"] == "failed"
        assert grid_entry(info)["endpoint"] == down.replace(f"bm:{PASSWORD}@", "")
    assert_clean([err, info, records], PASSWORD)


# ------------------------------------------------------------------------------ doctor


async def test_doctor_checks_the_grid_status_and_smokes_a_grid_browser(
    tmp_path: Path, grid: Grid
) -> None:
    from browsermesh.config import default_config
    from browsermesh.doctor import diagnose

    config = default_config(
        selenium_grid=with_password(grid.url), headless=True, data_dir=tmp_path / "d"
    )
    report = await diagnose(config, {})
    checks = {c["id"]: c for c in report["checks"]}
    assert [c["id"] for c in report["checks"]][-1] == "selenium-grid"
    assert checks["selenium-grid"]["code"] == "GRID_READY"
    assert checks["chromium-executable"]["code"] == "REMOTE_BROWSER_CONFIGURED"
    assert checks["browser-smoke"]["code"] == "BROWSER_SMOKE_PASSED", checks["browser-smoke"]
    await grid_sessions(grid, 0)  # the smoke test ended its Grid session

    down = config.replace(selenium_grid=f"http://127.0.0.1:{closed_port()}", timeout_ms=3000)
    report = await diagnose(down, {})
    checks = {c["id"]: c for c in report["checks"]}
    assert checks["selenium-grid"]["code"] == "GRID_UNREACHABLE"
    assert checks["browser-smoke"]["code"] == "BROWSER_SMOKE_FAILED"
    assert "--selenium-grid" in checks["selenium-grid"]["remediation"]
    assert_clean(report, PASSWORD)


async def test_a_killed_node_fails_only_its_sessions_and_the_grid_takes_new_ones(
    tmp_path: Path, grid: Grid, site: FixtureSite
) -> None:
    records: list[dict[str, Any]] = []
    async with grid_runtime(tmp_path, grid, records) as rt, tool_client(rt) as tc:
        first = await tc.session()
        second = await tc.session()
        where = grid.sessions()
        assert sorted(where.values()) == sorted(grid.node_urls)  # one on each node
        backend = rt.engine._backend  # type: ignore[attr-defined]
        node_of = {s.key: where[s.session_id] for s in backend.slots if s.session_id is not None}
        on_node = {node_of[rt.sessions_snapshot()[sid].placement]: (sid, pid)
                   for sid, pid in (first, second)}  # fmt: skip
        doomed, survivor = on_node[grid.node_urls[1]], on_node[grid.node_urls[0]]

        grid.kill_node(1)
        view = await wait_status(tc, doomed[0], "failed")
        assert view["failureCode"] == "BROWSER_DISCONNECTED"
        err = await tc.err("browser_get_url", {"sessionId": doomed[0], "pageId": doomed[1]})
        assert err["code"] == "BROWSER_DISCONNECTED"
        alive = {"sessionId": survivor[0], "pageId": survivor[1]}
        assert (await tc.ok("browser_navigate", {**alive, "url": site.url("/")}))["url"]
        entry = grid_entry(await tc.ok("browser_runtime_info"))
        assert entry["gridSessions"] == 1 and entry["state"] == "connected"

        # The Grid drops the dead node; new sessions go to the Grid again (the live node).
        await eventually(lambda: grid.node_urls[1] not in grid.up_nodes(), 30, "the node dropped")
        fresh, fresh_page = await tc.session()
        assert await whoami(tc, site, fresh, fresh_page, "F") == "ls:F|cookie:identity=F"
        assert sorted(grid.sessions().values()) == [grid.node_urls[0]] * 2
    await grid_sessions(grid, 0)
