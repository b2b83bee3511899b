"""The live view (issue 21), end to end: a real `browsermesh --transport http` on loopback with
a token file, sessions made through the MCP SDK client, the view opened in real Chromium.

One server serves the module (alice and bob are its principals); each test makes its own
sessions and closes them. A screenshot of the view is kept under the pytest tmp dir (its path
is printed, and written to `BM_VIEW_ARTIFACT` when that is set).
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest

from browsermesh.config import default_config, find_chromium
from tests.fixtures.site import FixtureSite
from tests.support.clients import ToolClient
from tests.support.http_process import HttpServerProcess
from tests.support.http_transport import TOKENS, connect, write_token_file
from tests.support.servers import CHECKOUT_ENV
from tests.support.view_client import new_link, sign_in

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
FORM_CANARY = "FORMCANARY-5e1d"
COOKIE_CANARY = "COOKIECANARY-93ab"
PASSWORD_CANARY = "PWCANARY-0c7f"
WAIT_MS = 20_000

PAGE_ONE = "<!doctype html><title>Alpha one</title><h1>One</h1><p>first page</p>"
PAGE_TWO = "<!doctype html><title>Alpha two</title><h1 style='color:#c33'>Two</h1>"
BETA = "<!doctype html><title>Beta home</title><h1 style='background:#39c'>Beta</h1>"
BOB = "<!doctype html><title>Bob private</title><h1>Bob</h1>"
FORM = f"""<!doctype html><title>Form page</title>
<label>Note <input id=note></label>
<label>Password <input type=password id=pw value="{PASSWORD_CANARY}"></label>
<script>document.cookie = "sid={COOKIE_CANARY}; path=/";
document.title = "Form " + document.getElementById("pw").value;</script>"""


@dataclass
class Server:
    proc: HttpServerProcess
    base: str  # http://127.0.0.1:<port>
    tokens: Path

    @property
    def mcp(self) -> str:
        return self.base + "/mcp"


def _env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BROWSERMESH_")}
    env.update(
        {
            "BROWSERMESH_DATA_DIR": str(tmp / "data"),
            "BM_TEST_MARKER": f"bm-{uuid.uuid4()}",
            **CHECKOUT_ENV,
        }
    )
    return env


@contextmanager
def serving(
    tmp: Path, *args: str, env: dict[str, str] | None = None, secrets: tuple[str, ...] = ()
) -> Iterator[Server]:
    """A `browsermesh --transport http` with a token file (alice and bob) and `args`; at the
    end its log holds no traceback, no token and none of `secrets`, and it exits 0."""
    tokens = write_token_file(tmp)
    cmd = [sys.executable, "-m", "browsermesh", "--transport", "http", "--port", "0"]
    cmd += ["--headless", "--no-persistence", "--auth-token-file", str(tokens), *args]
    proc = HttpServerProcess(cmd, {**_env(tmp), **(env or {})}, ROOT)
    try:
        url = proc.wait_listening()
        yield Server(proc, url.removesuffix("/mcp"), tokens)
    finally:
        code = proc.stop()
        log = "\n".join(proc.lines)
        assert "Traceback" not in log
        for secret in (*TOKENS.values(), *secrets):
            assert secret not in log
        assert code == 0, proc.log_tail()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    canaries = (FORM_CANARY, COOKIE_CANARY, PASSWORD_CANARY)
    with serving(tmp_path_factory.mktemp("live-view"), secrets=canaries) as running:
        yield running


@pytest.fixture
def pages(site: FixtureSite) -> FixtureSite:
    site.pages.update({"/lv/one": PAGE_ONE, "/lv/two": PAGE_TWO, "/lv/beta": BETA, "/lv/bob": BOB})
    site.pages["/lv/form"] = FORM
    return site


@pytest.fixture
async def chromium() -> AsyncIterator[Any]:
    """A real Chromium of the test's own, to look at the view with."""
    from playwright.async_api import async_playwright

    executable = find_chromium(default_config(headless=True), os.environ)
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=executable, headless=True)
        try:
            yield browser
        finally:
            await browser.close()


