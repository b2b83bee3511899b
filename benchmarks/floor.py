"""The floor of the multisession benchmark: the workload straight through Playwright, no MCP.

Run as a child process by ``benchmarks.multisession`` so that its PSS (this Python process, the
Playwright driver and Chromium) is measured on its own, without the benchmark's MCP client, the
loopback shop or matplotlib in the same process. Imports nothing but Playwright and the stdlib.

Protocol: ``python -m benchmarks.floor BASE_URL N TAG``; prints ``ready`` once Playwright is
imported, waits for one line on stdin, runs N concurrent flows in N contexts of one Chromium and
prints one JSON line with the timings. Browser startup (Playwright driver + Chromium launch) is
inside the timed window, as it is for the MCP servers, whose browsers start on first use.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any

from playwright.async_api import Browser, async_playwright

from benchmarks.app import PASSWORD
from benchmarks.common import CHROMIUM, FLOOR_ARGS, step_timer

CART_LINE = "Blue teapot × 1"


async def flow(browser: Browser, base: str, user: str, calls: list[tuple[str, float]]) -> None:
    timed = step_timer(calls)

    async def open_page() -> Any:
        context = await browser.new_context()
        return await context.new_page()

    page = await timed("session", open_page())
    await timed("navigate", page.goto(base + "/login"))
    await timed("fill", page.get_by_label("Username").fill(user))
    await timed("fill", page.get_by_label("Password").fill(PASSWORD))
    await timed("click", page.get_by_role("button", name="Sign in").click())
    await timed("navigate", page.goto(base + "/product/1"))
    await timed("click", page.get_by_role("button", name="Add to cart").click())
    await timed("navigate", page.goto(base + "/cart"))
    text = await timed("read", page.get_by_test_id("cart-items").inner_text())
    png = await timed("screenshot", page.screenshot())
    if CART_LINE not in text or not png.startswith(b"\x89PNG"):
        raise RuntimeError(f"unexpected cart {text!r}")


async def run(base: str, n: int, tag: str) -> dict[str, Any]:
    calls: list[list[tuple[str, float]]] = [[] for _ in range(n)]
    started = time.perf_counter()
    pw = await async_playwright().start()
    browser = await pw.chromium.launch(
        executable_path=CHROMIUM, headless=True, args=list(FLOOR_ARGS), timeout=60_000
    )
    launched = time.perf_counter()
    results = await asyncio.gather(
        *(flow(browser, base, f"{tag}-{i}", calls[i]) for i in range(n)), return_exceptions=True
    )
    wall = time.perf_counter() - started
    errors = [f"{type(r).__name__}: {r}" for r in results if isinstance(r, BaseException)]
    await browser.close()
    await pw.stop()
    return {
        "wall_s": wall,
        "startup_s": launched - started,
        "calls": [c for per_flow in calls for c in per_flow],
        "errors": errors,
        "users": [f"{tag}-{i}" for i in range(n)],
    }


def main() -> int:
    base, n, tag = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    print("ready", flush=True)
    sys.stdin.readline()
    try:
        result = asyncio.run(run(base, n, tag))
    except Exception as exc:  # report, never hang the orchestrator
        result = {
            "wall_s": None,
            "startup_s": None,
            "calls": [],
            "errors": [f"{type(exc).__name__}: {str(exc)[:300]}"],
            "users": [f"{tag}-{i}" for i in range(n)],
        }
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
