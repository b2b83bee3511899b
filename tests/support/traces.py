"""Reading a saved trace as Playwright's trace loader does (issue 35 tests), and artifacts back
through the protocol.

`load_trace` applies the checks Playwright's loader (`TraceModel`/`traceModernizer`) makes
before the viewer shows anything: a zip whose `*.trace` entries are JSON lines starting with a
`context-options` event of a known format version, no `after` without its `before` (a call in
flight when tracing stopped has no `after`: the viewer shows it unfinished),
and every resource a snapshot or a screencast frame names (`sha1`) present in `resources/`.
"""

from __future__ import annotations

import base64
import http.server
import io
import json
import os
import re
import urllib.parse
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.clients import ToolClient


def _viewer_latest_version() -> int:
    """The newest trace format the installed Playwright's Trace Viewer reads (its loader,
    `sw.bundle.js`, refuses a newer one: "created by a newer version of Playwright")."""
    import playwright

    bundle = Path(playwright.__file__).parent / "driver/package/lib/vite/traceViewer/sw.bundle.js"
    # Minified: `if(e.version>ee)throw new k(`The trace was created by a newer version...`,
    # with `ee=10` declared beside the error class.
    text = bundle.read_text("utf-8")
    check = re.search(
        r"if\(\w+\.version>(\w+)\)throw new \w+\(`The trace was created by a newer", text
    )
    assert check, "the Trace Viewer's loader no longer checks the version as it did"
    found = re.search(r"[,;{ ]" + re.escape(check.group(1)) + r"=(\d+)[,;]", text)
    assert found, "the Trace Viewer's loader no longer says its latest version"
    return int(found.group(1))


KNOWN_VERSIONS = range(0, _viewer_latest_version() + 1)
"""Trace format versions the installed viewer's loader reads (it modernizes older ones)."""
_SHA1 = re.compile(r'"(?:sha1|_sha1)"\s*:\s*"([^"]+)"')


@dataclass
class Trace:
    """The parts of a trace a test looks at."""

    files: dict[str, bytes]
    events: list[dict[str, Any]] = field(default_factory=list)
    unfinished: list[str] = field(default_factory=list)

    def groups(self) -> list[str]:
        """Titles of the trace's groups (`tracing.group`), in order."""
        return [
            str(e.get("title"))
            for e in self.events
            if e.get("type") == "before" and e.get("method") == "tracingGroup"
        ]

    def contains(self, secret: str) -> list[str]:
        """The entries holding `secret` raw, JSON-escaped or URL-encoded."""
        forms = {
            secret,
            json.dumps(secret)[1:-1],
            json.dumps(secret, ensure_ascii=False)[1:-1],
            urllib.parse.quote(secret),
            urllib.parse.quote_plus(secret),
        }
        return [
            name
            for name, data in self.files.items()
            if any(form.encode() in data for form in forms)
        ]


def load_trace(data: bytes) -> Trace:
    """Parse and check a trace zip (see the module); AssertionError names what is wrong."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert archive.testzip() is None, "a damaged zip entry"
        files = {name: archive.read(name) for name in archive.namelist()}
    traces = sorted(n for n in files if n.endswith(".trace"))
    assert traces, f"no .trace entry in {sorted(files)}"
    trace = Trace(files)
    open_calls: set[str] = set()
    for name in traces:
        lines = [line for line in files[name].decode("utf-8").splitlines() if line.strip()]
        events = [json.loads(line) for line in lines]
        assert events and events[0]["type"] == "context-options", name
        assert events[0]["version"] in KNOWN_VERSIONS, events[0].get("version")
        for event in events:
            if event["type"] == "before":
                open_calls.add(event["callId"])
            elif event["type"] == "after":
                assert event["callId"] in open_calls, f"after without before: {event['callId']}"
                open_calls.discard(event["callId"])
        trace.events += events
    # A call still in flight when tracing stopped has no `after` (Playwright's loader shows it
    # unfinished): only an `after` without its `before` is damage.
    trace.unfinished = sorted(open_calls)
    for name, blob in files.items():
        if name.endswith((".trace", ".network")):
            for sha1 in _SHA1.findall(blob.decode("utf-8")):
                assert f"resources/{sha1}" in files, f"{name} names a missing resource {sha1}"
    return trace


async def read_artifact(c: ToolClient, session_id: str, artifact_id: str) -> bytes:
    """An artifact's whole content through browser_artifact_read (base64, page by page)."""
    out = b""
    offset = 0
    while True:
        part = await c.ok(
            "browser_artifact_read",
            {
                "sessionId": session_id,
                "artifactId": artifact_id,
                "encoding": "base64",
                "offset": offset,
                "maxBytes": 1_048_576,
            },
        )
        out += base64.b64decode(part["content"])
        if "nextOffset" not in part:
            return out
        offset = part["nextOffset"]


async def viewer_actions(data: bytes, tmp: Path) -> list[str]:
    """The action list Playwright's own Trace Viewer shows for the trace `data`: the viewer
    (shipped in the playwright package) and the zip served from a loopback server, opened in a
    headless Chromium of the test's own; the titles of its action tree, top to bottom."""
    import functools
    import shutil
    import threading

    import playwright
    from playwright.async_api import async_playwright

    from browsermesh.config import default_config, find_chromium
    from browsermesh.engine.backends import QUIET_FLAGS

    root = tmp / "viewer"
    shutil.copytree(Path(playwright.__file__).parent / "driver/package/lib/vite/traceViewer", root)
    (root / "trace.zip").write_bytes(data)
    handler = functools.partial(_QuietFiles, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        async with async_playwright() as pw:
            # The full Chromium: the viewer loads traces through a service worker, which the
            # headless shell does not run.
            full = find_chromium(default_config(headless=False), os.environ)
            browser = await pw.chromium.launch(
                executable_path=full, headless=True, args=["--no-sandbox", *QUIET_FLAGS]
            )
            try:
                page = await browser.new_page()
                await page.goto(f"{base}/index.html?trace={base}/trace.zip")
                titles = page.locator(".action-title-method")
                await titles.first.wait_for(timeout=30_000)
                # Expand every group (the viewer opens only the last one), then read them all.
                closed = page.locator(
                    '[role=treeitem][aria-expanded="false"] .codicon-chevron-right'
                )
                while await closed.count():
                    await closed.first.click()
                names: list[str] = await titles.all_inner_texts()
                return names
            finally:
                await browser.close()
    finally:
        server.shutdown()
        server.server_close()


class _QuietFiles(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        return
