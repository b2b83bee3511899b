"""Hostile pages: does one session's heavy page stall another session?

One ``python -m browsermesh`` stdio server (eval profile on), one SDK client, two sessions on the
loopback test site. Session B calls ``browser_get_url`` on a fixed schedule while session A runs
one hostile ``browser_evaluate`` (2 s budget):

- ``idle (baseline)``: ``1`` (the noise floor of the machine and the transport);
- ``array 3e6``: ``Array.from({length: 3e6}, (_, i) => i)`` (a huge result value);
- ``object 5e5 keys``: an object with 500,000 keys;
- ``console 1e5 lines``: 100,000 ``console.log`` lines (the events reach the server after the
  evaluation answered, so B keeps polling for a settle window afterwards);
- ``popups 200``: ``window.open`` 200 times (unmanaged popups).

Reported per scenario: B's ``get_url`` latency p50/p95/max (open loop: one call every 20 ms,
counted from when it was due) and call count, A's evaluate time and outcome, and the server's
process tree. Each run is stored under a label (``--label before``/``after``) in
``results/hostile_pages.json``; ``results/hostile_pages.md`` shows every stored label.

Run: ``python -m benchmarks.hostile_pages [--label after]``. For the numbers of an older
revision, export it and put its ``src`` first: ``git archive <rev> src | tar -x -C /tmp/old``,
then ``PYTHONPATH=/tmp/old/src python -m benchmarks.hostile_pages --label before``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from typing import Any

from tests.fixtures.site import FixtureSite

from benchmarks.common import RESULTS, browsermesh_args, md_table, percentile
from benchmarks.common import environment as bench_environment
from benchmarks.pss import children_matching, tree_pss_kib

BUDGET_MS = 2_000
SETTLE_S = 30.0
"""How long B keeps polling after A's call answered: an abandoned result still reaching Python,
or page events still arriving, count too (before the fix a 3e6 array arrived ~20 s later)."""
EVERY_S = 0.02
"""B sends one get_url every 20 ms."""

SCENARIOS: dict[str, str] = {
    "idle (baseline)": "1",
    "array 3e6": "Array.from({length: 3e6}, (_, i) => i)",
    "object 5e5 keys": "(() => { const o = {}; for (let i = 0; i < 5e5; i++) o['k' + i] = i; "
    "return o; })()",
    "console 1e5 lines": "(() => { for (let i = 0; i < 1e5; i++) console.log('line ' + i); "
    "return 1; })()",
    "popups 200": "(() => { for (let i = 0; i < 200; i++) window.open('/?value=popup' + i); "
    "return 1; })()",
}
JSON_PATH = RESULTS / "hostile_pages.json"


async def _poll(client: Any, addr: dict[str, str], stop: asyncio.Event) -> list[float]:
    """B's load: one get_url every `EVERY_S`, sent on schedule whether or not the previous one
    answered (open loop), latency counted from when it was due. A stalled server then delays
    every call due meanwhile, so a stall shows in the percentiles, not as one slow call."""
    latencies: list[float] = []

    async def one(due: float) -> None:
        result = await client.call_tool("browser_get_url", addr)
        latencies.append((time.perf_counter() - due) * 1000)
        assert not result.is_error, result.content[0].text

    async with asyncio.TaskGroup() as group:
        due = time.perf_counter()
        while not stop.is_set():
            group.create_task(one(due))
            due += EVERY_S
            await asyncio.sleep(max(0.0, due - time.perf_counter()))
    return latencies


async def _scenario(
    client: Any, a: dict[str, str], b: dict[str, str], expression: str
) -> dict[str, Any]:
    stop = asyncio.Event()
    poller = asyncio.create_task(_poll(client, b, stop))
    await asyncio.sleep(0.3)  # B's baseline before A starts
    started = time.perf_counter()
    result = await client.call_tool(
        "browser_evaluate", {**a, "expression": expression, "timeoutMs": BUDGET_MS}
    )
    evaluate_ms = (time.perf_counter() - started) * 1000
    await asyncio.sleep(SETTLE_S)
    stop.set()
    latencies = await poller
    if result.is_error:
        outcome = json.loads(result.content[0].text)["error"]["code"]
    else:
        data = result.structured_content or {}
        outcome = "truncated" if data.get("truncated") else "ok"
    pages = await client.call_tool("browser_page_list", {"sessionId": a["sessionId"]})
    pss_kib, processes = tree_pss_kib(children_matching(os.getpid(), b"browsermesh"))
    return {
        "get_url_p50_ms": round(percentile(latencies, 50), 1),
        "get_url_p95_ms": round(percentile(latencies, 95), 1),
        "get_url_max_ms": round(max(latencies), 1),
        "get_url_calls": len(latencies),
        "evaluate_ms": round(evaluate_ms),
        "evaluate_outcome": outcome,
        "managed_pages": len((pages.structured_content or {}).get("pages", [])),
        "server_tree_mib": round(pss_kib / 1024),
        "server_tree_processes": processes,
    }


async def _session(client: Any, url: str) -> dict[str, str]:
    created = await client.call_tool("browser_session_create", {})
    assert not created.is_error, created.content[0].text
    data = created.structured_content or {}
    addr = {"sessionId": data["session"]["sessionId"], "pageId": data["initialPage"]["pageId"]}
    nav = await client.call_tool("browser_navigate", {**addr, "url": url})
    assert not nav.is_error, nav.content[0].text
    return addr


async def run() -> dict[str, Any]:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable,
        args=[*browsermesh_args(), "--tools", "core,observability,eval"],
        env=dict(os.environ),  # PYTHONPATH too: `--label before` runs an older checkout
    )
    rows: dict[str, Any] = {}
    with FixtureSite() as site:
        async with Client(params) as client:
            for name, expression in SCENARIOS.items():
                # Fresh sessions per scenario: one hostile page must not colour the next.
                a = await _session(client, site.url("/?value=A"))
                b = await _session(client, site.url("/?value=B"))
                rows[name] = await _scenario(client, a, b, expression)
                for addr in (a, b):
                    await client.call_tool(
                        "browser_session_close", {"sessionId": addr["sessionId"]}
                    )
                print(f"hostile_pages: {name}: {rows[name]}", file=sys.stderr)
    return rows


def render(stored: dict[str, Any], env: dict[str, Any]) -> str:
    headers = [
        "label",
        "scenario (session A)",
        "B get_url p50 (ms)",
        "B p95 (ms)",
        "B max (ms)",
        "B calls",
        "A evaluate (ms)",
        "A outcome",
        "A pages after",
        "server PSS (MiB)",
        "server processes",
    ]
    rows = [
        [
            label,
            name,
            r["get_url_p50_ms"],
            r["get_url_p95_ms"],
            r["get_url_max_ms"],
            r["get_url_calls"],
            r["evaluate_ms"],
            r["evaluate_outcome"],
            r["managed_pages"],
            r["server_tree_mib"],
            r["server_tree_processes"],
        ]
        for label, run in stored.items()
        for name, r in run["rows"].items()
        if not name.startswith("_")
    ]
    loads = "; ".join(
        f"{label}: {run['rows']['_load']['start']} → {run['rows']['_load']['end']}"
        for label, run in stored.items()
        if "_load" in run["rows"]
    )
    return "\n".join(
        [
            "# Hostile pages",
            "",
            "Generated by `python -m benchmarks.hostile_pages --label <label>`.",
            f"Chromium: {env['chromium']}; Playwright for Python {env['playwright_python']}; "
            f"{env['cpus']} CPUs (shared).",
            "",
            "One stdio server, two sessions. Session B sends `browser_get_url` every "
            f"{EVERY_S * 1000:g} ms (open loop; latency from when the call was due) while "
            f"session A runs one `browser_evaluate` (`timeoutMs` {BUDGET_MS}); B keeps "
            f"polling for {SETTLE_S:g} s after A answered (page events still arriving count). "
            "*A pages after*: managed pages of A from `browser_page_list`. *server PSS / "
            "processes*: the server's process tree (Python, driver, Chromium) at the end of "
            "the scenario, both sessions still open.",
            "",
            md_table(headers, rows),
            "",
            f"1-minute load average at the start → end of each run (2 CPUs): {loads}.",
            "",
            *[f"- *{label}*: {run['note']}" for label, run in stored.items() if run.get("note")],
            "",
        ]
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--label", default="after", help="name of this run in the results")
    parser.add_argument("--note", default="", help="what the label measured (e.g. a revision)")
    parser.add_argument("--render", action="store_true", help="only rewrite the .md (notes too)")
    args = parser.parse_args()
    env = bench_environment()
    stored: dict[str, Any] = json.loads(JSON_PATH.read_text()) if JSON_PATH.exists() else {}
    if not args.render:
        load_before = os.getloadavg()[0]
        rows = asyncio.run(run())
        rows["_load"] = {"start": round(load_before, 1), "end": round(os.getloadavg()[0], 1)}
        stored[args.label] = {"rows": rows}
    if args.note and args.label in stored:
        stored[args.label]["note"] = args.note
    RESULTS.mkdir(parents=True, exist_ok=True)
    JSON_PATH.write_text(json.dumps(stored, indent=2) + "\n")
    text = render(stored, env)
    (RESULTS / "hostile_pages.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
