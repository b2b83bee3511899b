"""Profile the BrowserMesh server under the multisession workload (py-spy, sampling).

Spawns ``python -m browsermesh`` through the SDK client exactly as the benchmark does, attaches
``py-spy record`` to the server process, runs N concurrent flows of the multisession workload
(default N=8), then summarizes where the server's Python CPU time went: by package (BrowserMesh,
MCP SDK, pydantic, jsonschema, Playwright's Python side, asyncio, ...) and the hottest functions,
self and inclusive. Writes ``benchmarks/results/profile_browsermesh.md`` and the collapsed stacks
(``profile_browsermesh.folded``, for flame-graph tools) and prints the summary.

Needs py-spy (``pip install py-spy``; a profiling-only tool, not a project dependency) and
permission to ptrace the server (root, or ``kernel.yama.ptrace_scope=0``).

Run: ``python -m benchmarks.profile_mesh [--n 8] [--rate 1000]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks.app import ShopApp
from benchmarks.common import REPO, RESULTS, browsermesh_args, browsermesh_params, md_table
from benchmarks.multisession import MESH_NEEDLE, mesh_flow
from benchmarks.pss import children_matching

# (substring of a frame's file path, bucket); first match wins, checked leaf-first.
BUCKETS = (
    ("/browsermesh/", "browsermesh"),
    ("/mcp/", "mcp SDK"),
    ("/mcp_types/", "mcp SDK"),
    ("/pydantic", "pydantic"),
    ("/jsonschema", "jsonschema"),
    ("/referencing/", "jsonschema"),
    ("/rpds", "jsonschema"),
    ("/playwright/", "playwright (python)"),
    ("/pyee/", "playwright (python)"),
    ("/greenlet", "playwright (python)"),
    ("/anyio/", "anyio"),
    ("/asyncio/", "asyncio"),
    ("/json/", "json"),
    ("/logging/", "logging"),
)


def _frames(stack: str) -> list[tuple[str, str]]:
    """``func (file:line)`` frames of one collapsed stack, root first, as (func, file)."""
    out = []
    for frame in stack.split(";"):
        frame = frame.strip()
        if " (" in frame and frame.endswith(")"):
            func, where = frame[:-1].split(" (", 1)
            out.append((func, where.rsplit(":", 1)[0]))
        else:
            out.append((frame, ""))
    return out


def _bucket(path: str) -> str:
    path = "/" + path.lstrip("/")  # py-spy prints paths relative to sys.path entries
    for needle, name in BUCKETS:
        if needle in path:
            return name
    return "other (stdlib, interpreter)"


def _short(func: str, path: str) -> str:
    for marker in ("site-packages/", "/src/", "/lib/python3"):
        if marker in path:
            path = path.split(marker, 1)[1]
            if marker == "/lib/python3":
                path = path.split("/", 1)[-1]  # drop the ".11" of "python3.11/"
            break
    return f"{func} ({path})"


def summarize(folded: Path, spy_log: str = "") -> dict[str, Any]:
    if not folded.exists():
        raise RuntimeError(f"py-spy wrote nothing: {spy_log[-500:]}")
    self_by_bucket: Counter[str] = Counter()
    incl_by_bucket: Counter[str] = Counter()
    self_by_func: Counter[str] = Counter()
    incl_by_func: Counter[str] = Counter()
    total = 0
    for line in folded.read_text().splitlines():
        if not line.strip():
            continue
        stack, _, count_text = line.rpartition(" ")
        try:
            count = int(count_text)
        except ValueError:
            continue
        frames = [f for f in _frames(stack) if f[1]]  # drop "process"/"thread" pseudo-frames
        if not frames:
            continue
        total += count
        leaf = frames[-1]
        self_by_bucket[_bucket(leaf[1])] += count
        self_by_func[_short(*leaf)] += count
        for bucket in {_bucket(path) for _f, path in frames}:
            incl_by_bucket[bucket] += count
        for name in {_short(*f) for f in frames}:
            incl_by_func[name] += count
    return {
        "samples": total,
        "self_by_bucket": self_by_bucket.most_common(),
        "incl_by_bucket": incl_by_bucket.most_common(),
        "self_by_func": self_by_func.most_common(25),
        "incl_by_func": [
            (k, v) for k, v in incl_by_func.most_common(80) if "/browsermesh/" in k or "mcp" in k
        ][:30],
    }


async def run(n: int, rate: int, folded: Path) -> dict[str, Any]:
    from mcp import Client

    pyspy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    with ShopApp() as app:
        async with Client(browsermesh_params()) as client:
            server = children_matching(os.getpid(), MESH_NEEDLE.encode())
            if len(server) != 1:
                raise RuntimeError(f"expected one browsermesh server, found {server}")
            # Warm the browser up first: the profile is about the steady state of N flows.
            await mesh_flow(client, app.base_url, "warmup", [])
            spy = await asyncio.create_subprocess_exec(
                pyspy,
                "record",
                "--pid",
                str(server[0]),
                "--rate",
                str(rate),
                "--format",
                "raw",
                "--output",
                str(folded),
                "--nonblocking",
                "--gil",  # only the thread holding the GIL: Python CPU, not threads waiting
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
            await asyncio.sleep(1.0)
            calls: list[list[tuple[str, float]]] = [[] for _ in range(n)]
            started = time.perf_counter()
            cpu0 = _cpu_seconds(server[0])
            await asyncio.gather(
                *(mesh_flow(client, app.base_url, f"profile-{i}", calls[i]) for i in range(n))
            )
            wall = time.perf_counter() - started
            cpu = _cpu_seconds(server[0]) - cpu0
            spy.send_signal(signal.SIGINT)
            _out, err = await asyncio.wait_for(spy.communicate(), 60)
    summary = summarize(folded, err.decode(errors="replace"))
    summary.update({"n": n, "rate": rate, "wall_s": round(wall, 3), "server_cpu_s": round(cpu, 3)})
    summary["calls"] = sum(len(c) for c in calls)
    return summary


async def run_cprofile(n: int, prof: Path) -> dict[str, Any]:
    """The same workload with the server under cProfile on the main thread's CPU clock."""
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "benchmarks.cprofile_server", str(prof), *browsermesh_args()[2:]],
        cwd=str(REPO),
    )
    with ShopApp() as app:
        async with Client(params) as client:
            server = children_matching(os.getpid(), b"benchmarks.cprofile_server")
            if len(server) != 1:
                raise RuntimeError(f"expected one profiled server, found {server}")
            await mesh_flow(client, app.base_url, "warmup", [])
            calls: list[list[tuple[str, float]]] = [[] for _ in range(n)]
            os.kill(server[0], signal.SIGUSR1)
            await asyncio.sleep(0.2)
            cpu0 = _cpu_seconds(server[0])
            started = time.perf_counter()
            await asyncio.gather(
                *(mesh_flow(client, app.base_url, f"cprofile-{i}", calls[i]) for i in range(n))
            )
            wall = time.perf_counter() - started
            cpu = _cpu_seconds(server[0]) - cpu0
            os.kill(server[0], signal.SIGUSR2)
            for _ in range(100):
                await asyncio.sleep(0.05)
                if await asyncio.to_thread(prof.exists):
                    break
    return {
        "wall_s": round(wall, 3),
        "server_cpu_s": round(cpu, 3),
        "calls": sum(len(c) for c in calls),
        **summarize_cprofile(prof),
    }


