"""The multisession benchmark: one workload, N concurrent sessions, three ways.

Workload per session (the loopback shop of ``benchmarks/app.py``): sign in (open ``/login``, fill
username and password, click "Sign in"), open ``/product/1``, click "Add to cart", open ``/cart``,
read the cart, take a screenshot. Every flow is checked: the cart text read back must say
``Blue teapot × 1``, the screenshot must be a PNG, and the shop's server-side cart of that user
must hold exactly that item.

The three ways, each run for N = 1, 4, 8, 16:

- ``floor``: Playwright for Python straight, N contexts in one Chromium, no MCP (in a child
  process, ``benchmarks/floor.py``);
- ``browsermesh``: N sessions in ONE ``python -m browsermesh`` stdio server, one MCP SDK client,
  N concurrent task flows (``browser_session_create``, ``browser_navigate``, ``browser_fill`` /
  ``browser_click`` with locators, ``browser_visible_text``, ``browser_screenshot``);
- ``peer``: N ``@playwright/mcp`` stdio servers (one per session, ``--isolated``), each driven by
  its own SDK client with the peer's tools (``browser_navigate``, ``browser_snapshot`` to find refs
  and to read the cart, ``browser_type``, ``browser_click``, ``browser_take_screenshot``).

Wall time runs from "all MCP connections are initialized" (for the floor: from the start of its
asyncio run) until the last flow has its screenshot; it includes starting the browser(s) (and, for
the floor, Playwright's driver), which every way does lazily. Spawning and initializing the MCP
servers is not in it (reported apart as ``connect_s``). Per-call latency is every tool call (or
Playwright call) of every flow. Peak PSS: the sum of ``Pss:`` (``/proc/<pid>/smaps_rollup``) over
every process tree involved, sampled every 250 ms in a separate process (``benchmarks/pss.py``).

Also measured: the MCP round trip of ``browser_get_url`` on an open page (median of 200) against
the peer's cheapest call, and spawn → ``initialize`` answered for a fresh browsermesh server.

Run: ``python -m benchmarks.multisession`` (``--help`` for options); writes
``benchmarks/results/multisession.{md,json,png}``.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from benchmarks.app import PASSWORD, ShopApp
from benchmarks.common import (
    BINARIES,
    PEER_CLI,
    REPO,
    RESULTS,
    binaries_arg,
    browsermesh_params,
    environment,
    md_table,
    median,
    peer_params,
    percentile,
    use_binary,
    write_json,
)
from benchmarks.pss import PssResult, PssSampler

WAYS = ("floor", "browsermesh", "peer")
LABELS = {
    "floor": "Playwright floor (no MCP)",
    "browsermesh": "BrowserMesh (1 server)",
    "peer": "@playwright/mcp (1 server/session)",
}
CART_LINE = "Blue teapot × 1"
CALL_TIMEOUT_S = 120.0
RUN_TIMEOUT_S = 300.0
# A run is "clean" when other work (not the measured processes, not the benchmark itself) used at
# most this share of the CPUs during its timed window; unclean runs are re-run while time allows.
FOREIGN_MAX = 0.20
PEER_NEEDLE = "@playwright/mcp/cli.js"
MESH_NEEDLE = "browsermesh"
# The targets (issue 16), checked and printed at the end, for each binary.
TARGETS = {
    "wall_vs_floor_n8": 1.1,
    "wall_vs_peer_n8": 0.5,
    "pss_vs_peer_n16": 0.4,
    "get_url_median_ms": 2.0,
    "initialize_median_s": 0.6,
}


@dataclass
class Run:
    way: str
    n: int
    rep: int
    wall_s: float
    connect_s: float | None
    startup_s: float | None
    calls: list[tuple[str, float]]
    errors: list[str]
    verified: int
    pss_peak_kib: int
    pss_processes: int
    pss_samples: int
    background_cpu: float
    load_before: float
    pss_by_kind_kib: dict[str, int]
    cpu_s_by_kind: dict[str, float]
    foreign_cpu: float  # share of the CPUs other work used during the timed window


@dataclass
class Stats:
    n: int
    median_ms: float
    p95_ms: float
    min_ms: float
    max_ms: float

    @classmethod
    def of(cls, seconds: list[float]) -> Stats:
        ms = [s * 1000 for s in seconds]
        return cls(
            len(ms),
            round(median(ms), 3),
            round(percentile(ms, 95), 3),
            round(min(ms), 3),
            round(max(ms), 3),
        )


@dataclass
class Quiet:
    """How busy the machine was (other work) just before a measurement."""

    cpu: float
    load1: float
    waited_s: float = 0.0


# ------------------------------------------------------------------------------ machine state


def _cpu_times() -> tuple[int, int]:
    with open("/proc/stat") as fh:
        parts = [int(x) for x in fh.readline().split()[1:]]
    idle = parts[3] + (parts[4] if len(parts) > 4 else 0)
    return sum(parts[:8]), idle  # user..steal (guest time is already inside user)


def busy_fraction(seconds: float = 1.0) -> float:
    """The share of all CPUs busy during the next ``seconds`` (our own processes are idle)."""
    total0, idle0 = _cpu_times()
    time.sleep(seconds)
    total1, idle1 = _cpu_times()
    dt = total1 - total0
    return 1.0 - (idle1 - idle0) / dt if dt > 0 else 0.0


def wait_quiet(max_wait_s: float, threshold: float = 0.15) -> Quiet:
    """Wait (up to ``max_wait_s``) until other work uses less than ``threshold`` of the CPUs."""
    started = time.monotonic()
    busy = busy_fraction()
    while busy > threshold and time.monotonic() - started < max_wait_s:
        busy = busy_fraction(2.0)
    return Quiet(round(busy, 3), round(os.getloadavg()[0], 2), round(time.monotonic() - started, 1))


class ForeignMeter:
    """The share of the CPUs used by other work since creation: the machine's busy time less
    this process and its reaped children (the servers it spawned and waited for)."""

    def __init__(self) -> None:
        self._start = (time.monotonic(), *self._now())

    @staticmethod
    def _now() -> tuple[float, float]:
        total, idle = _cpu_times()
        busy = (total - idle) / os.sysconf("SC_CLK_TCK")
        t = os.times()
        return busy, t.user + t.system + t.children_user + t.children_system

    def share(self) -> float:
        wall = time.monotonic() - self._start[0]
        busy, ours = self._now()
        foreign = (busy - self._start[1]) - (ours - self._start[2])
        return max(0.0, foreign) / max(wall * (os.cpu_count() or 1), 1e-9)


def wait_gone(needle: bytes, timeout: float = 20.0) -> None:
    """Wait until no child of ours whose command line has ``needle`` is left."""
    from benchmarks.pss import children_matching

    deadline = time.monotonic() + timeout
    while children_matching(os.getpid(), needle) and time.monotonic() < deadline:
        time.sleep(0.1)


# ------------------------------------------------------------------------------------ helpers


class CallError(RuntimeError):
    pass


def _text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def _has_png(result: Any) -> bool:
    for c in result.content:
        if getattr(c, "type", "") == "image":
            return base64.b64decode(c.data[:24])[:4] == b"\x89PNG"
    return False


def _timed_caller(
    client: Any, calls: list[tuple[str, float]]
) -> Callable[[str, str, dict[str, Any]], Awaitable[Any]]:
    async def call(step: str, name: str, args: dict[str, Any]) -> Any:
        started = time.perf_counter()
        result = await client.call_tool(name, args, read_timeout_seconds=CALL_TIMEOUT_S)
        calls.append((step, time.perf_counter() - started))
        if result.is_error:
            raise CallError(f"{name}: {_text(result)[:400]}")
        return result

    return call


def measured_run(
    way: str,
    n: int,
    rep: int,
    wall_s: float,
    connect_s: float | None,
    startup_s: float | None,
    calls: list[tuple[str, float]],
    errors: list[str],
    verified: int,
    pss: PssResult,
    quiet: Quiet,
) -> Run:
    """A finished run of any of the three ways, with its memory and CPU measurements."""
    return Run(
        way,
        n,
        rep,
        wall_s,
        connect_s,
        startup_s,
        calls,
        errors,
        verified,
        pss.peak_kib,
        pss.peak_processes,
        pss.samples,
        quiet.cpu,
        quiet.load1,
        pss.peak_by_kind_kib,
        pss.cpu_s_by_kind,
        pss.foreign_share(),
    )


def failed_run(way: str, n: int, rep: int, quiet: Quiet, exc: BaseException) -> Run:
    error = f"{type(exc).__name__}: {str(exc)[:300]}"
    return Run(
        way,
        n,
        rep,
        math.nan,
        None,
        None,
        [],
        [error],
        0,
        0,
        0,
        0,
        quiet.cpu,
        quiet.load1,
        {},
        {},
        math.nan,
    )


# ------------------------------------------------------------------------------- the floor


def run_floor(app: ShopApp, n: int, tag: str, quiet: Quiet, rep: int) -> Run:
    import json

    proc = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.floor", app.base_url, str(n), tag],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=str(REPO),
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    if proc.stdout.readline().strip() != "ready":
        raise RuntimeError("the floor worker did not start")
    sampler = PssSampler(pids=[proc.pid])
    sampler.mark()
    proc.stdin.write("go\n")
    proc.stdin.flush()
    try:
        line = proc.stdout.readline()
        sampler.end()
        proc.wait(timeout=RUN_TIMEOUT_S)
    finally:
        pss = sampler.stop()
        if proc.poll() is None:
            proc.kill()
    data = json.loads(line)
    verified = sum(1 for u in data["users"] if app.cart(u) == {1: 1})
    return measured_run(
        "floor",
        n,
        rep,
        data["wall_s"] if data["wall_s"] is not None else math.nan,
        None,
        data["startup_s"],
        [(s, d) for s, d in data["calls"]],
        data["errors"],
        verified,
        pss,
        quiet,
    )


# -------------------------------------------------------------------------------- BrowserMesh


async def mesh_flow(client: Any, base: str, user: str, calls: list[tuple[str, float]]) -> str:
    call = _timed_caller(client, calls)
    created = await call("session", "browser_session_create", {"name": user})
    data = created.structured_content
    addr = {"sessionId": data["session"]["sessionId"], "pageId": data["initialPage"]["pageId"]}
    label = "label"
    await call("navigate", "browser_navigate", {**addr, "url": base + "/login"})
    await call(
        "fill",
        "browser_fill",
        {**addr, "locator": {"strategy": label, "value": "Username"}, "value": user},
    )
    await call(
        "fill",
        "browser_fill",
        {**addr, "locator": {"strategy": label, "value": "Password"}, "value": PASSWORD},
    )
    button = {"strategy": "role", "value": "button"}
    await call("click", "browser_click", {**addr, "locator": {**button, "name": "Sign in"}})
    await call("navigate", "browser_navigate", {**addr, "url": base + "/product/1"})
    await call("click", "browser_click", {**addr, "locator": {**button, "name": "Add to cart"}})
    await call("navigate", "browser_navigate", {**addr, "url": base + "/cart"})
    read = await call(
        "read",
        "browser_visible_text",
        {**addr, "locator": {"strategy": "testId", "value": "cart-items"}},
    )
    shot = await call("screenshot", "browser_screenshot", addr)
    if CART_LINE not in read.structured_content["text"] or not _has_png(shot):
        raise CallError(f"unexpected cart {read.structured_content['text']!r}")
    return str(addr["sessionId"])


async def run_browsermesh(app: ShopApp, n: int, tag: str, quiet: Quiet, rep: int) -> Run:

    sampler = PssSampler(parent=os.getpid(), needle=MESH_NEEDLE)
    try:
        return await _run_browsermesh(app, n, tag, quiet, rep, sampler)
    finally:
        sampler.close()


async def _run_browsermesh(
    app: ShopApp, n: int, tag: str, quiet: Quiet, rep: int, sampler: PssSampler
) -> Run:
    from mcp import Client

    calls: list[list[tuple[str, float]]] = [[] for _ in range(n)]
    users = [f"{tag}-{i}" for i in range(n)]
    connect_started = time.perf_counter()
    async with Client(browsermesh_params()) as client:
        connect = time.perf_counter() - connect_started
        sampler.mark()
        started = time.perf_counter()
        results = await asyncio.wait_for(
            asyncio.gather(
                *(mesh_flow(client, app.base_url, users[i], calls[i]) for i in range(n)),
                return_exceptions=True,
            ),
            RUN_TIMEOUT_S,
        )
        wall = time.perf_counter() - started
        sampler.end()
        for r in results:
            if isinstance(r, str):
                await client.call_tool("browser_session_close", {"sessionId": r})
    wait_gone(MESH_NEEDLE.encode())
    pss = sampler.stop()
    first = [c[0][1] for c in calls if c and c[0][0] == "session"]
    return measured_run(
        "browsermesh",
        n,
        rep,
        wall,
        connect,
        max(first) if first else None,
        [c for per_flow in calls for c in per_flow],
        [f"{type(r).__name__}: {r}" for r in results if isinstance(r, BaseException)],
        sum(1 for u in users if app.cart(u) == {1: 1}),
        pss,
        quiet,
    )


# ------------------------------------------------------------------------------- the peer

_REF_LINE = re.compile(r'^\s*- (?P<role>[\w-]+) "(?P<name>[^"]*)"[^\n]*?\[ref=(?P<ref>[^\]]+)\]')


def find_ref(snapshot: str, role: str, name: str) -> str:
    for line in snapshot.splitlines():
        m = _REF_LINE.match(line)
        if m and m["role"] == role and m["name"] == name:
            return m["ref"]
    raise CallError(f'no {role} "{name}" in the peer snapshot')


async def peer_flow(client: Any, base: str, user: str, calls: list[tuple[str, float]]) -> None:
    call = _timed_caller(client, calls)
    await call("navigate", "browser_navigate", {"url": base + "/login"})
    snap = _text(await call("snapshot", "browser_snapshot", {}))
    username = find_ref(snap, "textbox", "Username")
    password = find_ref(snap, "textbox", "Password")
    sign_in = find_ref(snap, "button", "Sign in")
    await call(
        "fill", "browser_type", {"target": username, "element": "Username field", "text": user}
    )
    await call(
        "fill",
        "browser_type",
        {"target": password, "element": "Password field", "text": PASSWORD},
    )
    await call("click", "browser_click", {"target": sign_in, "element": "Sign in button"})
    await call("navigate", "browser_navigate", {"url": base + "/product/1"})
    snap = _text(await call("snapshot", "browser_snapshot", {}))
    add = find_ref(snap, "button", "Add to cart")
    await call("click", "browser_click", {"target": add, "element": "Add to cart button"})
    await call("navigate", "browser_navigate", {"url": base + "/cart"})
    cart = _text(await call("read", "browser_snapshot", {}))
    shot = await call("screenshot", "browser_take_screenshot", {"type": "png", "scale": "css"})
    if CART_LINE not in cart or not _has_png(shot):
        raise CallError("unexpected cart in the peer snapshot")


async def run_peer(app: ShopApp, n: int, tag: str, quiet: Quiet, rep: int) -> Run:

    sampler = PssSampler(parent=os.getpid(), needle=PEER_NEEDLE)
    try:
        return await _run_peer(app, n, tag, quiet, rep, sampler)
    finally:
        sampler.close()


async def _run_peer(
    app: ShopApp, n: int, tag: str, quiet: Quiet, rep: int, sampler: PssSampler
) -> Run:
    from mcp import Client

    calls: list[list[tuple[str, float]]] = [[] for _ in range(n)]
    users = [f"{tag}-{i}" for i in range(n)]
    connected = [asyncio.Event() for _ in range(n)]
    finished = [asyncio.Event() for _ in range(n)]
    ended = [0.0] * n
    go, release = asyncio.Event(), asyncio.Event()
    workdir = Path(tempfile.mkdtemp(prefix="bench-peer-"))

    async def one(i: int) -> None:
        out = workdir / str(i)
        out.mkdir()
        try:
            # Each task enters and leaves its own client (anyio scopes belong to one task).
            async with Client(peer_params(out)) as client:
                connected[i].set()
                await go.wait()
                try:
                    await peer_flow(client, app.base_url, users[i], calls[i])
                finally:
                    ended[i] = time.perf_counter()
                    finished[i].set()
                    await release.wait()
        finally:
            connected[i].set()
            finished[i].set()

    connect_started = time.perf_counter()
    tasks = [asyncio.create_task(one(i)) for i in range(n)]
    try:
        await asyncio.wait_for(asyncio.gather(*(e.wait() for e in connected)), RUN_TIMEOUT_S)
        connect = time.perf_counter() - connect_started
        sampler.mark()
        started = time.perf_counter()
        go.set()
        await asyncio.wait_for(asyncio.gather(*(e.wait() for e in finished)), RUN_TIMEOUT_S)
        wall = max(ended) - started
        sampler.end()
    finally:
        go.set()
        release.set()
        results = await asyncio.gather(*tasks, return_exceptions=True)
    wait_gone(PEER_NEEDLE.encode())
    pss = sampler.stop()
    shutil.rmtree(workdir, ignore_errors=True)
    first = [c[0][1] for c in calls if c]
    return measured_run(
        "peer",
        n,
        rep,
        wall,
        connect,
        max(first) if first else None,
        [c for per_flow in calls for c in per_flow],
        [f"{type(r).__name__}: {r}" for r in results if isinstance(r, BaseException)],
        sum(1 for u in users if app.cart(u) == {1: 1}),
        pss,
        quiet,
    )


# -------------------------------------------------------------------- round trip and spawn


async def rtt_browsermesh(app: ShopApp, count: int, mode: str) -> dict[str, Any]:
    from mcp import Client

    async with Client(browsermesh_params(), mode=mode) as client:
        created = await client.call_tool("browser_session_create", {})
        data = created.structured_content
        addr = {"sessionId": data["session"]["sessionId"], "pageId": data["initialPage"]["pageId"]}
        await client.call_tool("browser_navigate", {**addr, "url": app.url("/login")})
        for _ in range(20):
            await client.call_tool("browser_get_url", addr)
        times = []
        for _ in range(count):
            started = time.perf_counter()
            result = await client.call_tool("browser_get_url", addr)
            times.append(time.perf_counter() - started)
            assert not result.is_error
        protocol = client.protocol_version
    return {
        "tool": "browser_get_url",
        "mode": mode,
        "protocol": protocol,
        **asdict(Stats.of(times)),
    }


PEER_CANDIDATES: dict[str, dict[str, Any]] = {
    "browser_tabs": {"action": "list"},
    "browser_console_messages": {"level": "error"},
    "browser_network_requests": {"static": False},
    "browser_snapshot": {},
}


async def rtt_peer(app: ShopApp, count: int) -> dict[str, Any]:
    from mcp import Client

    workdir = Path(tempfile.mkdtemp(prefix="bench-peer-rtt-"))
    try:
        async with Client(peer_params(workdir)) as client:
            await client.call_tool("browser_navigate", {"url": app.url("/login")})
            trial: dict[str, float] = {}
            for name, args in PEER_CANDIDATES.items():
                times = []
                for i in range(35):
                    started = time.perf_counter()
                    result = await client.call_tool(name, args)
                    if i >= 5:
                        times.append(time.perf_counter() - started)
                    assert not result.is_error, _text(result)
                trial[name] = median(times) * 1000
            cheapest = min(trial, key=lambda k: trial[k])
            times = []
            for _ in range(count):
                started = time.perf_counter()
                await client.call_tool(cheapest, PEER_CANDIDATES[cheapest])
                times.append(time.perf_counter() - started)
            protocol = client.protocol_version
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return {
        "tool": cheapest,
        "mode": "auto",
        "protocol": protocol,
        "candidates_median_ms": {k: round(v, 3) for k, v in trial.items()},
        **asdict(Stats.of(times)),
    }


async def spawn_times(kind: str, count: int, mode: str) -> dict[str, Any]:
    from mcp import Client

    times = []
    for _ in range(count):
        workdir = Path(tempfile.mkdtemp(prefix="bench-spawn-"))
        params = browsermesh_params() if kind == "browsermesh" else peer_params(workdir)
        started = time.perf_counter()
        async with Client(params, mode=mode) as client:
            times.append(time.perf_counter() - started)
            protocol = client.protocol_version
        shutil.rmtree(workdir, ignore_errors=True)
        await asyncio.sleep(0.3)
    return {
        "server": kind,
        "mode": mode,
        "protocol": protocol,
        "median_s": round(median(times), 4),
        "min_s": round(min(times), 4),
        "max_s": round(max(times), 4),
        "samples_s": [round(t, 4) for t in times],
    }


# ------------------------------------------------------------------------------- aggregation


def _mean_by_kind(dicts: list[dict[str, Any]], scale: float) -> dict[str, float]:
    kinds = sorted({k for d in dicts for k in d})
    return {k: round(sum(d.get(k, 0) for d in dicts) / len(dicts) / scale, 2) for k in kinds}


def is_clean(run: Run) -> bool:
    """Every flow succeeded and other work left the machine alone enough during the run."""
    return (
        not run.errors
        and math.isfinite(run.wall_s)
        and math.isfinite(run.foreign_cpu)
        and run.foreign_cpu <= FOREIGN_MAX
    )


def usable(tried: list[Run]) -> list[Run]:
    """The runs timings and memory come from: the clean ones, else the error-free ones, else
    those with a wall time, else all."""
    return (
        [r for r in tried if is_clean(r)]
        or [r for r in tried if not r.errors and math.isfinite(r.wall_s)]
        or [r for r in tried if math.isfinite(r.wall_s)]
        or tried
    )


def summarize(runs: list[Run]) -> list[dict[str, Any]]:
    rows = []
    for n in sorted({r.n for r in runs}):
        for way in WAYS:
            tried = [r for r in runs if r.n == n and r.way == way]
            if not tried:
                continue
            mine = usable(tried)
            durations = [d for r in mine for _s, d in r.calls]
            steps = sorted({s for r in mine for s, _d in r.calls})
            peak = median([r.pss_peak_kib for r in mine])
            rows.append(
                {
                    "n": n,
                    "way": way,
                    "reps": len(mine),
                    "wall_s": round(median([r.wall_s for r in mine]), 3),
                    "wall_s_all": [round(r.wall_s, 3) for r in mine],
                    "connect_s": round(median([r.connect_s for r in mine if r.connect_s]), 3)
                    if any(r.connect_s for r in mine)
                    else None,
                    "startup_s": round(median([r.startup_s for r in mine if r.startup_s]), 3)
                    if any(r.startup_s for r in mine)
                    else None,
                    "calls_per_flow": round(len(durations) / (n * len(mine)), 2),
                    "call": asdict(Stats.of(durations)) if durations else None,
                    "steps": {
                        s: asdict(Stats.of([d for r in mine for s2, d in r.calls if s2 == s]))
                        for s in steps
                    },
                    "pss_peak_mib": round(peak / 1024, 1),
                    "pss_per_session_mib": round(peak / 1024 / n, 1),
                    "pss_processes": max(r.pss_processes for r in mine),
                    "pss_samples": sum(r.pss_samples for r in mine),
                    "ok_flows": sum(r.verified for r in tried),
                    "flows": n * len(tried),
                    "errors": [e for r in tried for e in r.errors][:5],
                    "background_cpu": max(r.background_cpu for r in mine),
                    "foreign_cpu": round(max(r.foreign_cpu for r in mine), 3),
                    "clean_runs": sum(1 for r in tried if is_clean(r)),
                    "runs": len(tried),
                    "pss_peak_by_kind_mib": _mean_by_kind([r.pss_by_kind_kib for r in mine], 1024),
                    "cpu_s_by_kind": _mean_by_kind([r.cpu_s_by_kind for r in mine], 1),
                }
            )
    return rows


def _row(rows: list[dict[str, Any]], n: int, way: str) -> dict[str, Any] | None:
    return next((r for r in rows if r["n"] == n and r["way"] == way), None)


def paired_wall_ratio(runs: list[Run], n: int, other: str) -> tuple[float | None, str]:
    """BrowserMesh wall / ``other`` wall at N=n: the median over rounds in which both ran (back to
    back, so under the same background load), clean pairs first; else the ratio of medians."""
    for label, keep in (("clean", is_clean), ("error-free", lambda r: not r.errors)):
        pairs = []
        for rnd in sorted({r.rep for r in runs}):
            mesh = [r for r in runs if r.rep == rnd and r.n == n and r.way == "browsermesh"]
            them = [r for r in runs if r.rep == rnd and r.n == n and r.way == other]
            if mesh and them and keep(mesh[0]) and keep(them[0]):
                pairs.append(mesh[0].wall_s / them[0].wall_s)
        if pairs:
            return median(pairs), f"median of {len(pairs)} {label} back-to-back pair(s)"
    mine = usable([r for r in runs if r.n == n and r.way == "browsermesh"])
    theirs = usable([r for r in runs if r.n == n and r.way == other])
    if not mine or not theirs:
        return None, "not measured"
    ratio = median([r.wall_s for r in mine]) / median([r.wall_s for r in theirs])
    return ratio, "ratio of medians (no usable pair)"


def check_targets(
    rows: list[dict[str, Any]], runs: list[Run], rtt: dict[str, Any], spawn: dict[str, Any]
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []

    def ratio(n: int, key: str, other: str) -> float | None:
        mine, theirs = _row(rows, n, "browsermesh"), _row(rows, n, other)
        if mine is None or theirs is None or not theirs[key]:
            return None
        return float(mine[key]) / float(theirs[key])

    def add(
        name: str, value: float | None, goal: float, unit: str, text: str, basis: str = ""
    ) -> None:
        out.append(
            {
                "target": name,
                "value": None if value is None else round(value, 3),
                "goal": goal,
                "unit": unit,
                "met": None if value is None else value <= goal,
                "text": text,
                "basis": basis,
            }
        )

    value, basis = paired_wall_ratio(runs, 8, "floor")
    add(
        "wall_vs_floor_n8",
        value,
        TARGETS["wall_vs_floor_n8"],
        "×",
        "N=8 BrowserMesh wall time / floor",
        basis,
    )
    value, basis = paired_wall_ratio(runs, 8, "peer")
    add(
        "wall_vs_peer_n8",
        value,
        TARGETS["wall_vs_peer_n8"],
        "×",
        "N=8 BrowserMesh wall time / peer",
        basis,
    )
    add(
        "pss_vs_peer_n16",
        ratio(16, "pss_per_session_mib", "peer"),
        TARGETS["pss_vs_peer_n16"],
        "×",
        "N=16 BrowserMesh PSS per session / peer",
        "medians of the peaks",
    )
    mesh_rtt = rtt.get("browsermesh_auto")
    add(
        "get_url_median_ms",
        mesh_rtt["median_ms"] if mesh_rtt else None,
        TARGETS["get_url_median_ms"],
        "ms",
        "browser_get_url round trip, median (SDK client default mode)",
        f"{mesh_rtt['n']} calls" if mesh_rtt else "",
    )
    init = spawn.get("browsermesh_legacy")
    add(
        "initialize_median_s",
        init["median_s"] if init else None,
        TARGETS["initialize_median_s"],
        "s",
        "spawn → initialize answered, median",
        f"{len(init['samples_s'])} spawns" if init else "",
    )
    return out


# ---------------------------------------------------------------------------------- output


def _fmt(value: Any, digits: int = 2) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def render(data: dict[str, Any]) -> str:
    rows, env = data["rows"], data["environment"]
    table_rows = []
    for r in rows:
        floor = _row(rows, r["n"], "floor")
        rel = r["wall_s"] / floor["wall_s"] if floor else None
        call = r["call"] or {}
        table_rows.append(
            [
                r["n"],
                LABELS[r["way"]],
                _fmt(r["wall_s"]),
                f"{rel:.2f}×" if rel else "—",
                _fmt(r["connect_s"]),
                _fmt(r["calls_per_flow"], 0),
                _fmt(call.get("median_ms"), 1),
                _fmt(call.get("p95_ms"), 1),
                _fmt(r["pss_peak_mib"], 0),
                _fmt(r["pss_per_session_mib"], 0),
                r["pss_processes"],
                f"{r['ok_flows']}/{r['flows']}",
                f"{r['clean_runs']}/{r['runs']}",
                f"{r['foreign_cpu']:.0%}",
            ]
        )
    main_table = md_table(
        [
            "N",
            "way",
            "wall (s)",
            "vs floor",
            "connect (s)",
            "calls/flow",
            "call median (ms)",
            "call p95 (ms)",
            "peak PSS (MiB)",
            "PSS/session (MiB)",
            "processes",
            "flows OK",
            "clean runs",
            "other CPU",
        ],
        table_rows,
    )
    target_table = md_table(
        ["target", "measured", "goal", "result", "basis"],
        [
            [
                t["text"],
                f"{_fmt(t['value'], 3)} {t['unit']}",
                f"≤ {t['goal']} {t['unit']}",
                {True: "met", False: "**missed**", None: "not measured"}[t["met"]],
                t.get("basis", ""),
            ]
            for t in data["targets"]
        ],
    )
    rtt_rows = []
    for key, r in data["rtt"].items():
        rtt_rows.append(
            [
                "BrowserMesh" if key.startswith("browsermesh") else "@playwright/mcp",
                f"`{r['tool']}`",
                f"{r['mode']} ({r['protocol']})",
                r["n"],
                _fmt(r["median_ms"], 3),
                _fmt(r["p95_ms"], 3),
            ]
        )
    rtt_table = md_table(
        ["server", "call", "client mode (protocol)", "calls", "median (ms)", "p95 (ms)"], rtt_rows
    )
    spawn_rows = [
        [
            "BrowserMesh" if s["server"] == "browsermesh" else "@playwright/mcp",
            f"{s['mode']} ({s['protocol']})",
            len(s["samples_s"]),
            _fmt(s["median_s"], 3),
            _fmt(s["min_s"], 3),
            _fmt(s["max_s"], 3),
        ]
        for s in data["spawn"].values()
    ]
    spawn_table = md_table(
        ["server", "client mode (protocol)", "spawns", "median (s)", "min (s)", "max (s)"],
        spawn_rows,
    )
    step_rows = []
    for r in rows:
        for step, st in r["steps"].items():
            step_rows.append(
                [
                    r["n"],
                    LABELS[r["way"]],
                    step,
                    st["n"],
                    _fmt(st["median_ms"], 1),
                    _fmt(st["p95_ms"], 1),
                ]
            )
    step_table = md_table(["N", "way", "step", "calls", "median (ms)", "p95 (ms)"], step_rows)
    kinds = [
        "python",
        "node",
        "chromium browser",
        "chromium renderer",
        "chromium gpu",
        "chromium utility",
        "chromium zygote",
    ]
    cpu_rows = []
    for r in rows:
        by_kind = r["cpu_s_by_kind"]
        other = sum(v for k, v in by_kind.items() if k not in kinds)
        cpu_rows.append(
            [r["n"], LABELS[r["way"]]]
            + [_fmt(float(by_kind.get(k, 0.0)), 1) for k in kinds]
            + [_fmt(float(other), 1), _fmt(float(sum(by_kind.values())), 1)]
        )
    cpu_table = md_table(["N", "way", *kinds, "other", "total"], cpu_rows)
    errors = [(r["n"], r["way"], e) for r in rows for e in r["errors"]]
    lines = [
        "# Multisession benchmark",
        "",
        f"Generated by `python -m benchmarks.multisession` on {data['started']} "
        f"({data['duration_s']:.0f} s). Machine: {env['cpus']} CPUs, {env['memory_gib']} GiB; "
        f"{env['chromium']}; Python {env['python']}, browsermesh {env['browsermesh']}, "
        f"mcp {env['mcp']}, Playwright for Python {env['playwright_python']}; "
        f"Node {env['node']}, @playwright/mcp {env['playwright_mcp']}. "
        f"Rounds: {data['config']['repeat']} (each runs the three ways back to back, order "
        "rotated), plus re-runs of an N with an unclean run while time allows; medians over the "
        "clean runs are shown. A run is *clean* when all its flows passed and other work on the "
        f"machine used at most {data['config']['foreign_max']:.0%} of the CPUs during it "
        "(*other CPU*: the highest such share among the runs shown). Niceness of the benchmark "
        f"processes: {data['config']['nice']}.",
        "",
        "Workload per session: sign in, open a product, add it to the cart, read the cart, "
        "take a screenshot (each flow verified against the shop's server-side cart). "
        "*wall*: first call to last screenshot, browser start included, MCP server spawn/"
        "initialize excluded (shown as *connect*: spawn + initialize of the MCP server(s), "
        "concurrently for the peer's N servers). *calls/flow*: tool calls (floor: Playwright "
        "calls) per session. "
        "*PSS*: peak of the summed `Pss:` of every process tree involved (floor: its Python "
        "process + Playwright driver + Chromium; BrowserMesh: the server process tree incl. "
        "its Chromium; peer: all N node servers and their browsers).",
        "",
        "## Results",
        "",
        main_table,
        "",
        "## Targets",
        "",
        target_table,
        "",
        *_reference_lines(rows),
        "## MCP round trip on an open page",
        "",
        rtt_table,
        "",
        "Peer candidates tried (median ms over 30 calls): "
        + ", ".join(
            f"`{k}` {v:.2f}"
            for k, v in data["rtt"].get("peer", {}).get("candidates_median_ms", {}).items()
        )
        + ".",
        "",
        "## Spawn → initialize answered (fresh server, stdio)",
        "",
        spawn_table,
        "",
        f"Other work used {data.get('micro_foreign_cpu', 0.0):.0%} of the CPUs while the round "
        "trips and spawns were measured (both are re-measured once, keeping the cleaner set, "
        f"when that share is above {data['config']['foreign_max']:.0%}).",
        "",
        "## CPU seconds in the timed window, by process kind",
        "",
        "From `/proc/<pid>/stat` (utime + stime) of every process in the measured trees, "
        "between the first call and the last screenshot (mean over repetitions). `python` is "
        "the floor's worker or the BrowserMesh server; `node` is Playwright's driver (floor, "
        "BrowserMesh) or the peer servers themselves. With 2 CPUs, a wall time below "
        "total/2 is impossible.",
        "",
        cpu_table,
        "",
        "## Per-step latency",
        "",
        step_table,
        "",
    ]
    if errors:
        lines += ["## Errors", ""] + [f"- N={n} {way}: `{e}`" for n, way, e in errors] + [""]
    return "\n".join(lines)


def _reference_lines(rows: list[dict[str, Any]]) -> list[str]:
    """What the wall-time targets are up against: the floor and the CPU bound."""
    lines = []
    for n in (8, 16):
        floor, mesh, peer = (_row(rows, n, w) for w in WAYS)
        if floor is None or mesh is None or peer is None:
            continue
        cpus = os.cpu_count() or 1
        mesh_cpu = sum(mesh["cpu_s_by_kind"].values())
        floor_cpu = sum(floor["cpu_s_by_kind"].values())
        peer_cpu = sum(peer["cpu_s_by_kind"].values())
        lines.append(
            f"- N={n}: floor wall / peer wall = {floor['wall_s'] / peer['wall_s']:.2f}× "
            f"(no MCP server on top of Playwright can do better than the floor); CPU seconds "
            f"in the timed window: floor {floor_cpu:.1f}, BrowserMesh {mesh_cpu:.1f}, peer "
            f"{peer_cpu:.1f}, so on {cpus} CPUs, at this CPU cost, BrowserMesh's wall time "
            f"cannot drop below {mesh_cpu / cpus:.1f} s = "
            f"{mesh_cpu / cpus / peer['wall_s']:.2f}× the peer's."
        )
    return [*lines, ""] if lines else []


def plot(per_binary: dict[str, dict[str, Any]], path: Path) -> bool:
    """Wall time and PSS per session against N: one colour per way, one line style per binary."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot", file=sys.stderr)
        return False
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.8))
    styles = ("-", "--", ":", "-.")
    colours = {"floor": "tab:blue", "browsermesh": "tab:orange", "peer": "tab:green"}
    all_ns: set[int] = set()
    for (binary, data), style in zip(per_binary.items(), styles, strict=False):
        for way, marker in zip(WAYS, ("o", "s", "^"), strict=True):
            mine = [r for r in data["rows"] if r["way"] == way]
            if not mine:
                continue
            ns = [r["n"] for r in mine]
            all_ns.update(ns)
            kw = {"marker": marker, "linestyle": style, "color": colours[way]}
            label = f"{LABELS[way]}, {binary}"
            left.plot(ns, [r["wall_s"] for r in mine], label=label, **kw)
            right.plot(ns, [r["pss_per_session_mib"] for r in mine], label=label, **kw)
    for ax, title, ylabel in (
        (left, "Wall time", "seconds"),
        (right, "Peak PSS per session", "MiB"),
    ):
        ax.set_title(title)
        ax.set_xlabel("concurrent sessions (N)")
        ax.set_ylabel(ylabel)
        ax.set_xticks(sorted(all_ns))
        ax.grid(True, alpha=0.3)
        ax.set_ylim(bottom=0)
    left.legend(fontsize=7)
    fig.suptitle(
        "Sign in → product → add to cart → read cart → screenshot, N sessions at once "
        "(solid: full chromium, dashed: chromium-headless-shell)",
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def side_by_side(per_binary: dict[str, dict[str, Any]]) -> str:
    """One row per (N, way): wall time, wall vs floor and PSS per session for every binary."""
    binaries = list(per_binary)
    keys = sorted({(r["n"], WAYS.index(r["way"])) for d in per_binary.values() for r in d["rows"]})
    headers = ["N", "way"]
    for b in binaries:
        headers += [f"wall {b} (s)", f"vs floor ({b})"]
    if len(binaries) == 2:
        headers.append(f"wall {binaries[1]} / {binaries[0]}")
    headers += [f"PSS/session {b} (MiB)" for b in binaries]
    headers += ["flows OK", "clean runs"]
    out = []
    for n, w in keys:
        way = WAYS[w]
        rows = {b: _row(d["rows"], n, way) for b, d in per_binary.items()}
        line: list[object] = [n, LABELS[way]]
        for b in binaries:
            r, floor = rows[b], _row(per_binary[b]["rows"], n, "floor")
            line.append(_fmt(r["wall_s"]) if r else "—")
            line.append(f"{r['wall_s'] / floor['wall_s']:.2f}×" if r and floor else "—")
        if len(binaries) == 2:
            a, c = rows[binaries[0]], rows[binaries[1]]
            line.append(f"{c['wall_s'] / a['wall_s']:.2f}×" if a and c else "—")
        line += [_fmt(rows[b]["pss_per_session_mib"], 0) if rows[b] else "—" for b in binaries]
        line.append(" / ".join(f"{r['ok_flows']}/{r['flows']}" for r in rows.values() if r))
        line.append(" / ".join(f"{r['clean_runs']}/{r['runs']}" for r in rows.values() if r))
        out.append(line)
    return md_table(headers, out)


def target_rows(targets: list[dict[str, Any]]) -> str:
    return md_table(
        ["binary", "target", "measured", "goal", "result", "basis"],
        [
            [
                t.get("binary", ""),
                t["text"],
                f"{_fmt(t['value'], 3)} {t['unit']}",
                f"≤ {t['goal']} {t['unit']}",
                {True: "met", False: "**missed**", None: "not measured"}[t["met"]],
                t.get("basis", ""),
            ]
            for t in targets
        ],
    )


def render_combined(combined: dict[str, Any]) -> str:
    """The report: both binaries side by side, then each binary's full report."""
    per_binary = combined["binaries"]
    lines = [
        "# Multisession benchmark",
        "",
        "Generated by `python -m benchmarks.multisession --binary "
        + ",".join(per_binary)
        + "`: the same three ways (floor, BrowserMesh, peer) run once with each Chromium "
        "binary, all three ways given the same binary ("
        + "; ".join(
            f"{b}: `{BINARIES.get(b, b)}`, {d['environment']['chromium']}"
            for b, d in per_binary.items()
        )
        + "). Each binary's section below says how its runs went (clean runs, other CPU).",
        "",
        "## Both binaries",
        "",
        side_by_side(per_binary),
        "",
        "## Targets",
        "",
        target_rows(combined["targets"]),
        "",
    ]
    for binary, data in per_binary.items():
        body = render(data).splitlines()
        lines += [f"## Binary: {binary} (`{BINARIES.get(binary, binary)}`)", ""]
        lines += [("#" + line if line.startswith("## ") else line) for line in body[1:]]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------ main


async def run_all(args: argparse.Namespace) -> dict[str, Any]:
    runs: list[Run] = []
    rtt: dict[str, Any] = {}
    spawn: dict[str, Any] = {}
    begun = time.monotonic()
    budget = [args.quiet_budget]

    def quiet_now() -> Quiet:
        state = wait_quiet(max(min(args.quiet_wait, budget[0]), 0.0))
        budget[0] -= state.waited_s
        return state

    with ShopApp() as app:

        async def micro() -> tuple[dict[str, Any], dict[str, Any], float]:
            """Spawn → initialize and the round trips, with the share of the CPUs other work
            used meanwhile."""
            got_spawn: dict[str, Any] = {}
            got_rtt: dict[str, Any] = {}
            quiet_now()
            meter = ForeignMeter()
            if args.spawns:
                print("spawn → initialize ...", file=sys.stderr)
                got_spawn["browsermesh_legacy"] = await spawn_times(
                    "browsermesh", args.spawns, "legacy"
                )
                got_spawn["browsermesh_auto"] = await spawn_times(
                    "browsermesh", args.spawns, "auto"
                )
                if "peer" in args.ways:
                    got_spawn["peer_auto"] = await spawn_times("peer", args.spawns, "auto")
            if args.rtt_calls:
                print("round trips ...", file=sys.stderr)
                got_rtt["browsermesh_auto"] = await rtt_browsermesh(app, args.rtt_calls, "auto")
                got_rtt["browsermesh_legacy"] = await rtt_browsermesh(app, args.rtt_calls, "legacy")
                if "peer" in args.ways:
                    got_rtt["peer"] = await rtt_peer(app, args.rtt_calls)
            foreign = meter.share()
            print(f"(other CPU during these: {foreign:.0%})", file=sys.stderr)
            return got_spawn, got_rtt, foreign

        spawn, rtt, micro_foreign = await micro()

        async def one_round(rnd: int, n: int) -> None:
            # Rotate the order each round so that no way always runs first (or last).
            order = [args.ways[(i + rnd) % len(args.ways)] for i in range(len(args.ways))]
            for way in order:
                quiet = quiet_now()
                tag = f"{way}-n{n}-r{rnd}"
                t0 = time.monotonic()
                try:
                    if way == "floor":
                        run = await asyncio.to_thread(run_floor, app, n, tag, quiet, rnd)
                    elif way == "browsermesh":
                        run = await run_browsermesh(app, n, tag, quiet, rnd)
                    else:
                        run = await run_peer(app, n, tag, quiet, rnd)
                except Exception as exc:  # record the failure, go on with the next run
                    run = failed_run(way, n, rnd, quiet, exc)
                runs.append(run)
                print(
                    f"round {rnd} N={n:>2} {way:<11} wall {run.wall_s:6.2f} s  "
                    f"PSS {run.pss_peak_kib / 1024:7.0f} MiB ({run.pss_processes} procs)  "
                    f"ok {run.verified}/{n}  errors {len(run.errors)}  "
                    f"other CPU {run.foreign_cpu:.0%}{'' if is_clean(run) else ' (unclean)'}  "
                    f"[{time.monotonic() - t0:.0f} s]",
                    file=sys.stderr,
                )
                for e in run.errors[:3]:
                    print(f"    {e[:300]}", file=sys.stderr)

        for rnd in range(args.repeat):
            for n in args.ns:
                await one_round(rnd, n)
        # Re-run whole rounds for the N whose runs were not clean (other work on the machine),
        # while the time budget lasts: a round of N=16 takes about a minute.
        rnd = args.repeat
        for _ in range(args.max_retries):
            dirty = [
                n
                for n in args.ns
                if any(
                    not [r for r in runs if r.n == n and r.way == w and is_clean(r)]
                    for w in args.ways
                )
            ]
            if not dirty:
                break
            for n in dirty:
                if time.monotonic() - begun > args.time_budget - 5 * max(n, 4):
                    print(f"no time left to re-run N={n}", file=sys.stderr)
                    continue
                print(f"re-running N={n}: a run was not clean", file=sys.stderr)
                await one_round(rnd, n)
            rnd += 1
        # The same for the spawn and round-trip measurements: once more, keep the cleaner set.
        if (
            (args.spawns or args.rtt_calls)
            and micro_foreign > FOREIGN_MAX
            and time.monotonic() - begun < args.time_budget
        ):
            print("re-measuring spawn and round trips: other work was busy", file=sys.stderr)
            again = await micro()
            if again[2] < micro_foreign:
                spawn, rtt, micro_foreign = again
    rows = summarize(runs)
    return {
        "started": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "duration_s": round(time.monotonic() - begun, 1),
        "config": {
            "ns": args.ns,
            "ways": args.ways,
            "repeat": args.repeat,
            "foreign_max": FOREIGN_MAX,
            "rtt_calls": args.rtt_calls,
            "spawns": args.spawns,
            "nice": os.nice(0),
            "browsermesh_command": ["python", *browsermesh_params().args],
            "peer_command": ["node", str(PEER_CLI), "--isolated", "--headless", "..."],
        },
        "rows": rows,
        "rtt": rtt,
        "spawn": spawn,
        "micro_foreign_cpu": round(micro_foreign, 3),
        "targets": check_targets(rows, runs, rtt, spawn),
        "runs": [
            {k: v for k, v in asdict(r).items() if k != "calls"} | {"calls": len(r.calls)}
            for r in runs
        ],
    }


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.multisession")
    parser.add_argument("--ns", default="1,4,8,16", help="session counts (default 1,4,8,16)")
    parser.add_argument("--ways", default=",".join(WAYS), help="floor,browsermesh,peer")
    parser.add_argument("--repeat", type=int, default=3, help="runs per (way, N); median kept")
    parser.add_argument("--rtt-calls", type=int, default=200, help="round trips timed (0: skip)")
    parser.add_argument("--spawns", type=int, default=7, help="fresh spawns timed (0: skip)")
    parser.add_argument(
        "--quiet-wait",
        type=float,
        default=15.0,
        help="seconds to wait at most before each run for other CPU work to drop below 15%%",
    )
    parser.add_argument(
        "--quiet-budget",
        type=float,
        default=120.0,
        help="seconds of such waiting in the whole run, at most (keeps the run bounded)",
    )
    parser.add_argument(
        "--max-retries",
        type=int,
        default=2,
        help="extra rounds for an N with an unclean run (other CPU work > "
        f"{FOREIGN_MAX * 100:.0f}%% of the machine, or an error)",
    )
    parser.add_argument(
        "--time-budget",
        type=float,
        default=780.0,
        help="seconds after which no extra round starts (default 780)",
    )
    parser.add_argument(
        "--nice",
        type=int,
        default=0,
        help="niceness increment for the benchmark and everything it starts (negative needs root;"
        " use on a machine shared with other work)",
    )
    parser.add_argument(
        "--binary",
        default=os.environ.get("BENCH_BINARY", "both"),
        help="the Chromium of all three ways: chromium, headless-shell, both (default; "
        "BENCH_BINARY) or a path; comma-separated, run one after the other",
    )
    parser.add_argument("--out", type=Path, default=RESULTS, help="results directory")
    args = parser.parse_args(argv)
    args.binary = binaries_arg(args.binary)
    args.ns = [int(x) for x in args.ns.split(",") if x]
    args.ways = [w for w in args.ways.split(",") if w]
    unknown = set(args.ways) - set(WAYS)
    if unknown:
        parser.error(f"unknown ways: {', '.join(sorted(unknown))}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if "peer" in args.ways and not PEER_CLI.exists():
        print(
            f"@playwright/mcp is not installed at {PEER_CLI}; run bash benchmarks/run.sh "
            "(or pass --ways floor,browsermesh)",
            file=sys.stderr,
        )
        return 2
    if args.nice:
        os.nice(args.nice)
    per_binary: dict[str, dict[str, Any]] = {}
    spawns = args.spawns
    for binary in args.binary:
        use_binary(binary)
        print(f"== multisession, binary {binary}", file=sys.stderr, flush=True)
        env = environment()
        data = asyncio.run(run_all(args))
        data["environment"] = env
        per_binary[binary] = data
        # Spawn → initialize starts no browser: measured with the first binary only.
        args.spawns = 0
    args.spawns = spawns
    combined = {
        "binaries": per_binary,
        "targets": [t | {"binary": b} for b, d in per_binary.items() for t in d["targets"]],
    }
    args.out.mkdir(parents=True, exist_ok=True)
    write_json(args.out / "multisession.json", combined)
    text = render_combined(combined)
    (args.out / "multisession.md").write_text(text)
    plot(per_binary, args.out / "multisession.png")
    print(text)
    print("Targets:", file=sys.stderr)
    for t in combined["targets"]:
        print(
            f"  [{t['binary']}] {t['text']}: {_fmt(t['value'], 3)} {t['unit']} "
            f"(goal ≤ {t['goal']} {t['unit']}) "
            f"-> {({True: 'met', False: 'MISSED', None: 'not measured'})[t['met']]}",
            file=sys.stderr,
        )
    bad = [r for d in per_binary.values() for r in d["rows"] if r["ok_flows"] != r["flows"]]
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
