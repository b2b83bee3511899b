"""Secrets filled by name (issue 36 item 2, reference §36), on real Chromium: a login filled
with `{"secret": NAME}` whose values (canaries) appear in no result, observe event, log line,
trace or export, while the page that echoes them reads `[REDACTED]`; names the caller may not
use are refused without naming the ones that exist; over HTTP each principal has its own file."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from browsermesh.log import EventLog
from tests.fixtures.site import FixtureSite
from tests.support.clients import ToolClient, tool_client
from tests.support.export_runner import run_exported, write_export
from tests.support.http_transport import TOKENS, connect, http_server
from tests.support.runtimes import real_runtime
from tests.support.traces import load_trace, read_artifact

pytestmark = pytest.mark.anyio

PASSWORD = "pw-Canary-7f3a"
API_KEY = "key-Canary-9d1c"
CANARIES = (PASSWORD, API_KEY)

LOGIN = """<!doctype html><title>Sign in</title>
<label>User <input id=u></label>
<label>Password <input type=password id=pw></label>
<label>API key <input id=key></label>
<button id=go>Sign in</button>
<p id=out></p>
<script>
go.addEventListener('click', () => {
  console.log('signing in with ' + pw.value + ' and ' + key.value);
  out.textContent = 'Welcome ' + u.value + ', your password is ' + pw.value;
  document.title = 'Hi ' + key.value;
  fetch('/canary/echo?k=' + key.value).catch(() => {});
  pw.remove();  // gone from the page: only the session still knows the value
});
</script>"""


def _secrets_file(path: Path, text: str, mode: int = 0o600) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(mode)
    return path


def _label(text: str) -> dict[str, Any]:
    return {"strategy": "label", "value": text}


def _clean(what: object) -> None:
    text = json.dumps(what, ensure_ascii=False)
    for canary in CANARIES:
        assert canary not in text


@pytest.fixture
def pages(site: FixtureSite) -> FixtureSite:
    site.pages["/canary/login"] = LOGIN
    return site


async def _sign_in(c: ToolClient, at: dict[str, str], url: str) -> list[Any]:
    """Navigate, fill the login by name, submit; every result, in order."""
    results: list[Any] = [await c.ok("browser_navigate", {**at, "url": url})]
    fields = [
        {"target": _label("User"), "value": "ann"},
        {"target": _label("Password"), "value": {"secret": "SITE_PASSWORD"}},
    ]
    results.append(await c.ok("browser_fill_form", {**at, "fields": fields}))
    key = {**at, "locator": _label("API key"), "value": {"secret": "SITE_KEY"}}
    results.append(await c.ok("browser_fill", {**key, "snapshot": "actions"}))
    table = await c.ok("browser_snapshot", {**at, "format": "actions"})
    assert "[REDACTED]" in table["snapshot"]  # the API key field shows its value
    results.append(table)
    go = {"strategy": "role", "value": "button", "name": "Sign in"}
    results.append(await c.ok("browser_click", {**at, "locator": go, "snapshot": "diff"}))
    welcome = {"kind": "text", "text": "Welcome ann", "state": "present"}
    results.append(await c.ok("browser_wait", {**at, "condition": welcome}))
    return results


async def test_a_login_filled_by_name_never_shows_the_values(
    tmp_path: Path, pages: FixtureSite
) -> None:
    secrets = _secrets_file(
        tmp_path / "secrets.env",
        f"# the site\nSITE_PASSWORD={PASSWORD}\nexport SITE_KEY='{API_KEY}'\n",
    )
    records: list[dict[str, Any]] = []
    log = EventLog("silent")
    log.sinks.append(records.append)
    tools = ("core", "observability", "files", "testing")
    async with (
        real_runtime(tmp_path, log, tools=tools, secrets_file=str(secrets)) as rt,
        tool_client(rt) as c,
    ):
        info = await c.ok("browser_runtime_info")
        assert info["secretNames"] == ["SITE_KEY", "SITE_PASSWORD"]
        s, p = await c.session(name="buyer")
        at = {"sessionId": s, "pageId": p}
        await c.ok("browser_trace", {"sessionId": s, "action": "start"})
        results = await _sign_in(c, at, pages.url("/canary/login"))
        out = await c.ok(
            "browser_visible_text", {**at, "locator": {"strategy": "css", "value": "#out"}}
        )
        assert out["text"] == "Welcome ann, your password is [REDACTED]"
        title = await c.ok("browser_get_title", at)
        assert title["title"] == "Hi [REDACTED]"
        console = await c.ok("browser_observe", {**at, "source": "console", "includeText": True})
        assert "signing in with [REDACTED] and [REDACTED]" in json.dumps(console["events"])
        network = await c.ok("browser_observe", {**at, "source": "network", "url": "**/echo*"})
        assert network["events"]
        results += [out, title, console, network, await c.ok("browser_snapshot", at)]
        stopped = await c.ok("browser_trace", {"sessionId": s, "action": "stop"})
        trace = load_trace(await read_artifact(c, s, stopped["artifact"]["artifactId"]))
        exported = await c.ok("browser_test_export", {"sessionIds": [s]})

    for result in results:
        _clean(result)
    _clean(records)
    for canary in CANARIES:
        assert trace.contains(canary) == [], canary
    code = exported["code"]
    _clean(exported)
    # The export reads each secret from the environment variable of its own name.
    assert {"SITE_PASSWORD", "SITE_KEY"} <= set(exported["secrets"])
    assert "secret('SITE_PASSWORD')" in code and "secret('SITE_KEY')" in code
    test = write_export(tmp_path / "export", code)
    env = {"SITE_PASSWORD": PASSWORD, "SITE_KEY": API_KEY, "BM_BASE_URL": pages.url("")}
    replayed = run_exported(test, env)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr


async def test_names_the_caller_may_not_use_are_refused_without_listing_any(
    tmp_path: Path, pages: FixtureSite
) -> None:
    secrets = _secrets_file(tmp_path / "secrets.env", f"SITE_PASSWORD={PASSWORD}\n")
    async with real_runtime(tmp_path, secrets_file=str(secrets)) as rt, tool_client(rt) as c:
        s, p = await c.session()
        at = {"sessionId": s, "pageId": p}
        await c.ok("browser_navigate", {**at, "url": pages.url("/canary/login")})
        field = {**at, "locator": _label("User")}
        unknown = await c.err("browser_fill", {**field, "value": {"secret": "NOPE"}})
        assert unknown["code"] == "INVALID_ARGUMENT"
        assert unknown["details"]["field"] == "value.secret"
        assert "SITE_PASSWORD" not in json.dumps(unknown)
        bad_name = await c.err("browser_fill", {**field, "value": {"secret": "1x"}})
        assert bad_name["details"]["field"] == "value.secret"
        extra = await c.err("browser_fill", {**field, "value": {"secret": "A", "x": 1}})
        assert extra["details"]["field"] == "value"
        form = [{"target": _label("User"), "value": {"secret": "NOPE"}}]
        in_form = await c.err("browser_fill_form", {**at, "fields": form})
        assert in_form["details"]["field"] == "fields[0].value.secret"
        # Nothing reached the page.
        read = await c.ok("browser_snapshot", {**at, "format": "actions"})
        assert 'textbox "User"' in read["snapshot"] and "NOPE" not in read["snapshot"]


async def test_each_principal_has_its_own_file(tmp_path: Path, pages: FixtureSite) -> None:
    folder = tmp_path / "secrets"
    _secrets_file(folder / "alice.env", f"SITE_PASSWORD={PASSWORD}\n")
    template = str(folder / "{principal}.env")
    async with (
        http_server(tmp_path, tokens=True, secrets_file=template) as srv,
        connect(srv.url, "auto", TOKENS["alice"]) as alice,
        connect(srv.url, "auto", TOKENS["bob"]) as bob,
    ):
        assert (await alice.ok("browser_runtime_info"))["secretNames"] == ["SITE_PASSWORD"]
        assert "secretNames" not in await bob.ok("browser_runtime_info")  # lean: none
        s, p = await bob.session()
        at = {"sessionId": s, "pageId": p}
        await bob.ok("browser_navigate", {**at, "url": pages.url("/canary/login")})
        field = {**at, "locator": _label("Password")}
        theirs = await bob.err("browser_fill", {**field, "value": {"secret": "SITE_PASSWORD"}})
        nobodys = await bob.err("browser_fill", {**field, "value": {"secret": "NOBODY"}})
        # Alice's name is refused to bob exactly as a name nobody has.
        assert theirs["details"] == nobodys["details"]
        assert theirs["message"] == nobodys["message"]
        # A file that is not private is refused (no names), told once in the log.
        _secrets_file(folder / "bob.env", "SITE_PASSWORD=bobs-own-value\n", mode=0o644)
        assert "secretNames" not in await bob.ok("browser_runtime_info")  # lean: none
        refused = [r for r in srv.records if r.get("message") == "secrets.refused"]
        assert [r["principal"] for r in refused] == ["bob"]
        # Once private it is read at its next use: no restart.
        os.chmod(folder / "bob.env", 0o600)
        assert (await bob.ok("browser_runtime_info"))["secretNames"] == ["SITE_PASSWORD"]
        await bob.ok("browser_fill", {**field, "value": {"secret": "SITE_PASSWORD"}})