@asynccontextmanager
async def sessions(
    server: Server, principal: str, *named: tuple[str, str]
) -> AsyncIterator[tuple[ToolClient, list[tuple[str, str]]]]:
    """`principal`'s MCP client and one session per `(name, url)`, closed afterwards."""
    async with connect(server.mcp, "legacy", TOKENS[principal]) as c:
        made: list[tuple[str, str]] = []
        try:
            for name, url in named:
                sid, pid = await c.session(name=name, metadata={"team": f"{principal}-team"})
                await c.ok("browser_navigate", {"sessionId": sid, "pageId": pid, "url": url})
                made.append((sid, pid))
            yield c, made
        finally:
            for sid, _ in made:
                await c.raw("browser_session_close", {"sessionId": sid})


async def open_view(browser: Any, server: Server, principal: str) -> tuple[Any, Any]:
    context = await browser.new_context(viewport={"width": 1280, "height": 900})
    page = await context.new_page()
    await page.goto(await new_link(server, principal))
    await page.get_by_role("button", name="Continue").click()
    await page.wait_for_url(server.base + "/view/")
    await page.locator("#link", has_text="live").wait_for(timeout=WAIT_MS)
    return context, page


def card(page: Any, session_id: str) -> Any:
    return page.locator(f'article.card[data-session-id="{session_id}"]')


async def test_grid_titles_frames_and_isolation(
    server: Server, pages: FixtureSite, chromium: Any, tmp_path: Path
) -> None:
    async with (
        sessions(
            server, "alice", ("alpha", pages.url("/lv/one")), ("beta", pages.url("/lv/beta"))
        ) as (alice, made),
        sessions(server, "bob", ("bobs", pages.url("/lv/bob"))) as (_, bobs),
    ):
        context, view = await open_view(chromium, server, "alice")
        try:
            await view.locator("article.card").nth(1).wait_for(timeout=WAIT_MS)
            assert await view.locator("article.card").count() == 2
            (alpha, alpha_page), (beta, _) = made
            await card(view, alpha).locator(".title", has_text="Alpha one").wait_for()
            await card(view, beta).locator(".title", has_text="Beta home").wait_for()
            assert await card(view, alpha).locator(".name").inner_text() == "alpha"
            assert "team=alice-team" in await card(view, alpha).locator(".labels").inner_text()
            ops = await card(view, alpha).locator(".ops").inner_text()
            assert "browser_navigate" in ops and "OK" in ops
            # A frame of each page arrives (a JPEG as a data: URL).
            for sid in (alpha, beta):
                pic = card(view, sid).locator("img.pic")
                await view.wait_for_function(
                    "el => el.src.startsWith('data:image/jpeg;base64,')",
                    arg=await pic.element_handle(),
                    timeout=WAIT_MS,
                )
            # The title follows a navigation.
            await alice.ok(
                "browser_navigate",
                {"sessionId": alpha, "pageId": alpha_page, "url": pages.url("/lv/two")},
            )
            await card(view, alpha).locator(".title", has_text="Alpha two").wait_for()
            await card(view, alpha).locator(".url", has_text="/lv/two").wait_for()
            # Clicking a card enlarges it; clicking again shrinks it.
            await card(view, beta).click()
            await view.locator("article.card.big").wait_for()
            assert await card(view, beta).get_attribute("class") == "card big"
            shot = tmp_path / "live-view.png"
            await card(view, beta).click()
            await view.wait_for_function("() => !document.querySelector('article.card.big')")
            await view.screenshot(path=str(shot))
            print(f"live view screenshot: {shot}")
            if os.environ.get("BM_VIEW_ARTIFACT"):
                await asyncio.to_thread(shutil.copyfile, shot, os.environ["BM_VIEW_ARTIFACT"])
            # Bob's session never appears in alice's view.
            html = await view.content()
            assert bobs[0][0] not in html and "Bob private" not in html and "bobs" not in html
        finally:
            await context.close()


async def test_canary_form_cookie_and_password_never_reach_the_view(
    server: Server, pages: FixtureSite
) -> None:
    async with sessions(server, "alice", ("canary", pages.url("/lv/form"))) as (c, made):
        sid, pid = made[0]
        await c.ok(
            "browser_fill",
            {
                "sessionId": sid,
                "pageId": pid,
                "locator": {"strategy": "label", "value": "Note"},
                "value": FORM_CANARY,
            },
        )
        text = await read_events(server, "alice", want_frames={sid}, want_title="Form")
        for canary in (FORM_CANARY, COOKIE_CANARY, PASSWORD_CANARY):
            assert canary not in text
        assert "Form [REDACTED]" in text  # the title as browser_get_title shows it
        assert "browser_fill" in text


