"""Can a replica take over a dead replica's Selenium Grid session (issue 37, "a replica that
dies")? Measured with real processes on a loopback Selenium Grid 4.

BrowserMesh replicas share a session directory; a Grid-backed session lives in a Grid browser
that the replica reached with ``connect_over_cdp`` on the session's ``se:cdp`` WebSocket URL
and in which it made a browser context (``browser.new_context``). When that replica dies, is the
context (its pages, cookies, localStorage) still in the Grid browser for another replica to
re-attach to?

Each run:

1. a Grid session is created the way BrowserMesh creates one (``GridClient.new_session`` with
   ``grid_capabilities``: headless Chromium, the quiet flags, ``--no-sandbox``, the owner and
   request markers);
2. a child process (the "replica": ``python -m benchmarks.fleet_reattach child``) attaches
   Playwright to ``se:cdp``, makes a context as BrowserMesh does
   (``browser.new_context(**context_kwargs(ContextOptions()))``), opens a loopback page that sets
   a cookie (``Set-Cookie``) and a localStorage item, checks both, and prints a ``READY`` line
   (the parent reads it: no sleeps order the events);
3. the child dies: ``sigkill`` SIGKILLs its process group (Python and its Playwright driver, as
   a container kill does), ``sigkill-python`` only its Python process (the orphaned driver exits
   when its stdin closes), ``exit`` asks it to ``sys.exit(0)`` without ``browser.close()``;
   the parent waits until the child is reaped (no process of its group needs to be gone);
4. the parent re-attaches (``connect_over_cdp`` to the same URL, timed) and reads what is left:
   Playwright's ``browser.contexts`` and their pages, the browser's own view over raw CDP
   (``Target.getBrowserContexts``, ``Target.getTargets``, ``Storage.getCookies`` of every
   context) and localStorage (in any surviving page of the site, and in a new page of the
   default context); it polls the Grid's ``/status`` (which does not touch the session) every
   2 s for 16 s, reads the state again, then asks WebDriver ``GET /session/<id>/url``;
5. the cost of the alternative ("fail the session, let the client make a new one") is timed:
   a new Grid session + ``connect_over_cdp`` + ``new_context`` + ``new_page`` + ``goto``.

Two controls show what the browser itself keeps: ``sigkill-default`` (the child's page in the
browser's default context, ``browser.contexts[0]``) and ``sigkill-keep`` (a context made over
raw CDP with ``Target.createBrowserContext {disposeOnDetach: false}``). Once, at the end, one
orphaned session (its replica SIGKILLed) is left untouched and the Grid's ``/status`` polled
until the node's idle-session timeout ends it (``--idle-wait 0`` skips this, ~5 minutes).
The Playwright source lines that create contexts are quoted from the installed driver.

Run (from the repository root; a Grid needs Java, chromedriver and the Grid jar, which
``bash scripts/grid.sh`` installs and ``start_grid`` runs)::

    PYTHONPATH=src:. .venv/bin/python -m benchmarks.fleet_reattach [--runs 3] [--idle-wait 420]

Writes ``benchmarks/results/fleet_reattach.md`` (and prints it).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import re
import signal
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from benchmarks.common import RESULTS, md_table, median

REPO = Path(__file__).resolve().parent.parent
# What an operator passes with --grid-capabilities on a root machine (the loopback Grid's node
# stereotype carries the same flags); grid_capabilities adds the quiet flags, --headless=new
# and WebMCP, as BrowserMesh does.
CONFIGURED_CAPS = {"goog:chromeOptions": {"args": ["--no-sandbox", "--disable-dev-shm-usage"]}}
MODES: dict[str, str] = {
    "sigkill": "BrowserMesh's context (`browser.new_context`); the replica's process group "
    "(Python + Playwright driver) SIGKILLed",
    "exit": "BrowserMesh's context; the replica exits normally (`sys.exit(0)`, no "
    "`browser.close()`)",
    "sigkill-python": "BrowserMesh's context; only the replica's Python process SIGKILLed "
    "(its Playwright driver, orphaned, exits when its stdin closes)",
    "sigkill-default": "control: the page in the browser's default context "
    "(`browser.contexts[0].new_page()`); SIGKILL",
    "sigkill-keep": "control: a context made over raw CDP with `Target.createBrowserContext "
    "{disposeOnDetach: false}`; SIGKILL",
}
CHILD_MODE = {
    "sigkill": "new",
    "exit": "new",
    "sigkill-python": "new",
    "sigkill-default": "default",
    "sigkill-keep": "keep",
}
POLL_S = 2.0
POLL_FOR_S = 16.0
READY_TIMEOUT_S = 90.0
CONNECT_MS = 30_000
TOKEN = re.compile(r"[0-9a-f]{8,32}")


# ------------------------------------------------------------------------------ the site


class _Handler(BaseHTTPRequestHandler):
    """``/set?t=<hex>``: sets cookie ``bm=<t>`` and localStorage ``bm=<t>``; ``/check``: a
    blank page of the same origin (to read localStorage from another page)."""

    def do_GET(self) -> None:
        # A page whose context is disposed mid-request (the kill) leaves a closed socket.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self._answer()

    def _answer(self) -> None:
        path, _, query = self.path.partition("?")
        token = query.removeprefix("t=")
        headers = [("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-store")]
        if path == "/set" and TOKEN.fullmatch(token):
            headers.append(("Set-Cookie", f"bm={token}; Path=/; SameSite=Lax"))
            body = (
                f"<!doctype html><title>fleet {token}</title>"
                f"<script>localStorage.setItem('bm', '{token}')</script><p>set</p>"
            )
        elif path == "/check":
            body = "<!doctype html><title>check</title><p>check</p>"
        elif path == "/favicon.ico":
            self.send_response(204)
            self.end_headers()
            return
        else:
            self.send_error(404)
            return
        data = body.encode()
        self.send_response(200)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass


class Site:
    """The loopback page server, in a daemon thread."""

    def __init__(self) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.origin = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Site:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def set_url(self, token: str) -> str:
        return f"{self.origin}/set?t={token}"


# ----------------------------------------------------------------------- the child (replica)


async def child_async(cdp_url: str, url: str, mode: str) -> None:
    """The replica: attach, make the context, open the page, report, wait to die."""
    from playwright.async_api import async_playwright

    from browsermesh.engine.playwright_engine import context_kwargs
    from browsermesh.engine.protocol import ContextOptions

    token = url.rpartition("t=")[2]
    async with async_playwright() as pw:
        browser = await pw.chromium.connect_over_cdp(cdp_url, timeout=CONNECT_MS)
        cdp = await browser.new_browser_cdp_session()
        if mode == "default":
            page = await browser.contexts[0].new_page()
            await page.goto(url)
        elif mode == "keep":
            made = await cdp.send("Target.createBrowserContext", {"disposeOnDetach": False})
            # Playwright files a page of a context it did not make under its default context.
            async with browser.contexts[0].expect_page() as info:
                await cdp.send(
                    "Target.createTarget",
                    {"url": url, "browserContextId": made["browserContextId"]},
                )
            page = await info.value
        else:  # as BrowserMesh's engine makes a session's context
            context = await browser.new_context(**context_kwargs(ContextOptions()))
            page = await context.new_page()
            await page.goto(url)
        await page.wait_for_function(f"localStorage.getItem('bm') === '{token}'")
        targets = (await cdp.send("Target.getTargets"))["targetInfos"]
        mine = next(t for t in targets if t["type"] == "page" and t["url"] == page.url)
        context_id = mine["browserContextId"]
        listed = (await cdp.send("Target.getBrowserContexts"))["browserContextIds"]
        args = {"browserContextId": context_id} if context_id in listed else {}
        cookies = (await cdp.send("Storage.getCookies", args))["cookies"]
        ready = {
            "pid": os.getpid(),
            "context_id": context_id,
            "target_id": mine["targetId"],
            "contexts_listed": listed,
            "pw_contexts": len(browser.contexts),
            "cookie": any(c["name"] == "bm" and c["value"] == token for c in cookies),
            "local_storage": await page.evaluate("localStorage.getItem('bm')") == token,
        }
        print("READY " + json.dumps(ready), flush=True)
        line = await asyncio.to_thread(sys.stdin.readline)
        if line.strip() == "exit":
            sys.exit(0)  # no browser.close(): the process just ends
        await asyncio.Event().wait()  # until killed


def child_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.fleet_reattach child")
    parser.add_argument("--cdp", required=True)
    parser.add_argument("--url", required=True)
    parser.add_argument("--mode", choices=["new", "default", "keep"], default="new")
    args = parser.parse_args(argv)
    asyncio.run(child_async(args.cdp, args.url, args.mode))
    return 0


# ------------------------------------------------------------------------------ the parent


@dataclass
class Observation:
    """What a re-attached Playwright and raw CDP see in the Grid browser."""

    pw_pages: list[list[str]]  # per Playwright context, its pages' URLs
    contexts_listed: list[str]  # Target.getBrowserContexts (non-default contexts)
    page_targets: list[tuple[str, str]]  # (browserContextId, url) of every page target
    child_context_left: bool
    child_page_left: bool
    cookie: bool
    local_storage: bool
    since_kill_ms: float


@dataclass
class Run:
    mode: str
    index: int
    ready: dict[str, Any]
    death_ms: float  # kill (or exit request) -> child process reaped
    group_left_ms: float  # kill -> no process left in the child's process group
    exit_code: int | None
    reattach_ms: float
    first: Observation
    second: Observation
    listed: list[tuple[float, bool]]  # (s since kill, session in /status)
    url_status: int
    url_value: str
    fresh: dict[str, float]


@dataclass
class Idle:
    timeout_ms: int | None
    created_to_gone_s: float | None
    kill_to_gone_s: float | None
    waited_s: float
    listed_polls: int = 0
    notes: list[str] = field(default_factory=list)


def shorten(url: str, origin: str) -> str:
    return url.replace(origin, "site")


async def observe(
    browser: Any, ready: dict[str, Any], token: str, site: Site, kill_at: float
) -> Observation:
    """Read the Grid browser through a fresh Playwright connection."""
    cdp = await browser.new_browser_cdp_session()
    listed = (await cdp.send("Target.getBrowserContexts"))["browserContextIds"]
    since_kill_ms = (time.perf_counter() - kill_at) * 1000
    targets = (await cdp.send("Target.getTargets"))["targetInfos"]
    pages = [(t["browserContextId"], t["url"]) for t in targets if t["type"] == "page"]
    cookie = False
    for args in [{}, *({"browserContextId": c} for c in listed)]:
        with contextlib.suppress(Exception):
            cookies = (await cdp.send("Storage.getCookies", args))["cookies"]
            cookie = cookie or any(c["name"] == "bm" and c["value"] == token for c in cookies)
    pw_pages = [[shorten(p.url, site.origin) for p in c.pages] for c in browser.contexts]
    stored = False
    for context in browser.contexts:  # a surviving page of the site (any context)
        for page in context.pages:
            if page.url.startswith(site.origin):
                with contextlib.suppress(Exception):
                    stored = stored or await page.evaluate("localStorage.getItem('bm')") == token
    check = await browser.contexts[0].new_page()  # the default context's storage
    try:
        await check.goto(site.origin + "/check")
        stored = stored or await check.evaluate("localStorage.getItem('bm')") == token
    finally:
        await check.close()
    await cdp.detach()
    context_ids = set(listed) | {c for c, _ in pages}
    return Observation(
        pw_pages=pw_pages,
        contexts_listed=listed,
        page_targets=[(c, shorten(u, site.origin)) for c, u in pages],
        child_context_left=ready["context_id"] in context_ids,
        child_page_left=any(t["targetId"] == ready["target_id"] for t in targets),
        cookie=cookie,
        local_storage=stored,
        since_kill_ms=since_kill_ms,
    )


async def spawn_child(cdp_url: str, url: str, mode: str, log: Path) -> tuple[Any, dict[str, Any]]:
    """Start the replica in its own process group (its stderr appended to `log`); wait for
    its READY line."""
    env = {**os.environ, "PYTHONPATH": f"{REPO / 'src'}{os.pathsep}{REPO}"}
    err = await asyncio.to_thread(open, log, "ab")
    try:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "benchmarks.fleet_reattach",
            "child",
            "--cdp",
            cdp_url,
            "--url",
            url,
            "--mode",
            mode,
            cwd=str(REPO),
            env=env,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=err,
            start_new_session=True,
        )
    finally:
        err.close()
    assert proc.stdout is not None
    try:
        async with asyncio.timeout(READY_TIMEOUT_S):
            while True:
                line = (await proc.stdout.readline()).decode()
                if not line:
                    text = await asyncio.to_thread(log.read_text)
                    raise RuntimeError(f"the child exited before READY: {text[-2000:]}")
                if line.startswith("READY "):
                    return proc, json.loads(line[6:])
    except BaseException:
        kill_group(proc.pid)
        await proc.wait()
        raise


def kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)


def group_alive(pgid: int) -> bool:
    """Whether a live (not zombie) process is left in the process group."""
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as fh:
                fields = fh.read().rpartition(")")[2].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[2]) == pgid:
            return True
    return False


async def group_gone_ms(pgid: int, since: float, limit_s: float = 15.0) -> float:
    """Poll until no live process is left in the group (a Playwright driver that outlives its
    Python, or a process still being torn down); ms from `since` (NaN past the limit)."""
    until = time.monotonic() + limit_s
    while group_alive(pgid):
        if time.monotonic() > until:
            return float("nan")
        await asyncio.sleep(0.02)
    return (time.perf_counter() - since) * 1000


class Bench:
    def __init__(self, grid: Any, client: Any, pw: Any, site: Site, workdir: Path) -> None:
        from browsermesh.engine.grid import grid_capabilities

        self.grid = grid
        self.client = client
        self.pw = pw
        self.site = site
        self.workdir = workdir
        self.owner = uuid.uuid4().hex
        self.caps = grid_capabilities(json.dumps(CONFIGURED_CAPS), headless=True)
        self.children: list[int] = []
        self.browser_version: str | None = None

    def capabilities(self) -> dict[str, Any]:
        from browsermesh.engine.grid_client import OWNER_CAPABILITY, REQUEST_CAPABILITY

        return {**self.caps, OWNER_CAPABILITY: self.owner, REQUEST_CAPABILITY: uuid.uuid4().hex}

    async def new_session(self) -> Any:
        session = await self.client.new_session(self.capabilities(), 90)
        self.browser_version = session.browser_version
        return session

    async def listed(self, session_id: str) -> bool:
        status = await self.client.status(10)
        return any(
            (slot.get("session") or {}).get("sessionId") == session_id
            for node in status.get("nodes") or []
            for slot in node.get("slots") or []
        )

    async def start_replica(
        self, session: Any, mode: str, token: str
    ) -> tuple[Any, dict[str, Any]]:
        proc, ready = await spawn_child(
            session.cdp_url,
            self.site.set_url(token),
            CHILD_MODE[mode],
            self.workdir / "child.log",
        )
        self.children.append(proc.pid)
        return proc, ready

    async def end_replica(
        self, proc: Any, mode: str
    ) -> tuple[float, float, asyncio.Task[float], int | None]:
        """Kill (or ask to exit) the child and wait until it is reaped; returns (kill_at,
        death ms, a task giving the ms until its process group has no live process, rc)."""
        kill_at = time.perf_counter()
        if mode == "exit":
            assert proc.stdin is not None
            proc.stdin.write(b"exit\n")
            await proc.stdin.drain()
        elif mode == "sigkill-python":
            os.kill(proc.pid, signal.SIGKILL)
        else:
            kill_group(proc.pid)
        async with asyncio.timeout(30):
            code = await proc.wait()
        death_ms = (time.perf_counter() - kill_at) * 1000
        return kill_at, death_ms, asyncio.create_task(group_gone_ms(proc.pid, kill_at)), code

    async def attach_and_observe(
        self, session: Any, ready: dict[str, Any], token: str, kill_at: float
    ) -> tuple[float, Observation]:
        started = time.perf_counter()
        browser = await self.pw.chromium.connect_over_cdp(
            session.cdp_url, timeout=CONNECT_MS, headers=self.client.headers
        )
        attach_ms = (time.perf_counter() - started) * 1000
        try:
            seen = await observe(browser, ready, token, self.site, kill_at)
        finally:
            await browser.close()  # disconnects; the Grid browser keeps running
        return attach_ms, seen

    async def fresh(self) -> dict[str, float]:
        """A replacement: new Grid session, attach, context, page, navigation."""
        from browsermesh.engine.playwright_engine import context_kwargs
        from browsermesh.engine.protocol import ContextOptions

        t0 = time.perf_counter()
        session = await self.new_session()
        t1 = time.perf_counter()
        browser = await self.pw.chromium.connect_over_cdp(
            session.cdp_url, timeout=CONNECT_MS, headers=self.client.headers
        )
        t2 = time.perf_counter()
        try:
            context = await browser.new_context(**context_kwargs(ContextOptions()))
            page = await context.new_page()
            await page.goto(self.site.set_url(uuid.uuid4().hex[:16]))
            t3 = time.perf_counter()
        finally:
            await browser.close()
            await self.client.delete_session(session.session_id, 10)
        return {
            "session_ms": (t1 - t0) * 1000,
            "connect_ms": (t2 - t1) * 1000,
            "context_page_goto_ms": (t3 - t2) * 1000,
            "total_ms": (t3 - t0) * 1000,
        }

    async def run(self, mode: str, index: int) -> Run:
        import httpx2

        token = uuid.uuid4().hex[:16]
        session = await self.new_session()
        try:
            proc, ready = await self.start_replica(session, mode, token)
            kill_at, death_ms, gone, code = await self.end_replica(proc, mode)
            # At once: the replica's process group may still be exiting meanwhile.
            reattach_ms, first = await self.attach_and_observe(session, ready, token, kill_at)
            gone_ms = await gone
            kill_group(proc.pid)  # whatever outlived the limit
            listed: list[tuple[float, bool]] = []
            while (since := time.perf_counter() - kill_at) < POLL_FOR_S:
                listed.append((since, await self.listed(session.session_id)))
                await asyncio.sleep(POLL_S)
            listed.append((time.perf_counter() - kill_at, await self.listed(session.session_id)))
            _, second = await self.attach_and_observe(session, ready, token, kill_at)
            async with httpx2.AsyncClient(trust_env=False) as http:
                got = await http.get(f"{self.grid.url}/session/{session.session_id}/url")
            value = (got.json() or {}).get("value")
            url_value = value if isinstance(value, str) else json.dumps(value)[:80]
            fresh = await self.fresh()
        finally:
            await self.client.delete_session(session.session_id, 10)
        return Run(
            mode=mode,
            index=index,
            ready=ready,
            death_ms=death_ms,
            group_left_ms=gone_ms,
            exit_code=code,
            reattach_ms=reattach_ms,
            first=first,
            second=second,
            listed=listed,
            url_status=got.status_code,
            url_value=shorten(url_value, self.site.origin),
            fresh=fresh,
        )

    async def idle(self, limit_s: float) -> Idle:
        """One orphan (replica SIGKILLed), untouched: when does the Grid end it?"""
        status = await self.client.status(10)
        nodes = status.get("nodes") or [{}]
        timeout_ms = nodes[0].get("sessionTimeout")
        created = time.perf_counter()
        session = await self.new_session()  # the session's last WebDriver command
        result = Idle(timeout_ms, None, None, 0.0)
        try:
            proc, _ = await self.start_replica(session, "sigkill", uuid.uuid4().hex[:16])
            kill_at, _, gone, _ = await self.end_replica(proc, "sigkill")
            await gone
            while (time.perf_counter() - kill_at) < limit_s:
                if not await self.listed(session.session_id):
                    now = time.perf_counter()
                    result.created_to_gone_s = now - created
                    result.kill_to_gone_s = now - kill_at
                    break
                result.listed_polls += 1
                await asyncio.sleep(5)
            result.waited_s = time.perf_counter() - kill_at
        finally:
            await self.client.delete_session(session.session_id, 10)
        return result

    async def sweep(self) -> None:
        for pid in self.children:
            kill_group(pid)
        with contextlib.suppress(Exception):
            owned = await self.client.owned_sessions(self.owner, 10)
            for session_id in owned:
                await self.client.delete_session(session_id, 10)


async def measure_async(
    grid: Any, site: Site, workdir: Path, runs: int, idle_wait: float, modes: list[str]
) -> dict[str, Any]:
    from playwright.async_api import async_playwright

    from browsermesh.engine.grid_client import GridClient

    client = GridClient(grid.url)
    try:
        status = await client.status(10)
        async with async_playwright() as pw:
            bench = Bench(grid, client, pw, site, workdir)
            try:
                await bench.fresh()  # warm-up (the Grid's JIT, Chromium's files), unreported
                results: list[Run] = []
                for index in range(runs):  # the modes interleaved
                    for mode in modes:
                        results.append(await bench.run(mode, index))
                        print(f"  {mode} #{index + 1} done", file=sys.stderr, flush=True)
                idle = await bench.idle(idle_wait) if idle_wait > 0 else None
            finally:
                await bench.sweep()
    finally:
        await client.aclose()
    node = (status.get("nodes") or [{}])[0]
    return {
        "runs": results,
        "idle": idle,
        "grid_version": str(node.get("version", "?")).split(" ")[0],
        "max_sessions": node.get("maxSessions"),
        "session_timeout_ms": node.get("sessionTimeout"),
        "browser_version": bench.browser_version,
    }


def measure(runs: int, idle_wait: float, modes: list[str]) -> dict[str, Any]:
    """Start the site and the Grid (from sync code: `start_grid` runs its own event loop),
    measure, stop them."""
    from tests.support.grid import start_grid

    with Site() as site, tempfile.TemporaryDirectory() as tmp:
        grid = start_grid(Path(tmp), nodes=1, max_sessions=2)
        try:
            return asyncio.run(measure_async(grid, site, Path(tmp), runs, idle_wait, modes))
        finally:
            grid.stop()


# --------------------------------------------------------------------------- the report


def playwright_source() -> str:
    """The installed driver's lines that make a CDP context, and file a foreign context's
    page under the default context (Playwright's bundle, or crBrowser.js in older drivers)."""
    import playwright

    package = Path(playwright.__file__).parent / "driver" / "package" / "lib"
    candidates = [package / "server" / "chromium" / "crBrowser.js", package / "coreBundle.js"]
    path = next((p for p in candidates if p.exists()), None)
    if path is None:
        return "(Playwright's driver sources not found)"
    lines = path.read_text(errors="replace").splitlines()
    out: list[str] = []
    wanted = (
        ('send("Target.createBrowserContext"', 3),
        ("let context = this._contexts.get(targetInfo.browserContextId)", 4),
    )
    for needle, extra in wanted:
        for number, line in enumerate(lines):
            if needle in line:
                block = lines[number : number + extra + 1]
                out.append(
                    f"`{path.relative_to(REPO) if path.is_relative_to(REPO) else path}`, "
                    f"line {number + 1}:\n\n```js\n" + "\n".join(block) + "\n```"
                )
                break
    return "\n\n".join(out)


def yes(value: bool) -> str:
    return "yes" if value else "no"


def count(flags: list[bool]) -> str:
    return f"{sum(flags)}/{len(flags)}"


def spread(values: list[float]) -> str:
    return f"{median(values):.0f} ({min(values):.0f}–{max(values):.0f})"


def pw_view(pages: list[list[str]]) -> str:
    return f"{len(pages)}: " + "; ".join("[" + " \\| ".join(p) + "]" for p in pages)


def set_before(run: Run) -> bool:
    """The replica saw its cookie and localStorage, and its context listed by the browser
    (the default context is never listed)."""
    listed = CHILD_MODE[run.mode] == "default" or (
        run.ready["context_id"] in run.ready["contexts_listed"]
    )
    return bool(run.ready["cookie"] and run.ready["local_storage"] and listed)


def listed_for(run: Run) -> str:
    seen = [s for s, up in run.listed if up]
    return f"{len(seen)}/{len(run.listed)} polls, last at {max(seen):.1f} s" if seen else "gone"


def render(data: dict[str, Any], runs_asked: int) -> str:
    runs: list[Run] = data["runs"]
    modes = list(dict.fromkeys(r.mode for r in runs))
    summary = []
    for mode in modes:
        rs = [r for r in runs if r.mode == mode]
        summary.append(
            [
                f"`{mode}`",
                len(rs),
                count([set_before(r) for r in rs]),
                count([r.first.child_context_left for r in rs])
                + " / "
                + count([r.second.child_context_left for r in rs]),
                count([r.first.child_page_left for r in rs])
                + " / "
                + count([r.second.child_page_left for r in rs]),
                count([r.first.cookie for r in rs]) + " / " + count([r.second.cookie for r in rs]),
                count([r.first.local_storage for r in rs])
                + " / "
                + count([r.second.local_storage for r in rs]),
                count([all(up for _, up in r.listed) for r in rs]),
                count([r.url_status == 200 for r in rs]),
                spread([r.reattach_ms for r in rs]),
                spread([r.fresh["total_ms"] for r in rs]),
            ]
        )
    detail = [
        [
            f"`{r.mode}`",
            r.index + 1,
            f"{r.death_ms:.0f} / {r.group_left_ms:.0f}"
            + ("" if r.exit_code is None else f" (rc {r.exit_code})"),
            f"{r.first.since_kill_ms:.0f}",
            f"{r.reattach_ms:.0f}",
            pw_view(r.first.pw_pages),
            len(r.first.contexts_listed),
            "; ".join(u for _, u in r.first.page_targets),
            yes(r.first.cookie) + " / " + yes(r.first.local_storage),
            pw_view(r.second.pw_pages),
            yes(r.second.cookie) + " / " + yes(r.second.local_storage),
            listed_for(r),
            f"{r.url_status} `{r.url_value}`",
            f"{r.fresh['total_ms']:.0f} = {r.fresh['session_ms']:.0f} + "
            f"{r.fresh['connect_ms']:.0f} + {r.fresh['context_page_goto_ms']:.0f}",
        ]
        for r in sorted(runs, key=lambda r: (modes.index(r.mode), r.index))
    ]
    main = [r for r in runs if CHILD_MODE[r.mode] == "new"]
    state_lost = all(
        not (o.child_context_left or o.child_page_left or o.cookie or o.local_storage)
        for r in main
        for o in (r.first, r.second)
    )
    grid_kept = all(all(up for _, up in r.listed) and r.url_status == 200 for r in main)
    controls = {m: [r for r in runs if r.mode == m] for m in ("sigkill-default", "sigkill-keep")}
    default_kept = bool(controls["sigkill-default"]) and all(
        r.second.child_page_left and r.second.cookie and r.second.local_storage
        for r in controls["sigkill-default"]
    )
    keep_kept = bool(controls["sigkill-keep"]) and all(
        r.second.child_context_left and r.second.cookie and r.second.local_storage
        for r in controls["sigkill-keep"]
    )
    reattach = median([r.reattach_ms for r in main]) if main else float("nan")
    fresh = median([r.fresh["total_ms"] for r in main]) if main else float("nan")
    idle: Idle | None = data["idle"]
    timeout_s = (data["session_timeout_ms"] or 0) / 1000
    if idle is None:
        idle_text = "not measured (`--idle-wait 0`)."
    elif idle.kill_to_gone_s is None:
        idle_text = (
            f"still listed after {idle.waited_s:.0f} s of polling `/status` every 5 s "
            f"({idle.listed_polls} polls)."
        )
    else:
        idle_text = (
            f"ended by the Grid {idle.created_to_gone_s:.0f} s after its creation (its last "
            f"WebDriver command), {idle.kill_to_gone_s:.0f} s after its replica was killed "
            f"(node `sessionTimeout` {timeout_s:.0f} s; `/status` polled every 5 s)."
        )
    verdict = (
        "**No: the Grid session survives, the BrowserMesh session in it does not.**"
        if state_lost and grid_kept
        else "**See the tables: the runs did not all agree with the simple story.**"
    )
    conclusion = (
        f"{verdict} When a replica dies, by SIGKILL (of its process group, or of its Python "
        "process alone) or by a normal exit without `browser.close()`, its WebSocket to the "
        "Grid closes; the Grid's router closes its hop to the browser, and Chromium disposes "
        "the browser context the replica made, because Playwright makes every context with "
        "`Target.createBrowserContext {disposeOnDetach: true}` (quoted above). "
        + (
            "In every run the context, its page, its cookie and its localStorage were already "
            "gone at the first read after the kill, "
            if state_lost
            else "The context's state did not disappear in every run (see the table), "
        )
        + (
            "while the Grid session itself stayed alive (listed in `/status` for the whole "
            f"{POLL_FOR_S:.0f} s, WebDriver answering) until the node's idle-session timeout "
            f"(`sessionTimeout` {timeout_s:.0f} s, the default; engine/grid.py notes that CDP "
            "traffic does not reset it) "
            "ends it"
            + (
                f": an untouched orphan was ended {idle.kill_to_gone_s:.0f} s after its "
                "replica died. "
                if idle is not None and idle.kill_to_gone_s is not None
                else ". "
            )
            if grid_kept
            else "and the Grid session did not always stay alive. "
        )
        + "A second replica can re-attach to the same `se:cdp` URL "
        f"(median {reattach:.0f} ms vs {fresh:.0f} ms for a new Grid session + context + "
        "navigation), but it finds only the browser's default context with chromedriver's "
        "blank tab: nothing of the session to take over, so re-attaching buys nothing over "
        "failing the session and letting the client create a replacement (the dead replica's "
        "Grid session should be deleted — it otherwise holds a Grid slot until the idle "
        "timeout). "
        + (
            "The controls show the browser itself keeps state that is not in a dispose-on-"
            "detach context: a page in the default context (one per Grid browser, so no "
            "isolation between sessions) and a context made over raw CDP with "
            "`disposeOnDetach: false` both kept their page, cookie and localStorage after the "
            "SIGKILL; Playwright files the pages of such a foreign context under its default "
            "context (`browser.contexts[0]`), so a takeover would need BrowserMesh to create "
            "contexts outside Playwright's `new_context`, find them again by id, and give up "
            "Playwright's per-context bookkeeping (routes, init scripts, context options) "
            "for them."
            if default_kept and keep_kept
            else "".join(
                f"Control `{m}`: page, cookie and localStorage kept in "
                f"{sum(r.second.child_page_left and r.second.cookie for r in rs)}/{len(rs)} "
                "runs. "
                for m, rs in controls.items()
                if rs
            )
        )
    )
    idle_line = f"Orphaned Grid session (replica SIGKILLed, session untouched): {idle_text}"
    return (
        "# Re-attaching to a dead replica's Grid session (issue 37)\n\n"
        "Generated by `PYTHONPATH=src:. .venv/bin/python -m benchmarks.fleet_reattach "
        f"--runs {runs_asked}`. A Selenium Grid {data['grid_version']} on loopback "
        f"(`tests/support/grid.py`: one hub, one node with {data['max_sessions']} slots, "
        f"Debian chromedriver + Chromium {data['browser_version']}, headless), Playwright "
        f"{_version('playwright')} for Python, Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs. Each run: a Grid session with BrowserMesh's capabilities "
        "(`grid_capabilities`, `--no-sandbox`, owner markers); a child process (the replica) "
        "attaches with `connect_over_cdp(se:cdp)`, makes its context, opens a loopback page "
        "that sets a cookie (`Set-Cookie: bm=<token>`) and `localStorage.bm=<token>`, checks "
        "both and prints READY; the parent kills it (or asks it to `sys.exit(0)`), waits for "
        "it to be reaped, re-attaches with `connect_over_cdp` to the same URL (timed) and "
        "reads what is left, polls the Grid's `/status` every 2 s for 16 s, reads again, asks "
        "WebDriver `GET /session/<id>/url`, then times a replacement (new Grid session + "
        "`connect_over_cdp` + `new_context` + `new_page` + `goto`). Modes run interleaved, "
        "after one unreported warm-up replacement.\n\n"
        "Modes:\n\n" + "\n".join(f"- `{m}`: {MODES[m]}" for m in modes) + "\n\n## Summary\n\n"
        "Counts are runs out of n; `a / b` = at the first read after the kill / at the second "
        "read, ~16 s later. *State set*: the replica read its cookie and localStorage back "
        "and saw its context in `Target.getBrowserContexts` before it died. *Context / page "
        "left*: the replica's CDP browser context id "
        "(`Target.getBrowserContexts` or a page target's) and its page target still exist. "
        "*Cookie*: `bm=<token>` in `Storage.getCookies` of the default context or any listed "
        "context; *localStorage*: `bm` in a surviving page of the site or in a new page of "
        "the default context. *Grid session*: listed in every `/status` poll for 16 s; "
        "*WebDriver*: `GET /session/<id>/url` answered 200 after that. Times in ms: median "
        "(min–max).\n\n"
        + md_table(
            [
                "mode",
                "n",
                "state set before the kill",
                "context left",
                "page left",
                "cookie left",
                "localStorage left",
                "Grid session listed 16 s",
                "WebDriver 200",
                "re-attach ms",
                "fresh session ms",
            ],
            summary,
        )
        + "\n\n"
        + idle_line
        + "\n\n## Runs\n\n"
        "*Death ms*: kill / exit request → child reaped / nothing left in its process group "
        "(the Playwright driver included). *First read ms*: kill → the re-attached browser's "
        "`Target.getBrowserContexts` answer. *Playwright view*: `len(browser.contexts)`: the "
        "pages of each (site = the loopback page). *Listed contexts*: "
        "`Target.getBrowserContexts` (the default context is never listed). *Fresh* = Grid "
        "session + connect + context/page/goto.\n\n"
        + md_table(
            [
                "mode",
                "run",
                "death ms",
                "first read ms",
                "re-attach ms",
                "Playwright view (first)",
                "listed contexts",
                "page targets (first)",
                "cookie / storage (first)",
                "Playwright view (~16 s)",
                "cookie / storage (~16 s)",
                "Grid /status",
                "WebDriver /url",
                "fresh ms",
            ],
            detail,
        )
        + "\n\n## Playwright's source\n\n"
        "How Playwright makes a context over CDP (`CRBrowser.doCreateNewContext`, "
        "packages/playwright-core/src/server/chromium/crBrowser.ts), and where it files a page "
        "of a context it did not make (`_onAttachedToTarget`), from the installed driver:\n\n"
        + playwright_source()
        + "\n\n## Conclusion\n\n"
        + conclusion
        + "\n"
    )


def _version(name: str) -> str:
    from importlib.metadata import version

    return version(name)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["child"]:
        return child_main(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m benchmarks.fleet_reattach")
    parser.add_argument("--runs", type=int, default=3, help="runs of every mode (default 3)")
    parser.add_argument(
        "--idle-wait",
        type=float,
        default=420,
        help="seconds to watch an orphaned session for the Grid's idle timeout (0: skip)",
    )
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated modes")
    parser.add_argument("--out", type=Path, default=RESULTS, help="results directory")
    args = parser.parse_args(argv)
    modes = [m for m in args.modes.split(",") if m]
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        parser.error(f"unknown modes: {unknown}")
    data = measure(args.runs, args.idle_wait, modes)
    text = render(data, args.runs)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "fleet_reattach.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
