"""The fleet's forwarding cost (issue 37): three BrowserMesh replicas on loopback with a real
`redis-server` and a round-robin balancer (tests/support/fleet_cluster.py), the real MCP SDK
client over Streamable HTTP (the sessionless 2026-07-28 protocol), real Chromium.

1. `browser_get_url` on an open page, 200 calls each way, interleaved (owner, forwarded, owner,
   ...): through the replica that holds the session vs through another replica, which forwards
   it over the fleet's channel. p50/p95/max.
2. N = 8 concurrent shop flows (benchmarks/multisession.py `mesh_flow`: sign in, product, add to
   cart, read the cart, screenshot): every call through the balancer (round robin over the
   three replicas: sessions are made where their create lands, most calls are forwarded) vs
   every call to one replica. Wall time, and CPU time of every replica process tree (the
   replicas and their Chromium) over the run, from /proc.

Run: ``python -m benchmarks.fleet``; writes ``benchmarks/results/fleet.{md,json}``.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from tests.support.fleet_cluster import FleetCluster, running_cluster
from tests.support.http_transport import TOKENS

from benchmarks.app import ShopApp
from benchmarks.common import RESULTS, environment, latency_stats, md_table, write_json
from benchmarks.multisession import mesh_flow

CALLS = 200
N = 8
REPEATS = 3
_TICKS = os.sysconf("SC_CLK_TCK")


def tree_cpu_s(pid: int) -> float:
    """User + system CPU seconds of `pid` and every live descendant (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    total, todo = 0.0, [pid]
    while todo:
        current = todo.pop()
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # utime, stime, cutime, cstime: the reaped children count too (Chromium's helpers).
        total += sum(int(v) for v in fields[11:15]) / _TICKS
        todo.extend(children.get(current, []))
    return total


def fleet_cpu_s(cluster: FleetCluster) -> float:
    return sum(tree_cpu_s(r.process.proc.pid) for r in cluster.replicas if r.running)


class Connected:
    """An MCP client over Streamable HTTP with a principal's token (alice's by default)."""

    def __init__(self, url: str, principal: str = "alice") -> None:
        self.url = url
        self._http = httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {TOKENS[principal]}"},
            timeout=httpx2.Timeout(60, read=120),
        )
        self._client: Client | None = None

    async def __aenter__(self) -> Client:
        self._client = Client(streamable_http_client(self.url, http_client=self._http))
        return await self._client.__aenter__()

    async def __aexit__(self, *exc: object) -> None:
        assert self._client is not None
        await self._client.__aexit__(None, None, None)
        await self._http.aclose()


async def get_url_latency(cluster: FleetCluster, app: ShopApp) -> dict[str, Any]:
    """`browser_get_url` through the owner vs through another replica, interleaved."""
    owner, other = cluster.replicas[0], cluster.replicas[1]
    async with Connected(owner.url) as direct, Connected(other.url) as forwarded:
        created = await direct.call_tool("browser_session_create", {})
        data = created.structured_content or {}
        addr = {"sessionId": data["session"]["sessionId"], "pageId": data["initialPage"]["pageId"]}
        await direct.call_tool("browser_navigate", {**addr, "url": app.base_url + "/"})
        samples: dict[str, list[float]] = {"owner": [], "forwarded": []}
        for _ in range(20):  # warm both paths (connections, the validator)
            await direct.call_tool("browser_get_url", addr)
            await forwarded.call_tool("browser_get_url", addr)
        for _ in range(CALLS):
            for name, client in (("owner", direct), ("forwarded", forwarded)):
                started = time.perf_counter()
                result = await client.call_tool("browser_get_url", addr)
                samples[name].append((time.perf_counter() - started) * 1000)
                assert not result.is_error
        await direct.call_tool("browser_session_close", {"sessionId": addr["sessionId"]})
    return {name: latency_stats(values) for name, values in samples.items()}


async def flows(cluster: FleetCluster, app: ShopApp, url: str, tag: str) -> dict[str, Any]:
    """N concurrent shop flows with every call to `url`: wall and the fleet's CPU."""
    async with Connected(url) as client:
        cpu_before = fleet_cpu_s(cluster)
        started = time.perf_counter()
        calls: list[list[tuple[str, float]]] = [[] for _ in range(N)]
        results = await asyncio.gather(
            *(mesh_flow(client, app.base_url, f"{tag}-{i}", calls[i]) for i in range(N)),
            return_exceptions=True,
        )
        wall = time.perf_counter() - started
        cpu = fleet_cpu_s(cluster) - cpu_before
        ok = [r for r in results if isinstance(r, str)]
        for session_id in ok:
            await client.call_tool("browser_session_close", {"sessionId": session_id})
    return {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "ok": len(ok)}


async def main_async() -> dict[str, Any]:
    with ShopApp() as app, tempfile.TemporaryDirectory() as tmp:
        async with running_cluster(Path(tmp), replicas=3, lease_ms=15_000) as cluster:
            latency = await get_url_latency(cluster, app)
            runs: dict[str, list[dict[str, Any]]] = {"one replica": [], "three, round robin": []}
            for rep in range(REPEATS):  # paired, alternating
                runs["one replica"].append(
                    await flows(cluster, app, cluster.replicas[0].url, f"one{rep}")
                )
                runs["three, round robin"].append(
                    await flows(cluster, app, cluster.url, f"rr{rep}")
                )
    return {"get_url": latency, "flows": runs, "environment": environment()}


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def report(data: dict[str, Any]) -> str:
    latency = data["get_url"]
    rows = [[name, s["n"], s["p50_ms"], s["p95_ms"], s["max_ms"]] for name, s in latency.items()]
    flow_rows = []
    for name, runs in data["flows"].items():
        walls = [r["wall_s"] for r in runs]
        cpus = [r["cpu_s"] for r in runs]
        oks = sum(r["ok"] for r in runs)
        flow_rows.append(
            [name, f"{_median(walls):.2f}", f"{_median(cpus):.2f}", f"{oks}/{N * len(runs)}"]
        )
    return (
        "# Fleet: the forwarding cost (issue 37)\n\n"
        "Three replicas on loopback, one redis-server, a round-robin balancer in the benchmark's "
        "process; real Chromium; the MCP SDK client over Streamable HTTP (2026-07-28, "
        "sessionless). Run: `python -m benchmarks.fleet`.\n\n"
        f"## `browser_get_url` ({CALLS} calls each, interleaved, after 20 warm-up calls)\n\n"
        + md_table(["path", "n", "p50 ms", "p95 ms", "max ms"], rows)
        + f"\n\n## {N} concurrent shop flows (median of {REPEATS} paired runs)\n\n"
        "Every call to one replica, or through the balancer (round robin over three: each "
        "session lives where its create landed; the other calls are forwarded). CPU: every "
        "replica process tree (the replicas and their Chromium), user + system, over the run.\n\n"
        + md_table(["route", "wall s", "CPU s", "flows OK"], flow_rows)
        + "\n"
    )


def main() -> int:
    data = asyncio.run(main_async())
    RESULTS.mkdir(parents=True, exist_ok=True)
    write_json(RESULTS / "fleet.json", data)
    (RESULTS / "fleet.md").write_text(report(data))
    print(report(data))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
