"""Locators written the way a client reads a page, and element errors that diagnose (issue 13).

Real Chromium, the real MCP SDK client. Every error case reads the field, reason and candidates
a model would act on next, and then makes that next call.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from browsermesh.log import EventLog
from browsermesh.model.action_table import table_refs
from browsermesh.model.locators import ROLES
from tests.fixtures.site import FixtureSite
from tests.support.clients import ToolClient, open_page, tool_client
from tests.support.locators import label, role
from tests.support.runtimes import real_runtime

pytestmark = pytest.mark.anyio

CANARY = "CANARY-pw-51e9"

FORM = """<!doctype html><title>Form</title>
<form id=f>
<label for=u>Username:</label><input id=u name=u>
<label for=pr>Price *</label><input id=pr name=pr>
<label>Quantity <select id=q><option>1</option><option>2</option><option>3</option></select></label>
<span id=dl>Due   date</span><input id=d aria-labelledby=dl>
<input id=s aria-label="Search catalogue" placeholder="Type to search">
<label for=pw>Password</label><input id=pw type=password>
</form>
<p id=hello>Welcome back, friend</p>
<output id=out></output>
<script>
for (const el of document.querySelectorAll('input, select'))
  el.addEventListener('input', () => { out.textContent = el.id + '=' + el.value; });
</script>"""

ACTIONS = """<!doctype html><title>Actions</title>
<button id=dis disabled>Submit order</button>
<button id=hid style="display:none">Secret menu</button>
<input id=ro readonly value=fixed aria-label=Fixed>
<input id=file type=file aria-label=Attachment>
<div id=plain>Plain text</div>
<div style="position:relative"><button id=under>Buy now</button>
<div id=cover role=dialog aria-label="Cookie banner"
  style="position:absolute;inset:0;background:#eee">Accept cookies</div></div>