def summarize_cprofile(prof: Path) -> dict[str, Any]:
    import pstats

    stats = pstats.Stats(str(prof)).stats  # type: ignore[attr-defined]
    total = 0.0
    by_bucket: Counter[str] = Counter()
    tottime: dict[str, float] = {}
    cumtime: dict[str, float] = {}
    for (path, line, func), (_cc, _nc, tt, ct, _callers) in stats.items():
        total += tt
        by_bucket[_bucket(path)] += tt
        name = _short(func, f"{path}:{line}" if path != "~" else "built-in")
        tottime[name] = tottime.get(name, 0.0) + tt
        if "/browsermesh/" in path:
            cumtime[name] = max(cumtime.get(name, 0.0), ct)
    return {
        "profiled_cpu_s": round(total, 3),
        "by_bucket_s": [(k, round(v, 4)) for k, v in by_bucket.most_common()],
        "top_tottime_s": [
            (k, round(v, 4)) for k, v in sorted(tottime.items(), key=lambda kv: -kv[1])[:25]
        ],
        "browsermesh_cumtime_s": [
            (k, round(v, 4)) for k, v in sorted(cumtime.items(), key=lambda kv: -kv[1])[:20]
        ],
    }


def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat", "rb") as fh:
        fields = fh.read().rsplit(b")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def render_cprofile(c: dict[str, Any]) -> str:
    total = c["profiled_cpu_s"] or 1.0

    def rows(items: list[tuple[str, float]]) -> list[list[object]]:
        return [[f"`{k}`", f"{1000 * v:.1f}", f"{100 * v / total:.1f}%"] for k, v in items]

    return "\n".join(
        [
            "# BrowserMesh server CPU profile (cProfile, CPU clock)",
            "",
            f"The same workload ({c['calls']} tool calls, wall {c['wall_s']:.2f} s) with the "
            "server's main thread (the event loop, where every tool call runs) under cProfile "
            "timed by `time.thread_time`: CPU time only, so waiting for a CPU on the saturated "
            "machine is charged to nobody (a sampling profiler charges it to whatever Python "
            f"code holds the GIL when the thread is preempted). Profiled CPU: "
            f"{c['profiled_cpu_s']:.3f} s of main-thread time (cProfile's own overhead "
            f"included; the whole server process used {c['server_cpu_s']:.2f} s by `/proc`, "
            f"{1000 * c['server_cpu_s'] / max(c['calls'], 1):.1f} ms per call, with the "
            "profiler on).",
            "",
            "## Own (tottime) CPU by package",
            "",
            md_table(["package", "ms", "share"], rows(c["by_bucket_s"])),
            "",
            "## Hottest functions (tottime)",
            "",
            md_table(["function", "ms", "share"], rows(c["top_tottime_s"])),
            "",
            "## BrowserMesh functions (cumulative)",
            "",
            md_table(["function", "ms", "share"], rows(c["browsermesh_cumtime_s"])),
            "",
        ]
    )


def render(s: dict[str, Any]) -> str:
    total = s["samples"] or 1

    def pct(rows: list[tuple[str, int]]) -> list[list[object]]:
        return [[f"`{k}`", v, f"{100 * v / total:.1f}%"] for k, v in rows]

    return "\n".join(
        [
            "# BrowserMesh server profile (py-spy)",
            "",
            f"Generated by `python -m benchmarks.profile_mesh --n {s['n']}`: the multisession "
            f"workload, {s['n']} concurrent flows ({s['calls']} tool calls) in one "
            f"`python -m browsermesh` server, wall {s['wall_s']:.2f} s. The server's Python "
            f"process used {s['server_cpu_s']:.2f} s of CPU in that window "
            f"({1000 * s['server_cpu_s'] / max(s['calls'], 1):.1f} ms per tool call). "
            f"py-spy sampled at {s['rate']} Hz, only the thread holding the GIL (`--gil`), "
            f"{s['samples']} samples ({s['samples'] / s['rate']:.2f} s of GIL-holding time vs "
            f"{s['server_cpu_s']:.2f} s of CPU: under CPU contention a sampling profiler also "
            "counts time a thread holding the GIL waits for a CPU, so shares below are biased "
            "towards code that holds the GIL across syscalls; see the cProfile section for CPU "
            "time).",
            "",
            "## Self time by package (where the CPU was actually spent)",
            "",
            md_table(["package", "samples", "share"], pct(s["self_by_bucket"])),
            "",
            "## Inclusive time by package (a stack counts once per package on it)",
            "",
            md_table(["package", "samples", "share"], pct(s["incl_by_bucket"])),
            "",
            "## Hottest functions (self)",
            "",
            md_table(["function", "samples", "share"], pct(s["self_by_func"])),
            "",
            "## BrowserMesh and MCP SDK functions (inclusive)",
            "",
            md_table(["function", "samples", "share"], pct(s["incl_by_func"])),
            "",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.profile_mesh")
    parser.add_argument("--n", type=int, default=8)
    parser.add_argument("--rate", type=int, default=1000)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    folded = args.out / "profile_browsermesh.folded"
    summary = asyncio.run(run(args.n, args.rate, folded))
    prof = args.out / "profile_browsermesh.prof"
    prof.unlink(missing_ok=True)
    cpu = asyncio.run(run_cprofile(args.n, prof))
    prof.unlink(missing_ok=True)
    text = render(summary) + "\n" + render_cprofile(cpu)
    (args.out / "profile_browsermesh.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
