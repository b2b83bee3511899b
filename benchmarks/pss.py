"""Peak PSS of process trees, sampled from ``/proc`` (Linux only, standard library only).

PSS (proportional set size) charges each shared page to the processes that map it in equal
parts, so the PSS of a set of processes adds up without double counting what they share (the
Chromium binary, fonts, shared memory between the browser and its renderers).

``PssSampler`` runs the sampling loop in a child process (``python -m benchmarks.pss``) so that
reading ``smaps_rollup`` never competes with the benchmark's own event loop for the GIL. The
sampler is given root pids or a parent pid plus a command-line pattern; every sample walks the
current process table, takes the roots' descendants (processes started during the run are
included) and sums their ``Pss:`` lines.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["PssSampler", "children_matching", "process_table", "tree_pss_kib"]


def _ppid_and_cmd(pid: int) -> tuple[int, bytes] | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            cmd = fh.read()
    except OSError:
        return None
    try:
        ppid = int(stat.rsplit(b")", 1)[1].split()[1])
    except (IndexError, ValueError):
        return None
    return ppid, cmd


def process_table() -> dict[int, tuple[int, bytes]]:
    """pid -> (ppid, raw cmdline) for every live process."""
    table: dict[int, tuple[int, bytes]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            info = _ppid_and_cmd(int(entry))
            if info is not None:
                table[int(entry)] = info
    return table


def children_matching(parent: int, needle: bytes) -> list[int]:
    """Direct children of ``parent`` whose command line contains ``needle``."""
    return sorted(
        pid for pid, (ppid, cmd) in process_table().items() if ppid == parent and needle in cmd
    )


def descendants(roots: Iterable[int], table: dict[int, tuple[int, bytes]]) -> set[int]:
    """``roots`` (those alive) and every process below them."""
    children: dict[int, list[int]] = {}
    for pid, (ppid, _cmd) in table.items():
        children.setdefault(ppid, []).append(pid)
    found: set[int] = set()
    stack = [r for r in roots if r in table]
    while stack:
        pid = stack.pop()
        if pid in found:
            continue
        found.add(pid)
        stack.extend(children.get(pid, ()))
    return found


def pss_kib(pid: int) -> int:
    """The ``Pss:`` of one process in KiB (0 if it is gone or unreadable)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as fh:
            for line in fh:
                if line.startswith(b"Pss:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return 0
    return 0


def tree_pss_kib(roots: Iterable[int]) -> tuple[int, int]:
    """(total PSS in KiB, process count) over ``roots`` and their descendants, right now."""
    pids = descendants(roots, process_table())
    return sum(pss_kib(p) for p in pids), len(pids)


_KINDS = (
    (b"--type=renderer", "chromium renderer"),
    (b"--type=gpu-process", "chromium gpu"),
    (b"--type=utility", "chromium utility"),
    (b"--type=zygote", "chromium zygote"),
    (b"--type=", "chromium other"),
)


def kind_of(cmd: bytes) -> str:
    """A coarse process kind from a raw command line."""
    for marker, kind in _KINDS:
        if marker in cmd:
            return kind
    argv0 = cmd.split(b"\0", 1)[0].rsplit(b"/", 1)[-1]
    if b"chrom" in argv0:
        return "chromium browser"
    if argv0.startswith(b"node"):
        return "node"
    if argv0.startswith(b"python"):
        return "python"
    return "other"


def _system_busy_ticks() -> int:
    """Busy clock ticks of all CPUs together since boot (``/proc/stat``, idle and iowait out)."""
    with open("/proc/stat") as fh:
        parts = [int(x) for x in fh.readline().split()[1:]]
    return sum(parts[:8]) - parts[3] - parts[4]  # user..steal, less idle and iowait


def _cpu_ticks(pid: int) -> tuple[int, int] | None:
    """(utime + stime in clock ticks, start time) of one process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        return int(fields[11]) + int(fields[12]), int(fields[19])
    except (OSError, ValueError, IndexError):
        return None


@dataclass
class PssResult:
    peak_kib: int
    peak_processes: int
    samples: int
    peak_by_kind_kib: dict[str, int]
    cpu_s_by_kind: dict[str, float]  # CPU seconds used between mark() and end()
    window_s: float  # seconds between mark() and end()
    system_busy_s: float  # CPU seconds the machine was busy in that window, less the harness

    def foreign_share(self) -> float:
        """The share of the machine's CPUs that other work (neither the measured trees nor the
        benchmark and this sampler) used between mark() and end(): a noise indicator."""
        if self.window_s <= 0:
            return 0.0
        ours = sum(self.cpu_s_by_kind.values())
        capacity = self.window_s * (os.cpu_count() or 1)
        return max(0.0, self.system_busy_s - ours) / capacity


class PssSampler:
    """Samples the PSS of process trees in a child process; ``stop()`` returns the peak.

    Roots are either explicit ``pids`` or, when ``parent`` and ``needle`` are given, the direct
    children of ``parent`` whose command line contains ``needle`` (re-resolved at every sample,
    so servers spawned after the sampler started are found). ``mark()`` and ``end()`` bracket the
    window whose CPU time is reported per process kind.
    """

    def __init__(
        self,
        *,
        pids: Iterable[int] = (),
        parent: int | None = None,
        needle: str | None = None,
        interval: float = 0.25,
    ) -> None:
        spec = {"pids": list(pids), "parent": parent, "needle": needle, "interval": interval}
        # The spec goes through stdin, not argv: the sampler's own command line must not
        # contain the needle (it would match itself).
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.pss"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
        )
        self._send(json.dumps(spec))
        assert self._proc.stdout is not None
        self._proc.stdout.readline()  # "ready": the first sample has been taken

    def _send(self, line: str) -> None:
        assert self._proc.stdin is not None
        self._proc.stdin.write(line.encode() + b"\n")
        self._proc.stdin.flush()

    def mark(self) -> None:
        """Start of the CPU-time window (takes a sample at once)."""
        self._send("mark")

    def end(self) -> None:
        """End of the CPU-time window (takes a sample at once)."""
        self._send("end")

    def close(self) -> None:
        """Stop the sampler if it still runs (after an error); ``stop()`` is the normal end."""
        if self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()

    def stop(self) -> PssResult:
        out, _err = self._proc.communicate(b"stop\n", timeout=30)
        data = json.loads(out.decode().strip().splitlines()[-1])
        return PssResult(
            data["peak_kib"],
            data["peak_processes"],
            data["samples"],
            data["peak_by_kind_kib"],
            data["cpu_s_by_kind"],
            data["window_s"],
            data["system_busy_s"],
        )


def _sample_loop() -> None:
    import selectors

    buffer = b""

    def read_lines() -> list[str]:
        nonlocal buffer
        chunk = os.read(0, 4096)
        if not chunk:
            return ["stop"]
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        return [line.decode().strip() for line in lines]

    while b"\n" not in buffer:
        buffer += os.read(0, 4096)
    first, buffer = buffer.split(b"\n", 1)
    spec = json.loads(first)
    interval = float(spec["interval"])
    fixed = [int(p) for p in spec["pids"]]
    parent = spec.get("parent")
    needle = str(spec["needle"]).encode() if spec.get("needle") else None
    me = os.getpid()
    ticks_per_s = os.sysconf("SC_CLK_TCK")
    peak, peak_n, samples = 0, 0, 0
    peak_kinds: dict[str, int] = {}
    cpu: dict[tuple[int, int], tuple[str, int]] = {}  # (pid, start) -> (kind, ticks)
    base: dict[tuple[int, int], int] | None = None
    final: dict[tuple[int, int], tuple[str, int]] | None = None
    # (monotonic, busy ticks of the machine less the harness's own) at mark and at end
    window: list[tuple[float, int] | None] = [None, None]
    harness = (me, os.getppid())  # this sampler and the benchmark (its MCP clients) itself

    def harness_ticks() -> int:
        return sum((_cpu_ticks(pid) or (0, 0))[0] for pid in harness)

    def sample() -> None:
        nonlocal peak, peak_n, samples, peak_kinds
        table = process_table()
        roots = list(fixed)
        if parent is not None and needle is not None:
            roots += [p for p, (pp, cmd) in table.items() if pp == parent and needle in cmd]
        pids = descendants(roots, table) - {me}
        kinds: dict[str, int] = {}
        total = 0
        for pid in pids:
            kind = kind_of(table[pid][1])
            pss = pss_kib(pid)
            total += pss
            kinds[kind] = kinds.get(kind, 0) + pss
            ticks = _cpu_ticks(pid)
            if ticks is not None:
                key = (pid, ticks[1])
                if key in cpu and kind == "other":
                    kind = cpu[key][0]  # an exiting process has lost its command line
                cpu[key] = (kind, ticks[0])
        samples += 1
        if total > peak:
            peak, peak_n, peak_kinds = total, len(pids), kinds

    sel = selectors.DefaultSelector()
    sel.register(0, selectors.EVENT_READ)
    sample()
    print("ready", flush=True)
    stopping = False
    while not stopping:
        started = time.monotonic()
        sample()
        left = interval - (time.monotonic() - started)
        if not sel.select(timeout=max(left, 0.0)):
            continue
        for command in read_lines():
            if command == "mark":
                sample()
                base = {key: ticks for key, (_kind, ticks) in cpu.items()}
                window[0] = (time.monotonic(), _system_busy_ticks() - harness_ticks())
            elif command == "end":
                sample()
                final = dict(cpu)
                window[1] = (time.monotonic(), _system_busy_ticks() - harness_ticks())
            elif command == "stop":
                stopping = True
    sample()
    cpu_by_kind: dict[str, float] = {}
    if base is not None:
        for key, (kind, ticks) in (final if final is not None else cpu).items():
            used = (ticks - base.get(key, 0)) / ticks_per_s
            cpu_by_kind[kind] = round(cpu_by_kind.get(kind, 0.0) + used, 2)
    window_s = system_busy_s = 0.0
    if window[0] is not None:
        end = window[1] or (time.monotonic(), _system_busy_ticks() - harness_ticks())
        window_s = end[0] - window[0][0]
        system_busy_s = (end[1] - window[0][1]) / ticks_per_s
    result = {
        "window_s": round(window_s, 3),
        "system_busy_s": round(system_busy_s, 2),
        "peak_kib": peak,
        "peak_processes": peak_n,
        "samples": samples,
        "peak_by_kind_kib": peak_kinds,
        "cpu_s_by_kind": cpu_by_kind,
    }
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    _sample_loop()
