"""From exploration to regression test, end to end (issue 20): scenarios run through the MCP
client on real Chromium with the `testing` profile, exported with browser_test_export, and the
exported module run by pytest-playwright (tests/support/export_runner.py) against a fresh copy
of the site: it passes; against a copy whose flow is broken, it fails."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from browsermesh.demo.scenario import _Scenario
from browsermesh.demo.shop import DemoShop
from browsermesh.model.recording import secret_name
from tests.fixtures.export_site import API_KEY, PASSWORD, ExportSite
from tests.support.clients import ToolClient, tool_client
from tests.support.export_runner import run_exported, write_export
from tests.support.results import ref_named
from tests.support.runtimes import real_runtime
from tests.support.traces import load_trace

TESTING = ("core", "observability", "persistence", "files", "testing")
PASSWORD_ENV = secret_name("buyer", "Password")

pytestmark = pytest.mark.anyio


async def buyer_orders(c: ToolClient, base: str) -> str:
    """The buyer's flow on the export site: text by ref, password by label, a form with a
    select, a checkbox and a secret field, an upload, a dialog, a download, the order, waits."""
    s, p = await c.session(name="Buyer", metadata={"role": "buyer"})
    at = {"sessionId": s, "pageId": p}
    await c.ok("browser_navigate", {**at, "url": f"{base}/order"})
    table = await c.ok("browser_snapshot", {**at, "format": "actions"})
    await c.ok(
        "browser_fill",
        {**at, "ref": ref_named(table["snapshot"], "textbox", "Name"), "value": "Ada"},
    )
    label = {"strategy": "label", "value": "Password"}
    await c.ok("browser_fill", {**at, "locator": label, "value": PASSWORD})
    fields = [
        {"target": {"strategy": "label", "value": "Country"}, "value": "de"},
        {"target": {"strategy": "label", "value": "Subscribe"}, "value": True},
        {"target": {"strategy": "label", "value": "API key"}, "value": API_KEY, "secret": True},
    ]
    await c.ok("browser_fill_form", {**at, "fields": fields})
    notes = {"name": "notes.txt", "contentBase64": base64.b64encode(b"hello notes").decode()}
    await c.ok(
        "browser_file_upload",
        {**at, "locator": {"strategy": "label", "value": "Attachment"}, "files": [notes]},
    )
    button = {"strategy": "role", "value": "button", "name": "Discard draft"}
    await c.ok(
        "browser_action_and_wait",
        {
            **at,
            "action": {"kind": "click", "target": button},
            "wait": {"kind": "dialog", "dialogType": "confirm", "action": "accept"},
        },
    )
    text = {"kind": "text", "text": "Draft discarded", "state": "present"}
    await c.ok("browser_wait", {**at, "condition": text})
    link = {"strategy": "role", "value": "link", "name": "Download invoice"}
    await c.ok(
        "browser_action_and_wait",
        {**at, "action": {"kind": "click", "target": link}, "wait": {"kind": "download"}},
    )
    place = {"strategy": "role", "value": "button", "name": "Place order"}
    await c.ok(
        "browser_action_and_wait",
        {**at, "action": {"kind": "click", "target": place}, "wait": {"kind": "navigation"}},
    )
    for done in ("Password accepted", "API key accepted"):
        await c.ok(
            "browser_wait", {**at, "condition": {"kind": "text", "text": done, "state": "present"}}
        )
    return s


async def admin_checks(c: ToolClient, base: str) -> str:
    s, p = await c.session(name="Admin", metadata={"role": "admin"})
    at = {"sessionId": s, "pageId": p}
    await c.ok("browser_navigate", {**at, "url": f"{base}/admin"})
    await c.ok(
        "browser_wait",
        {**at, "condition": {"kind": "text", "text": "Ada from de", "state": "present"}},
    )
    return s


def assert_secret_free(code: str) -> None:
    assert PASSWORD not in code and repr(PASSWORD)[1:-1] not in code
    assert API_KEY not in code


async def test_an_exported_multi_role_flow_replays_green_and_fails_when_the_flow_breaks(
    tmp_path: Path,
) -> None:
    with ExportSite() as recorded:
        async with real_runtime(tmp_path, tools=TESTING) as rt, tool_client(rt) as c:
            buyer = await buyer_orders(c, recorded.base_url)
            admin = await admin_checks(c, recorded.base_url)
            # a failed operation is not recorded
            missing = {"strategy": "role", "value": "button", "name": "No such button"}
            bad = await c.err(
                "browser_click",
                {
                    "sessionId": admin,
                    "pageId": (await pages_of(c, admin))[0],
                    "locator": missing,
                    "timeoutMs": 500,
                },
            )
            assert bad["code"] == "ELEMENT_NOT_FOUND"
            exported = await c.ok("browser_test_export", {"sessionIds": [buyer, admin]})
    code = exported["code"]
    assert exported["language"] == "python" and not exported["truncated"]
    assert "No such button" not in code
    assert_secret_free(code)
    api_env = secret_name("buyer", "API key")
    assert set(exported["secrets"]) == {PASSWORD_ENV, api_env}
    compile(code, "test_exported.py", "exec")
    test = write_export(tmp_path / "export", code)
    env = {PASSWORD_ENV: PASSWORD, api_env: API_KEY}
    with ExportSite() as fresh:
        passed = run_exported(test, {**env, "BM_BASE_URL": fresh.base_url})
        assert passed.returncode == 0, passed.stdout + passed.stderr
        assert fresh.orders == [("Ada", "de")]
    with ExportSite(broken=True) as broken:
        failed = run_exported(
            test, {**env, "BM_BASE_URL": broken.base_url, "BM_TIMEOUT_MS": "2000"}
        )
        assert failed.returncode == 1, failed.stdout + failed.stderr
        assert broken.orders == []
    # a missing secret fails with a message naming the variable
    with ExportSite() as fresh:
        unset = run_exported(test, {api_env: API_KEY, "BM_BASE_URL": fresh.base_url})
        assert unset.returncode == 1 and PASSWORD_ENV in unset.stdout


async def pages_of(c: ToolClient, session_id: str) -> list[str]:
    listed = await c.ok("browser_page_list", {"sessionId": session_id})
    return [p["pageId"] for p in listed["pages"]]


async def test_the_demo_exports_as_a_test_that_passes_on_a_fresh_shop(tmp_path: Path) -> None:
    with DemoShop() as shop:
        async with real_runtime(tmp_path, tools=TESTING) as rt, tool_client(rt) as c:
            scenario = _Scenario(c.client, shop)
            await scenario.run()  # creates both roles, runs them side by side, closes both
            ids = [scenario.buyer.session_id, scenario.admin.session_id]
            exported = await c.ok("browser_test_export", {"sessionIds": ids})
            # closed sessions still export; recording can be cleared and paused
            state = await c.ok("browser_recording", {"sessionId": ids[0], "action": "pause"})
            assert state["recording"] is False and state["steps"] > 0
    code = exported["code"]
    (tmp_path / "demo_export.py").write_text(code)  # kept beside the test's artifacts
    test = write_export(tmp_path / "export", code)
    with DemoShop() as fresh:
        passed = run_exported(test, {"BM_BASE_URL": fresh.base_url})
        assert passed.returncode == 0, passed.stdout + passed.stderr


async def test_an_export_with_tracing_follows_pytest_playwrights_tracing_option(
    tmp_path: Path,
) -> None:
    """Issue 35 item 5: `tracing: true` traces each context as pytest-playwright's `--tracing`
    says: `on` keeps a trace per context in `--output`, `off` (its default) keeps none."""
    with DemoShop() as shop:
        async with real_runtime(tmp_path, tools=TESTING) as rt, tool_client(rt) as c:
            scenario = _Scenario(c.client, shop)
            await scenario.run()
            ids = [scenario.buyer.session_id, scenario.admin.session_id]
            code = (await c.ok("browser_test_export", {"sessionIds": ids, "tracing": True}))["code"]
    assert 'pytestconfig.getoption("--tracing")' in code
    test = write_export(tmp_path / "export", code)
    with DemoShop() as fresh:
        env = {"BM_BASE_URL": fresh.base_url}
        traced = run_exported(test, env, options=("--tracing", "on", "--output", "out-on"))
        assert traced.returncode == 0, traced.stdout + traced.stderr
        untraced = run_exported(test, env, options=("--output", "out-off"))
        assert untraced.returncode == 0, untraced.stdout + untraced.stderr
    zips = sorted(p.name for p in (test.parent / "out-on").glob("*-trace.zip"))
    assert len(zips) == 2, zips
    for name in zips:
        load_trace((test.parent / "out-on" / name).read_bytes())
    assert not (test.parent / "out-off").exists()


async def test_recording_is_off_without_the_testing_profile_and_controllable_with_it(
    tmp_path: Path,
) -> None:
    async with real_runtime(tmp_path) as rt, tool_client(rt) as c:
        assert "browser_test_export" not in c.tools
        s, _ = await c.session()
        assert rt.sessions_snapshot()[s].recording is None
    async with real_runtime(tmp_path, tools=TESTING) as rt, tool_client(rt) as c:
        s, _ = await c.session()
        await c.ok("browser_recording", {"sessionId": s, "action": "pause"})
        state = await c.ok("browser_recording", {"sessionId": s, "action": "resume"})
        assert state == {**state, "recording": True, "steps": 0}
        other = await c.err("browser_test_export", {"sessionIds": ["s999"]})
        assert other["code"] == "SESSION_NOT_FOUND"
        twice = await c.raw("browser_test_export", {"sessionIds": [s, s]})
        assert twice.is_error  # uniqueItems: refused by the input schema
