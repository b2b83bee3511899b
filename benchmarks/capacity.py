"""The capacity benchmark (issue 33): N = 200 sessions in ONE BrowserMesh server, 20 of them
working at a time for 2 minutes while the rest stay open, and how many ``@playwright/mcp``
servers (one per session) the same memory holds.

**BrowserMesh.** One ``python -m browsermesh`` stdio server (``--max-sessions N``: the default cap
is 50), one MCP SDK client, the loopback shop of ``benchmarks/app.py``, the headless shell.

1. *Open*: every session is created and signed in, at most ``--open-concurrency`` at a time:
   ``browser_session_create``, ``browser_navigate`` ``/login``, ``browser_fill`` Username and
   Password (label locators), ``browser_click`` "Sign in" (form POST → ``sid`` cookie). The shop
   must have signed every user in.
2. *Idle probe*: ``browser_get_url`` on the open sessions, rotating, every 50 ms for 3 s (after a
   0.5 s warm-up) while nothing else runs.
3. *Load* (``--seconds``): ``--active`` workers each take the next session from a rotating queue
   and run the rest of the multisession flow on it (``browser_navigate`` ``/product/1``,
   ``browser_click`` "Add to cart", ``browser_navigate`` ``/cart``, ``browser_visible_text`` of
   the cart, ``browser_screenshot``), then put it back at the end of the queue. Each flow is
   verified like the multisession benchmark's: the cart must read ``Blue teapot × k`` after the
   session's k-th flow, the screenshot must be a PNG, and at the end the shop's server-side cart
   of every user must hold exactly as many teapots as its session ran flows. Meanwhile the probe
   calls ``browser_get_url`` every 50 ms on a session that is idle (rotating; never one in a flow
   or with a probe call in flight), open loop: each call is sent when it is due whether or not
   the previous ones answered, its latency counted from when it was due.
4. *Close*: every session is closed.

The server's per-call budget is ``--timeout-ms`` (default 60,000, as in the scale benchmark);
calls slower than the server's default 10 s are counted apart. Every tool call is counted (sent,
answered, error results, failed checks). The PSS of the server's
process tree (the Python server, Playwright's driver, Chromium) is sampled every second in a
separate process (``benchmarks/pss.py``); the peak over the whole run, divided by N, is the PSS per
session. CPU seconds per process kind are taken over the load window.

**The peer.** ``@playwright/mcp`` servers (``node cli.js --isolated --headless --executable-path
<binary>``), one per session, are spawned one at a time; each runs the multisession flow once with
its own tools (``benchmarks.multisession.peer_flow``: it signs in, adds to the cart, reads the
cart; verified) and then stays open. After each addition the PSS of every peer tree is summed;
servers are added until one fails (or an earlier one has exited) or the sum reaches
``--peer-max-gib`` (default 12 GiB; the machine has 24). Reported: how many servers, PSS per
server, and how many BrowserMesh sessions the same memory holds at the PSS per session measured
above.

Run: ``python -m benchmarks.capacity [--sessions 200] [--active 20] [--seconds 120]
[--peer-max-gib 12] [--no-peer] [--out DIR]``; writes ``benchmarks/results/capacity.{md,json}``.
A quick check: ``--sessions 12 --active 4 --seconds 20 --peer-max-gib 1``. Exit status 0 when
it ran (targets met or not), 1 when a part could not run, 2 without the peer installed (unless
``--no-peer``), 130 on Ctrl-C. Whatever it spawned is gone when it returns: the servers are
closed, then anything left below this process or in the sessions of the servers and their
browsers is killed (:func:`kill_leftovers`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import math
import os
import shutil
import signal
import sys
import tempfile
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks import common
from benchmarks.app import PASSWORD, ShopApp
from benchmarks.common import (
    BINARIES,
    PEER_CLI,
    RESULTS,
    binary_label,
    browsermesh_params,
    environment,
    latency_stats,
    md_table,
    median,
    peer_params,
    percentile,
    use_binary,
    write_json,
)
from benchmarks.multisession import (
    FOREIGN_MAX,
    MESH_NEEDLE,
    PEER_NEEDLE,
    _has_png,
    _text,
    peer_flow,
    wait_gone,
    wait_quiet,
)
from benchmarks.pss import (
    PssResult,
    PssSampler,
    children_matching,
    descendants,
    kind_of,
    process_table,
    pss_kib,
    tree_pss_kib,
)

# The numbers (the defaults) and targets.
SESSIONS = 200
ACTIVE = 20
SECONDS = 120.0
PEER_MAX_GIB = 12.0
TARGET_PSS_PER_SESSION_MIB = 35.0
TARGET_PROBE_P95_MS = 250.0

PROBE_TOOL = "browser_get_url"
CALL_TIMEOUT_S = 180.0  # the client's wait for one answer
SERVER_DEFAULT_TIMEOUT_MS = 10_000  # BROWSERMESH_TIMEOUT_MS when unset
SAMPLE_EVERY_S = 1.0  # PSS sampling: ~N renderers to read each time, on 2 CPUs
PEER_SETTLE_S = 0.5  # after a peer's flow, before its PSS is summed
PEER_ADD_TIMEOUT_S = 300.0  # spawn + initialize + flow of one peer server
MAX_MESSAGES = 20
CART_ITEM = "Blue teapot"
KIB_PER_GIB = 1024 * 1024

# The sessions of every process tree this process spawned: each stdio server's (the SDK starts it
# with start_new_session) and each Chromium's (Playwright starts the browser detached, in a
# session of its own). Whatever is left in them is killed at the end.
_SPAWNED_SIDS: dict[int, int] = {}  # session id -> its leader's start time


class Counted(Exception):
    """A failure already counted in the :class:`Tally`."""


class CallError(Counted):
    """A tool call answered with an error, or not answered at all."""


class CheckError(Counted):
    """A flow whose result is not what the shop holds."""


@dataclass
class Tally:
    """Every tool call of the BrowserMesh part: sent, answered, errors, and seconds per step."""

    sent: int = 0
    answered: int = 0
    tool_errors: int = 0  # answered with isError
    unanswered: int = 0  # no answer (timeout, transport)
    check_errors: int = 0  # answered, but the page or the shop is not as expected
    messages: list[str] = field(default_factory=list)
    steps: dict[str, list[float]] = field(default_factory=dict)

    @property
    def errors(self) -> int:
        return self.tool_errors + self.unanswered + self.check_errors

    def note(self, text: str) -> None:
        if len(self.messages) < MAX_MESSAGES:
            self.messages.append(text[:300])

    def check_failed(self, text: str) -> CheckError:
        self.check_errors += 1
        self.note(text)
        return CheckError(text)

    async def call(self, client: Any, step: str, name: str, args: dict[str, Any]) -> Any:
        """``client.call_tool`` counted and timed under ``step``; raises :class:`CallError` for
        an error result or no answer."""
        self.sent += 1
        started = time.perf_counter()
        try:
            result = await client.call_tool(name, args, read_timeout_seconds=CALL_TIMEOUT_S)
        except Exception as exc:
            self.unanswered += 1
            self.note(f"{step}: {name} not answered: {type(exc).__name__}: {exc}")
            raise CallError(f"{name}: {type(exc).__name__}: {exc}") from exc
        self.answered += 1
        self.steps.setdefault(step, []).append(time.perf_counter() - started)
        if result.is_error:
            self.tool_errors += 1
            self.note(f"{step}: {name}: {_text(result)[:250]}")
            raise CallError(f"{name}: {_text(result)[:250]}")
        return result


@dataclass
class Seat:
    """One BrowserMesh session and its shop user."""

    user: str
    session_id: str | None = None
    addr: dict[str, str] = field(default_factory=dict)  # sessionId, pageId once signed in
    flows: int = 0  # flows completed (teapots in the cart)
    broken: bool = False  # a call of it failed: out of the rotation

    @property
    def usable(self) -> bool:
        return bool(self.addr) and not self.broken


@dataclass
class Probe:
    """Open-loop ``browser_get_url`` calls on idle sessions: latencies (ms) from when each was
    due, errors, and ticks with no idle session to call."""

    latencies_ms: list[float] = field(default_factory=list)
    errors: int = 0
    skipped: int = 0


# ------------------------------------------------------------------------------------ helpers


def _mib(kib: float) -> float:
    return round(kib / 1024, 1)


def _tree_pss(needle: str) -> tuple[int, int]:
    """(PSS KiB, processes) of the trees of our direct children whose command line has
    ``needle``, right now."""
    return tree_pss_kib(children_matching(os.getpid(), needle.encode()))


def _snapshot(needle: str, sessions: int) -> dict[str, Any]:
    """The PSS of the trees of our children matching ``needle`` right now: total, per session,
    process count and MiB by process kind."""
    table = process_table()
    roots = [
        p for p, (ppid, cmd) in table.items() if ppid == os.getpid() and needle.encode() in cmd
    ]
    kinds: dict[str, int] = {}
    pids = descendants(roots, table)
    for pid in pids:
        kind = kind_of(table[pid][1])
        kinds[kind] = kinds.get(kind, 0) + pss_kib(pid)
    total = sum(kinds.values())
    return {
        "mib": _mib(total),
        "per_session_mib": round(total / 1024 / sessions, 1),
        "processes": len(pids),
        "by_kind_mib": {k: _mib(v) for k, v in sorted(kinds.items())},
    }


def _remember_servers(needle: str) -> None:
    """Note the sessions of the servers matching ``needle`` spawned so far and of every process
    below them (their browsers), each with its leader's start time."""
    table = process_table()
    roots = [
        p for p, (ppid, cmd) in table.items() if ppid == os.getpid() and needle.encode() in cmd
    ]
    own = os.getsid(0)
    for pid in descendants(roots, table):
        sid = _stat(pid)[0]
        if sid is not None and sid != own and sid not in _SPAWNED_SIDS:
            leader_start = _stat(sid)[1]
            if leader_start is not None:
                _SPAWNED_SIDS[sid] = leader_start


