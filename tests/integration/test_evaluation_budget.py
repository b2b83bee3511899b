"""How many page evaluations of BrowserMesh's own each call costs (issue 33, reference §32):
an element action reads the element, the change baseline and nothing else before it acts (one
evaluation) and reads what changed, with the page's password values, after (one more; one more
again to read the new document when it navigated); a navigation to a quiet page reads its
landing in one; `browser_get_title` and `browser_visible_text` of one top-frame match read
their text and the password values together; a whole-page snapshot reads what it needs before
the tree in one and the values after it in one more. Counted on the Playwright client's wire, real
Chromium; every result is also checked, so a cheaper call that answers less fails too."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator

import pytest

from browsermesh.model.action_table import table_refs
from tests.fixtures.forms_site import FormsSite
from tests.support.clients import ToolClient, open_page
from tests.support.evaluations import counting, evaluations
from tests.support.eventually import eventually
from tests.support.locators import label, role

pytestmark = pytest.mark.anyio

SECRET = "canary-Budget-7731"


@pytest.fixture(scope="module")
def forms() -> Iterator[FormsSite]:
    with FormsSite() as site:
        yield site


async def test_each_call_costs_its_budget_of_evaluations_and_still_answers_in_full(
    client: ToolClient, forms: FormsSite
) -> None:
    s, p = await client.session()
    addr = {"sessionId": s, "pageId": p}
    with counting() as counts:
        landed = await client.ok("browser_navigate", {**addr, "url": forms.url("/form")})
    assert landed["title"] == "Sign up" and landed.get("status") == 200
    assert evaluations(counts) == 1 and counts["ariaSnapshot"] == 1, counts

    with counting() as counts:
        await client.ok("browser_fill", {**addr, "locator": label("Password"), "value": SECRET})
    assert evaluations(counts) == 2, counts
    assert counts["updateSubscription"] == 0, counts  # the page's dialog listener stays

    with counting() as counts:
        title = await client.ok("browser_get_title", addr)
    assert title["title"] == "Sign up"
    assert evaluations(counts) == 1, counts

    with counting() as counts:
        heading = await client.ok("browser_visible_text", {**addr, "locator": role("heading")})
    assert heading["text"] == "Sign up"
    assert evaluations(counts) == 1, counts

    with counting() as counts:
        table = await client.ok("browser_snapshot", {**addr, "format": "actions"})
    refs = {r.get("name"): r["ref"] for r in table_refs(table["snapshot"])}
    assert {"Name", "Password", "Subscribe", "Submit"} <= set(refs)
    assert SECRET not in str(table)
    assert evaluations(counts) == 2 and counts["ariaSnapshot"] == 1, counts

    with counting() as counts:
        tree = await client.ok("browser_snapshot", {**addr, "format": "aria"})
    assert 'heading "Sign up"' in tree["snapshot"] and SECRET not in str(tree)
    assert evaluations(counts) == 2 and counts["ariaSnapshot"] == 1, counts
    with counting() as counts:
        await client.ok("browser_check", {**addr, "ref": refs["Subscribe"]})
    assert evaluations(counts) == 2, counts

    with counting() as counts:
        sent = await client.ok("browser_click", {**addr, "locator": role("button", "Submit")})
    assert sent["changes"].get("navigated") is True and sent["changes"]["title"] == "Received"
    assert evaluations(counts) <= 3, counts
    assert forms.received and ("password", SECRET) in forms.received[-1]


async def test_page_text_in_changes_is_redacted_with_the_values_read_alongside(
    client: ToolClient, forms: FormsSite
) -> None:
    """The change read brings the password values with it: a page that echoes a typed password
    into a status line shows it redacted in `changes.text`, as before the read was folded."""
    addr = await open_page(client, forms.url("/form"))
    await client.ok(
        "browser_evaluate",
        {
            **addr,
            "expression": "document.getElementById('password').addEventListener('input', e => {"
            " let s = document.getElementById('echo'); if (!s) { s = document.createElement('p');"
            " s.id = 'echo'; s.setAttribute('role', 'status'); document.body.append(s); }"
            " s.textContent = 'You typed ' + e.target.value; })",
        },
    )
    with counting() as counts:
        filled = await client.ok(
            "browser_fill", {**addr, "locator": label("Password"), "value": SECRET}
        )
    texts = filled["changes"].get("text", [])
    assert texts and all(SECRET not in t for t in texts) and "You typed" in texts[0], texts
    assert evaluations(counts) == 2, counts


async def test_a_dialog_while_no_call_watches_is_dismissed(
    client: ToolClient, forms: FormsSite
) -> None:
    """The page's one dialog listener (engine.waits.DialogRouter) dismisses a dialog that comes
    while no action or wait handles dialogs, as Playwright does for a page nobody listens to:
    the page goes on, and so do the session's calls."""
    addr = await open_page(client, forms.url("/form"))
    await client.ok(
        "browser_evaluate",
        {
            **addr,
            "expression": "setTimeout(() => { document.title = alert('hi') === undefined"
            " ? 'dismissed' : 'odd'; }, 0)",
        },
    )

    async def title() -> str:
        return str((await client.ok("browser_get_title", addr))["title"])

    assert await eventually(lambda: _is(title, "dismissed"), 15, "title after the alert")
    data = await client.ok("browser_click", {**addr, "locator": role("button", "Submit")})
    assert data["changes"]["title"] == "Received"


async def _is(read: Callable[[], Awaitable[str]], expected: str) -> bool:
    return await read() == expected
