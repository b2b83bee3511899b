"""What recording costs (issue 20): the demo's buyer-and-admin scenario with and without the
`testing` profile, side by side.

With the profile every session records its steps, and each action on a ref or locator first
asks the engine to describe its element (one evaluate per candidate locator). Each round runs
the scenario once on a server without the profile and once on a server with it (the order
alternates between rounds, so drift in machine load hits both alike), each through the MCP
client in process on its own real-Chromium runtime; the server with the profile also exports
the two sessions. Reported: the median wall time of a scenario per mode, the median of the
paired with/without ratios, and the median export time and size.

Run: ``python -m benchmarks.recording [--rounds N]``; writes
``benchmarks/results/recording.{md,json}``.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

from mcp import Client

from benchmarks.common import RESULTS, median, write_json
from browsermesh.config import default_config
from browsermesh.demo.scenario import _Scenario
from browsermesh.demo.shop import DemoShop
from browsermesh.factory import create_runtime
from browsermesh.mcp.server import create_server

PROFILES = {
    "default": ("core", "observability", "persistence", "files"),
    "testing": ("core", "observability", "persistence", "files", "testing"),
}


async def one(mode: str, shop: DemoShop, data: Path) -> dict[str, Any]:
    """One scenario on a fresh runtime in `mode`: its wall time, and the export's."""
    config = default_config(headless=True, data_dir=data / mode, tools=PROFILES[mode])
    runtime = create_runtime(config)
    try:
        async with Client(create_server(runtime)) as client:
            scenario = _Scenario(client, shop)
            started = time.perf_counter()
            await scenario.run()
            wall = time.perf_counter() - started
            out: dict[str, Any] = {"mode": mode, "wall_s": wall}
            if mode == "testing":
                ids = [scenario.buyer.session_id, scenario.admin.session_id]
                started = time.perf_counter()
                result = await client.call_tool("browser_test_export", {"sessionIds": ids})
                out["export_s"] = time.perf_counter() - started
                data_out = result.structured_content or {}
                out["export_chars"] = len(str(data_out.get("code", "")))
                out["steps"] = data_out.get("steps")
            return out
    finally:
        await runtime.shutdown()


async def run(rounds: int) -> dict[str, Any]:
    samples: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp, DemoShop() as shop:
        await one("default", shop, Path(tmp))  # warm-up: the first launch pays for the disk
        for k in range(rounds):
            order = ("default", "testing") if k % 2 == 0 else ("testing", "default")
            pair = {mode: await one(mode, shop, Path(tmp)) for mode in order}
            samples.append(pair)
    walls = {m: median([p[m]["wall_s"] for p in samples]) for m in PROFILES}
    ratios = [p["testing"]["wall_s"] / p["default"]["wall_s"] for p in samples]
    return {
        "rounds": rounds,
        "median_wall_s": walls,
        "median_ratio_testing_over_default": median(ratios),
        "median_export_s": median([p["testing"]["export_s"] for p in samples]),
        "export_chars": samples[-1]["testing"]["export_chars"],
        "steps": samples[-1]["testing"]["steps"],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    result = asyncio.run(run(args.rounds))
    write_json(RESULTS / "recording.json", result)
    lines = [
        "# Recording cost (issue 20)",
        "",
        f"Demo scenario (buyer and admin), {result['rounds']} paired rounds.",
        "",
        "| mode | median wall (s) |",
        "| --- | --- |",
        *(f"| {m} | {w:.3f} |" for m, w in result["median_wall_s"].items()),
        "",
        f"Median ratio testing/default: {result['median_ratio_testing_over_default']:.3f}.",
        f"Export: {result['steps']} steps, {result['export_chars']} characters, "
        f"median {result['median_export_s'] * 1000:.1f} ms.",
    ]
    (RESULTS / "recording.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
