"""`contextSettings.initScripts` on real Chromium (issue 36 item 4), against the loopback
init-script site (tests/fixtures/init_script_site.py): the scripts run before the document
exists, in the main frame and in an iframe; refused without the `eval` profile and out of
bounds, naming the field; a fork runs the scripts it is given (forks inherit no settings,
reference §12); the export adds them to its context and replays green."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.init_script_site import InitScriptSite
from tests.support.clients import ToolClient, tool_client
from tests.support.export_runner import run_exported, write_export
from tests.support.runtimes import real_runtime

pytestmark = pytest.mark.anyio

EARLY = "window.__bm = document.documentElement === null;"
SETTINGS = {"initScripts": ["window.__order = ['first'];", EARLY]}
WITHOUT_EVAL = ("core", "observability", "persistence", "files", "testing")
TESTING_EVAL = ("core", "observability", "persistence", "files", "eval", "testing")


@pytest.fixture(scope="module")
def init_site() -> Iterator[InitScriptSite]:
    with InitScriptSite() as site:
        yield site


def text_condition(text: str) -> dict[str, Any]:
    return {"kind": "text", "text": text, "state": "present"}


async def opened(c: ToolClient, site: InitScriptSite, **create: Any) -> dict[str, str]:
    """A new session (created with `create`) on the site's page, its iframe reported."""
    data = await c.ok("browser_session_create", create)
    addr = {"sessionId": data["session"]["sessionId"], "pageId": data["initialPage"]["pageId"]}
    await c.ok("browser_navigate", {**addr, "url": site.url("/")})
    frame = text_condition("frame:")
    await c.ok("browser_wait", {**addr, "timeoutMs": 10_000, "condition": frame})
    return addr


async def title_and_frame(c: ToolClient, addr: dict[str, str]) -> tuple[str, str]:
    title = (await c.ok("browser_get_title", addr))["title"]
    locator = {"strategy": "testId", "value": "frame"}
    frame = (await c.ok("browser_visible_text", {**addr, "locator": locator}))["text"]
    return str(title), str(frame)


async def test_scripts_run_before_the_page_in_every_frame(
    client: ToolClient, init_site: InitScriptSite
) -> None:
    addr = await opened(client, init_site, contextSettings=SETTINGS)
    assert await title_and_frame(client, addr) == ("early:true", "frame:true")
    view = (await client.ok("browser_session_get", {"sessionId": addr["sessionId"]}))["session"]
    assert view["contextSettings"] == {"initScripts": 2}  # the count, never the text
    ordered = await client.ok("browser_evaluate", {**addr, "expression": "window.__order"})
    assert ordered["result"] == ["first"]
    plain = await opened(client, init_site)
    assert await title_and_frame(client, plain) == ("early:undefined", "frame:undefined")


async def test_a_fork_runs_the_scripts_it_is_given(
    client: ToolClient, init_site: InitScriptSite
) -> None:
    parent = await opened(client, init_site, contextSettings=SETTINGS)
    source = parent["sessionId"]
    fork = await opened(client, init_site, fromSessionId=source, contextSettings=SETTINGS)
    assert await title_and_frame(client, fork) == ("early:true", "frame:true")
    bare = await opened(client, init_site, fromSessionId=source)  # nothing is inherited (§12)
    assert await title_and_frame(client, bare) == ("early:undefined", "frame:undefined")


async def test_refusals_name_the_field(client: ToolClient, tmp_path: Path) -> None:
    cases = [
        (["1;"] * 11, "contextSettings.initScripts", "at most 10 entries"),
        (["1;", ""], "contextSettings.initScripts[1]", "at least 1 character"),
        (["1;", "2;", "x" * 65_537], "contextSettings.initScripts[2]", "at most 65536 characters"),
    ]
    for scripts, field, rule in cases:
        err = await client.err(
            "browser_session_create", {"contextSettings": {"initScripts": scripts}}
        )
        assert err["code"] == "INVALID_ARGUMENT"
        assert (err["details"]["field"], err["details"]["rule"]) == (field, rule)
    async with real_runtime(tmp_path, tools=WITHOUT_EVAL) as rt, tool_client(rt) as c:
        err = await c.err("browser_session_create", {"contextSettings": SETTINGS})
        assert err["code"] == "INVALID_ARGUMENT"
        assert err["details"]["field"] == "contextSettings.initScripts"
        assert "eval profile" in err["details"]["rule"]


async def test_the_export_adds_the_scripts_and_replays_green(
    tmp_path: Path, init_site: InitScriptSite
) -> None:
    async with real_runtime(tmp_path, tools=TESTING_EVAL) as rt, tool_client(rt) as c:
        addr = await opened(c, init_site, contextSettings=SETTINGS)
        await c.ok("browser_wait", {**addr, "condition": text_condition("frame:true")})
        exported = await c.ok("browser_test_export", {"sessionIds": [addr["sessionId"]]})
    code = exported["code"]
    assert f"add_init_script(script={EARLY!r})" in code
    assert code.index("add_init_script(script=\"window.__order = ['first'];\")") < code.index(
        f"add_init_script(script={EARLY!r})"
    )
    test = write_export(tmp_path / "export", code)
    with InitScriptSite() as fresh:
        passed = run_exported(test, {"BM_BASE_URL": fresh.base_url})
        assert passed.returncode == 0, passed.stdout + passed.stderr
    # the same flow without the scripts fails: the recorded wait needs them
    bare = code.replace(f".add_init_script(script={EARLY!r})", ".set_default_timeout(2000)")
    test = write_export(tmp_path / "bare", bare)
    with InitScriptSite() as fresh:
        failed = run_exported(test, {"BM_BASE_URL": fresh.base_url, "BM_TIMEOUT_MS": "2000"})
        assert failed.returncode == 1, failed.stdout + failed.stderr
