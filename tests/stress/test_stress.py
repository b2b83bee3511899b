"""Stress (reference §15.1, §26.2): 50 concurrent sessions, on the fake engine and on Chromium.

Bounded by design: loopback only, at most 50 sessions (the configured maximum), hard timeouts.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from browsermesh.config import default_config
from browsermesh.log import EventLog
from browsermesh.runtime.calls import PageCall
from browsermesh.runtime.runtime import LOCAL_PRINCIPAL, Runtime
from tests.fakes import FakeEngine
from tests.fixtures.site import FixtureSite
from tests.support.clients import tool_client
from tests.support.eventually import eventually
from tests.support.procs import chromium_descendants
from tests.support.runtimes import real_config

pytestmark = pytest.mark.anyio

SESSIONS = 50


async def test_fifty_concurrent_sessions_on_the_fake_engine(tmp_path: Path) -> None:
    """Deterministic: every session sees only its own navigation; sessions really overlap."""
    engine = FakeEngine(delay=0.02)
    config = default_config(timeout_ms=10_000, max_sessions=SESSIONS, data_dir=tmp_path)
    runtime = Runtime(config, engine, EventLog("silent"))  # type: ignore[arg-type]
    results: dict[int, tuple[str, str, str, str]] = {}

    async def one(i: int) -> None:
        _, view, page_id = await runtime.create_session(name=f"s{i}")
        sid = view["sessionId"]
        url = f"http://site-{i}.test/path/{i}?value=s{i}"
        _, landed = await runtime.navigate(
            PageCall(principal=LOCAL_PRINCIPAL, session_id=sid, page_id=page_id), url
        )
        _, read_back = await runtime.get_url(
            PageCall(principal=LOCAL_PRINCIPAL, session_id=sid, page_id=page_id)
        )
        _, title = await runtime.get_title(
            PageCall(principal=LOCAL_PRINCIPAL, session_id=sid, page_id=page_id)
        )
        assert landed.url == url
        results[i] = (sid, page_id, read_back, title)

    try:
        with anyio.fail_after(30):
            await asyncio.gather(*(one(i) for i in range(SESSIONS)))
        assert len(results) == SESSIONS
        assert len({sid for sid, _, _, _ in results.values()}) == SESSIONS
        assert len({pid for _, pid, _, _ in results.values()}) == SESSIONS
        for i, (sid, page_id, url, title) in results.items():
            expected = f"http://site-{i}.test/path/{i}?value=s{i}"
            assert url == expected, (i, url)
            assert title == f"Title of {expected}"
            _, pages = await runtime.list_pages(LOCAL_PRINCIPAL, sid)
            assert [(p["pageId"], p["url"]) for p in pages] == [(page_id, expected)]
        assert engine.max_active > 25, engine.max_active
        assert len(engine.contexts) == SESSIONS and engine.live_pages() == SESSIONS
    finally:
        await runtime.shutdown()
    assert engine.contexts == [] and engine.live_pages() == 0
    assert engine.active == 0


def _title_of(data: dict[str, Any]) -> str:
    return str(data["title"])


async def test_fifty_concurrent_chromium_sessions_route_and_clean_up(
    tmp_path: Path, site: FixtureSite
) -> None:
    """Real Chromium over the in-memory MCP client: 50 contexts created at once, each proves its
    own cookie/localStorage identity; closing them all releases every context and renderer."""
    # Session creation uses the configured default timeout. 50 contexts at once on 2 cores take
    # 10-30 s in total (each spawns a renderer process), far beyond the harness's 5 s.
    config = real_config(tmp_path, timeout_ms=50_000)
    from browsermesh.factory import create_runtime

    runtime = create_runtime(config, EventLog("silent"))
    engine: Any = runtime.engine
    try:
        async with tool_client(runtime, mode="auto") as c:
            # Warm-up: launch Chromium and its long-lived helpers, then take the base count.
            s0, p0 = await c.session(name="warm-up")
            await c.ok("browser_navigate", {"sessionId": s0, "pageId": p0, "url": site.url("/")})
            await c.ok("browser_session_close", {"sessionId": s0})
            await eventually(lambda: engine.live_contexts() == 0, 10, "no live context")
            await anyio.sleep(1.0)
            base = chromium_descendants()
            assert any(kind == "browser" for kind in base.values()), base

            routed: dict[int, tuple[str, str]] = {}

            async def one(i: int) -> None:
                sid, pid = await c.session(name=f"s{i}", metadata={"index": str(i)})
                addr = {"sessionId": sid, "pageId": pid}
                nav = await c.ok("browser_navigate", {**addr, "url": site.url(f"/?value=s{i}")})
                assert nav["url"] == site.url(f"/?value=s{i}")  # this call's own answer
                await c.ok("browser_navigate", {**addr, "url": site.url("/whoami")})
                title = _title_of(await c.ok("browser_get_title", addr))
                assert title == f"ls:s{i}|cookie:identity=s{i}", (i, title)
                url = (await c.ok("browser_get_url", addr))["url"]
                assert url == site.url("/whoami")
                routed[i] = (sid, pid)

            started = time.monotonic()
            with anyio.fail_after(90):
                async with anyio.create_task_group() as tg:
                    for i in range(SESSIONS):
                        tg.start_soon(one, i)
            assert sorted(routed) == list(range(SESSIONS))
            assert engine.live_contexts() == SESSIONS
            peak = chromium_descendants()
            created_s = time.monotonic() - started

            listed = await c.ok("browser_session_list")
            by_id = {v["sessionId"]: v for v in listed["sessions"]}
            for i, (sid, _pid) in routed.items():
                assert by_id[sid]["status"] == "ready"
                assert by_id[sid]["metadata"] == {"index": str(i)}

            with anyio.fail_after(60):
                async with anyio.create_task_group() as tg:
                    for sid, _pid in routed.values():
                        tg.start_soon(c.ok, "browser_session_close", {"sessionId": sid})
            assert engine.live_contexts() == 0

            def back_to_base() -> bool:
                return len(chromium_descendants()) <= len(base)

            try:
                settled = await eventually(back_to_base, 15)
            except AssertionError:
                settled = False  # reported below, with the processes left
            after = chromium_descendants()
            print(
                json.dumps(
                    {
                        "chromiumBase": sorted(base.values()),
                        "fiftySessionsSeconds": round(created_s, 2),
                        "chromiumPeak": len(peak),
                        "chromiumAfterClose": sorted(after.values()),
                    }
                )
            )
            assert settled, (sorted(base.values()), sorted(after.values()))
            # The browser process itself survived and still serves new sessions.
            assert set(after) & {pid for pid, kind in base.items() if kind == "browser"}
            s1, p1 = await c.session(name="after")
            await c.ok("browser_navigate", {"sessionId": s1, "pageId": p1, "url": site.url("/")})
            await c.ok("browser_session_close", {"sessionId": s1})
    finally:
        await runtime.shutdown()
    assert engine.live_contexts() == 0
