"""Snapshot sizes: BrowserMesh's ``browser_snapshot`` (aria and actions) vs a full AI snapshot.

For each fixed page of the loopback test site (``tests/fixtures/site.py``) this reports

- ``full AI``: the bytes of ``page.locator("body").aria_snapshot(mode="ai")`` taken directly with
  Playwright (the whole page, every node with a ``[ref=eN]``), in its own Chromium;
- ``aria`` / ``actions``: the bytes of the ``snapshot`` field that ``browser_snapshot`` returns in
  each format, through a real ``python -m browsermesh`` stdio server and the MCP SDK client, with
  the default bounds (only ``format`` is passed), plus the bytes of the whole tool result text
  (the JSON a client reads: snapshot, refs, bounds, omissions, ...).

Target: on ``/docs-large`` the action table is at most 25 % of the full AI snapshot and still
lists the page's primary controls (the search box and the toolbar buttons).

Run: ``python -m benchmarks.snapshot_size`` (writes ``benchmarks/results/snapshot_size.md``).
"""

from __future__ import annotations

import asyncio
import sys
import time
from typing import Any

from tests.fixtures.site import FixtureSite

from benchmarks.common import CHROMIUM, FLOOR_ARGS, RESULTS, browsermesh_params, md_table
from benchmarks.common import environment as bench_environment

PAGES = ("/docs-large", "/action-table", "/interactions", "/big?n=300")
TARGET_RATIO = 0.25
# What /docs-large's action table must still show: the search box and the toolbar buttons.
DOCS_PRIMARY = (
    'searchbox "Search this book"',
    'button "Toggle Table of Contents"',
    'button "Change theme"',
    'button "Toggle Searchbar"',
)


async def full_ai_sizes(site: FixtureSite) -> dict[str, int]:
    from playwright.async_api import async_playwright

    sizes: dict[str, int] = {}
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=list(FLOOR_ARGS)
        )
        page = await browser.new_page()
        for path in PAGES:
            await page.goto(site.url(path))
            text = await page.locator("body").aria_snapshot(mode="ai")
            sizes[path] = len(text.encode())
        await browser.close()
    return sizes


async def browsermesh_sizes(site: FixtureSite) -> dict[str, dict[str, Any]]:
    from mcp import Client

    out: dict[str, dict[str, Any]] = {}
    async with Client(browsermesh_params()) as client:
        created = await client.call_tool("browser_session_create", {})
        assert not created.is_error, created.content[0].text
        data = created.structured_content or {}
        addr = {
            "sessionId": data["session"]["sessionId"],
            "pageId": data["initialPage"]["pageId"],
        }
        for path in PAGES:
            nav = await client.call_tool("browser_navigate", {**addr, "url": site.url(path)})
            assert not nav.is_error, nav.content[0].text
            row: dict[str, Any] = {}
            for fmt in ("aria", "actions"):
                started = time.perf_counter()
                result = await client.call_tool("browser_snapshot", {**addr, "format": fmt})
                elapsed = time.perf_counter() - started
                assert not result.is_error, result.content[0].text
                snap = result.structured_content or {}
                payload = sum(len(c.text.encode()) for c in result.content if c.type == "text")
                row[fmt] = {
                    "bytes": len(snap["snapshot"].encode()),
                    "payload_bytes": payload,
                    "refs": len(snap.get("refs") or []),
                    "partial": bool(snap.get("partial")),
                    "original_bytes": (snap.get("truncation") or {}).get("originalBytes"),
                    "ms": round(elapsed * 1000, 1),
                    "text": snap["snapshot"],
                }
            out[path] = row
        await client.call_tool("browser_session_close", {"sessionId": addr["sessionId"]})
    return out


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "n/a"


