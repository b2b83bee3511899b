"""Settings and helpers shared by the benchmarks."""

from __future__ import annotations

import contextlib
import json
import math
import os
import platform
import shutil
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results"
# The two Chromium builds the benchmarks compare: Debian's full browser (run in its new headless
# mode) and Debian's `chromium-headless-shell` (the old headless mode, the build Playwright uses
# for headless runs when it can download one).
BINARIES = {
    "chromium": "/usr/bin/chromium",
    "headless-shell": "/usr/bin/chromium-headless-shell",
}
# The binary every benchmark starts: BENCH_CHROMIUM (a path) wins, else BENCH_BINARY (a name of
# BINARIES), else the full browser. `use_binary()` switches it for the rest of the process and
# for the child processes it starts (the floor's worker reads BENCH_CHROMIUM).
CHROMIUM = os.environ.get("BENCH_CHROMIUM") or BINARIES.get(
    os.environ.get("BENCH_BINARY", "chromium"), BINARIES["chromium"]
)
# The same four flags BrowserMesh passes (engine QUIET_FLAGS); --no-sandbox as we run as root.
QUIET_FLAGS = (
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)
FLOOR_ARGS = ("--no-sandbox", *QUIET_FLAGS)
# The peer (@playwright/mcp) is installed outside git, by benchmarks/run.sh.
PEER_DIR = Path(os.environ.get("BENCH_PEER_DIR", str(REPO / ".tools" / "peer")))
PEER_CLI = PEER_DIR / "node_modules" / "@playwright" / "mcp" / "cli.js"
PEER_VERSION = "0.0.83"


def binary_path(name: str) -> str:
    """The path of a binary given by name (``chromium``, ``headless-shell``) or by path."""
    return BINARIES.get(name, name)


def binary_label(path: str | None = None) -> str:
    """The name of a binary path (its key in BINARIES), else the path itself."""
    path = CHROMIUM if path is None else path
    return next((k for k, v in BINARIES.items() if v == path), path)


def use_binary(name: str) -> str:
    """Make ``name`` (a key of BINARIES or a path) the Chromium of this process and of the
    processes it starts from now on; returns its path."""
    global CHROMIUM
    path = binary_path(name)
    if not os.path.exists(path):
        raise SystemExit(
            f"no Chromium at {path}"
            + (" (apt-get install chromium-headless-shell)" if "headless-shell" in path else "")
        )
    CHROMIUM = path
    os.environ["BENCH_CHROMIUM"] = path
    return path


def binaries_arg(value: str) -> list[str]:
    """A comma-separated ``--binary`` value: names of BINARIES (``both``: all) or paths."""
    names = [v for v in value.split(",") if v]
    return list(BINARIES) if names == ["both"] else names


def browsermesh_args() -> list[str]:
    """``python -m browsermesh`` as the benchmarks run it (stdio, one process, one Chromium)."""
    return [
        "-m",
        "browsermesh",
        "--headless",
        "--no-persistence",
        "--log-level",
        "warn",
        "--browser-path",
        CHROMIUM,
    ]


def browsermesh_env() -> dict[str, str]:
    """The server imports ``browsermesh`` from this checkout's ``src/``: the stdio client passes
    only a minimal environment (no ``PYTHONPATH``), so without this an editable install made in
    another checkout (a git worktree sharing its venv) would be the code measured."""
    path = os.environ.get("PYTHONPATH")
    return {"PYTHONPATH": str(REPO / "src") + (os.pathsep + path if path else "")}


def browsermesh_params(**kw: Any) -> Any:
    from mcp import StdioServerParameters

    env = {**browsermesh_env(), **kw.pop("env", {})}
    return StdioServerParameters(
        command=sys.executable, args=browsermesh_args(), cwd=str(REPO), env=env, **kw
    )


def peer_args(output_dir: Path) -> list[str]:
    return [
        str(PEER_CLI),
        "--isolated",
        "--headless",
        "--executable-path",
        CHROMIUM,
        "--no-sandbox",  # we run as root; the peer has the flag, so pass it explicitly
        "--output-dir",
        str(output_dir),
    ]