def _stat(pid: int) -> tuple[int | None, int | None, bytes]:
    """(session id, start time in clock ticks, state) of a process; (None, None, b"") when it is
    gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        return int(fields[3]), int(fields[19]), fields[0]
    except (OSError, ValueError, IndexError):
        return None, None, b""


def _leftovers() -> set[int]:
    """Live (not zombie) processes below this one or in the sessions it spawned. A session whose
    leader is alive but is not the process recorded (its id was reused) is left alone."""
    me = os.getpid()
    table = process_table()
    pids = descendants([me], table) - {me}
    sessions = {
        sid
        for sid, start in _SPAWNED_SIDS.items()
        if sid != os.getsid(0) and _stat(sid)[1] in (None, start)
    }
    if sessions:
        pids |= {p for p in table if p != me and _stat(p)[0] in sessions}
    return {p for p in pids if _stat(p)[2] not in (b"", b"Z")}


def kill_leftovers(grace_s: float = 10.0) -> int:
    """Wait up to ``grace_s`` for every process below this one and in the sessions of the
    servers and browsers it spawned to exit (Playwright starts a browser in a session of its
    own, so it leaves the server's tree, and closes it after the server has gone), then SIGKILL
    what is left; returns how many were killed."""
    deadline = time.monotonic() + grace_s
    pids = _leftovers()
    while pids and time.monotonic() < deadline:
        time.sleep(0.2)
        pids = _leftovers()
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    _SPAWNED_SIDS.clear()
    return len(pids)


# -------------------------------------------------------------------------------- BrowserMesh


async def sign_in(client: Any, tally: Tally, base: str, seat: Seat) -> None:
    """Create ``seat``'s session and sign its user in (the first five calls of ``mesh_flow``)."""
    created = await tally.call(
        client, "open: session", "browser_session_create", {"name": seat.user}
    )
    data = created.structured_content
    seat.session_id = data["session"]["sessionId"]
    addr = {"sessionId": data["session"]["sessionId"], "pageId": data["initialPage"]["pageId"]}
    await tally.call(client, "open: navigate", "browser_navigate", {**addr, "url": base + "/login"})
    for label, value in (("Username", seat.user), ("Password", PASSWORD)):
        await tally.call(
            client,
            "open: fill",
            "browser_fill",
            {**addr, "locator": {"strategy": "label", "value": label}, "value": value},
        )
    await tally.call(
        client,
        "open: click",
        "browser_click",
        {**addr, "locator": {"strategy": "role", "value": "button", "name": "Sign in"}},
    )
    seat.addr = addr


async def cart_flow(client: Any, tally: Tally, base: str, seat: Seat) -> None:
    """The rest of ``mesh_flow`` on a signed-in session: product, add to cart, cart, read it,
    screenshot; the cart must read ``Blue teapot × k`` for the session's k-th flow."""
    addr = seat.addr
    button = {"strategy": "role", "value": "button"}
    await tally.call(client, "navigate", "browser_navigate", {**addr, "url": base + "/product/1"})
    await tally.call(
        client, "click", "browser_click", {**addr, "locator": {**button, "name": "Add to cart"}}
    )
    await tally.call(client, "navigate", "browser_navigate", {**addr, "url": base + "/cart"})
    read = await tally.call(
        client,
        "read",
        "browser_visible_text",
        {**addr, "locator": {"strategy": "testId", "value": "cart-items"}},
    )
    shot = await tally.call(client, "screenshot", "browser_screenshot", addr)
    want = f"{CART_ITEM} × {seat.flows + 1}"
    text = str((read.structured_content or {}).get("text", ""))
    if want not in (line.strip() for line in text.splitlines()):
        raise tally.check_failed(f"{seat.user}: cart reads {text[:120]!r}, not {want!r}")
    if not _has_png(shot):
        raise tally.check_failed(f"{seat.user}: the screenshot is not a PNG")
    seat.flows += 1


async def probe_loop(
    client: Any,
    tally: Tally,
    seats: list[Seat],
    in_flow: set[int],
    probing: set[int],
    every_s: float,
    stop: asyncio.Event,
) -> Probe:
    """``browser_get_url`` every ``every_s`` until ``stop``, open loop, each call on the next
    idle session in rotation (not in a flow, no probe call of its own in flight)."""
    out = Probe()
    cursor = 0

    def next_idle() -> int | None:
        nonlocal cursor
        for _ in range(len(seats)):
            i, cursor = cursor, (cursor + 1) % len(seats)
            if seats[i].usable and i not in in_flow and i not in probing:
                return i
        return None

    async def one(i: int, due: float) -> None:
        probing.add(i)
        try:
            await tally.call(client, "probe", PROBE_TOOL, seats[i].addr)
        except Counted:
            out.errors += 1
        finally:
            probing.discard(i)
            out.latencies_ms.append((time.perf_counter() - due) * 1000)

    async with asyncio.TaskGroup() as group:
        due = time.perf_counter()
        while not stop.is_set():
            i = next_idle()
            if i is None:
                out.skipped += 1
            else:
                group.create_task(one(i, due))
            due += every_s
            await asyncio.sleep(max(0.0, due - time.perf_counter()))
    return out


async def _probe_for(
    client: Any, tally: Tally, seats: list[Seat], every_s: float, seconds: float
) -> Probe:
    stop = asyncio.Event()
    task = asyncio.create_task(probe_loop(client, tally, seats, set(), set(), every_s, stop))
    await asyncio.sleep(seconds)
    stop.set()
    return await task


async def load(
    client: Any,
    tally: Tally,
    base: str,
    seats: list[Seat],
    active: int,
    seconds: float,
    every_s: float,
) -> dict[str, Any]:
    """``active`` workers run :func:`cart_flow` on the sessions in rotation for ``seconds`` (a
    flow started goes to its end) while :func:`probe_loop` calls idle sessions."""
    queue = deque(i for i, s in enumerate(seats) if s.usable)
    in_flow: set[int] = set()
    probing: set[int] = set()
    flow_s: list[float] = []
    flow_errors = [0]
    started = time.perf_counter()
    deadline = started + seconds

    def take() -> int | None:
        for _ in range(len(queue)):
            i = queue.popleft()
            if i not in probing:
                return i
            queue.append(i)
        return None

    async def worker() -> None:
        while time.perf_counter() < deadline:
            i = take()
            if i is None:
                await asyncio.sleep(0.02)
                continue
            in_flow.add(i)
            t0 = time.perf_counter()
            try:
                await cart_flow(client, tally, base, seats[i])
                flow_s.append(time.perf_counter() - t0)
            except Exception as exc:
                if not isinstance(exc, Counted):
                    tally.check_failed(f"{seats[i].user}: {type(exc).__name__}: {exc}")
                seats[i].broken = True
                flow_errors[0] += 1
            finally:
                in_flow.discard(i)
                if not seats[i].broken:
                    queue.append(i)

    stop = asyncio.Event()
    prober = asyncio.create_task(probe_loop(client, tally, seats, in_flow, probing, every_s, stop))
    try:
        await asyncio.gather(*(worker() for _ in range(active)))
    finally:
        wall = time.perf_counter() - started
        stop.set()
        probe = await prober
    per_session = [s.flows for s in seats if s.addr]
    return {
        "wall_s": round(wall, 2),
        "flows": len(flow_s),
        "flow_errors": flow_errors[0],
        "flows_per_s": round(len(flow_s) / wall, 2) if wall > 0 else None,
        "flow_s": {
            "median": round(median(flow_s), 2) if flow_s else None,
            "p95": round(percentile(flow_s, 95), 2) if flow_s else None,
            "max": round(max(flow_s), 2) if flow_s else None,
        },
        "flows_per_session": {
            "min": min(per_session, default=0),
            "max": max(per_session, default=0),
        },
        "probe": latency_stats(probe.latencies_ms)
        | {"errors": probe.errors, "skipped": probe.skipped},
    }


async def run_mesh(app: ShopApp, args: argparse.Namespace, tag: str) -> dict[str, Any]:
    """The BrowserMesh part; raises only when it could not run at all (no server, no session)."""
    from mcp import Client

    n = args.sessions
    seats = [Seat(f"{tag}-{i}") for i in range(n)]
    tally = Tally()
    every_s = args.every_ms / 1000
    base = app.base_url
    params = browsermesh_params()
    params = params.model_copy(
        update={
            "args": [
                *params.args,
                "--max-sessions",
                str(n),
                "--timeout",
                str(args.timeout_ms),
            ]
        }
    )
    sampler = PssSampler(parent=os.getpid(), needle=MESH_NEEDLE, interval=SAMPLE_EVERY_S)
    begun = time.perf_counter()
    try:
        async with Client(params) as client:
            _remember_servers(MESH_NEEDLE)
            limit = asyncio.Semaphore(args.open_concurrency)
            browser_seen = [False]

            async def open_one(seat: Seat) -> None:
                async with limit:
                    try:
                        await sign_in(client, tally, base, seat)
                        if not browser_seen[0]:  # the first session started the browser
                            browser_seen[0] = True
                            _remember_servers(MESH_NEEDLE)
                    except Counted:
                        seat.broken = True
                    except Exception as exc:
                        seat.broken = True
                        tally.check_failed(f"{seat.user}: {type(exc).__name__}: {exc}")

            t0 = time.perf_counter()
            await asyncio.gather(*(open_one(s) for s in seats))
            open_s = time.perf_counter() - t0
            signed_in = app.signed_in()
            for seat in seats:
                if seat.usable and seat.user not in signed_in:
                    seat.broken = True
                    tally.check_failed(f"{seat.user}: the shop has not signed this user in")
            opened = sum(1 for s in seats if s.usable)
            print(
                f"capacity: {opened}/{n} sessions open and signed in in {open_s:.1f} s",
                file=sys.stderr,
                flush=True,
            )
            if opened == 0:
                raise RuntimeError(f"no session opened: {tally.messages[:3]}")
            snapshots = {"open": await asyncio.to_thread(_snapshot, MESH_NEEDLE, n)}
            await _probe_for(client, tally, seats, every_s, 0.5)  # warm-up
            idle = await _probe_for(client, tally, seats, every_s, 3.0)
            sampler.mark()
            loaded = await load(client, tally, base, seats, args.active, args.seconds, every_s)
            sampler.end()
            snapshots["after_load"] = await asyncio.to_thread(_snapshot, MESH_NEEDLE, n)
            print(
                f"capacity: {loaded['flows']} flows in {loaded['wall_s']:.1f} s, probe p50/p95 "
                f"{loaded['probe']['p50_ms']}/{loaded['probe']['p95_ms']} ms",
                file=sys.stderr,
                flush=True,
            )
            t0 = time.perf_counter()

            async def close_one(seat: Seat) -> None:
                if seat.session_id is None:
                    return
                async with limit:
                    with contextlib.suppress(Counted):
                        await tally.call(
                            client, "close", "browser_session_close", {"sessionId": seat.session_id}
                        )

            await asyncio.gather(*(close_one(s) for s in seats))
            close_s = time.perf_counter() - t0
        pss = sampler.stop()
    finally:
        sampler.close()
    await asyncio.to_thread(wait_gone, MESH_NEEDLE.encode())
    # The shop's side: every user's cart holds one teapot per flow of its session.
    for seat in seats:
        if seat.usable and app.cart(seat.user) != ({1: seat.flows} if seat.flows else {}):
            tally.check_failed(
                f"{seat.user}: the shop's cart is {app.cart(seat.user)}, after {seat.flows} flows"
            )
    return _mesh_result(
        n,
        args,
        tally,
        seats,
        open_s,
        close_s,
        snapshots,
        idle,
        loaded,
        pss,
        time.perf_counter() - begun,
    )


def _mesh_result(
    n: int,
    args: argparse.Namespace,
    tally: Tally,
    seats: list[Seat],
    open_s: float,
    close_s: float,
    snapshots: dict[str, dict[str, Any]],
    idle: Probe,
    loaded: dict[str, Any],
    pss: PssResult,
    total_s: float,
) -> dict[str, Any]:
    every = [d * 1000 for ds in tally.steps.values() for d in ds]
    budget_s = SERVER_DEFAULT_TIMEOUT_MS / 1000
    return {
        "sessions": n,
        "active": args.active,
        "seconds": args.seconds,
        "opened": sum(1 for s in seats if s.addr),
        "broken": sum(1 for s in seats if s.broken),
        "open_s": round(open_s, 1),
        "close_s": round(close_s, 1),
        "total_s": round(total_s, 1),
        "calls": {
            "sent": tally.sent,
            "answered": tally.answered,
            "tool_errors": tally.tool_errors,
            "unanswered": tally.unanswered,
            "check_errors": tally.check_errors,
            "errors": tally.errors,
            "over_default_budget": sum(1 for ms in every if ms > budget_s * 1000),
            "max_ms": round(max(every), 1) if every else None,
        },
        "errors": tally.messages,
        "steps": {
            step: {
                "n": len(ds),
                "median_ms": round(median(ds) * 1000, 1),
                "p95_ms": round(percentile(ds, 95) * 1000, 1),
                "max_ms": round(max(ds) * 1000, 1),
            }
            for step, ds in sorted(tally.steps.items())
        },
        "probe_idle": latency_stats(idle.latencies_ms) | {"errors": idle.errors},
        "load": loaded,
        # right after every session signed in, and right after the load (all idle both times)
        "pss_snapshots": snapshots,
        "pss_peak_mib": _mib(pss.peak_kib),
        "pss_per_session_mib": round(pss.peak_kib / 1024 / n, 1),
        "pss_peak_processes": pss.peak_processes,
        "pss_samples": pss.samples,
        "pss_by_kind_mib": {k: _mib(v) for k, v in sorted(pss.peak_by_kind_kib.items())},
        "cpu_s_by_kind": dict(sorted(pss.cpu_s_by_kind.items())),
        "cpu_s_total": round(sum(pss.cpu_s_by_kind.values()), 1),
        "foreign_cpu": round(pss.foreign_share(), 3),
    }


# ------------------------------------------------------------------------------- the peer


async def run_peer(
    app: ShopApp, args: argparse.Namespace, tag: str, mesh_per_session_mib: float | None
) -> dict[str, Any]:
    """Add ``@playwright/mcp`` servers one at a time (each runs ``peer_flow`` once and stays
    open) until one fails or their summed PSS reaches ``--peer-max-gib``."""
    from mcp import Client

    cap_kib = int(args.peer_max_gib * KIB_PER_GIB)
    workdir = Path(tempfile.mkdtemp(prefix="bench-capacity-peer-"))
    release = asyncio.Event()
    tasks: list[asyncio.Task[None]] = []
    added: list[dict[str, Any]] = []
    reason = ""
    pss: PssResult | None = None
    begun = time.perf_counter()

    async def one(k: int, ready: asyncio.Event, failure: list[str]) -> None:
        out = workdir / str(k)
        out.mkdir()
        user = f"{tag}-peer-{k}"
        calls: list[tuple[str, float]] = []
        try:
            # Each task enters and leaves its own client (anyio scopes belong to one task).
            async with Client(peer_params(out)) as client:
                try:
                    await peer_flow(client, app.base_url, user, calls)
                finally:
                    _remember_servers(PEER_NEEDLE)  # its browser too, once started
                if app.cart(user) != {1: 1}:
                    raise RuntimeError(f"the shop's cart of {user} is {app.cart(user)}")
                ready.set()
                await release.wait()
        except Exception as exc:
            failure.append(f"{type(exc).__name__}: {str(exc)[:300]}")
        finally:
            ready.set()

    sampler = PssSampler(parent=os.getpid(), needle=PEER_NEEDLE, interval=SAMPLE_EVERY_S)
    try:
        try:
            while True:
                k = len(tasks)
                if args.peer_max_servers and k >= args.peer_max_servers:
                    reason = f"--peer-max-servers {args.peer_max_servers} reached"
                    break
                ready = asyncio.Event()
                failure: list[str] = []
                t0 = time.perf_counter()
                tasks.append(asyncio.create_task(one(k, ready, failure)))
                try:
                    await asyncio.wait_for(ready.wait(), PEER_ADD_TIMEOUT_S)
                except TimeoutError:
                    failure.append(f"not ready after {PEER_ADD_TIMEOUT_S:.0f} s")
                took = time.perf_counter() - t0
                if failure:
                    reason = f"server {k + 1} failed: {failure[0]}"
                    break
                live = len(children_matching(os.getpid(), PEER_NEEDLE.encode()))
                if live < k + 1 or any(t.done() for t in tasks):
                    reason = f"an earlier server has exited ({live} of {k + 1} running)"
                    break
                await asyncio.sleep(PEER_SETTLE_S)
                kib, procs = await asyncio.to_thread(_tree_pss, PEER_NEEDLE)
                added.append(
                    {
                        "servers": k + 1,
                        "pss_mib": _mib(kib),
                        "processes": procs,
                        "add_s": round(took, 2),
                    }
                )
                print(
                    f"capacity: peer servers {k + 1}: PSS {kib / KIB_PER_GIB:.2f} GiB "
                    f"({procs} processes, added in {took:.1f} s)",
                    file=sys.stderr,
                    flush=True,
                )
                if kib >= cap_kib:
                    reason = f"PSS reached {args.peer_max_gib:g} GiB"
                    break
            pss = sampler.stop()
        finally:
            sampler.close()
    finally:
        release.set()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 120)
        await asyncio.to_thread(wait_gone, PEER_NEEDLE.encode())
        shutil.rmtree(workdir, ignore_errors=True)
    held = len(added)
    last_mib = added[-1]["pss_mib"] if added else 0.0
    per_server = round(last_mib / held, 1) if held else None
    cap_mib = args.peer_max_gib * 1024

    def fit(mib: float) -> int | None:
        if not mesh_per_session_mib:
            return None
        return math.floor(mib / mesh_per_session_mib)

    return {
        "servers": held,
        "stopped": reason,
        "pss_mib": last_mib,
        "pss_per_server_mib": per_server,
        "pss_peak_mib": _mib(pss.peak_kib) if pss else None,
        "pss_by_kind_mib": (
            {k: _mib(v) for k, v in sorted(pss.peak_by_kind_kib.items())} if pss else {}
        ),
        "add_s_median": round(median([a["add_s"] for a in added]), 2) if added else None,
        "cap_gib": args.peer_max_gib,
        "mesh_sessions_in_peer_pss": fit(last_mib),
        "mesh_sessions_in_cap": fit(cap_mib),
        "mesh_vs_peer_per_session": (
            round(mesh_per_session_mib / per_server, 3)
            if mesh_per_session_mib and per_server
            else None
        ),
        "additions": added,
        "total_s": round(time.perf_counter() - begun, 1),
    }


