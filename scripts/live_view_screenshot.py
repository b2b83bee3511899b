"""Make docs/live-view.png: the live view showing the demo's two sessions (issue 21).

Starts the demo shop (`browsermesh.demo.shop`) and a headless ``browsermesh --transport http
--port 0`` (loopback, no token file: the principal ``local``), drives the demo's buyer and admin
sessions through the MCP SDK client exactly as ``browsermesh demo`` does (its scenario's steps),
then opens ``/view/`` in Chromium, waits until both sessions show a picture and takes the
screenshot. The sessions and the server are closed afterwards.

Run: ``python scripts/live_view_screenshot.py [--out docs/live-view.png]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import urlsplit

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from playwright.async_api import async_playwright

from browsermesh.config import default_config, find_chromium
from browsermesh.demo.scenario import _run_concurrently, _Scenario
from browsermesh.demo.shop import DemoShop

ROOT = Path(__file__).resolve().parents[1]


def start_server() -> tuple[subprocess.Popen[str], str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BROWSERMESH_")}
    env["PYTHONPATH"] = str(ROOT / "src")
    cmd = [sys.executable, "-m", "browsermesh", "--transport", "http", "--port", "0"]
    cmd += ["--headless", "--no-persistence", "--log-level", "warn"]
    proc = subprocess.Popen(
        cmd, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT
    )
    stderr = proc.stderr
    assert stderr is not None
    for line in stderr:
        if '"view.ready"' in line:  # printed at start unless --log-level silent
            port = urlsplit(json.loads(line)["url"]).port
            threading.Thread(target=stderr.read, daemon=True).start()
            return proc, f"http://127.0.0.1:{port}"
    raise RuntimeError("the server exited before listening")


async def shoot(out: Path) -> None:
    proc, base = start_server()
    try:
        with DemoShop() as shop:
            http = httpx2.AsyncClient(trust_env=False, timeout=httpx2.Timeout(60, read=120))
            async with Client(streamable_http_client(base + "/mcp", http_client=http)) as client:
                scenario = _Scenario(client, shop)
                await asyncio.gather(
                    scenario.create(scenario.buyer), scenario.create(scenario.admin)
                )
                await _run_concurrently(scenario.buyer_flow(), scenario.admin_flow())
                try:
                    await screenshot(base, out)
                finally:
                    await scenario.cleanup()
    finally:
        proc.terminate()
        proc.wait(timeout=30)


async def screenshot(base: str, out: Path) -> None:
    executable = find_chromium(default_config(headless=True), os.environ)
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=executable, headless=True)
        try:
            page = await browser.new_page(viewport={"width": 860, "height": 520})
            await page.goto(base + "/view/")
            await page.locator("article.card").nth(1).wait_for()
            await page.wait_for_function(
                "() => [...document.querySelectorAll('img.pic')].length === 2 && "
                "[...document.querySelectorAll('img.pic')].every(i => i.src.startsWith('data:'))"
            )
            await page.wait_for_timeout(1_500)  # let the newest frames of both pages land
            out.parent.mkdir(parents=True, exist_ok=True)
            await page.screenshot(path=str(out))
        finally:
            await browser.close()
    print(f"wrote {out}")


def main() -> int:
    parser = argparse.ArgumentParser(prog="python scripts/live_view_screenshot.py")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "live-view.png")
    args = parser.parse_args()
    asyncio.run(shoot(args.out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
