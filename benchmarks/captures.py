"""What session traces and session videos cost (issue 35): the N = 8 multisession workload
plain, with every session traced, and with every session recorded on video.

The same set-up as ``benchmarks.live_view`` and ``benchmarks.takeover``: one
``python -m browsermesh --transport http`` server (loopback, no token file: the principal
``local``; started as ``live_view.start_server`` does, plus ``--tools`` with the ``testing``
profile), one MCP SDK client over Streamable HTTP, a warm-up flow first (which also starts and
stops one trace and one video, so their first use is untimed). Each round runs the workload
three times, in an order that rotates from round to round (round 0: plain, traced, video;
round 1: traced, video, plain; ...), so drift in machine load hits every mode alike:

- ``plain``: N concurrent flows of ``benchmarks.multisession.mesh_flow`` (sign in, product,
  add to cart, cart, read, screenshot);
- ``traced``: the same flows, each with ``browser_trace start`` (defaults: screenshots and
  snapshots on, sources off) right after its session is created and ``browser_trace stop`` at
  its end, inside the timing: the stop answers with the trace zip (scrubbed of secrets);
- ``video``: the same with ``browser_video start`` / ``browser_video stop``; the stop waits for
  the MP4 encoding (the system ffmpeg).

``mesh_flow`` creates its own session, so the capture start goes through `CapturingClient`, a
stand-in for the MCP client that passes every call through and, right after
``browser_session_create`` answers, starts the capture on the new session. The capture start is
timed as its own call and taken out of the ``session`` call's time (which would hold both).

Reported per mode: the wall time (median over rounds) and the paired traced / plain and
video / plain ratios (median of the per-round ratios); the flows' per-call latency (p50 / p95
over the mode's rounds: all calls, the workload's own ten calls per flow, and per call kind);
the artifact bytes per session (median and max); and the CPU seconds used during the timed part
by process kind, read from ``/proc`` (psutil is not installed in the venv):

- ``server``: the server's Python process (``utime + stime``);
- ``driver``: the Playwright driver (node), a child of the server;
- ``chromium``: every Chromium process (browser, zygotes, GPU, utility, renderers), each with its
  waited-for children (``cutime + cstime``: a renderer that ended during the round is counted by
  the process that reaped it);
- ``ffmpeg``: the video's ffmpeg processes. They are the server's own short-lived children
  (asyncio subprocesses: one recorder while recording, one encoder at ``stop``), so most are gone
  by the second reading: their CPU is the growth of the server's ``cutime + cstime`` over the
  timed part (the server's only other child, the driver, lives for the whole run, so nothing else
  is reaped meanwhile), plus any ffmpeg still alive at the reading (none, normally: ``stop``
  waits for the encoder).

A process that ended during the timed part and was reaped by nobody in the tree is not counted.
Sessions are closed between rounds, outside the timing; their artifacts stay in the store.

Run: ``python -m benchmarks.captures [--n 8] [--rounds 3]``; writes
``benchmarks/results/captures.{md,json}``.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import urlsplit

from benchmarks.app import ShopApp
from benchmarks.common import (
    CHROMIUM,
    REPO,
    browsermesh_env,
    latency_stats,
    md_table,
    median,
    paired_cli,
)
from benchmarks.multisession import mesh_flow
from benchmarks.pss import descendants, kind_of, process_table

MODES = ("plain", "traced", "video")
TOOL = {"traced": "browser_trace", "video": "browser_video"}
STEP = {"traced": "trace", "video": "video"}
KINDS = ("server", "driver", "chromium", "ffmpeg", "other")
TOOLS = "core,observability,persistence,files,testing"
LOG_LINES = 200  # the server's stderr lines kept for a failure's report
CALL_TIMEOUT_S = 120.0  # a video stop waits for its encoding


def start_server(log: deque[str]) -> tuple[subprocess.Popen[str], str]:
    """The HTTP server with the ``testing`` tools and its base URL (read from its
    ``view.ready`` line): ``live_view.start_server`` plus ``--tools``; the last lines it writes
    on stderr go to `log` (printed if the run fails)."""
    args = ["-m", "browsermesh", "--transport", "http", "--port", "0", "--headless"]
    args += ["--no-persistence", "--log-level", "warn", "--browser-path", CHROMIUM]
    args += ["--tools", TOOLS]
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
            threading.Thread(target=log.extend, args=(stderr,), daemon=True).start()
            return proc, f"http://127.0.0.1:{port}"
    raise RuntimeError("the server exited before listening")


def _kind(pid: int, root: int, cmd: bytes) -> str:
    if pid == root:
        return "server"
    argv0 = cmd.split(b"\0", 1)[0].rsplit(b"/", 1)[-1]
    if b"ffmpeg" in argv0:
        return "ffmpeg"
    kind = kind_of(cmd)
    if kind.startswith("chromium"):
        return "chromium"
    return {"node": "driver"}.get(kind, "other")


def tree_cpu(root: int) -> dict[int, tuple[str, float, float]]:
    """pid -> (kind, own CPU seconds, waited-for children's CPU seconds) so far, for `root`
    (the server) and every process below it."""
    table = process_table()
    tick = os.sysconf("SC_CLK_TCK")
    out: dict[int, tuple[str, float, float]] = {}
    for pid in descendants([root], table):
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
            own, children = int(fields[11]) + int(fields[12]), int(fields[13]) + int(fields[14])
        except (OSError, ValueError, IndexError):
            continue  # it ended meanwhile
        out[pid] = (_kind(pid, root, table[pid][1]), own / tick, children / tick)
    return out


def cpu_by_kind(
    after: dict[int, tuple[str, float, float]], before: dict[int, tuple[str, float, float]]
) -> dict[str, float]:
    """CPU seconds by kind between two readings, over the processes alive at the second; the
    server's reaped children (cutime + cstime) are its ffmpeg processes."""
    used = dict.fromkeys(KINDS, 0.0)
    for pid, (kind, own, children) in after.items():
        _, own0, children0 = before.get(pid, (kind, 0.0, 0.0))
        if kind == "server":
            used["server"] += own - own0
            used["ffmpeg"] += children - children0
        else:
            used[kind] += own - own0 + children - children0
    return {k: round(v, 2) for k, v in used.items()}


class CapturingClient:
    """Passes every call to `client`; right after ``browser_session_create`` answers, starts
    the mode's capture on the new session (a call of its own, timed into `calls` and taken out
    of the ``session`` call's time by `flow`)."""

    def __init__(self, client: Any, mode: str, calls: list[tuple[str, float]]) -> None:
        self.client = client
        self.mode = mode
        self.calls = calls
        self.session_id: str | None = None
        self.start_s = 0.0

    async def call_tool(self, name: str, args: dict[str, Any], **kw: Any) -> Any:
        result = await self.client.call_tool(name, args, **kw)
        if name == "browser_session_create" and self.mode in TOOL and not result.is_error:
            self.session_id = str(result.structured_content["session"]["sessionId"])
            started = time.perf_counter()
            await _capture(self.client, self.mode, self.session_id, "start")
            self.start_s = time.perf_counter() - started
            self.calls.append((f"{STEP[self.mode]} start", self.start_s))
        return result


async def _capture(client: Any, mode: str, sid: str, action: str) -> dict[str, Any]:
    result = await client.call_tool(
        TOOL[mode], {"sessionId": sid, "action": action}, read_timeout_seconds=CALL_TIMEOUT_S
    )
    if result.is_error:
        raise RuntimeError(f"{TOOL[mode]} {action}: {result.content}")
    data: dict[str, Any] = result.structured_content
    return data


async def flow(
    client: Any, base: str, user: str, calls: list[tuple[str, float]], mode: str
) -> tuple[str, int]:
    """One `mesh_flow` in `mode`: its session id and its capture's artifact bytes (0 when
    plain)."""
    if mode not in TOOL:
        return await mesh_flow(client, base, user, calls), 0
    capturing = CapturingClient(client, mode, calls)
    sid = await mesh_flow(capturing, base, user, calls)
    # `mesh_flow` timed browser_session_create and the capture start as one call.
    for i, (step, seconds) in enumerate(calls):
        if step == "session":
            calls[i] = (step, seconds - capturing.start_s)
            break
    started = time.perf_counter()
    stopped = await _capture(client, mode, sid, "stop")
    calls.append((f"{STEP[mode]} stop", time.perf_counter() - started))
    return sid, int(stopped["artifact"]["size"])


@dataclass
class Round:
    mode: str
    rep: int
    wall_s: float
    cpu_s: float  # CPU time of the server's tree (ffmpeg included) over the timed part
    cpu_by_kind: dict[str, float]
    calls: dict[str, Any]  # latency_stats of every tool call of the round's flows
    artifact_bytes: list[int]  # per session: its trace zip or video (empty when plain)
    load_avg: float = 0.0  # the machine's 1-minute load average at the round's end
    call_ms: list[tuple[str, float]] = field(default_factory=list, repr=False)


async def one_round(client: Any, app: ShopApp, server: int, mode: str, n: int, rep: int) -> Round:
    users = [f"cap{rep}{mode[0]}-{i}" for i in range(n)]
    calls: list[list[tuple[str, float]]] = [[] for _ in range(n)]
    cpu = tree_cpu(server)
    started = time.perf_counter()
    done = await asyncio.gather(
        *(flow(client, app.base_url, users[i], calls[i], mode) for i in range(n))
    )
    wall = time.perf_counter() - started
    by_kind = cpu_by_kind(tree_cpu(server), cpu)
    for sid, _ in done:
        await client.call_tool("browser_session_close", {"sessionId": sid})
    bad = [u for u in users if app.cart(u) != {1: 1}]
    if bad:
        raise RuntimeError(f"unverified flows: {bad}")
    sizes = [size for _, size in done] if mode in TOOL else []
    if any(size <= 0 for size in sizes):
        raise RuntimeError(f"empty artifacts in {mode}: {sizes}")
    flat = [(step, s * 1000) for per_flow in calls for step, s in per_flow]
    return Round(
        mode,
        rep,
        wall,
        round(sum(by_kind.values()), 2),
        by_kind,
        latency_stats([ms for _, ms in flat]),
        sizes,
        round(os.getloadavg()[0], 2),
        flat,
    )


async def run_all(n: int, rounds: int) -> list[Round]:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    log: deque[str] = deque(maxlen=LOG_LINES)
    proc, base = start_server(log)
    results: list[Round] = []
    try:
        with ShopApp() as app:
            http = httpx2.AsyncClient(trust_env=False, timeout=httpx2.Timeout(120, read=300))
            async with Client(streamable_http_client(base + "/mcp", http_client=http)) as client:
                for mode in MODES:  # Chromium's launch and each capture's first use, untimed
                    warm: list[tuple[str, float]] = []
                    sid, size = await flow(client, app.base_url, f"warm{mode}", warm, mode)
                    await client.call_tool("browser_session_close", {"sessionId": sid})
                    print(f"warm-up {mode}: {size} bytes", file=sys.stderr, flush=True)
                for rep in range(rounds):
                    order = MODES[rep % len(MODES) :] + MODES[: rep % len(MODES)]
                    for mode in order:
                        result = await one_round(client, app, proc.pid, mode, n, rep)
                        print(
                            f"round {rep} {mode}: {result.wall_s:.2f} s wall, "
                            f"p95 {result.calls['p95_ms']} ms, {result.cpu_s:.2f} s CPU "
                            f"{result.cpu_by_kind}, artifacts {result.artifact_bytes}",
                            file=sys.stderr,
                            flush=True,
                        )
                        results.append(result)
    except BaseException:
        print("".join(["the server's last log lines:\n", *log]), file=sys.stderr, flush=True)
        raise
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    return results


def summarize(results: list[Round], n: int) -> dict[str, Any]:
    by_rep: dict[int, dict[str, Round]] = {}
    for r in results:
        by_rep.setdefault(r.rep, {})[r.mode] = r
    pairs = [d for d in by_rep.values() if len(d) == len(MODES)]
    workload = {"session", "navigate", "fill", "click", "read", "screenshot"}
    modes: dict[str, Any] = {}
    for m in MODES:
        rs = [r for r in results if r.mode == m]
        pooled = [(step, ms) for r in rs for step, ms in r.call_ms]
        steps = sorted({step for step, _ in pooled})
        sizes = [b for r in rs for b in r.artifact_bytes]
        modes[m] = {
            "wall_s": round(median([r.wall_s for r in rs]), 3),
            "cpu_s": round(median([r.cpu_s for r in rs]), 2),
            "cpu_by_kind": {k: round(median([r.cpu_by_kind[k] for r in rs]), 2) for k in KINDS},
            "calls": latency_stats([ms for _, ms in pooled]),
            "workload_calls": latency_stats([ms for step, ms in pooled if step in workload]),
            "calls_by_step": {
                s: latency_stats([ms for step, ms in pooled if step == s]) for s in steps
            },
            "artifact_bytes": {
                "n": len(sizes),
                "median": round(median(sizes)) if sizes else None,
                "max": max(sizes, default=None),
            },
        }
    ratios: dict[str, dict[str, list[float]]] = {}
    for m in MODES[1:]:
        ratios[m] = {
            "wall": [d[m].wall_s / d["plain"].wall_s for d in pairs],
            "cpu": [d[m].cpu_s / d["plain"].cpu_s for d in pairs],
            "p95": [
                d[m].calls["p95_ms"] / d["plain"].calls["p95_ms"]
                for d in pairs
                if d["plain"].calls["p95_ms"]
            ],
        }
    return {
        "n": n,
        "rounds": len(by_rep),
        "modes": modes,
        "ratios": {
            m: {k: [round(x, 3) for x in v] for k, v in d.items()} for m, d in ratios.items()
        },
        "ratio_median": {
            m: {k: round(median(v), 3) for k, v in d.items()} for m, d in ratios.items()
        },
        "load_avg": [r.load_avg for r in results],
        "cpus": os.cpu_count(),
        "chromium": CHROMIUM,
        "runs": [{k: v for k, v in asdict(r).items() if k != "call_ms"} for r in results],
    }


def _kib(value: int | None) -> str:
    return "-" if value is None else f"{value / 1024:,.0f} KiB"


def render(summary: dict[str, Any]) -> str:
    modes, ratio = summary["modes"], summary["ratio_median"]

    def cells(fmt: str, pick: Any) -> list[str]:
        return [fmt.format(pick(modes[m])) for m in MODES]

    def ratio_cells(key: str) -> list[str]:
        return ["", *(f"**{ratio[m][key]:.3f}**" for m in MODES[1:])]

    def ms(stats: dict[str, Any], key: str) -> str:
        return f"{stats[key]:.0f} ms" if stats[key] is not None else "-"

    table = md_table(
        ["", *MODES],
        [
            ["wall time (median)", *cells("{:.2f} s", lambda d: d["wall_s"])],
            ["wall / plain (median of paired rounds)", *ratio_cells("wall")],
            ["server tree CPU (median)", *cells("{:.2f} s", lambda d: d["cpu_s"])],
            ["CPU / plain (median of paired rounds)", *ratio_cells("cpu")],
            *([f"CPU: {k}", *cells("{:.2f} s", lambda d, k=k: d["cpu_by_kind"][k])] for k in KINDS),
            ["per call p50 (all calls)", *(ms(modes[m]["calls"], "p50_ms") for m in MODES)],
            ["per call p95 (all calls)", *(ms(modes[m]["calls"], "p95_ms") for m in MODES)],
            [
                "per call p50 / p95 (the workload's 10)",
                *(
                    f"{ms(modes[m]['workload_calls'], 'p50_ms')} / "
                    f"{ms(modes[m]['workload_calls'], 'p95_ms')}"
                    for m in MODES
                ),
            ],
            [
                "artifact per session (median / max)",
                *(
                    f"{_kib(modes[m]['artifact_bytes']['median'])} / "
                    f"{_kib(modes[m]['artifact_bytes']['max'])}"
                    if modes[m]["artifact_bytes"]["n"]
                    else "-"
                    for m in MODES
                ),
            ],
        ],
    )
    steps = sorted({s for m in MODES for s in modes[m]["calls_by_step"]})
    by_step = md_table(
        ["call", *(f"{m} p50 / p95" for m in MODES)],
        [
            [
                s,
                *(
                    f"{ms(modes[m]['calls_by_step'][s], 'p50_ms')} / "
                    f"{ms(modes[m]['calls_by_step'][s], 'p95_ms')}"
                    if s in modes[m]["calls_by_step"]
                    else "-"
                    for m in MODES
                ),
            ]
            for s in steps
        ],
    )
    rounds = "; ".join(
        f"{m}: wall {', '.join(f'{x:.3f}' for x in summary['ratios'][m]['wall'])}, "
        f"CPU {', '.join(f'{x:.3f}' for x in summary['ratios'][m]['cpu'])}"
        for m in MODES[1:]
    )
    return "\n".join(
        [
            f"# Traces and videos (issue 35): N = {summary['n']}, {summary['rounds']} rounds",
            "",
            "Each round runs the N concurrent flows plain, with `browser_trace start` / `stop` "
            "around each flow (screenshots and snapshots on), and with `browser_video start` / "
            "`stop` (the stop waits for the MP4 encoding), in an order rotating per round. CPU "
            "over the timed part, from `/proc`: the server's Python process, the Playwright "
            "driver, every Chromium process, ffmpeg (the server's reaped children).",
            "",
            table,
            "",
            f"Per-round ratios to plain: {rounds}.",
            f"Load average (1 min) at the rounds' ends: "
            f"{', '.join(f'{x:.1f}' for x in summary['load_avg'])} ({summary['cpus']} CPUs).",
            "",
            "Per call kind (all rounds of each mode):",
            "",
            by_step,
            "",
            f"Chromium: `{summary['chromium']}`.",
            "",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    def measure(n: int, rounds: int) -> dict[str, Any]:
        return summarize(asyncio.run(run_all(n, rounds)), n)

    paired_cli("captures", measure, render, rounds=3, argv=argv)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
