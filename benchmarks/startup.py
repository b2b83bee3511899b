"""Start-up: spawn -> `initialize` answered, for a fresh stdio server (issue 33).

The time from starting `python -m browsermesh` (stdio, headless, no persistence) to the reply to
`initialize`, as the SDK's stdio client sees it (`Client(..., mode="legacy")`: one handshake
round trip). Each round spawns, in turn:

- this checkout's server;
- with `--vs SRC` (a `src/` directory of another checkout, e.g. the base of a branch), that
  checkout's server on the same interpreter (a paired baseline: ratios are taken round by round);
- the SDK floor (`benchmarks/startup_floor.py`): the SDK's low-level `Server` with no tools over
  stdio, the least any server on this SDK pays.

Prints the median, min and max of each and the median of the paired ratios. Run:
``python -m benchmarks.startup [--rounds 10] [--vs /path/to/other/src]`` (not run by run.sh).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

from benchmarks.common import REPO, browsermesh_args


async def spawn_to_initialize(args: list[str], src: Path) -> float:
    """Seconds from spawning `python args` (importing from `src`) to `initialize` answered."""
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable, args=args, env={"PYTHONPATH": str(src)}, cwd=str(REPO)
    )
    started = time.perf_counter()
    async with Client(params, mode="legacy"):
        return time.perf_counter() - started


async def measure(rounds: int, baseline: Path | None) -> dict[str, list[float]]:
    ways: dict[str, tuple[list[str], Path]] = {"this checkout": (browsermesh_args(), REPO / "src")}
    if baseline is not None:
        ways["baseline (--vs)"] = (browsermesh_args(), baseline)
    floor = str(Path(__file__).with_name("startup_floor.py"))
    ways["SDK floor"] = ([floor], REPO / "src")
    for args, src in ways.values():  # warm-up: bytecode caches, page cache
        await spawn_to_initialize(args, src)
    times: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(rounds):
        for name, (args, src) in ways.items():
            times[name].append(await spawn_to_initialize(args, src))
            await asyncio.sleep(0.2)  # let the previous server's exit settle
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--vs", type=Path, default=None, help="another checkout's src/")
    opts = parser.parse_args()
    times = asyncio.run(measure(opts.rounds, opts.vs))
    for name, samples in times.items():
        print(
            f"{name:16} median {statistics.median(samples):.3f} s"
            f"  min {min(samples):.3f}  max {max(samples):.3f}  (n={len(samples)})"
        )
    if "baseline (--vs)" in times:
        pairs = zip(times["this checkout"], times["baseline (--vs)"], strict=True)
        ratio = statistics.median(a / b for a, b in pairs)
        print(f"this checkout / baseline, median of paired ratios: {ratio:.3f}")


if __name__ == "__main__":
    main()