# ------------------------------------------------------------------------------- targets


def targets(mesh: dict[str, Any]) -> list[dict[str, Any]]:
    """The issue's four targets for the BrowserMesh part."""
    calls = mesh["calls"]
    p95 = mesh["load"]["probe"]["p95_ms"]
    clean = mesh["foreign_cpu"] <= FOREIGN_MAX
    return [
        {
            "target": "calls_answered",
            "text": "every call answered",
            "value": f"{calls['answered']:,}/{calls['sent']:,}",
            "goal": "all",
            "met": calls["answered"] == calls["sent"],
            "clean": clean,
        },
        {
            "target": "errors",
            "text": "errors (error results, unanswered calls, failed checks)",
            "value": f"{calls['errors']:,}",
            "goal": "0",
            "met": calls["errors"] == 0,
            "clean": clean,
        },
        {
            "target": "pss_per_session_mib",
            "text": f"PSS per session (server tree's peak / {mesh['sessions']})",
            "value": f"{mesh['pss_per_session_mib']:.1f} MiB",
            "goal": f"≤ {TARGET_PSS_PER_SESSION_MIB:g} MiB",
            "met": mesh["pss_per_session_mib"] <= TARGET_PSS_PER_SESSION_MIB,
            "clean": clean,
        },
        {
            "target": "idle_get_url_p95_ms",
            "text": f"`{PROBE_TOOL}` p95 on an idle session while {mesh['active']} run the flow",
            "value": "—" if p95 is None else f"{p95:,.1f} ms",
            "goal": f"≤ {TARGET_PROBE_P95_MS:g} ms",
            "met": None if p95 is None else p95 <= TARGET_PROBE_P95_MS,
            "clean": clean,
        },
    ]


