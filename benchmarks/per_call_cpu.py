"""The BrowserMesh server's CPU per tool call, through a real stdio server (issue 33).

Spawns ``python -m browsermesh`` through the SDK ``Client`` as the other benchmarks do, opens one
session on the loopback shop, then for each of a few tools runs batches of sequential calls and
reads the server process's CPU time (user + system, every thread, from ``/proc/<pid>/stat``)
before and after each batch: CPU ms per call = the difference / the calls in the batch. The
median over the batches is printed per tool. The client runs in this process, so its own CPU is
not counted; the Chromium processes are not counted either (only the server's Python process).

Tools, cheapest first:

- ``browser_session_list``: no browser work at all, so this is the MCP layer alone (the SDK's
  stdio transport, JSON-RPC parsing, our envelope, JSON encoding);
- ``browser_get_url``: one page-addressed call through the runtime's queue, no Playwright round
  trip (the URL is known to the server);
- ``browser_get_title``: the same plus one Playwright round trip to Chromium.

With ``--flow`` (default on), also the issue's own measure: the multisession workload at N = 8
concurrent flows (``benchmarks.multisession.mesh_flow``), the server's CPU over the run / the calls
in it, median over ``--flow-reps`` runs.

Not a timed test and not run by ``run.sh``: ``python -m benchmarks.per_call_cpu [--calls 200]
[--batches 5] [--flow-reps 3] [--no-flow] [--json OUT]``. The clock tick is 10 ms, so a batch
should take well over a second of server CPU for a 1 % resolution (200 calls do).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.app import ShopApp
from benchmarks.common import browsermesh_params, md_table
from benchmarks.multisession import MESH_NEEDLE, mesh_flow
from benchmarks.pss import children_matching

CALL_TIMEOUT_S = 60.0
FLOW_N = 8


@dataclass
class ToolCost:
    """Per-call server CPU of one tool: each batch's ms per call, and their median."""

    tool: str
    batches_ms: list[float] = field(default_factory=list)

    @property
    def median_ms(self) -> float:
        return statistics.median(self.batches_ms) if self.batches_ms else float("nan")


def cpu_seconds(pid: int) -> float:
    """User + system CPU of process `pid` (all its threads, the exited ones included)."""
    with open(f"/proc/{pid}/stat", "rb") as fh:
        fields = fh.read().rsplit(b")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _checked(client: Any, name: str, args: dict[str, Any]) -> Any:
    result = await client.call_tool(name, args, read_timeout_seconds=CALL_TIMEOUT_S)
    if result.is_error:
        raise RuntimeError(f"{name} failed: {result.content[0].text[:300]}")
    return result


async def tool_cost(
    client: Any, pid: int, tool: str, args: dict[str, Any], calls: int, batches: int
) -> ToolCost:
    """`batches` batches of `calls` sequential calls of `tool`, after a short warm-up."""
    cost = ToolCost(tool)
    for _ in range(10):
        await _checked(client, tool, args)
    for _ in range(batches):
        before = cpu_seconds(pid)
        for _ in range(calls):
            await _checked(client, tool, args)
        cost.batches_ms.append(1000 * (cpu_seconds(pid) - before) / calls)
    return cost


async def flow_cost(client: Any, pid: int, base: str, reps: int) -> ToolCost:
    """The multisession workload at N = 8: server CPU over each run / its calls."""
    cost = ToolCost(f"N={FLOW_N} flow")
    await mesh_flow(client, base, "warmup", [])
    for rep in range(reps):
        calls: list[list[tuple[str, float]]] = [[] for _ in range(FLOW_N)]
        before = cpu_seconds(pid)
        sessions = await asyncio.gather(
            *(mesh_flow(client, base, f"cpu-{rep}-{i}", calls[i]) for i in range(FLOW_N))
        )
        spent = cpu_seconds(pid) - before
        cost.batches_ms.append(1000 * spent / sum(len(c) for c in calls))
        # Close outside the measured window, so every run starts from the same few sessions.
        for sid in sessions:
            await _checked(client, "browser_session_close", {"sessionId": sid})
    return cost


async def run(calls: int, batches: int, flow_reps: int) -> list[ToolCost]:
    from mcp import Client

    with ShopApp() as app:
        async with Client(browsermesh_params()) as client:
            found = children_matching(os.getpid(), MESH_NEEDLE.encode())
            if len(found) != 1:
                raise RuntimeError(f"expected one browsermesh server, found {found}")
            pid = found[0]
            created = await _checked(client, "browser_session_create", {"name": "cpu"})
            data = created.structured_content
            addr = {
                "sessionId": data["session"]["sessionId"],
                "pageId": data["initialPage"]["pageId"],
            }
            await _checked(client, "browser_navigate", {**addr, "url": app.base_url + "/login"})
            costs = [
                await tool_cost(client, pid, "browser_session_list", {}, calls, batches),
                await tool_cost(client, pid, "browser_get_url", addr, calls, batches),
                await tool_cost(client, pid, "browser_get_title", addr, calls, batches),
            ]
            await _checked(client, "browser_session_close", {"sessionId": addr["sessionId"]})
            if flow_reps > 0:
                costs.append(await flow_cost(client, pid, app.base_url, flow_reps))
    return costs


def render(costs: list[ToolCost], calls: int) -> str:
    rows = [
        [
            f"`{c.tool}`",
            f"{c.median_ms:.2f}",
            ", ".join(f"{b:.2f}" for b in c.batches_ms),
        ]
        for c in costs
    ]
    return "\n".join(
        [
            f"Server CPU per tool call (ms; batches of {calls} sequential calls, the flow per run)",
            "",
            md_table(["tool", "median ms/call", "batches"], rows),
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.per_call_cpu")
    parser.add_argument("--calls", type=int, default=200, help="calls per batch")
    parser.add_argument("--batches", type=int, default=5)
    parser.add_argument("--flow-reps", type=int, default=3, help="runs of the N=8 flow")
    parser.add_argument("--no-flow", action="store_true")
    parser.add_argument("--json", type=Path, default=None, help="also write the numbers here")
    args = parser.parse_args(argv)
    costs = asyncio.run(run(args.calls, args.batches, 0 if args.no_flow else args.flow_reps))
    print(render(costs, args.calls))
    if args.json is not None:
        payload = [{**asdict(c), "median_ms": c.median_ms} for c in costs]
        args.json.write_text(json.dumps(payload, indent=1) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
