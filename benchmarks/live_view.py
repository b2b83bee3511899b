"""What the live view costs (issue 21): the N = 8 multisession workload with nobody watching
against the same with one viewer consuming every picture.

One ``python -m browsermesh --transport http`` server (loopback, no token file: the principal
``local``), one MCP SDK client over Streamable HTTP. A warm-up flow launches Chromium first.
Then each round runs the workload twice, in alternating order so drift in machine load hits
both alike:

- ``unwatched``: N concurrent flows of ``benchmarks.multisession.mesh_flow`` (sign in, product,
  add to cart, cart, read, screenshot), nobody on ``/view``: no screencast runs;
- ``watched``: the same with one viewer on ``/view/events`` for the whole round (an SSE client
  that reads and decodes every event, so every session's pictures are produced and sent).

Reported: each mode's wall time (median over rounds), the median of the per-round
watched / unwatched ratios (the issue allows at most 1.10), the CPU time the server's whole
process tree used in each round (less sensitive to other work on a shared machine than wall
time) with its ratio, and what the viewer received (frames, bytes). Sessions are closed
between rounds, outside the timing.

Run: ``python -m benchmarks.live_view [--n 8] [--rounds 5]``; writes
``benchmarks/results/live_view.{md,json}``.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass
from typing import Any
from urllib.parse import urlsplit

from benchmarks.app import ShopApp
from benchmarks.common import (
    CHROMIUM,
    REPO,
    browsermesh_env,
    median,
    paired_cli,
)
from benchmarks.multisession import mesh_flow
from benchmarks.pss import descendants, kind_of, process_table
from browsermesh.model.tasks import TaskOwner

GOAL = 1.10
MODES = ("unwatched", "watched")


@dataclass
class Round:
    mode: str
    rep: int
    wall_s: float
    cpu_s: float  # CPU time of the server's whole tree (Python, driver, Chromium) in the round
    cpu_by_kind: dict[str, float]
    frames: int = 0
    frame_bytes: int = 0
    states: int = 0


def tree_cpu_s(root: int) -> dict[int, tuple[str, float]]:
    """pid -> (kind, CPU seconds used so far, waited-for children included) for `root` and
    every process below it: CPU time is less noisy than wall time on a shared machine."""
    table = process_table()
    out: dict[int, tuple[str, float]] = {}
    for pid in descendants([root], table):
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
            ticks = sum(int(x) for x in fields[11:15])
        except (OSError, ValueError, IndexError):
            continue  # it ended meanwhile
        out[pid] = (kind_of(table[pid][1]), ticks / os.sysconf("SC_CLK_TCK"))
    return out


def _delta(
    after: dict[int, tuple[str, float]], before: dict[int, tuple[str, float]]
) -> dict[str, float]:
    """CPU seconds by kind between two readings, over the processes alive at the second (a
    process that ended in between is not counted: the workload's sessions outlive a round)."""
    by_kind: dict[str, float] = {}
    for pid, (kind, seconds) in after.items():
        used = seconds - before.get(pid, (kind, 0.0))[1]
        by_kind[kind] = by_kind.get(kind, 0.0) + used
    return {k: round(v, 2) for k, v in sorted(by_kind.items())}


def start_server() -> tuple[subprocess.Popen[str], str]:
    """The HTTP server and its base URL (read from its ``view.ready`` line)."""
    args = ["-m", "browsermesh", "--transport", "http", "--port", "0", "--headless"]
    args += ["--no-persistence", "--log-level", "warn", "--browser-path", CHROMIUM]
    env = {**os.environ, **browsermesh_env()}
    env = {k: v for k, v in env.items() if not k.startswith("BROWSERMESH_")}
    proc = subprocess.Popen(
        [sys.executable, *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=str(REPO),
        env=env,
    )
    stderr = proc.stderr
    assert stderr is not None
    for line in stderr:
        if '"view.ready"' in line:  # printed at start unless --log-level silent
            port = urlsplit(json.loads(line)["url"]).port
            # Whatever the server writes later must not fill the pipe: drain it on a thread.
            threading.Thread(target=stderr.read, daemon=True).start()
            return proc, f"http://127.0.0.1:{port}"
    raise RuntimeError("the server exited before listening")


class Viewer:
    """An SSE client on ``/view/events`` that reads and decodes everything it is sent."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.frames = 0
        self.frame_bytes = 0
        self.states = 0
        self.connected = asyncio.Event()

    async def run(self) -> None:
        import httpx2

        async with (
            httpx2.AsyncClient(trust_env=False, timeout=None) as http,
            http.stream("GET", self.base + "/view/events") as stream,
        ):
            stream.raise_for_status()
            self.connected.set()
            kind = ""
            async for line in stream.aiter_lines():
                if line.startswith("event: "):
                    kind = line[7:]
                elif line.startswith("data: "):
                    data = json.loads(line[6:])
                    if kind == "frame":
                        self.frames += 1
                        self.frame_bytes += len(data["data"])
                        self.framed(data)
                    else:
                        self.states += 1

    def framed(self, frame: dict[str, Any]) -> None:
        """One picture arrived (subclasses count their own)."""


async def one_round(
    client: Any, app: ShopApp, server: int, base: str, mode: str, n: int, rep: int
) -> Round:
    users = [f"lv{rep}{mode[0]}-{i}" for i in range(n)]
    calls: list[list[tuple[str, float]]] = [[] for _ in range(n)]
    viewer = Viewer(base) if mode == "watched" else None
    owner = TaskOwner()
    try:
        if viewer is not None:
            owner.spawn(viewer.run())
            await asyncio.wait_for(viewer.connected.wait(), 10)
        cpu = tree_cpu_s(server)
        started = time.perf_counter()
        sids = await asyncio.gather(
            *(mesh_flow(client, app.base_url, users[i], calls[i]) for i in range(n))
        )
        wall = time.perf_counter() - started
        by_kind = _delta(tree_cpu_s(server), cpu)
    finally:
        await owner.aclose()
    for sid in sids:
        await client.call_tool("browser_session_close", {"sessionId": sid})
    bad = [u for u in users if app.cart(u) != {1: 1}]
    if bad:
        raise RuntimeError(f"unverified flows: {bad}")
    total = round(sum(by_kind.values()), 2)
    if viewer is None:
        return Round(mode, rep, wall, total, by_kind)
    return Round(mode, rep, wall, total, by_kind, viewer.frames, viewer.frame_bytes, viewer.states)


async def run_all(n: int, rounds: int) -> list[Round]:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    proc, base = start_server()
    results: list[Round] = []
    try:
        with ShopApp() as app:
            http = httpx2.AsyncClient(trust_env=False, timeout=httpx2.Timeout(120, read=300))
            async with Client(streamable_http_client(base + "/mcp", http_client=http)) as client:
                warm: list[tuple[str, float]] = []
                sid = await mesh_flow(client, app.base_url, "warmup", warm)
                await client.call_tool("browser_session_close", {"sessionId": sid})
                for rep in range(rounds):
                    order = MODES if rep % 2 == 0 else tuple(reversed(MODES))
                    for mode in order:
                        result = await one_round(client, app, proc.pid, base, mode, n, rep)
                        print(
                            f"round {rep} {mode}: {result.wall_s:.2f} s wall, "
                            f"{result.cpu_s:.2f} s CPU {result.cpu_by_kind}, "
                            f"{result.frames} frames",
                            file=sys.stderr,
                            flush=True,
                        )
                        results.append(result)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    return results


def summarize(results: list[Round], n: int) -> dict[str, Any]:
    by_rep: dict[int, dict[str, Round]] = {}
    for r in results:
        by_rep.setdefault(r.rep, {})[r.mode] = r
    pairs = [d for d in by_rep.values() if len(d) == 2]
    ratios = [d["watched"].wall_s / d["unwatched"].wall_s for d in pairs]
    cpu_ratios = [d["watched"].cpu_s / d["unwatched"].cpu_s for d in pairs]
    walls = {m: median([r.wall_s for r in results if r.mode == m]) for m in MODES}
    cpus = {m: median([r.cpu_s for r in results if r.mode == m]) for m in MODES}
    watched = [r for r in results if r.mode == "watched"]
    return {
        "n": n,
        "rounds": len(by_rep),
        "wall_s": {m: round(v, 3) for m, v in walls.items()},
        "ratios": [round(x, 3) for x in ratios],
        "ratio_median": round(median(ratios), 3),
        "cpu_s": {m: round(v, 2) for m, v in cpus.items()},
        "cpu_ratios": [round(x, 3) for x in cpu_ratios],
        "cpu_ratio_median": round(median(cpu_ratios), 3),
        "goal": GOAL,
        "met": median(ratios) <= GOAL,
        "frames_per_round": median([r.frames for r in watched]),
        "frame_kib_per_round": round(median([r.frame_bytes for r in watched]) / 1024, 1),
        "chromium": CHROMIUM,
        "runs": [asdict(r) for r in results],
    }


def render(summary: dict[str, Any]) -> str:
    rows = [
        "| mode | wall time (median) | server tree CPU (median) |",
        "|---|---|---|",
        *(f"| {m} | {summary['wall_s'][m]:.2f} s | {summary['cpu_s'][m]:.2f} s |" for m in MODES),
    ]
    return "\n".join(
        [
            f"# Live view cost (N = {summary['n']}, {summary['rounds']} rounds)",
            "",
            *rows,
            "",
            f"Watched / unwatched wall time, median of per-round ratios: "
            f"**{summary['ratio_median']:.3f}** (goal ≤ {GOAL}; rounds: "
            f"{', '.join(f'{x:.3f}' for x in summary['ratios'])}).",
            f"Server tree CPU (Python server, Playwright driver, Chromium), watched / unwatched, "
            f"median of per-round ratios: {summary['cpu_ratio_median']:.3f}.",
            f"The viewer received {summary['frames_per_round']} frames "
            f"({summary['frame_kib_per_round']} KiB of base64 JPEG) per watched round.",
            f"Chromium: `{summary['chromium']}`.",
            "",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    def measure(n: int, rounds: int) -> dict[str, Any]:
        return summarize(asyncio.run(run_all(n, rounds)), n)

    return 0 if paired_cli("live_view", measure, render, rounds=5, argv=argv)["met"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