# ------------------------------------------------------------------------------- report


def _fmt(v: Any, digits: int = 1) -> str:
    if v is None:
        return "—"
    if isinstance(v, float):
        return f"{v:,.{digits}f}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def render(data: dict[str, Any]) -> str:
    """``capacity.md``."""
    env, c, mesh, peer = data["environment"], data["config"], data["mesh"], data["peer"]
    reduced = (c["sessions"], c["active"], c["seconds"]) != (SESSIONS, ACTIVE, SECONDS)
    lines = [
        "# Capacity benchmark",
        "",
        f"Generated by `python -m benchmarks.capacity` on {data['started']} "
        f"({data['duration_s']:.0f} s). Machine: {env['cpus']} CPUs, {env['memory_gib']} GiB; "
        f"{env['binary']} ({env['chromium']}); Python {env['python']}, browsermesh "
        f"{env['browsermesh']}, mcp {env['mcp']}, Playwright for Python "
        f"{env['playwright_python']}, @playwright/mcp {env['playwright_mcp']}, Node "
        f"{env['node']}. Niceness {c['nice']}.",
        "",
    ]
    if reduced:
        lines += [
            f"**A reduced run** ({c['sessions']} sessions, {c['active']} active, "
            f"{c['seconds']:g} s): the issue's numbers are {SESSIONS} sessions, {ACTIVE} active, "
            f"{SECONDS:g} s; the targets below are checked all the same.",
            "",
        ]
    lines += [
        f"**BrowserMesh**: one stdio server (`--max-sessions {c['sessions']}`, per-call budget "
        f"`--timeout {c['timeout_ms']}`), one SDK client, {c['sessions']} sessions opened and "
        f"signed in (at most {c['open_concurrency']} at a time: `browser_session_create`, "
        '`browser_navigate` `/login`, `browser_fill` ×2, `browser_click` "Sign in"; the shop must '
        f"have signed every user in). Then for {c['seconds']:g} s, {c['active']} workers run the "
        "rest of the multisession flow on the sessions in rotation (`browser_navigate` "
        '`/product/1`, `browser_click` "Add to cart", `browser_navigate` `/cart`, '
        "`browser_visible_text` of the cart, `browser_screenshot`; the cart must read "
        "`Blue teapot × k` after a session's k-th flow, the screenshot must be a PNG, and the "
        "shop's cart of every user must hold one teapot per flow) while the others stay open. "
        f"*Probe*: `{PROBE_TOOL}` every {c['every_ms']:g} ms on an idle session (rotating; never "
        "one in a flow or with a probe call in flight), open loop, latency from when the call "
        "was due; *idle*: the same for 3 s before the load. *PSS*: peak of the server's process "
        "tree (Python server, Playwright's driver, Chromium) sampled every "
        f"{SAMPLE_EVERY_S:g} s over the whole run, per session = peak / {c['sessions']}. *CPU*: "
        "CPU seconds of that tree in the load window; *other CPU*: the share of the machine's "
        f"CPUs other work used meanwhile (a run is *clean* at most {FOREIGN_MAX:.0%}).",
        "",
        "## Targets",
        "",
    ]
    if mesh is None:
        lines += [f"BrowserMesh part NOT RUN: {data.get('mesh_error', '?')}", ""]
    else:
        lines += [
            md_table(
                ["target", "measured", "goal", "result"],
                [
                    [
                        t["text"],
                        t["value"],
                        t["goal"],
                        {True: "met", False: "**missed**", None: "not measured"}[t["met"]]
                        + ("" if t["clean"] else " (unclean run)"),
                    ]
                    for t in data["targets"]
                ],
            ),
            "",
        ]
        lines += _mesh_lines(mesh)
    lines += _peer_lines(c, peer, mesh)
    return "\n".join(lines)


