"""The live view across the fleet (issue 37 item 2, reference §37.9): what a viewer on one
replica gets of the sessions of the others, and what it costs. Three BrowserMesh replicas on
loopback with the view on, a real `redis-server` (tests/support/fleet_cluster.py), real
Chromium; alice has one session on each replica, each on a page that animates (so the pictures
keep changing), and watches through r1.

1. Joining: from opening ``/view/events`` on r1 to the first grid listing all three sessions,
   and to a picture of each.
2. Pictures: how many each page delivers to the viewer in `WATCH_S` seconds, r1's own page vs
   the two relayed ones; the CPU of each replica's process tree (the replica and its Chromium)
   over the same seconds.
3. A new session on r3: from its create's answer to its card in r1's grid (`NEW_SESSIONS` times).
4. Take-over input: ``POST /view/input`` (one pointer move) through r1 for r1's own session vs
   for r2's (relayed), `INPUTS` each, interleaved.

Run: ``python -m benchmarks.fleet_view``; writes ``benchmarks/results/fleet_view.{md,json}``.
"""

from __future__ import annotations

import asyncio
import secrets
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx2
from tests.fixtures.site import FixtureSite
from tests.support.fleet_cluster import FleetCluster, Replica, running_cluster
from tests.support.view_client import new_link, sign_in, view_events

from benchmarks.common import RESULTS, environment, latency_stats, md_table, write_json
from benchmarks.fleet import Connected, tree_cpu_s

WATCH_S = 10.0
NEW_SESSIONS = 5
INPUTS = 50
WAIT_S = 60.0
ANIMATED = """<!doctype html><title>Animated</title><h1 id=t>0</h1><script>
let n = 0; setInterval(() => { document.getElementById('t').textContent = ++n; }, 50);
</script>"""


class Watcher:
    """Reads r1's event stream in the background: when each session first showed in the grid
    and each page's pictures (count and first arrival)."""

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.shown: dict[str, float] = {}
        self.frames: dict[str, int] = {}
        self.first_frame: dict[str, float] = {}
        self.states = 0
        self.changed = asyncio.Event()

    async def run(self, http: httpx2.AsyncClient, replica: Replica, cookie: str) -> None:
        async for kind, data in view_events(http, replica, cookie):
            now = time.perf_counter() - self.started
            if kind == "state":
                self.states += 1
                for card in data["sessions"]:
                    self.shown.setdefault(card["sessionId"], now)
            elif kind == "frame":
                sid = data["sessionId"]
                self.frames[sid] = self.frames.get(sid, 0) + 1
                self.first_frame.setdefault(sid, now)
            self.changed.set()

    async def until(self, done: Any) -> float:
        """Wait (bounded) until `done()`; the seconds since the stream opened."""
        async with asyncio.timeout(WAIT_S):
            while not done():
                self.changed.clear()
                await self.changed.wait()
        return time.perf_counter() - self.started


async def _session(replica: Replica, url: str) -> tuple[str, str]:
    async with Connected(replica.url) as client:
        made = (await client.call_tool("browser_session_create", {})).structured_content or {}
        sid, pid = made["session"]["sessionId"], made["initialPage"]["pageId"]
        await client.call_tool("browser_navigate", {"sessionId": sid, "pageId": pid, "url": url})
    return sid, pid


async def _appears(watcher: Watcher, replica: Replica, principal: str) -> tuple[float, float]:
    """Create a session of `principal` on `replica`: milliseconds from sending the create to
    its card in `watcher`'s grid, and to the create's answer; the session is closed after."""
    async with Connected(replica.url, principal) as client:
        sent = time.perf_counter()
        made = await client.call_tool("browser_session_create", {})
        answered = (time.perf_counter() - sent) * 1000
        sid = (made.structured_content or {})["session"]["sessionId"]
        await watcher.until(lambda: sid in watcher.shown)
        shown = (watcher.shown[sid] + watcher.started - sent) * 1000
        await client.call_tool("browser_session_close", {"sessionId": sid})
    return shown, answered


async def _inputs(
    http: httpx2.AsyncClient, r1: Replica, cookie: str, targets: dict[str, tuple[str, str]]
) -> dict[str, Any]:
    headers = {"Origin": r1.base, "Cookie": cookie}
    viewer = secrets.token_hex(8)
    samples: dict[str, list[float]] = {name: [] for name in targets}
    for sid, pid in targets.values():
        hold = {"viewer": viewer, "sessionId": sid, "pageId": pid}
        assert (await http.post(r1.base + "/view/hold", json=hold, headers=headers)).is_success
    for n in range(INPUTS + 5):
        for name, (sid, _pid) in targets.items():
            move = [{"type": "move", "x": (n % 10) / 10, "y": 0.5}]
            body = {"viewer": viewer, "sessionId": sid, "events": move}
            started = time.perf_counter()
            answer = await http.post(r1.base + "/view/input", json=body, headers=headers)
            assert answer.status_code == 200, answer.text
            if n >= 5:  # the first few warm the connections
                samples[name].append((time.perf_counter() - started) * 1000)
    for sid, _pid in targets.values():
        body = {"viewer": viewer, "sessionId": sid}
        await http.post(r1.base + "/view/release", json=body, headers=headers)
    return {name: latency_stats(values) for name, values in samples.items()}


