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

A real list page too (issue 15): the stock Django admin's product changelist
(``tests/fixtures/apps``, ``start_django_admin``: 42 products, a filter sidebar, the actions
bar), signed in as ``admin``. The same three measurements, plus the peer's: the text bytes of
``@playwright/mcp``'s ``browser_snapshot`` result on that page (and of its YAML alone), the
reference for "less text". Signing in is not measured. The peer is skipped when it is not
installed (``benchmarks/run.sh`` installs it; ``BENCH_PEER_DIR`` points at another copy).

Run: ``python -m benchmarks.snapshot_size`` (writes ``benchmarks/results/snapshot_size.md``).
"""

from __future__ import annotations

import asyncio
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.fixtures.apps import ADMIN, AdminApp, start_django_admin
from tests.fixtures.site import FixtureSite

from benchmarks.common import (
    CHROMIUM,
    FLOOR_ARGS,
    PEER_CLI,
    RESULTS,
    browsermesh_params,
    md_table,
    peer_params,
)
from benchmarks.common import environment as bench_environment
from browsermesh.model.action_table import table_refs

PAGES = ("/docs-large", "/action-table", "/interactions", "/big?n=300")
# The real list page: the Django admin's product changelist, signed in.
ADMIN_LIST = "/admin/shop/product/"
ADMIN_LIST_ROW = "admin " + ADMIN_LIST + " (signed in)"
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


async def admin_full_ai_size(app: AdminApp) -> int:
    """The full AI snapshot of the signed-in product list, straight from Playwright."""
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=list(FLOOR_ARGS)
        )
        page = await browser.new_page()
        await page.goto(app.url("/admin/login/?next=" + ADMIN_LIST))
        await page.get_by_label("Username").fill(ADMIN.username)
        await page.get_by_label("Password").fill(ADMIN.password)
        async with page.expect_navigation():
            await page.get_by_role("button", name="Log in").click()
        assert page.url.endswith(ADMIN_LIST), page.url
        text = await page.locator("body").aria_snapshot(mode="ai")
        await browser.close()
    return len(text.encode())


async def _mesh_formats(client: Any, addr: dict[str, str]) -> dict[str, Any]:
    """``browser_snapshot`` in both formats on the page ``addr`` shows."""
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
            # Action tables carry their refs on their lines; aria results in `refs`.
            "refs": len(snap["refs"]) if "refs" in snap else len(table_refs(snap["snapshot"])),
            "more": (snap.get("omissions") or {}).get("maxRefsNodes", 0),
            "partial": bool(snap.get("partial")),
            "original_bytes": (snap.get("truncation") or {}).get("originalBytes"),
            "ms": round(elapsed * 1000, 1),
            "text": snap["snapshot"],
        }
    return row


async def browsermesh_sizes(site: FixtureSite, app: AdminApp) -> dict[str, dict[str, Any]]:
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
            out[path] = await _mesh_formats(client, addr)
        # The admin's list: sign in through its form (not measured), then the list.
        login = app.url("/admin/login/?next=" + ADMIN_LIST)
        steps: list[tuple[str, dict[str, Any]]] = [
            ("browser_navigate", {"url": login}),
            ("browser_fill", {"locator": _label("Username"), "value": ADMIN.username}),
            ("browser_fill", {"locator": _label("Password"), "value": ADMIN.password}),
            (
                "browser_action_and_wait",
                {
                    "action": {"kind": "click", "target": _role("button", "Log in")},
                    "wait": {"kind": "navigation"},
                },
            ),
        ]
        for tool, args in steps:
            done = await client.call_tool(tool, {**addr, **args})
            assert not done.is_error, done.content[0].text
        out[ADMIN_LIST_ROW] = await _mesh_formats(client, addr)
        await client.call_tool("browser_session_close", {"sessionId": addr["sessionId"]})
    return out


def _label(value: str) -> dict[str, str]:
    return {"strategy": "label", "value": value}


def _role(value: str, name: str) -> dict[str, str]:
    return {"strategy": "role", "value": value, "name": name}


_PEER_REF = re.compile(r'- (?P<role>[\w-]+) "(?P<name>[^"]*)"[^\n]*?\[ref=(?P<ref>[^\]]+)\]')


def _peer_ref(snapshot: str, role: str, name: str) -> str:
    for m in _PEER_REF.finditer(snapshot):
        if m["role"] == role and m["name"].rstrip(":") == name:
            return m["ref"]
    raise AssertionError(f'no {role} "{name}" in the peer snapshot')


async def peer_list_size(app: AdminApp) -> dict[str, Any] | None:
    """``@playwright/mcp``'s ``browser_snapshot`` on the signed-in product list: its whole
    result text and its YAML block alone. None when the peer is not installed."""
    if not PEER_CLI.exists():
        return None
    from mcp import Client

    def text_of(result: Any) -> str:
        assert not result.is_error, result.content[0].text
        return "\n".join(c.text for c in result.content if c.type == "text")

    workdir = Path(tempfile.mkdtemp(prefix="bench-snapshot-peer-"))
    try:
        async with Client(peer_params(workdir)) as client:
            login = app.url("/admin/login/?next=" + ADMIN_LIST)
            text_of(await client.call_tool("browser_navigate", {"url": login}))
            page = text_of(await client.call_tool("browser_snapshot", {}))
            fields = [
                {
                    "name": name,
                    "type": "textbox",
                    "target": _peer_ref(page, "textbox", name),
                    "value": value,
                }
                for name, value in (("Username", ADMIN.username), ("Password", ADMIN.password))
            ]
            text_of(await client.call_tool("browser_fill_form", {"fields": fields}))
            button = {"element": "Log in button", "target": _peer_ref(page, "button", "Log in")}
            clicked = text_of(await client.call_tool("browser_click", button))
            assert ADMIN_LIST in clicked, clicked
            started = time.perf_counter()
            text = text_of(await client.call_tool("browser_snapshot", {}))
            elapsed = time.perf_counter() - started
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    yaml = re.search(r"```yaml\n(.*?)```", text, re.S)
    return {
        "payload_bytes": len(text.encode()),
        "yaml_bytes": len(yaml.group(1).encode()) if yaml else None,
        "refs": len(re.findall(r"\[ref=", text)),
        "ms": round(elapsed * 1000, 1),
    }


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "n/a"


async def run() -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix="bench-snapshot-"))
    app = start_django_admin(root / "djshop")
    try:
        with FixtureSite() as site:
            full = await full_ai_sizes(site)
            full[ADMIN_LIST_ROW] = await admin_full_ai_size(app)
            mesh = await browsermesh_sizes(site, app)
        peer = await peer_list_size(app)
    finally:
        app.stop()
        shutil.rmtree(root, ignore_errors=True)
    rows = []
    for path in (*PAGES, ADMIN_LIST_ROW):
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
                "actions_more": actions["more"],
                "actions_partial": actions["partial"],
                "actions_ratio": actions["bytes"] / full[path] if full[path] else None,
                "aria_ms": aria["ms"],
                "actions_ms": actions["ms"],
            }
        )
    docs_table = mesh["/docs-large"]["actions"]["text"]
    missing = [control for control in DOCS_PRIMARY if control not in docs_table]
    docs = next(r for r in rows if r["page"] == "/docs-large")
    listed = next(r for r in rows if r["page"] == ADMIN_LIST_ROW)
    return {
        "rows": rows,
        "admin_list": {
            "browsermesh": listed,
            "peer": peer,
            "actions_table": mesh[ADMIN_LIST_ROW]["actions"]["text"],
        },
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
                str(r["actions_refs"])
                + (f" (+{r['actions_more']} more)" if r["actions_more"] else ""),
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
        *admin_list_section(result["admin_list"]),
    ]
    return "\n".join(lines)


def admin_list_section(data: dict[str, Any]) -> list[str]:
    """The real list page: BrowserMesh's results next to the peer's ``browser_snapshot``."""
    mesh, peer = data["browsermesh"], data["peer"]
    rows: list[list[object]] = [
        ["full AI snapshot (Playwright, no server)", f"{mesh['full_ai_bytes']:,}", "—", ""],
        [
            "BrowserMesh `browser_snapshot` aria",
            f"{mesh['aria_payload_bytes']:,}",
            f"{mesh['aria_bytes']:,}",
            "",
        ],
        [
            "BrowserMesh `browser_snapshot` actions",
            f"{mesh['actions_payload_bytes']:,}",
            f"{mesh['actions_bytes']:,}",
            f"{mesh['actions_refs']} lines, more: {mesh['actions_more']}",
        ],
    ]
    if peer:
        rows.append(
            [
                "@playwright/mcp `browser_snapshot`",
                f"{peer['payload_bytes']:,}",
                f"{peer['yaml_bytes']:,}" if peer["yaml_bytes"] is not None else "—",
                f"{peer['refs']} refs",
            ]
        )
    lines = [
        f"## A real list page: the Django admin's product list (`{ADMIN_LIST}`, signed in)",
        "",
        "`tests/fixtures/apps` (`start_django_admin`): the stock admin templates, 42 products "
        "in three categories, a filter sidebar (category, status), the actions bar. *result*: "
        "the whole text of the tool result a client reads; *snapshot*: BrowserMesh's "
        "`snapshot` field, the peer's YAML block.",
        "",
        md_table(["what", "result text (B)", "snapshot (B)", "lines / refs"], rows),
        "",
    ]
    if peer:
        ratio = mesh["actions_payload_bytes"] / peer["payload_bytes"]
        aria = mesh["aria_payload_bytes"] / peer["payload_bytes"]
        lines += [
            f"BrowserMesh / peer, whole result text: actions {ratio:.2f}×, aria {aria:.2f}×.",
            "",
        ]
    else:
        lines += ["@playwright/mcp is not installed: no peer numbers.", ""]
    lines += [
        "The action table as returned (default bounds: 50 lines):",
        "",
        "```text",
        data["actions_table"].rstrip("\n"),
        "```",
        "",
    ]
    return lines


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
