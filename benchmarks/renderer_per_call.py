"""Renderer CPU per call, BrowserMesh's runtime against plain Playwright (issue 33).

One BrowserMesh session (the real runtime and engine, in process, no MCP) and one plain
Playwright page, each in its own headless-shell Chromium, on the loopback shop. For each kind of
call (`browser_navigate` vs `goto`, `browser_fill` vs `fill`, a click that does not navigate,
`browser_get_title` vs `title()`), 40 sequential calls on one, then 40 on the other, three
rounds alternating; the CPU of every Chromium renderer under this process (`/proc`) over each
batch, per call, median of the rounds. Sequential calls on an otherwise idle machine: what one
call costs the page, not a load test.

``--without keys`` leaves out the landing's key lines (the ARIA tree a navigation reads);
``--without watch`` runs element actions without the change watch: what each costs, for
`benchmarks/README.md`. Not run by ``run.sh``:
``python -m benchmarks.renderer_per_call [--calls 40] [--without keys|watch]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from playwright.async_api import async_playwright

from benchmarks.app import ShopApp
from benchmarks.common import FLOOR_ARGS, binary_path, md_table
from benchmarks.pss import _cpu_ticks, descendants, kind_of, process_table
from browsermesh.config import default_config
from browsermesh.factory import create_runtime
from browsermesh.runtime.calls import PageCall
from browsermesh.runtime.runtime import LOCAL_PRINCIPAL

Call = Callable[[int], Awaitable[Any]]


def renderer_ms() -> float:
    """CPU ms so far of every Chromium renderer under this process."""
    table = process_table()
    total = 0
    for pid in descendants([os.getpid()], table):
        if pid in table and kind_of(table[pid][1]) == "chromium renderer":
            ticks = _cpu_ticks(pid)
            total += sum(ticks) if ticks else 0
    return total * 1000 / os.sysconf("SC_CLK_TCK")


def _leave_out(what: str) -> None:
    """Switch one part off for the whole run (module-level replacement, this process only)."""
    if what == "keys":
        from browsermesh.engine import landing

        async def no_keys(*_: Any, **__: Any) -> list[str]:
            return []

        landing._keys = no_keys
    elif what == "watch":
        from browsermesh.engine import elements
        from browsermesh.engine.playwright_engine import PlaywrightEngine

        async def act(self: Any, page: Any, target: Any, op: Any, arg: Any, ctx: Any) -> Any:
            call = elements.element_call(op, arg)
            await elements.on_target(page.page, page.refs, target, ctx, op, call)
            return {}, {}

        PlaywrightEngine.act = act  # type: ignore[method-assign]


async def measure(calls: int, rounds: int) -> list[tuple[str, float, float]]:
    app = ShopApp()
    app.start()
    binary = binary_path("headless-shell")
    rows: list[tuple[str, float, float]] = []
    try:
        with tempfile.TemporaryDirectory() as data:
            config = default_config(headless=True, data_dir=Path(data), browser_path=binary)
            runtime = create_runtime(config)
            async with async_playwright() as pw:
                browser = await pw.chromium.launch(
                    executable_path=binary, args=list(FLOOR_ARGS), headless=True
                )
                try:
                    _, view, page_id = await runtime.create_session(LOCAL_PRINCIPAL)
                    at = PageCall(
                        principal=LOCAL_PRINCIPAL,
                        session_id=view["sessionId"],
                        page_id=page_id,
                        timeout_ms=30_000,
                    )
                    page = await (await browser.new_context()).new_page()
                    user = {"strategy": "label", "value": "Username"}

                    def fill(i: int) -> Awaitable[Any]:
                        args = {"locator": user, "value": f"u{i}"}
                        return runtime.element_action(at, "fill", args, f"u{i}")

                    kinds: list[tuple[str, str, Call, Call]] = [
                        (
                            "navigate",
                            "/product/1",
                            lambda i: runtime.navigate(at, app.url("/product/1")),
                            lambda i: page.goto(app.url("/product/1")),
                        ),
                        (
                            "fill",
                            "/login",
                            fill,
                            lambda i: page.get_by_label("Username").fill(f"u{i}"),
                        ),
                        (
                            "click (no navigation)",
                            "/login",
                            lambda i: runtime.element_action(at, "click", {"locator": user}, None),
                            lambda i: page.get_by_label("Username").click(),
                        ),
                        (
                            "get_title",
                            "/login",
                            lambda i: runtime.get_title(at),
                            lambda i: page.title(),
                        ),
                    ]
                    for name, path, mesh, floor in kinds:
                        await runtime.navigate(at, app.url(path))
                        await page.goto(app.url(path))
                        per: dict[str, list[float]] = {"mesh": [], "floor": []}
                        for _ in range(rounds):
                            for way, fn in (("mesh", mesh), ("floor", floor)):
                                before = renderer_ms()
                                for i in range(calls):
                                    await fn(i)
                                per[way].append((renderer_ms() - before) / calls)
                        rows.append(
                            (name, statistics.median(per["mesh"]), statistics.median(per["floor"]))
                        )
                finally:
                    await runtime.shutdown()
                    await browser.close()
    finally:
        app.stop()
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.renderer_per_call")
    parser.add_argument("--calls", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--without", choices=("keys", "watch"), default=None)
    args = parser.parse_args(argv)
    if args.without:
        _leave_out(args.without)
    rows = asyncio.run(measure(args.calls, args.rounds))
    title = "Renderer CPU per call (ms)" + (f", without {args.without}" if args.without else "")
    print(title + "\n")
    print(
        md_table(
            ["call", "BrowserMesh", "Playwright", "ratio"],
            [(n, f"{m:.2f}", f"{f:.2f}", f"{m / f:.2f}" if f else "—") for n, m, f in rows],
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