async def measure(cluster: FleetCluster, site: FixtureSite) -> dict[str, Any]:
    r1, r2, r3 = cluster.replicas
    url = site.url("/bench/animated")
    own = {r.replica_id: await _session(r, url) for r in (r1, r2, r3)}
    async with httpx2.AsyncClient(trust_env=False, timeout=httpx2.Timeout(30, read=120)) as http:
        login = await sign_in(http, r1, await new_link(r1, "alice"))
        cookie = "bm_view=" + login.cookies["bm_view"]
        watcher = Watcher()
        reader = asyncio.create_task(watcher.run(http, r1, cookie))
        try:
            ids = {sid for sid, _ in own.values()}
            grid_s = await watcher.until(lambda: ids <= set(watcher.shown))
            pictures_s = await watcher.until(lambda: ids <= set(watcher.first_frame))
            before_frames = dict(watcher.frames)
            cpu_before = {r.replica_id: tree_cpu_s(r.process.proc.pid) for r in (r1, r2, r3)}
            await asyncio.sleep(WATCH_S)  # the measuring window itself, not an ordering
            cpu = {
                r.replica_id: round(tree_cpu_s(r.process.proc.pid) - cpu_before[r.replica_id], 2)
                for r in (r1, r2, r3)
            }
            frames = {
                rid: watcher.frames.get(sid, 0) - before_frames.get(sid, 0)
                for rid, (sid, _) in own.items()
            }
            appear = [await _appears(watcher, r3, "alice") for _ in range(NEW_SESSIONS)]
            inputs = await _inputs(http, r1, cookie, {"own (r1)": own["r1"], "relayed": own["r2"]})
        finally:
            reader.cancel()
        # Bob has no session anywhere yet: r1 follows r3 for him only once the directory says.
        bob_login = await sign_in(http, r1, await new_link(r1, "bob"))
        bob_watcher = Watcher()
        bob_cookie = "bm_view=" + bob_login.cookies["bm_view"]
        bob_reader = asyncio.create_task(bob_watcher.run(http, r1, bob_cookie))
        try:
            await bob_watcher.until(lambda: bob_watcher.states > 0)  # the stream is open
            first = await _appears(bob_watcher, r3, "bob")
        finally:
            bob_reader.cancel()
    return {
        "join": {"grid_s": round(grid_s, 2), "pictures_s": round(pictures_s, 2)},
        "frames": frames,
        "cpu_s": cpu,
        "new_session_ms": latency_stats([ms for ms, _ in appear]),
        "create_ms": latency_stats([ms for _, ms in appear]),
        "first_session": {"shown_ms": round(first[0], 1), "create_ms": round(first[1], 1)},
        "input": inputs,
    }


async def main_async() -> dict[str, Any]:
    with FixtureSite() as site, tempfile.TemporaryDirectory() as tmp:
        site.pages["/bench/animated"] = ANIMATED
        async with running_cluster(Path(tmp), replicas=3, lease_ms=15_000, view=True) as cluster:
            data = await measure(cluster, site)
    return {**data, "environment": environment()}


def report(data: dict[str, Any]) -> str:
    frames, cpu = data["frames"], data["cpu_s"]
    picture_rows = [
        [rid, "own" if rid == "r1" else "relayed", frames[rid], f"{frames[rid] / WATCH_S:.1f}"]
        for rid in sorted(frames)
    ]
    new, create, first = data["new_session_ms"], data["create_ms"], data["first_session"]
    input_rows = [
        [k, s["n"], s["p50_ms"], s["p95_ms"], s["max_ms"]] for k, s in data["input"].items()
    ]
    return (
        "# Fleet: the live view across replicas (issue 37)\n\n"
        "Three replicas on loopback with the view on, one redis-server, real Chromium; alice has "
        "one session on each replica on a page that changes every 50 ms and watches through r1 "
        "(`/view/events`). Run: `python -m benchmarks.fleet_view`.\n\n"
        f"- Joining: the grid listed all three sessions {data['join']['grid_s']} s after the "
        f"stream opened, with a picture of each after {data['join']['pictures_s']} s.\n"
        f"- Another session of alice on r3 (which r1 already follows for her): its card showed "
        f"in r1's grid {new['p50_ms']} ms after the create was sent (p50, max {new['max_ms']} "
        f"ms, n = {new['n']}); the create itself answered in {create['p50_ms']} ms (p50).\n"
        f"- Bob's first session anywhere, on r3, watched through r1 (which follows r3 for him "
        f"only once the directory, read every second, lists it there): card after "
        f"{first['shown_ms']} ms, the create answered in {first['create_ms']} ms.\n\n"
        f"## Pictures reaching the viewer in {WATCH_S:.0f} s\n\n"
        + md_table(["session on", "path", "pictures", "per s"], picture_rows)
        + "\n\nCPU of each replica's process tree (the replica and its Chromium) over those "
        "seconds: "
        + ", ".join(f"{rid} {cpu[rid]} s" for rid in sorted(cpu))
        + " (r1 also relays the others' pictures).\n\n"
        f"## Take-over input through r1 (`POST /view/input`, one pointer move; {INPUTS} each, "
        "interleaved)\n\n"
        + md_table(["session", "n", "p50 ms", "p95 ms", "max ms"], input_rows)
        + "\n"
    )


def main() -> int:
    data = asyncio.run(main_async())
    RESULTS.mkdir(parents=True, exist_ok=True)
    write_json(RESULTS / "fleet_view.json", data)
    (RESULTS / "fleet_view.md").write_text(report(data))
    print(report(data))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
