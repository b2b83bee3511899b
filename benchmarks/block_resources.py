"""What ``contextSettings.blockResources`` saves on the buyer flow (issue 16 item 3).

The multisession buyer flow (sign in, open ``/product/1``, add to cart, open ``/cart``, read the
cart, take a screenshot) against the loopback shop with its optional assets on
(``ShopApp(assets=True)``: a web font on every page's heading and a 72 KB product photo), through
ONE ``python -m browsermesh`` stdio server. Each round runs ``--concurrency`` flows at once
without the setting and ``--concurrency`` flows with ``blockResources: ["image", "media",
"font"]`` (the order alternates between rounds so drift in machine load hits both alike).

Reported per mode: requests the shop answered and response body bytes it sent per flow (counted
by the shop itself), ``blocked`` ``requestFailed`` events per flow (read with ``browser_observe``
at the end of each flow), and the wall time of a round (median, and the median of the paired
with/without ratios).

Run: ``python -m benchmarks.block_resources`` (``--help`` for options); writes
``benchmarks/results/block_resources.{md,json}``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from benchmarks.app import PASSWORD, ShopApp
from benchmarks.common import CHROMIUM, RESULTS, browsermesh_params, median, write_json

BLOCK = ["image", "media", "font"]
MODES = ("off", "on")
CART_LINE = "Blue teapot × 1"
CALL_TIMEOUT_S = 120.0


@dataclass
class Round:
    mode: str
    flows: int
    wall_s: float
    requests: int
    body_bytes: int
    blocked_events: int
    errors: list[str] = field(default_factory=list)
    paths: dict[str, int] = field(default_factory=dict)


async def flow(client: Any, base: str, user: str, settings: dict[str, Any]) -> int:
    """One buyer flow in a new session; the number of its `blocked` requestFailed events."""

    async def call(name: str, args: dict[str, Any]) -> Any:
        result = await client.call_tool(name, args, read_timeout_seconds=CALL_TIMEOUT_S)
        if result.is_error:
            raise RuntimeError(f"{name}: {result.content[0].text[:300]}")
        return result.structured_content

    created = await call("browser_session_create", {"name": user, "contextSettings": settings})
    session_id = created["session"]["sessionId"]
    addr = {"sessionId": session_id, "pageId": created["initialPage"]["pageId"]}
    try:
        label, button = "label", {"strategy": "role", "value": "button"}
        await call("browser_navigate", {**addr, "url": base + "/login"})
        for name, value in (("Username", user), ("Password", PASSWORD)):
            locator = {"strategy": label, "value": name}
            await call("browser_fill", {**addr, "locator": locator, "value": value})
        await call("browser_click", {**addr, "locator": {**button, "name": "Sign in"}})
        await call("browser_navigate", {**addr, "url": base + "/product/1"})
        await call("browser_click", {**addr, "locator": {**button, "name": "Add to cart"}})
        await call("browser_navigate", {**addr, "url": base + "/cart"})
        cart = {"strategy": "testId", "value": "cart-items"}
        read = await call("browser_visible_text", {**addr, "locator": cart})
        await call("browser_screenshot", addr)
        if CART_LINE not in read["text"]:
            raise RuntimeError(f"unexpected cart {read['text']!r}")
        failed = await call("browser_observe", {**addr, "source": "requestFailed", "limit": 100})
        return sum(1 for e in failed.get("events", []) if e["failure"] == "blocked")
    finally:
        await call("browser_session_close", {"sessionId": addr["sessionId"]})


async def one_round(client: Any, app: ShopApp, mode: str, n: int, tag: str) -> Round:
    settings = {"blockResources": BLOCK} if mode == "on" else {}
    requests_before, bytes_before = app.served()
    paths_before = app.served_paths()
    started = time.perf_counter()
    results = await asyncio.gather(
        *(flow(client, app.base_url, f"{tag}-{i}", settings) for i in range(n)),
        return_exceptions=True,
    )
    wall = time.perf_counter() - started
    requests_after, bytes_after = app.served()
    errors = [f"{type(r).__name__}: {r}" for r in results if isinstance(r, BaseException)]
    return Round(
        mode,
        n,
        wall,
        requests_after - requests_before,
        bytes_after - bytes_before,
        sum(r for r in results if isinstance(r, int)),
        errors,
        dict(app.served_paths() - paths_before),
    )


async def run(args: argparse.Namespace) -> dict[str, Any]:
    from mcp import Client

    rounds: list[Round] = []
    with ShopApp(assets=True) as app:
        async with Client(browsermesh_params()) as client:
            # Warm-up: the first flow pays for launching Chromium; not measured.
            await one_round(client, app, "off", 1, "warm")
            for r in range(args.rounds):
                order = MODES if r % 2 == 0 else MODES[::-1]
                for mode in order:
                    done = await one_round(client, app, mode, args.concurrency, f"r{r}{mode}")
                    rounds.append(done)
                    print(asdict(done), file=sys.stderr)
    return summarize(rounds, args)


def summarize(rounds: list[Round], args: argparse.Namespace) -> dict[str, Any]:
    rows: dict[str, dict[str, Any]] = {}
    for mode in MODES:
        mine = [r for r in rounds if r.mode == mode and not r.errors]
        flows = sum(r.flows for r in mine) or 1
        rows[mode] = {
            "rounds": len(mine),
            "flows": flows,
            "requests_per_flow": sum(r.requests for r in mine) / flows,
            "kb_per_flow": sum(r.body_bytes for r in mine) / flows / 1024,
            "blocked_per_flow": sum(r.blocked_events for r in mine) / flows,
            "round_wall_s_median": median([r.wall_s for r in mine]) if mine else None,
        }
    offs = [r for r in rounds if r.mode == "off"]
    ons = [r for r in rounds if r.mode == "on"]
    pairs = [
        on.wall_s / off.wall_s
        for off, on in zip(offs, ons, strict=False)
        if not off.errors and not on.errors and off.wall_s > 0
    ]
    return {
        "chromium": CHROMIUM,
        "load_average_1m": os.getloadavg()[0],
        "concurrency": args.concurrency,
        "rounds": args.rounds,
        "block": BLOCK,
        "modes": rows,
        "paired_wall_ratio_median": median(pairs) if pairs else None,
        "errors": [e for r in rounds for e in r.errors],
        "runs": [asdict(r) for r in rounds],
    }


def render(data: dict[str, Any]) -> str:
    off, on = data["modes"]["off"], data["modes"]["on"]

    def fmt(value: Any, digits: int = 1) -> str:
        return "–" if value is None else f"{value:.{digits}f}"

    lines = [
        "# blockResources on the buyer flow",
        "",
        f"One BrowserMesh server, {data['concurrency']} concurrent flows per round, "
        f"{data['rounds']} rounds per mode, Chromium `{data['chromium']}`, load average "
        f"{data.get('load_average_1m', 0):.1f} at the end; shop with its assets "
        "(web font on every page, 72 KB product photo). Requests and bytes are what the shop "
        "answered (response bodies).",
        "",
        "| | requests / flow | KB / flow | `blocked` events / flow | round wall (median, s) |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, row in (("without", off), (f"blockResources {data['block']}", on)):
        lines.append(
            f"| {name} | {fmt(row['requests_per_flow'])} | {fmt(row['kb_per_flow'])} | "
            f"{fmt(row['blocked_per_flow'])} | {fmt(row['round_wall_s_median'], 2)} |"
        )
    lines += [
        "",
        f"Paired wall-time ratio with/without (median over rounds): "
        f"{fmt(data['paired_wall_ratio_median'], 2)}.",
    ]
    if data["errors"]:
        lines += ["", f"Errors: {len(data['errors'])} (first: {data['errors'][0]})"]
    return "\n".join(lines) + "\n"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", type=int, default=4, help="flows at once per round")
    parser.add_argument("--rounds", type=int, default=5, help="rounds per mode")
    parser.add_argument("--no-write", action="store_true", help="print only")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    data = asyncio.run(run(args))
    text = render(data)
    print(text)
    if not args.no_write:
        RESULTS.mkdir(parents=True, exist_ok=True)
        write_json(RESULTS / "block_resources.json", data)
        (RESULTS / "block_resources.md").write_text(text, encoding="utf-8")
    return 1 if data["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
