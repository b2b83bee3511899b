"""The soak loop shared by `tests/stress/test_soak.py` (short) and `scripts/soak.py` (long).

Rounds of `workers` concurrent cycles run through the in-memory MCP client against a real-Chromium
runtime in this process. One cycle: create → navigate → snapshot (action table) → click the
Submit button by its ref → wait for its effect → close.

Resources are sampled only at quiescent points (every session of the round closed, renderers
gone, `gc.collect()` done), so the numbers compare like with like:
- server RSS: VmRSS of this process (the runtime runs in-process);
- Chromium RSS: summed VmRSS of the Chromium descendant processes, except the services Chromium
  starts on its own timers (`procs.BACKGROUND_SERVICES`, e.g. the on-device model service that
  appears ~3 minutes after launch); those are reported (`chromium_rss_all_kib`, `chromium_kinds`)
  but not counted as growth;
- open file descriptors of this process and live asyncio tasks.

The first sample is taken after a warm-up phase (Chromium launched, caches, JIT, allocator pools
and the SDK's lazy imports all settled); growth is measured against it.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from mcp import Client

from browsermesh.config import default_config
from browsermesh.factory import create_runtime
from browsermesh.log import EventLog
from browsermesh.mcp.server import create_server
from browsermesh.model.action_table import table_refs
from browsermesh.runtime.runtime import Runtime
from tests.fixtures.site import FixtureSite
from tests.support.eventually import eventually
from tests.support.procs import (
    BACKGROUND_SERVICES,
    chromium_descendants,
    chromium_rss_kib,
    open_fds,
    renderer_count,
    rss_kib,
)


@dataclass
class Sample:
    label: str
    elapsed_s: float
    cycles: int
    server_rss_kib: int
    chromium_rss_kib: int  # without BACKGROUND_SERVICES
    chromium_rss_all_kib: int
    chromium_processes: int  # without BACKGROUND_SERVICES
    chromium_kinds: list[str]  # every Chromium process, background services included
    fds: int
    tasks: int
    live_contexts: int

    def line(self) -> str:
        return json.dumps(asdict(self))


@dataclass
class Limits:
    """Allowed growth from the warm-up sample to the end sample."""

    rss_ratio: float = 0.10
    rss_slack_kib: int = 15 * 1024
    fd_slack: int = 2
    task_slack: int = 2


@dataclass
class SoakReport:
    warm: Sample | None = None
    end: Sample | None = None
    samples: list[Sample] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    cycles: int = 0

    def violations(self, limits: Limits) -> list[str]:
        out = list(self.errors)
        if self.warm is None or self.end is None:
            return [*out, "no warm-up or end sample"]
        w, e = self.warm, self.end
        for name in ("server_rss_kib", "chromium_rss_kib"):
            allowed = int(getattr(w, name) * (1 + limits.rss_ratio)) + limits.rss_slack_kib
            if getattr(e, name) > allowed:
                out.append(f"{name}: {getattr(e, name)} > {allowed} (warm {getattr(w, name)})")
        if e.fds > w.fds + limits.fd_slack:
            out.append(f"fds: {e.fds} > {w.fds} + {limits.fd_slack}")
        if e.tasks > w.tasks + limits.task_slack:
            out.append(f"tasks: {e.tasks} > {w.tasks} + {limits.task_slack}")
        if e.live_contexts != 0:
            out.append(f"live contexts at the end: {e.live_contexts}")
        grown = Counter(_workload(e.chromium_kinds)) - Counter(_workload(w.chromium_kinds))
        if grown:
            out.append(f"chromium processes appeared: {sorted(grown.elements())}")
        return out


def _workload(kinds: Iterable[str]) -> list[str]:
    return [k for k in kinds if k not in BACKGROUND_SERVICES]


class _Caller:
    """Calls tools and checks every success against its outputSchema."""

    def __init__(self, client: Client, tools: dict[str, Any]) -> None:
        self.client = client
        self.validators = {n: Draft202012Validator(t.output_schema) for n, t in tools.items()}

    async def ok(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        result = await asyncio.wait_for(self.client.call_tool(name, args), 30)
        if result.is_error:
            raise AssertionError(f"{name} failed: {result.content[0].text}")
        data: dict[str, Any] = result.structured_content
        self.validators[name].validate(data)
        return data


async def _cycle(c: _Caller, site: FixtureSite, n: int) -> None:
    created = await c.ok("browser_session_create", {"name": f"soak-{n}"})
    sid = created["session"]["sessionId"]
    addr = {"sessionId": sid, "pageId": created["initialPage"]["pageId"]}
    try:
        await c.ok("browser_navigate", {**addr, "url": site.url(f"/?value=soak{n}")})
        snap = await c.ok("browser_snapshot", {**addr, "format": "actions"})
        refs = [
            r["ref"]
            for r in table_refs(snap["snapshot"])
            if r["role"] == "button" and r.get("name") == "Submit"
        ]
        if len(refs) != 1:
            raise AssertionError(f"expected one Submit ref, got {snap['refs']}")
        await c.ok("browser_click", {**addr, "ref": refs[0]})
        condition = {"kind": "text", "text": "clicked", "state": "present"}
        await c.ok("browser_wait", {**addr, "condition": condition, "timeoutMs": 5000})
    finally:
        await c.ok("browser_session_close", {"sessionId": sid})


async def _sample(
    label: str, started: float, cycles: int, runtime: Runtime, renderers_base: int
) -> Sample:
    engine: Any = runtime.engine
    with contextlib.suppress(AssertionError):  # what is left is what the sample reports
        await eventually(lambda: engine.live_contexts() == 0, 10)
        await eventually(lambda: renderer_count() <= renderers_base, 10)
    await asyncio.sleep(0.3)
    gc.collect()
    kinds = chromium_descendants()
    return Sample(
        label=label,
        elapsed_s=round(time.monotonic() - started, 1),
        cycles=cycles,
        server_rss_kib=rss_kib(),
        chromium_rss_kib=chromium_rss_kib(include_background=False),
        chromium_rss_all_kib=chromium_rss_kib(),
        chromium_processes=len(_workload(kinds.values())),
        chromium_kinds=sorted(kinds.values()),
        fds=open_fds(),
        tasks=len(asyncio.all_tasks()),
        live_contexts=int(engine.live_contexts()),
    )


@asynccontextmanager
async def soak_runtime(data_dir: Path) -> AsyncIterator[tuple[Runtime, _Caller]]:
    config = default_config(
        headless=True, timeout_ms=10_000, max_sessions=50, max_pages=10, data_dir=data_dir
    )
    runtime = create_runtime(config, EventLog("silent"))
    try:
        async with Client(create_server(runtime), mode="auto") as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            yield runtime, _Caller(client, tools)
    finally:
        await asyncio.wait_for(runtime.shutdown(), 60)


async def run_soak(
    site: FixtureSite,
    data_dir: Path,
    *,
    warmup_s: float,
    duration_s: float,
    workers: int = 3,
    sample_every_s: float = 10.0,
    on_sample: Callable[[Sample], None] = lambda s: print(s.line(), flush=True),
) -> SoakReport:
    """Warm up for `warmup_s`, sample, soak for `duration_s`, sample again."""
    report = SoakReport()
    async with soak_runtime(data_dir) as (runtime, caller):
        started = time.monotonic()
        n = 0

        async def round_() -> None:
            nonlocal n
            batch = range(n, n + workers)
            n += workers
            results = await asyncio.gather(
                *(_cycle(caller, site, i) for i in batch), return_exceptions=True
            )
            report.cycles += workers
            for res in results:
                if isinstance(res, BaseException):
                    at = round(time.monotonic() - started, 1)
                    report.errors.append(f"cycle failed at {at} s: {res!r}")

        # Warm-up: launch Chromium and let its helpers settle.
        await round_()
        with contextlib.suppress(AssertionError):  # the base is what is left after 10 s
            await eventually(lambda: renderer_count() == 0, 10)
        renderers_base = renderer_count()
        while time.monotonic() - started < warmup_s:
            await round_()
        report.warm = await _sample("warm", started, report.cycles, runtime, renderers_base)
        on_sample(report.warm)
        soak_started = time.monotonic()
        next_sample = soak_started + sample_every_s
        while time.monotonic() - soak_started < duration_s:
            await round_()
            if time.monotonic() >= next_sample and time.monotonic() - soak_started < duration_s:
                sample = await _sample("soak", started, report.cycles, runtime, renderers_base)
                report.samples.append(sample)
                on_sample(sample)
                next_sample = time.monotonic() + sample_every_s
        report.end = await _sample("end", started, report.cycles, runtime, renderers_base)
        on_sample(report.end)
    return report