def peer_params(output_dir: Path) -> Any:
    from mcp import StdioServerParameters

    return StdioServerParameters(
        command=shutil.which("node") or "node", args=peer_args(output_dir), cwd=str(output_dir)
    )


def step_timer(calls: list[tuple[str, float]]) -> Callable[[str, Awaitable[T]], Awaitable[T]]:
    """``timed(step, awaitable)``: await it and append ``(step, seconds)`` to `calls` (the
    floors' per-call timings)."""

    async def timed(step: str, awaitable: Awaitable[T]) -> T:
        started = time.perf_counter()
        result = await awaitable
        calls.append((step, time.perf_counter() - started))
        return result

    return timed


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank-interpolated percentile (q in 0..100); NaN for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    pos = (len(ordered) - 1) * q / 100
    low = math.floor(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def latency_stats(ms: Sequence[float]) -> dict[str, Any]:
    """`n`, `p50_ms`, `p95_ms`, `max_ms` of latencies in ms (None when there are none)."""
    if not ms:
        return {"n": 0, "p50_ms": None, "p95_ms": None, "max_ms": None}
    return {
        "n": len(ms),
        "p50_ms": round(percentile(ms, 50), 1),
        "p95_ms": round(percentile(ms, 95), 1),
        "max_ms": round(max(ms), 1),
    }


def median(values: Sequence[float]) -> float:
    return percentile(values, 50)


def md_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _run(cmd: list[str]) -> str:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=20, check=False)
        return (out.stdout or out.stderr).strip().splitlines()[0]
    except (OSError, IndexError, subprocess.TimeoutExpired):
        return "unknown"


def environment() -> dict[str, Any]:
    """What the numbers were measured on."""
    from importlib.metadata import version

    mem_kib = 0
    try:
        with open("/proc/meminfo") as fh:
            mem_kib = int(fh.readline().split()[1])
    except (OSError, ValueError, IndexError):
        pass
    peer = "not installed"
    with contextlib.suppress(OSError, ValueError, KeyError):
        peer = json.loads((PEER_CLI.parent / "package.json").read_text())["version"]
    return {
        "cpus": os.cpu_count(),
        "memory_gib": round(mem_kib / 1024 / 1024, 1),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "browsermesh": version("browsermesh"),
        "mcp": version("mcp"),
        "playwright_python": version("playwright"),
        "chromium": _run(["/usr/lib/chromium/chromium", "--version"])
        if os.path.exists("/usr/lib/chromium/chromium") and binary_label() == "chromium"
        else _run([CHROMIUM, "--version"]),
        "binary": binary_label(),
        "binary_path": CHROMIUM,
        "node": _run(["node", "--version"]),
        "playwright_mcp": peer,
    }


def _finite(value: Any) -> Any:
    """``value`` with NaN and infinities replaced by None (strict JSON)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(_finite(data), indent=2, allow_nan=False) + "\n")


def paired_cli(
    stem: str,
    measure: Callable[[int, int], dict[str, Any]],
    render: Callable[[dict[str, Any]], str],
    *,
    rounds: int,
    argv: list[str] | None,
) -> dict[str, Any]:
    """The command line of the paired N-flow benchmarks (`python -m benchmarks.<stem> [--n 8]
    [--rounds R] [--out DIR]`): `measure(n, rounds)` gives the summary, written as
    `<stem>.json` and, rendered, `<stem>.md` (also printed); the summary is returned."""
    import argparse

    parser = argparse.ArgumentParser(prog=f"python -m benchmarks.{stem}")
    parser.add_argument("--n", type=int, default=8, help="concurrent flows (default 8)")
    parser.add_argument(
        "--rounds", type=int, default=rounds, help=f"rounds of every mode (default {rounds})"
    )
    parser.add_argument("--out", type=Path, default=RESULTS, help="results directory")
    args = parser.parse_args(argv)
    summary = measure(args.n, args.rounds)
    args.out.mkdir(parents=True, exist_ok=True)
    write_json(args.out / f"{stem}.json", summary)
    text = render(summary)
    (args.out / f"{stem}.md").write_text(text)
    print(text)
    return summary