async def read_events(
    server: Server, principal: str, *, want_frames: set[str], want_title: str
) -> str:
    """Everything the event stream sent until a frame of each of `want_frames` and a state
    with `want_title` arrived (the view's cookie obtained through a one-time link)."""
    async with httpx2.AsyncClient(trust_env=False, timeout=30) as http:
        login = await sign_in(http, server, await new_link(server, principal))
        assert login.status_code == 200
        cookie = login.headers["set-cookie"]
        assert re.fullmatch(
            r"bm_view=[\w-]+; Path=/view; HttpOnly; SameSite=Strict; Max-Age=43200", cookie
        ), cookie
        seen: list[str] = []
        framed: set[str] = set()
        titled = False
        async with asyncio.timeout(WAIT_MS / 1000):
            async with http.stream("GET", server.base + "/view/events") as stream:
                assert stream.status_code == 200
                assert stream.headers["content-type"].startswith("text/event-stream")
                async for line in stream.aiter_lines():
                    seen.append(line)
                    if line.startswith("data: ") and '"source":"' in line:  # a frame
                        framed |= {s for s in want_frames if f'"sessionId":"{s}","pageId"' in line}
                    elif line.startswith("data: "):  # a grid
                        titled = titled or want_title in line
                    if framed == want_frames and titled:
                        break
        return "\n".join(seen)


async def test_access_rules(server: Server) -> None:
    async with httpx2.AsyncClient(trust_env=False, timeout=30) as http:
        # No cookie: 401 everywhere (a bearer token is no view cookie).
        for path in ("/view/", "/view/events", "/view/static/view.js"):
            assert (await http.get(server.base + path)).status_code == 401, path
        bearer = {"Authorization": f"Bearer {TOKENS['alice']}"}
        assert (await http.get(server.base + "/view/", headers=bearer)).status_code == 401
        # A link needs a bearer token; a wrong one is refused.
        assert (await http.post(server.base + "/view/link")).status_code == 401
        wrong = {"Authorization": "Bearer not-a-token-0123456789"}
        assert (await http.post(server.base + "/view/link", headers=wrong)).status_code == 401
        # A one-time link works once.
        link = await new_link(server, "alice")
        first = await sign_in(http, server, link)
        assert first.status_code == 200 and "set-cookie" in first.headers
        assert first.headers["referrer-policy"] == "no-referrer"
        http.cookies.clear()
        second = await http.get(link)
        assert second.status_code == 401 and "set-cookie" not in second.headers
        assert (await http.get(server.base + "/view/login?code=guess")).status_code == 401
        # With the cookie the page loads, with a strict CSP; a foreign Origin is refused.
        cookie = first.headers["set-cookie"].split(";")[0]
        headers = {"Cookie": cookie}
        ok = await http.get(server.base + "/view/", headers=headers)
        assert (
            ok.status_code == 200
            and "frame-ancestors 'none'" in ok.headers["content-security-policy"]
        )
        for path in ("/view/", "/view/events"):
            foreign = await http.get(
                server.base + path, headers={**headers, "Origin": "http://evil.test"}
            )
            assert foreign.status_code == 403, path
        evil_host = await http.get(server.base + "/view/", headers={**headers, "Host": "evil.test"})
        assert evil_host.status_code == 421
        # Read-only: nothing but GET (and POST /view/link) is served.
        assert (await http.post(server.base + "/view/events", headers=headers)).status_code == 405
        # The MCP endpoint still wants its bearer token.
        assert (await http.post(server.base + "/mcp", json={})).status_code == 401