<button onclick="document.title='saved'">Save</button>
<button onclick="document.title='saved and continued'">Save and continue</button>
<label>Password <input type=password id=pw></label>
<button aria-labelledby="lb pw"><span id=lb>Log in as</span></button>
<button id=later disabled onclick="document.title='later clicked'">Later</button>
<script>setTimeout(() => { later.disabled = false; }, 300);</script>"""

# "Go" is disabled by "Arm" and enabled again 2.5 s later: longer than the default settle time
# (1 s) and the page settle after a click (at most 2 s), shorter than a 5 s settle time.
REARM = """<!doctype html><title>Rearm</title>
<button onclick="go.disabled = true; setTimeout(() => { go.disabled = false; }, 2500)">Arm</button>
<button id=go onclick="document.title='go clicked'">Go</button>"""

ROWS = """<!doctype html><title>Rows</title>
<table><tr><th>Item</th><th>Action</th></tr>
<tr aria-label="Row A"><td>Blue teapot</td>
<td><button onclick="document.title='deleted A'">Delete</button></td></tr>
<tr aria-label="Row B"><td>Red cup</td>
<td><button onclick="document.title='deleted B'">Delete</button></td></tr>
</table>"""

COVER_SECRET = f"""<!doctype html><title>Cover</title>
<input type=password id=pw value="{CANARY}" aria-label=Password>
<div style="position:relative"><button>Pay</button>
<div id=cover role=dialog style="position:absolute;inset:0;background:#eee"></div></div>
<script>cover.textContent = 'Your password: ' + pw.value;</script>"""

ROLE_PAGE = "<!doctype html><title>Roles</title>" + "".join(
    f'<div role="{role}" aria-label="{role} item">{role}</div>' for role in ROLES
)


@pytest.fixture
def pages(site: FixtureSite) -> FixtureSite:
    site.pages.update(
        {
            "/rules/form": FORM,
            "/rules/actions": ACTIONS,
            "/rules/rows": ROWS,
            "/rules/roles": ROLE_PAGE,
            "/rules/cover-secret": COVER_SECRET,
            "/rules/rearm": REARM,
        }
    )
    return site


async def output(c: ToolClient, addr: dict[str, str]) -> str:
    data = await c.ok(
        "browser_visible_text", {**addr, "locator": {"strategy": "css", "value": "#out"}}
    )
    return str(data["text"])


async def title(c: ToolClient, addr: dict[str, str]) -> str:
    return str((await c.ok("browser_get_title", addr))["title"])


# ------------------------------------------------------------------------- matching rules


async def test_label_with_colon_or_star_matches_the_name_a_person_reads(
    client: ToolClient, pages: FixtureSite
) -> None:
    addr = await open_page(client, pages.url("/rules/form"))
    await client.ok("browser_fill", {**addr, "locator": label("Username"), "value": "ada"})
    assert await output(client, addr) == "u=ada"
    await client.ok("browser_fill", {**addr, "locator": label("Price"), "value": "12"})
    assert await output(client, addr) == "pr=12"
    # The decoration may be written too, and whitespace does not matter.
    await client.ok("browser_fill", {**addr, "locator": label("  Username: "), "value": "bo"})
    assert await output(client, addr) == "u=bo"
    # Exact stays exact: case and extra words do not match.
    err = await client.err(
        "browser_fill", {**addr, "locator": label("username"), "value": "x", "timeoutMs": 3000}
    )
    assert err["code"] == "ELEMENT_NOT_FOUND"


async def test_label_finds_a_wrapped_select_and_labelledby_and_aria_label(
    client: ToolClient, pages: FixtureSite
) -> None:
    addr = await open_page(client, pages.url("/rules/form"))
    await client.ok("browser_select_option", {**addr, "locator": label("Quantity"), "value": "2"})
    assert await output(client, addr) == "q=2"
    await client.ok("browser_fill", {**addr, "locator": label("Due date"), "value": "2026-12-01"})
    assert await output(client, addr) == "d=2026-12-01"
    await client.ok("browser_fill", {**addr, "locator": label("Search catalogue"), "value": "tea"})
    assert await output(client, addr) == "s=tea"
    # The role name the snapshot prints for the colon label works the same way.
    await client.ok("browser_fill", {**addr, "locator": role("textbox", "Username"), "value": "c"})
    assert await output(client, addr) == "u=c"


async def test_exact_false_is_a_case_insensitive_substring_for_text_label_placeholder(
    client: ToolClient, pages: FixtureSite
) -> None:
    addr = await open_page(client, pages.url("/rules/form"))
    text = await client.ok(
        "browser_visible_text",
        {**addr, "locator": {"strategy": "text", "value": "welcome BACK", "exact": False}},
    )
    assert text["text"] == "Welcome back, friend"
    await client.ok(
        "browser_fill", {**addr, "locator": label("catalogue", exact=False), "value": "cup"}
    )
    assert await output(client, addr) == "s=cup"
    await client.ok(
        "browser_fill",
        {
            **addr,
            "locator": {"strategy": "placeholder", "value": "to search", "exact": False},
            "value": "mug",
        },
    )
    assert await output(client, addr) == "s=mug"
    # Exact text needs the whole text.
    err = await client.err(
        "browser_visible_text",
        {**addr, "locator": {"strategy": "text", "value": "Welcome back"}, "timeoutMs": 3000},
    )
    assert err["code"] == "ELEMENT_NOT_FOUND", err


async def test_every_accepted_role_is_a_valid_locator(
    client: ToolClient, pages: FixtureSite
) -> None:
    addr = await open_page(client, pages.url("/rules/roles"))
    found = 0
    for name in ROLES:
        result = await client.raw(
            "browser_wait",
            {
                **addr,
                "condition": {"kind": "locator", "locator": role(name), "state": "attached"},
                "timeoutMs": 300,
            },
        )
        if result.is_error:
            payload = json.loads(result.content[0].text)["error"]
            assert payload["code"] in ("OPERATION_TIMEOUT", "LOCATOR_AMBIGUOUS"), (name, payload)
        else:
            found += 1
    # Roles that are not exposed (none, presentation, generic...) may not be found; the rest are.
    assert found >= len(ROLES) - 12
    listed = await client.ok("browser_snapshot", {**addr, "format": "aria"})
    for printed in ("spinbutton", "switch", "slider", "menuitemcheckbox", "treeitem", "dialog"):
        assert f'{printed} "{printed} item"' in listed["snapshot"]
        await client.ok(
            "browser_wait",
            {
                **addr,
                "condition": {
                    "kind": "locator",
                    "locator": role(printed, f"{printed} item"),
                    "state": "attached",
                },
            },
        )


async def test_within_scopes_a_locator_to_a_container(
    client: ToolClient, pages: FixtureSite
) -> None:
    addr = await open_page(client, pages.url("/rules/rows"))
    err = await client.err("browser_click", {**addr, "locator": role("button", "Delete")})
    assert err["code"] == "LOCATOR_AMBIGUOUS"
    details = err["details"]
    assert details["matchCount"] == 2
    containers = [c["container"] for c in details["candidates"]]
    assert containers == [{"role": "row", "name": "Row A"}, {"role": "row", "name": "Row B"}]
    assert all(c["ref"] for c in details["candidates"])
    assert "within" in err["nextStep"]
    # The candidate's ready-to-use locator is scoped with `within`.
    second = details["candidates"][1]["locator"]
    assert second["within"] == {"strategy": "role", "value": "row", "name": "Row B", "exact": True}
    await client.ok("browser_click", {**addr, "locator": second})
    assert await title(client, addr) == "deleted B"
    # A client may also write it by hand, and use the other candidate's ref.
    await client.ok(
        "browser_click",
        {**addr, "locator": {**role("button", "Delete"), "within": role("row", "Row A")}},
    )
    assert await title(client, addr) == "deleted A"
    await client.ok("browser_click", {**addr, "ref": details["candidates"][1]["ref"]})
    assert await title(client, addr) == "deleted B"
    # The container is strict too.
    err = await client.err(
        "browser_click",
        {**addr, "locator": {**role("button", "Delete"), "within": role("row")}},
    )
    assert err["code"] == "LOCATOR_AMBIGUOUS"


# ------------------------------------------------------------------- actionability reasons


async def test_disabled_button_answers_within_the_settle_time_with_its_reason(
    client: ToolClient, pages: FixtureSite
) -> None:
    addr = await open_page(client, pages.url("/rules/actions"))
    started = time.monotonic()
    err = await client.err(
        "browser_click", {**addr, "locator": role("button", "Submit order"), "timeoutMs": 20_000}
    )
    elapsed = time.monotonic() - started
    assert err["code"] == "ELEMENT_NOT_ACTIONABLE"
    assert err["details"]["reason"] == "disabled"
    assert err["details"]["locator"]["name"] == "Submit order"
    assert "larger timeoutMs" not in err["nextStep"] and "disabled" in err["nextStep"]
    assert elapsed < 10, elapsed  # 1 s settle time, not the 20 s budget


async def test_a_button_enabled_within_the_settle_time_is_clicked(
    client: ToolClient, pages: FixtureSite
) -> None:
    addr = await open_page(client, pages.url("/rules/actions"))
    await client.ok("browser_click", {**addr, "locator": role("button", "Later")})
    assert await title(client, addr) == "later clicked"


async def test_settle_time_is_configurable_and_reported(tmp_path: Path, pages: FixtureSite) -> None:
    async with (
        real_runtime(tmp_path, EventLog("silent"), actionability_settle_ms=0) as runtime,
        tool_client(runtime) as c,
    ):
        assert (await c.ok("browser_runtime_info"))["actionabilitySettleMs"] == 0
        addr = await open_page(c, pages.url("/rules/actions"))
        started = time.monotonic()
        err = await c.err(
            "browser_click",
            {**addr, "locator": role("button", "Submit order"), "timeoutMs": 20_000},
        )
        assert err["details"]["reason"] == "disabled"
        assert time.monotonic() - started < 5


async def test_a_longer_settle_time_reaches_every_page(tmp_path: Path, pages: FixtureSite) -> None:
    """The configured settle time is the page's, not the built-in 1 s (it never reached the
    per-page ref registry before): a button disabled for 2.5 s is clicked under a 5 s one."""
    async with (
        real_runtime(tmp_path, EventLog("silent"), actionability_settle_ms=5_000) as runtime,
        tool_client(runtime) as c,
    ):
        addr = await open_page(c, pages.url("/rules/rearm"))
        await c.ok("browser_click", {**addr, "locator": role("button", "Arm")})
        await c.ok("browser_click", {**addr, "locator": role("button", "Go"), "timeoutMs": 20_000})
        assert await title(c, addr) == "go clicked"


@pytest.mark.parametrize(
    ("tool", "target", "extra", "reason"),
    [
        ("browser_click", "#hid", {}, "hidden"),
        ("browser_fill", "#ro", {"value": "x"}, "not_editable"),
        ("browser_fill", "#plain", {"value": "x"}, "not_editable"),
        ("browser_fill", "#file", {"value": "x"}, "file_input"),
    ],
)
async def test_element_that_cannot_act_names_the_reason(
    client: ToolClient,
    pages: FixtureSite,
    tool: str,
    target: str,
    extra: dict[str, Any],
    reason: str,
) -> None:
    addr = await open_page(client, pages.url("/rules/actions"))
    started = time.monotonic()
    err = await client.err(
        tool,
        {**addr, "locator": {"strategy": "css", "value": target}, "timeoutMs": 20_000, **extra},
    )
    assert time.monotonic() - started < 10
    assert err["code"] == "ELEMENT_NOT_ACTIONABLE", err
    assert err["details"]["reason"] == reason
    assert "larger timeoutMs" not in err["nextStep"]
    if reason == "file_input":
        assert "browser_file_upload" in err["nextStep"]


async def test_covered_element_names_what_covers_it(client: ToolClient, pages: FixtureSite) -> None:
    addr = await open_page(client, pages.url("/rules/actions"))
    err = await client.err(
        "browser_click", {**addr, "locator": role("button", "Buy now"), "timeoutMs": 3000}
    )
    assert err["code"] == "ELEMENT_NOT_ACTIONABLE"
    assert err["details"]["reason"] == "covered"
    assert err["details"]["coveredBy"]["role"] == "dialog"
    assert err["details"]["coveredBy"]["name"] == "Cookie banner"


async def test_covering_text_never_carries_a_password(
    client: ToolClient, pages: FixtureSite
) -> None:
    addr = await open_page(client, pages.url("/rules/cover-secret"))
    err = await client.err(
        "browser_click", {**addr, "locator": role("button", "Pay"), "timeoutMs": 3000}
    )
    assert err["details"]["reason"] == "covered"
    assert CANARY not in json.dumps(err)
    assert err["details"]["coveredBy"]["name"].startswith("Your password: ")


async def test_disabled_ref_answers_with_its_reason(client: ToolClient, pages: FixtureSite) -> None:
    addr = await open_page(client, pages.url("/rules/actions"))
    snap = await client.ok("browser_snapshot", {**addr, "format": "actions"})
    ref = next(r["ref"] for r in table_refs(snap["snapshot"]) if r.get("name") == "Submit order")
    err = await client.err("browser_click", {**addr, "ref": ref, "timeoutMs": 20_000})
    assert err["code"] == "ELEMENT_NOT_ACTIONABLE" and err["details"]["reason"] == "disabled"


# ------------------------------------------------------------------------------ candidates


async def test_not_found_lists_near_candidates_that_work_in_the_next_call(
    client: ToolClient, pages: FixtureSite
) -> None:
    addr = await open_page(client, pages.url("/rules/actions"))
    err = await client.err(
        "browser_click", {**addr, "locator": role("button", "save"), "timeoutMs": 3000}
    )
    assert err["code"] == "ELEMENT_NOT_FOUND"
    candidates = err["details"]["candidates"]
    names = [c["name"] for c in candidates]
    assert names[:2] == ["Save", "Save and continue"]
    assert "candidates" in err["nextStep"]
    await client.ok("browser_click", {**addr, "locator": candidates[1]["locator"]})
    assert await title(client, addr) == "saved and continued"
    await client.ok("browser_click", {**addr, "ref": candidates[0]["ref"]})
    assert await title(client, addr) == "saved"


async def test_no_value_reaches_error_details(client: ToolClient, pages: FixtureSite) -> None:
    addr = await open_page(client, pages.url("/rules/actions"))
    await client.ok(
        "browser_fill", {**addr, "locator": {"strategy": "css", "value": "#pw"}, "value": CANARY}
    )
    errors = [
        # The button's name is built from the password field: candidates must not carry it.
        await client.err(
            "browser_click", {**addr, "locator": role("button", "Log in"), "timeoutMs": 3000}
        ),
        await client.err(
            "browser_fill",
            {**addr, "locator": role("button", "Submit order"), "value": CANARY, "timeoutMs": 5000},
        ),
        await client.err(
            "browser_fill",
            {**addr, "locator": {"strategy": "css", "value": "#ro"}, "value": CANARY},
        ),
    ]
    blob = json.dumps(errors)
    assert CANARY not in blob
    assert any(c.get("name") == "Log in as [REDACTED]" for c in errors[0]["details"]["candidates"])


# ------------------------------------------------------------------------------ fresh refs


async def test_expired_ref_gets_a_fresh_ref_and_a_replaced_one_does_not(
    tmp_path: Path, pages: FixtureSite
) -> None:
    async with (
        real_runtime(tmp_path, EventLog("silent"), ref_ttl_ms=1_000) as runtime,
        tool_client(runtime) as c,
    ):
        addr = await open_page(c, pages.url("/rules/actions"))
        snap = await c.ok("browser_snapshot", {**addr, "format": "actions"})
        captured_by = time.monotonic()
        save = next(r["ref"] for r in table_refs(snap["snapshot"]) if r.get("name") == "Save")
        other = next(
            r["ref"] for r in table_refs(snap["snapshot"]) if r.get("name") == "Save and continue"
        )
        # The passing of time is the condition under test: wait out the 1 s TTL.
        await asyncio.sleep(max(0.0, 1.1 - (time.monotonic() - captured_by)))
        err = await c.err("browser_click", {**addr, "ref": save})
        assert err["code"] == "STALE_ELEMENT_REFERENCE"
        fresh = err["details"]["freshRef"]
        assert fresh != save and "freshRef" in err["nextStep"]
        await c.ok("browser_click", {**addr, "ref": fresh})
        assert await title(c, addr) == "saved"
        # Replace the other button: same role and name, but its ref died with its element.
        await c.ok(
            "browser_evaluate",
            {**addr, "expression": "document.body.innerHTML = document.body.innerHTML"},
        )
        err = await c.err("browser_click", {**addr, "ref": other})
        assert err["code"] == "STALE_ELEMENT_REFERENCE"
        assert "freshRef" not in err.get("details", {})