def _mesh_lines(mesh: dict[str, Any]) -> list[str]:
    ld, calls = mesh["load"], mesh["calls"]
    pr, idle = ld["probe"], mesh["probe_idle"]
    rows = [
        ["sessions open and signed in", f"{mesh['opened']}/{mesh['sessions']}"],
        ["open (all sessions signed in)", f"{mesh['open_s']:.1f} s"],
        ["load window (until the last flow ended)", f"{ld['wall_s']:.1f} s"],
        [
            "flows completed (per session min / max)",
            f"{ld['flows']:,} ({ld['flows_per_session']['min']} / "
            f"{ld['flows_per_session']['max']}), {_fmt(ld['flows_per_s'], 2)}/s",
        ],
        [
            "flow duration median / p95 / max",
            f"{_fmt(ld['flow_s']['median'], 2)} / {_fmt(ld['flow_s']['p95'], 2)} / "
            f"{_fmt(ld['flow_s']['max'], 2)} s",
        ],
        [
            "calls sent / answered",
            f"{calls['sent']:,} / {calls['answered']:,} (max {_fmt(calls['max_ms'], 0)} ms; "
            f"{calls['over_default_budget']} over the server's default "
            f"{SERVER_DEFAULT_TIMEOUT_MS / 1000:g} s budget)",
        ],
        [
            "errors: error results / unanswered / failed checks",
            f"{calls['tool_errors']} / {calls['unanswered']} / {calls['check_errors']}",
        ],
        [
            f"probe under load p50 / p95 / max ({pr['n']:,} calls)",
            f"{_fmt(pr['p50_ms'])} / {_fmt(pr['p95_ms'])} / {_fmt(pr['max_ms'])} ms"
            + (f"; {pr['skipped']} ticks with no idle session" if pr["skipped"] else ""),
        ],
        [
            f"probe idle p50 / p95 / max ({idle['n']:,} calls)",
            f"{_fmt(idle['p50_ms'])} / {_fmt(idle['p95_ms'])} / {_fmt(idle['max_ms'])} ms",
        ],
        *(
            [
                f"PSS {label}, all idle (per session)",
                f"{snap['mib']:,.0f} MiB ({snap['per_session_mib']:.1f} MiB, "
                f"{snap['processes']} processes)",
            ]
            for label, snap in (
                ("after sign-in", mesh["pss_snapshots"]["open"]),
                ("after the load", mesh["pss_snapshots"]["after_load"]),
            )
        ),
        [
            "PSS peak (per session)",
            f"{mesh['pss_peak_mib']:,.0f} MiB ({mesh['pss_per_session_mib']:.1f} MiB, "
            f"{mesh['pss_peak_processes']} processes)",
        ],
        ["CPU seconds in the load window", f"{mesh['cpu_s_total']:.1f}"],
        ["other CPU in the load window", f"{mesh['foreign_cpu']:.0%}"],
        ["close (all sessions)", f"{mesh['close_s']:.1f} s"],
    ]
    snaps = mesh["pss_snapshots"]
    kinds = sorted(
        set(mesh["pss_by_kind_mib"])
        | set(mesh["cpu_s_by_kind"])
        | {k for snap in snaps.values() for k in snap["by_kind_mib"]}
    )
    out = [
        f"## BrowserMesh: {mesh['sessions']} sessions in one server, {mesh['active']} active",
        "",
        md_table(["", "measured"], rows),
        "",
        "## Per-step latency (ms)",
        "",
        md_table(
            ["step", "calls", "median", "p95", "max"],
            [
                [s, st["n"], _fmt(st["median_ms"]), _fmt(st["p95_ms"]), _fmt(st["max_ms"])]
                for s, st in mesh["steps"].items()
            ],
        ),
        "",
        "## By process kind: PSS (after sign-in, at the peak, after the load), CPU seconds in "
        "the load window",
        "",
        md_table(
            [
                "kind",
                "PSS after sign-in (MiB)",
                "PSS at peak (MiB)",
                "PSS after the load (MiB)",
                "CPU s",
            ],
            [
                [
                    k,
                    _fmt(snaps["open"]["by_kind_mib"].get(k)),
                    _fmt(mesh["pss_by_kind_mib"].get(k)),
                    _fmt(snaps["after_load"]["by_kind_mib"].get(k)),
                    _fmt(mesh["cpu_s_by_kind"].get(k)),
                ]
                for k in kinds
            ],
        ),
        "",
    ]
    if mesh["errors"]:
        out += ["## Errors (first ones)", "", *[f"- `{e}`" for e in mesh["errors"]], ""]
    return out