def test_start_up_links_and_view_link_command(server: Server) -> None:
    printed = [line for line in server.proc.lines if '"view.link"' in line]
    assert len(printed) == 2 and all("/view/login?code=" in line for line in printed)
    assert {p for p in ("alice", "bob") if any(f'"principal":"{p}"' in x for x in printed)} == {
        "alice",
        "bob",
    }
    port = server.base.rsplit(":", 1)[1]

    def view_link(principal: str) -> subprocess.CompletedProcess[str]:
        args = ["view-link", "--port", port, "--principal", principal]
        return subprocess.run(
            [sys.executable, "-m", "browsermesh", *args, "--auth-token-file", str(server.tokens)],
            capture_output=True,
            text=True,
            env=_env(server.tokens.parent),
            cwd=ROOT,
            timeout=60,
        )

    done = view_link("bob")
    assert done.returncode == 0, done.stderr
    url = done.stdout.strip()
    assert url.startswith(server.base + "/view/login?code=") and TOKENS["bob"] not in url

    async def redeem() -> httpx2.Response:
        async with httpx2.AsyncClient(trust_env=False) as http:
            return await sign_in(http, server, url)

    answer = asyncio.run(redeem())
    assert answer.status_code == 200 and "bm_view=" in answer.headers["set-cookie"]
    unknown = view_link("carol")
    assert unknown.returncode == 1 and "no such principal" in unknown.stderr


def test_no_view_serves_no_view(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "browsermesh", "--transport", "http", "--port", "0"]
    proc = HttpServerProcess([*cmd, "--headless", "--no-view"], _env(tmp_path), ROOT)
    try:
        base = proc.wait_listening().removesuffix("/mcp")
        assert httpx2.get(base + "/view/", trust_env=False).status_code == 404
        assert not any("view.ready" in line for line in proc.lines)
    finally:
        assert proc.stop() == 0


async def test_a_link_says_whose_view_it_opens_before_it_signs_in(
    server: Server, site: FixtureSite, chromium: Any
) -> None:
    """Issue 30 #6, login CSRF: bob sends alice his link, or a page of another site submits it.
    Opening it only shows whose view it is; a cross-site POST does not sign in; Continue does."""
    context = await chromium.new_context()
    try:
        page = await context.new_page()
        await page.goto(await new_link(server, "alice"))  # alice signed in to her own view
        await page.get_by_role("button", name="Continue").click()
        await page.wait_for_url(server.base + "/view/")
        bobs = await new_link(server, "bob")
        await page.goto(bobs)
        heading = page.get_by_role("heading")
        assert "principal bob" in (await heading.inner_text())
        assert "signed in to the live view as alice" in (await page.inner_text("body"))
        cookies = {c["name"]: c["value"] for c in await context.cookies()}
        # A foreign page that posts the code at once (the attack) is refused, the code kept.
        code = bobs.split("code=", 1)[1]
        site.pages["/lv/csrf"] = (
            f'<!doctype html><form id=f method=post action="{server.base}/view/login">'
            f'<input name=code value="{code}"></form><script>f.submit()</script>'
        )
        async with page.expect_response(server.base + "/view/login") as refused:
            await page.goto(site.url("/lv/csrf"))
        assert (await refused.value).status == 403
        assert {c["name"]: c["value"] for c in await context.cookies()} == cookies
        async with httpx2.AsyncClient(trust_env=False, timeout=30) as http:
            no_origin = await http.post(server.base + "/view/login", data={"code": code})
            assert no_origin.status_code == 403 and "set-cookie" not in no_origin.headers
            # Only Continue on the link's own page signs in (here: as bob, as asked).
            assert (await sign_in(http, server, bobs)).status_code == 200
    finally:
        await context.close()


async def test_one_principal_flooding_view_sessions_signs_out_only_itself(server: Server) -> None:
    """Issue 30 #6: the view-session table was shared (256 entries): 260 sign-ins of alice
    signed bob out. Now each principal has its own bound; alice loses only her oldest."""
    async with httpx2.AsyncClient(trust_env=False, timeout=30) as http:

        async def cookie_of(principal: str) -> str:
            answer = await sign_in(http, server, await new_link(server, principal))
            http.cookies.clear()
            return answer.headers["set-cookie"].split(";")[0]

        async def status(cookie: str) -> int:
            return (await http.get(server.base + "/view/", headers={"Cookie": cookie})).status_code

        bob = await cookie_of("bob")
        alice = [await cookie_of("alice") for _ in range(260)]
        assert await status(bob) == 200
        assert await status(alice[-1]) == 200 and await status(alice[0]) == 401
