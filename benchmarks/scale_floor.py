"""The floor of the scale benchmark: its flows and its probe straight through Playwright, no MCP.

Run as a child process by ``benchmarks.scale`` (so that its PSS is measured alone). Protocol:
``python -m benchmarks.scale_floor BASE_URL N TAG EVERY_S TIMEOUT_MS``. Prints ``ready`` once
Chromium runs and the probe page has opened ``/login`` (and its idle latencies are taken), waits
for one line on stdin, then runs N flows in N contexts of one Chromium (new context + page,
``goto /login``, fill Username and Password, click "Sign in", ``aria_snapshot`` of the body,
``inner_text`` of the body) while the probe page's ``title()`` is called every EVERY_S (open
loop, latency from when due) and a second probe page's ``title()`` closed loop (the next call
when the previous answered); prints one JSON line. The binary is the benchmark's
(``BENCH_CHROMIUM``).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any

from playwright.async_api import Browser, Page, async_playwright

from benchmarks.app import PASSWORD
from benchmarks.common import CHROMIUM, FLOOR_ARGS, step_timer

TIMEOUT_MS = [30_000.0]  # per call, as the BrowserMesh server's budget in the same run


async def flow(browser: Browser, base: str, user: str, calls: list[tuple[str, float]]) -> None:
    timed = step_timer(calls)

    async def open_page() -> Page:
        context = await browser.new_context()
        context.set_default_timeout(TIMEOUT_MS[0])
        context.set_default_navigation_timeout(TIMEOUT_MS[0])
        return await context.new_page()

    page = await timed("session", open_page())
    await timed("navigate", page.goto(base + "/login"))
    await timed("fill", page.get_by_label("Username").fill(user))
    await timed("fill", page.get_by_label("Password").fill(PASSWORD))
    await timed("click", page.get_by_role("button", name="Sign in").click())
    await timed("snapshot", page.locator("body").aria_snapshot())
    text = await timed("read", page.locator("body").inner_text())
    if f"Signed in as {user}" not in text:
        raise RuntimeError(f"not signed in: {text[:200]!r}")


async def probe(page: Page, every_s: float, stop: asyncio.Event) -> list[float]:
    latencies: list[float] = []

    async def one(due: float) -> None:
        await page.title()
        latencies.append((time.perf_counter() - due) * 1000)

    tasks = []
    due = time.perf_counter()
    while not stop.is_set():
        tasks.append(asyncio.create_task(one(due)))
        due += every_s
        await asyncio.sleep(max(0.0, due - time.perf_counter()))
    await asyncio.gather(*tasks)
    return latencies


async def paced_probe(page: Page, every_s: float, stop: asyncio.Event) -> list[float]:
    """Closed loop: the next ``title()`` when the previous answered, at most every ``every_s``."""
    latencies: list[float] = []
    while not stop.is_set():
        sent = time.perf_counter()
        await page.title()
        latencies.append((time.perf_counter() - sent) * 1000)
        await asyncio.sleep(max(0.0, sent + every_s - time.perf_counter()))
    return latencies


async def probes(page: Page, paced: Page, every_s: float, seconds: float) -> Any:
    stop = asyncio.Event()
    task = asyncio.create_task(probe(page, every_s, stop))
    task2 = asyncio.create_task(paced_probe(paced, every_s, stop))
    await asyncio.sleep(seconds)
    stop.set()
    return await task, await task2


async def run(base: str, n: int, tag: str, every_s: float, timeout_ms: float) -> dict[str, Any]:
    TIMEOUT_MS[0] = timeout_ms
    users = [f"{tag}-{i}" for i in range(n)]
    calls: list[list[tuple[str, float]]] = [[] for _ in range(n)]
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=list(FLOOR_ARGS), timeout=60_000
        )
        context = await browser.new_context()
        page = await context.new_page()
        await page.goto(base + "/login")
        paced_context = await browser.new_context()
        paced_page = await paced_context.new_page()
        await paced_page.goto(base + "/login")
        await probes(page, paced_page, every_s, 0.5)  # warm-up
        idle, paced_idle = await probes(page, paced_page, every_s, 3.0)
        print("ready", flush=True)
        await asyncio.to_thread(sys.stdin.readline)
        stop = asyncio.Event()
        started = time.perf_counter()
        task = asyncio.create_task(probe(page, every_s, stop))
        task2 = asyncio.create_task(paced_probe(paced_page, every_s, stop))
        results = await asyncio.gather(
            *(flow(browser, base, users[i], calls[i]) for i in range(n)), return_exceptions=True
        )
        wall = time.perf_counter() - started
        stop.set()
        loaded = await task
        paced = await task2
        await browser.close()
    return {
        "wall_s": wall,
        "idle": idle,
        "loaded": loaded,
        "paced": paced,
        "paced_idle": paced_idle,
        "calls": [c for per in calls for c in per],
        "ok_users": [u for u, r in zip(users, results, strict=True) if r is None],
        "errors": [f"{type(r).__name__}: {str(r)[:300]}" for r in results if r is not None],
    }


def main() -> int:
    base, n, tag = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    every_s, timeout_ms = float(sys.argv[4]), float(sys.argv[5])
    try:
        result = asyncio.run(run(base, n, tag, every_s, timeout_ms))
    except Exception as exc:  # report, never hang the orchestrator
        print("ready", flush=True)
        result = {"error": f"{type(exc).__name__}: {str(exc)[:300]}"}
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