def _peer_lines(
    c: dict[str, Any], peer: dict[str, Any] | None, mesh: dict[str, Any] | None
) -> list[str]:
    out = ["## @playwright/mcp: servers (one per session) in the same memory", ""]
    if peer is None:
        return [*out, "Not run (`--no-peer`).", ""]
    if "error" in peer:
        return [*out, f"NOT RUN: {peer['error']}", ""]
    out += [
        f"`node cli.js --isolated --headless --executable-path {c['binary_path']} --no-sandbox "
        "--output-dir <tmp>` servers, spawned one at a time; each runs the multisession flow "
        "once with its own tools (sign in, product, add to cart, read the cart from a "
        "snapshot, screenshot; verified in the shop) and then stays open. After each addition "
        f"({PEER_SETTLE_S:g} s later) the PSS of every peer tree (node and its Chromium) is "
        f"summed; servers are added until one fails or the sum reaches {c['peer_max_gib']:g} GiB"
        + (f" (or {c['peer_max_servers']} servers)" if c["peer_max_servers"] else "")
        + ".",
        "",
    ]
    mesh_ps = mesh["pss_per_session_mib"] if mesh else None
    rows = [
        ["servers held", f"{peer['servers']}"],
        ["stopped because", peer["stopped"] or "—"],
        ["PSS of all peer servers at the last addition", f"{peer['pss_mib']:,.0f} MiB"],
        ["PSS per server (session)", f"{_fmt(peer['pss_per_server_mib'])} MiB"],
        ["PSS peak over the phase", f"{_fmt(peer['pss_peak_mib'], 0)} MiB"],
        ["spawn + flow per server (median)", f"{_fmt(peer['add_s_median'], 2)} s"],
        [
            "BrowserMesh sessions in the same memory",
            "—"
            if peer["mesh_sessions_in_peer_pss"] is None
            else f"{peer['mesh_sessions_in_peer_pss']:,} (at {mesh_ps} MiB per session)",
        ],
        [
            f"BrowserMesh sessions in {peer['cap_gib']:g} GiB",
            "—" if peer["mesh_sessions_in_cap"] is None else f"{peer['mesh_sessions_in_cap']:,}",
        ],
        [
            "BrowserMesh PSS per session / peer PSS per server",
            "—"
            if peer["mesh_vs_peer_per_session"] is None
            else f"{peer['mesh_vs_peer_per_session']:.3f}×",
        ],
    ]
    out += [
        md_table(["", "measured"], rows),
        "",
        "BrowserMesh's figure is the peak while its sessions ran the flow, divided by the "
        "session count and scaled linearly (the server, driver and browser process are shared, "
        "so more sessions cost somewhat less each; the server takes at most 1,000 sessions). "
        "The peer's is the sum over idle servers after their flow.",
        "",
        "Each addition:",
        "",
        md_table(
            ["servers", "PSS (MiB)", "processes", "spawn + flow (s)"],
            [
                [a["servers"], _fmt(a["pss_mib"], 0), a["processes"], _fmt(a["add_s"], 2)]
                for a in peer["additions"]
            ],
        ),
        "",
    ]
    if peer["pss_by_kind_mib"]:
        out += [
            "PSS at the phase's peak by kind: "
            + ", ".join(f"{k} {v:,.0f} MiB" for k, v in peer["pss_by_kind_mib"].items()),
            "",
        ]
    return out


