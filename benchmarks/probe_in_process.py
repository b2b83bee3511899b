"""The capacity benchmark's probe without MCP: where an idle session's latency goes (issue 33).

The same load as ``benchmarks.capacity`` (N sessions signed in to the loopback shop, 20 of them
running the rest of the multisession flow in rotation) and the same probe (`get_url` of an idle
session every 50 ms, open loop, latency from when the call was due), but calling BrowserMesh's
runtime in this process: no stdio pipe, no JSON-RPC, no MCP client. Beside the capacity
benchmark's figure it separates what the runtime's event loop costs from what the MCP transport
adds. Not run by ``run.sh``: ``python -m benchmarks.probe_in_process [--sessions 200]
[--active 20] [--seconds 60]``.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.app import PASSWORD, ShopApp
from benchmarks.common import binary_path, latency_stats
from browsermesh.config import default_config
from browsermesh.factory import create_runtime
from browsermesh.runtime.calls import PageCall
from browsermesh.runtime.runtime import LOCAL_PRINCIPAL, Runtime

BUDGET_MS = 60_000
OPEN_AT_ONCE = 10


def _locator(strategy: str, value: str, **extra: Any) -> dict[str, Any]:
    return {"locator": {"strategy": strategy, "value": value, **extra}}


async def _sign_in(rt: Runtime, app: ShopApp, user: str) -> PageCall:
    _, view, page_id = await rt.create_session(LOCAL_PRINCIPAL)
    at = PageCall(
        principal=LOCAL_PRINCIPAL,
        session_id=view["sessionId"],
        page_id=page_id,
        timeout_ms=BUDGET_MS,
    )
    await rt.navigate(at, app.url("/login"))
    await rt.element_action(at, "fill", {**_locator("label", "Username"), "value": user}, user)
    args = {**_locator("label", "Password"), "value": PASSWORD}
    await rt.element_action(at, "fill", args, PASSWORD)
    await rt.element_action(at, "click", _locator("role", "button", name="Sign in"), None)
    return at


async def _flow(rt: Runtime, app: ShopApp, at: PageCall) -> None:
    await rt.navigate(at, app.url("/product/1"))
    await rt.element_action(at, "click", _locator("role", "button", name="Add to cart"), None)
    await rt.navigate(at, app.url("/cart"))
    await rt.visible_text(at, {"strategy": "testId", "value": "cart-items"})
    await rt.screenshot(at, None)


async def measure(sessions: int, active: int, seconds: float) -> dict[str, Any]:
    app = ShopApp()
    app.start()
    try:
        with tempfile.TemporaryDirectory() as data:
            config = default_config(
                headless=True,
                data_dir=Path(data),
                browser_path=binary_path("headless-shell"),
                max_sessions=sessions,
                timeout_ms=BUDGET_MS,
            )
            rt = create_runtime(config)
            try:
                gate = asyncio.Semaphore(OPEN_AT_ONCE)

                async def open_one(i: int) -> PageCall:
                    async with gate:
                        return await _sign_in(rt, app, f"inproc-{i}")

                pages = await asyncio.gather(*(open_one(i) for i in range(sessions)))
                stop = time.monotonic() + seconds
                flows = 0

                async def worker(first: int) -> None:
                    nonlocal flows
                    k = first
                    while time.monotonic() < stop:
                        await _flow(rt, app, pages[k % active])
                        flows += 1
                        k += active

                latencies: list[float] = []

                async def one(at: PageCall, due: float) -> None:
                    await rt.get_url(at)
                    latencies.append((time.monotonic() - due) * 1000)

                async def probe() -> None:
                    calls: list[asyncio.Task[None]] = []
                    due, i = time.monotonic(), 0
                    while time.monotonic() < stop:
                        idle = pages[active + i % (sessions - active)]
                        calls.append(asyncio.create_task(one(idle, due)))
                        i += 1
                        due += 0.05
                        await asyncio.sleep(max(0.0, due - time.monotonic()))
                    await asyncio.gather(*calls)

                await asyncio.gather(probe(), *(worker(w) for w in range(active)))
            finally:
                await rt.shutdown()
    finally:
        app.stop()
    return {"sessions": sessions, "active": active, "flows": flows, **latency_stats(latencies)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.probe_in_process")
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--active", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60.0)
    args = parser.parse_args(argv)
    if args.sessions <= args.active:
        parser.error("--sessions must exceed --active (the probe reads idle sessions)")
    out = asyncio.run(measure(args.sessions, args.active, args.seconds))
    print(
        f"{out['sessions']} sessions, {out['active']} active, {out['flows']} flows: in-process "
        f"get_url p50 {out['p50_ms']} ms, p95 {out['p95_ms']} ms, max {out['max_ms']} ms "
        f"({out['n']} calls)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