async def run() -> dict[str, Any]:
    with FixtureSite() as site:
        full = await full_ai_sizes(site)
        mesh = await browsermesh_sizes(site)
    rows = []
    for path in PAGES:
        aria, actions = mesh[path]["aria"], mesh[path]["actions"]
        rows.append(
            {
                "page": path,
                "full_ai_bytes": full[path],
                "aria_bytes": aria["bytes"],
                "aria_payload_bytes": aria["payload_bytes"],
                "aria_partial": aria["partial"],
                "actions_bytes": actions["bytes"],
                "actions_payload_bytes": actions["payload_bytes"],
                "actions_refs": actions["refs"],
                "actions_partial": actions["partial"],
                "actions_ratio": actions["bytes"] / full[path] if full[path] else None,
                "aria_ms": aria["ms"],
                "actions_ms": actions["ms"],
            }
        )
    docs_table = mesh["/docs-large"]["actions"]["text"]
    missing = [control for control in DOCS_PRIMARY if control not in docs_table]
    docs = next(r for r in rows if r["page"] == "/docs-large")
    return {
        "rows": rows,
        "docs_actions_table": docs_table,
        "primary_controls_missing": missing,
        "target_ratio": TARGET_RATIO,
        "docs_ratio": docs["actions_ratio"],
        "target_met": docs["actions_ratio"] <= TARGET_RATIO and not missing,
    }


def render(result: dict[str, Any], env: dict[str, Any]) -> str:
    headers = [
        "page",
        "full AI snapshot (B)",
        "aria (B)",
        "actions (B)",
        "actions / full AI",
        "aria result (B)",
        "actions result (B)",
        "actions refs",
        "aria call (ms)",
        "actions call (ms)",
    ]
    table = md_table(
        headers,
        [
            [
                f"`{r['page']}`",
                r["full_ai_bytes"],
                str(r["aria_bytes"]) + (" (partial)" if r["aria_partial"] else ""),
                str(r["actions_bytes"]) + (" (partial)" if r["actions_partial"] else ""),
                _pct(r["actions_bytes"], r["full_ai_bytes"]),
                r["aria_payload_bytes"],
                r["actions_payload_bytes"],
                r["actions_refs"],
                r["aria_ms"],
                r["actions_ms"],
            ]
            for r in result["rows"]
        ],
    )
    verdict = "met" if result["target_met"] else "MISSED"
    missing = result["primary_controls_missing"]
    lines = [
        "# Snapshot sizes",
        "",
        "Generated by `python -m benchmarks.snapshot_size` (part of `bash benchmarks/run.sh`).",
        f"Chromium: {env['chromium']}; browsermesh {env['browsermesh']}; "
        f"Playwright for Python {env['playwright_python']}.",
        "",
        'Bytes are UTF-8 bytes. *full AI snapshot*: `page.locator("body").aria_snapshot('
        'mode="ai")` straight from Playwright. *aria* / *actions*: the `snapshot` field of '
        "`browser_snapshot` (default bounds) through a `python -m browsermesh` stdio server. "
        "*… result*: the whole text block of the tool result (snapshot + refs + bounds + "
        "omissions JSON). *… call*: the `browser_snapshot` round trip, one call each (a "
        "latency hint, not a benchmark).",
        "",
        table,
        "",
        f"**Target** (`/docs-large`: actions ≤ {TARGET_RATIO:.0%} of the full AI snapshot and "
        f"the primary controls listed): **{verdict}** — actions/full AI = "
        f"{result['docs_ratio']:.1%}; primary controls "
        + ("all present." if not missing else f"missing: {', '.join(missing)}."),
        "",
        "`/docs-large` action table as returned:",
        "",
        "```text",
        result["docs_actions_table"].rstrip("\n"),
        "```",
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    env = bench_environment()
    result = asyncio.run(run())
    text = render(result, env)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "snapshot_size.md").write_text(text)
    print(text)
    # The assertion the brief asks for: the table lists the primary controls.
    assert not result["primary_controls_missing"], result["primary_controls_missing"]
    print(
        f"snapshot_size: actions/full AI on /docs-large = {result['docs_ratio']:.1%} "
        f"(target ≤ {TARGET_RATIO:.0%}): {'met' if result['target_met'] else 'MISSED'}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
