"""Password values never reach browser_test_export (issue 30, item 1): a page that copies its
password into a button's `aria-label`, a "Confirm" field (not `type=password`) filled with the
same value, and a value that equals a password the page holds (typed by nobody) — through the
recording and the export, and the export still replays (the confirm field reads the password's
environment variable)."""

from __future__ import annotations

from pathlib import Path

import pytest

from browsermesh.model.action_table import table_refs
from browsermesh.model.recording import secret_name
from tests.fixtures.site import FixtureSite
from tests.support.clients import tool_client
from tests.support.export_runner import run_exported, write_export
from tests.support.runtimes import real_runtime

pytestmark = pytest.mark.anyio

TESTING = ("core", "testing")
CANARY = "CANARY-e1b7"
HELD = "HELD-CANARY-5c20"
"""A password the page holds from the start (nobody types it)."""

SIGN_UP = f"""<!doctype html><title>Sign up</title>
<label>Password <input type=password id=pw></label>
<label>Confirm <input id=cf></label>
<label>Old password <input type=password id=old value="{HELD}"></label>
<label>Note <input id=nt></label>
<button id=send aria-label="Send">Send</button>
<p id=out></p>
<script>
pw.addEventListener('input', () => send.setAttribute('aria-label', 'Send ' + pw.value));
send.addEventListener('click', () => {{
  out.textContent = (cf.value === pw.value ? 'matched' : 'mismatch')
    + (nt.value === old.value ? ' noted' : ' unnoted');
}});
</script>"""


@pytest.fixture
def pages(site: FixtureSite) -> FixtureSite:
    site.pages["/canary/sign-up"] = SIGN_UP
    return site


async def test_copied_confirmed_and_held_passwords_never_reach_the_export(
    tmp_path: Path, pages: FixtureSite
) -> None:
    async with real_runtime(tmp_path, tools=TESTING) as rt, tool_client(rt) as c:
        s, p = await c.session(name="Buyer", metadata={"role": "buyer"})
        at = {"sessionId": s, "pageId": p}
        await c.ok("browser_navigate", {**at, "url": pages.url("/canary/sign-up")})
        label = {"strategy": "label", "value": "Password"}
        await c.ok("browser_fill", {**at, "locator": label, "value": CANARY})
        confirm = {"strategy": "label", "value": "Confirm"}
        await c.ok("browser_fill", {**at, "locator": confirm, "value": CANARY})
        note = {"strategy": "label", "value": "Note"}
        await c.ok("browser_fill", {**at, "locator": note, "value": HELD})
        table = await c.ok("browser_snapshot", {**at, "format": "actions"})
        send = next(r for r in table_refs(table["snapshot"]) if r["role"] == "button")
        assert send["name"] == "Send [REDACTED]"
        await c.ok("browser_click", {**at, "ref": send["ref"]})
        # The client knows the value it typed and may name the button by it.
        copied = {"strategy": "role", "value": "button", "name": f"Send {CANARY}"}
        await c.ok("browser_click", {**at, "locator": copied})
        done = {"kind": "text", "text": "matched noted", "state": "present"}
        await c.ok("browser_wait", {**at, "condition": done})
        exported = await c.ok("browser_test_export", {"sessionIds": [s]})
    code = exported["code"]
    for secret in (CANARY, HELD):
        assert secret not in code
    password_env = secret_name("buyer", "Password")
    # The confirm field replays the password's own variable; the held value gets one of its own.
    assert code.count(f"secret('{password_env}')") == 2
    assert set(exported["secrets"]) == {password_env, secret_name("buyer", "Note")}
    test = write_export(tmp_path / "export", code)
    env = {password_env: CANARY, secret_name("buyer", "Note"): HELD}
    replayed = run_exported(test, {**env, "BM_BASE_URL": pages.url("")})
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