# ------------------------------------------------------------------------------- main


async def run_all(args: argparse.Namespace) -> dict[str, Any]:
    """Both parts against one shop; the data of ``capacity.json``."""
    begun = time.monotonic()
    tag = f"cap{int(time.time()) % 100000}"
    data: dict[str, Any] = {
        "started": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "config": {
            "sessions": args.sessions,
            "active": args.active,
            "seconds": args.seconds,
            "every_ms": args.every_ms,
            "open_concurrency": args.open_concurrency,
            "timeout_ms": args.timeout_ms,
            "peer_max_gib": args.peer_max_gib,
            "peer_max_servers": args.peer_max_servers,
            "peer": not args.no_peer,
            "binary": binary_label(),
            "binary_path": BINARIES.get(args.binary, args.binary),
            "nice": os.nice(0),
            "foreign_max": FOREIGN_MAX,
        },
        "environment": environment(),
        "mesh": None,
        "targets": [],
        "peer": None,
    }
    with ShopApp() as app:
        quiet = await asyncio.to_thread(wait_quiet, args.quiet_wait)
        data["quiet_before"] = {"cpu": quiet.cpu, "load1": quiet.load1, "waited_s": quiet.waited_s}
        try:
            mesh = await run_mesh(app, args, tag)
        except Exception as exc:
            data["mesh_error"] = f"{type(exc).__name__}: {str(exc)[:400]}"
            print(f"capacity: BrowserMesh part failed: {data['mesh_error']}", file=sys.stderr)
        else:
            data["mesh"] = mesh
            data["targets"] = targets(mesh)
        if not args.no_peer:
            per_session = data["mesh"]["pss_per_session_mib"] if data["mesh"] else None
            try:
                data["peer"] = await run_peer(app, args, tag, per_session)
            except Exception as exc:
                data["peer"] = {"error": f"{type(exc).__name__}: {str(exc)[:400]}"}
                print(f"capacity: peer part failed: {data['peer']['error']}", file=sys.stderr)
    data["duration_s"] = round(time.monotonic() - begun, 1)
    return data


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.capacity")
    parser.add_argument(
        "--sessions",
        type=int,
        default=SESSIONS,
        help=f"sessions in the server (default {SESSIONS})",
    )
    parser.add_argument(
        "--active", type=int, default=ACTIVE, help=f"sessions in a flow at a time ({ACTIVE})"
    )
    parser.add_argument(
        "--seconds", type=float, default=SECONDS, help=f"length of the load (default {SECONDS:g})"
    )
    parser.add_argument(
        "--peer-max-gib",
        type=float,
        default=PEER_MAX_GIB,
        help=f"add peer servers until their PSS reaches this (default {PEER_MAX_GIB:g} GiB)",
    )
    parser.add_argument(
        "--peer-max-servers", type=int, default=0, help="stop adding peer servers at this many"
    )
    parser.add_argument("--no-peer", action="store_true", help="skip the @playwright/mcp part")
    parser.add_argument(
        "--binary",
        default="headless-shell",
        help="chromium, headless-shell (default) or a path: the Chromium of both parts",
    )
    parser.add_argument("--every-ms", type=float, default=50.0, help="probe interval (ms)")
    parser.add_argument(
        "--open-concurrency", type=int, default=10, help="sessions signed in at once (default 10)"
    )
    parser.add_argument(
        "--timeout-ms",
        type=int,
        default=60_000,
        help="the server's per-call budget, --timeout (default 60000)",
    )
    parser.add_argument("--quiet-wait", type=float, default=15.0, help="wait for quiet (s)")
    parser.add_argument("--nice", type=int, default=0, help="niceness increment (root: negative)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="results directory")
    args = parser.parse_args(argv)
    if not 1 <= args.sessions <= 1000:
        parser.error("--sessions must be 1..1000 (the server's --max-sessions range)")
    if not 1 <= args.active < args.sessions:
        parser.error("--active must be at least 1 and below --sessions (idle ones are probed)")
    if args.seconds <= 0 or args.peer_max_gib <= 0 or args.every_ms <= 0:
        parser.error("--seconds, --peer-max-gib and --every-ms must be positive")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if not args.no_peer and not PEER_CLI.exists():
        print(
            f"@playwright/mcp is not installed at {PEER_CLI}; run bash benchmarks/run.sh "
            "(or pass --no-peer)",
            file=sys.stderr,
        )
        return 2
    if args.nice:
        os.nice(args.nice)
    # The binary is switched for this benchmark only (benchmarks.run goes on with the caller's).
    previous = (common.CHROMIUM, os.environ.get("BENCH_CHROMIUM"))
    use_binary(args.binary)
    try:
        data = asyncio.run(run_all(args))
    except KeyboardInterrupt:
        print("capacity: interrupted", file=sys.stderr)
        return 130
    finally:
        killed = kill_leftovers()
        if killed:
            print(f"capacity: killed {killed} leftover processes", file=sys.stderr)
        common.CHROMIUM = previous[0]
        if previous[1] is None:
            os.environ.pop("BENCH_CHROMIUM", None)
        else:
            os.environ["BENCH_CHROMIUM"] = previous[1]
    args.out.mkdir(parents=True, exist_ok=True)
    write_json(args.out / "capacity.json", data)
    text = render(data)
    (args.out / "capacity.md").write_text(text)
    print(text)
    peer = data["peer"]
    could_not_run = data["mesh"] is None or (
        peer is not None and ("error" in peer or peer["servers"] == 0)
    )
    return 1 if could_not_run else 0


if __name__ == "__main__":
    raise SystemExit(main())
