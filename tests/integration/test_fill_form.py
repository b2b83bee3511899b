"""browser_fill_form against real Chromium (issue 15): every field kind in one call, refs and
locators mixed, the first failing field named with what was applied, kind mismatches, password
values never echoed, schema and runtime refusals."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from browsermesh.errors import BrowserMeshError, ErrorCode
from browsermesh.model.action_table import table_refs
from browsermesh.runtime.calls import PageCall
from browsermesh.runtime.runtime import Runtime
from tests.fixtures.forms_site import FormsSite
from tests.support.clients import ToolClient, open_page
from tests.support.locators import label

pytestmark = pytest.mark.anyio

SECRET = "pw-Zebra-7781-secret"
# What the page's controls hold, read by the test (never the password).
READ_FORM = """(() => {
  const v = (name) => document.forms[0].elements.namedItem(name);
  return {name: v('name').value, comments: v('comments').value, email: v('email').value,
    age: v('age').value, birthday: v('birthday').value, country: v('country').value,
    subscribe: v('subscribe').checked, plan: v('plan').value,
    passwordLength: v('password').value.length,
    dark: document.getElementById('dark').getAttribute('aria-checked')};
})()"""


@pytest.fixture(scope="module")
def forms_site() -> Iterator[FormsSite]:
    with FormsSite() as s:
        yield s


def field(target: dict[str, Any], value: str | bool) -> dict[str, Any]:
    return {"target": target, "value": value}


EVERYTHING = [
    field(label("Name"), "Ada Lovelace"),
    field(label("Password"), SECRET),
    field(label("Comments"), "line one\nline two"),
    field(label("Email"), "ada@example.test"),
    field(label("Age"), "36"),
    field(label("Birthday"), "1815-12-10"),
    field(label("Country"), "Germany"),  # by label; value `de`
    field(label("Subscribe"), True),
    field({"strategy": "role", "value": "radio", "name": "Pro"}, True),
    field(label("Dark mode"), True),  # an ARIA switch
]


async def read_form(c: ToolClient, addr: dict[str, str]) -> dict[str, Any]:
    data = await c.ok("browser_evaluate", {**addr, "expression": READ_FORM})
    result: dict[str, Any] = data["result"]
    return result


async def test_fills_every_kind_in_one_call_and_the_server_receives_exactly_them(
    client: ToolClient, forms_site: FormsSite, log_records: list[dict[str, Any]]
) -> None:
    forms_site.clear()
    addr = await open_page(client, forms_site.url("/form"))
    raw = await client.raw("browser_fill_form", {**addr, "fields": EVERYTHING})
    assert not raw.is_error, raw.content[0].text
    data = await client.ok("browser_fill_form", {**addr, "fields": EVERYTHING})  # idempotent
    assert set(data) == {"operationId", "filled"}  # no changes: left out (issue 31 item 9)
    assert data["filled"] == len(EVERYTHING)
    assert SECRET not in raw.content[0].text and SECRET not in json.dumps(data)
    await client.ok(
        "browser_action_and_wait",
        {**addr, "action": {"kind": "click", "target": {"strategy": "role", "value": "button",
         "name": "Submit"}}, "wait": {"kind": "navigation"}},
    )  # fmt: skip
    assert forms_site.received == [
        [
            ("name", "Ada Lovelace"),
            ("password", SECRET),
            ("comments", "line one\r\nline two"),  # a form submission normalizes newlines
            ("email", "ada@example.test"),
            ("age", "36"),
            ("birthday", "1815-12-10"),
            ("country", "de"),
            ("subscribe", "yes"),
            ("plan", "pro"),
            ("dark", "on"),
        ]
    ]
    assert SECRET not in json.dumps(log_records)


async def test_refs_from_the_action_table_and_locators_mix(
    client: ToolClient, forms_site: FormsSite
) -> None:
    addr = await open_page(client, forms_site.url("/form"))
    table = await client.ok("browser_snapshot", {**addr, "format": "actions"})
    refs = {r.get("name"): r["ref"] for r in table_refs(table["snapshot"])}
    data = await client.ok(
        "browser_fill_form",
        {**addr, "fields": [
            field({"ref": refs["Name"]}, "Grace"),
            field(label("Email"), "grace@example.test"),
            field({"ref": "@" + refs["Country"]}, "jp"),  # by option value
            field({"ref": refs["Subscribe"]}, True),
            field({"strategy": "css", "value": "#age"}, "85"),
            field({"ref": refs["Subscribe"]}, False),  # false unchecks
        ]},
    )  # fmt: skip
    assert data["filled"] == 6
    values = await read_form(client, addr)
    assert values["name"] == "Grace" and values["email"] == "grace@example.test"
    assert values["country"] == "jp" and values["age"] == "85"
    assert values["subscribe"] is False


async def test_a_missing_field_stops_the_form_and_names_it(
    client: ToolClient, forms_site: FormsSite
) -> None:
    addr = await open_page(client, forms_site.url("/form"))
    error = await client.err(
        "browser_fill_form",
        {**addr, "timeoutMs": 2_000, "fields": [
            field(label("Name"), "Ada"),
            field(label("Email"), "ada@example.test"),
            field(label("Nickname"), "nobody"),
            field(label("Age"), "36"),
        ]},
    )  # fmt: skip
    assert error["code"] == "ELEMENT_NOT_FOUND"
    assert error["details"]["field"] == "fields[2]" and error["details"]["filled"] == 2
    assert error["details"]["reason"] == "element_not_found"
    assert "fields[2]" in error["message"] and "2 fields before it" in error["message"]
    assert error["operationId"].startswith("o")
    values = await read_form(client, addr)
    assert values["name"] == "Ada" and values["email"] == "ada@example.test"
    assert values["age"] == ""  # the field after the failure was not touched


async def test_a_disabled_field_stops_the_form_with_its_actionability_reason(
    client: ToolClient, forms_site: FormsSite
) -> None:
    addr = await open_page(client, forms_site.url("/form"))
    error = await client.err(
        "browser_fill_form",
        {**addr, "timeoutMs": 5_000, "fields": [
            field(label("Name"), "Ada"),
            field(label("Referral code"), "FRIEND"),
            field(label("Age"), "36"),
        ]},
    )  # fmt: skip
    assert error["code"] == "ELEMENT_NOT_ACTIONABLE"
    assert error["details"]["reason"] == "disabled" and error["details"]["operation"] == "fill"
    assert error["details"]["field"] == "fields[1]" and error["details"]["filled"] == 1
    assert "disabled" in error["nextStep"]
    values = await read_form(client, addr)
    assert values["name"] == "Ada" and values["age"] == ""


async def test_a_value_that_does_not_fit_the_element_names_the_value(
    client: ToolClient, forms_site: FormsSite
) -> None:
    addr = await open_page(client, forms_site.url("/form"))
    cases = [
        ([field(label("Name"), True)], "fields[0].value", 0, "a string"),
        (
            [field(label("Name"), "Ada"), field(label("Subscribe"), "yes")],
            "fields[1].value",
            1,
            "a boolean",
        ),
        (
            [field(label("Name"), "Ada"), field(label("Email"), "a@b.test"),
             field({"strategy": "role", "value": "radio", "name": "Basic"}, False)],
            "fields[2].value",
            2,
            "cannot be unchecked",
        ),
        ([field(label("Country"), False)], "fields[0].value", 0, "option"),
    ]  # fmt: skip
    for fields, path, filled, rule in cases:
        error = await client.err("browser_fill_form", {**addr, "fields": fields})
        assert error["code"] == "INVALID_ARGUMENT", error
        assert error["details"]["field"] == path and error["details"]["filled"] == filled
        assert rule in error["details"]["rule"]
        assert path in error["message"]
    values = await read_form(client, addr)
    assert values["plan"] == "basic" and values["subscribe"] is False


async def test_password_values_never_appear_in_results_or_errors(
    client: ToolClient, forms_site: FormsSite, log_records: list[dict[str, Any]]
) -> None:
    addr = await open_page(client, forms_site.url("/form"))
    texts = []
    for fields in (
        [field(label("Password"), SECRET)],
        [field(label("Password"), SECRET), field(label("Nickname"), SECRET)],
        [field(label("Password"), SECRET), field(label("Subscribe"), SECRET)],
        [field(label("Password"), SECRET), field(label("Referral code"), SECRET)],
        [field({"ref": "s9e9"}, SECRET)],
    ):
        result = await client.raw(
            "browser_fill_form", {**addr, "timeoutMs": 1_500, "fields": fields}
        )
        texts.append(result.content[0].text)
    assert not any(SECRET in text for text in texts), texts
    assert [json.loads(t).get("error", {}).get("code") for t in texts] == [
        None, "ELEMENT_NOT_FOUND", "INVALID_ARGUMENT", "ELEMENT_NOT_ACTIONABLE",
        "STALE_ELEMENT_REFERENCE",
    ]  # fmt: skip
    assert json.loads(texts[-1])["error"]["details"]["field"] == "fields[0]"
    assert (await read_form(client, addr))["passwordLength"] == len(SECRET)
    assert SECRET not in json.dumps(log_records)


async def test_schema_refusals_come_on_the_validation_channel(client: ToolClient) -> None:
    addr = {"sessionId": "s", "pageId": "p"}
    one = field(label("Name"), "x")
    for fields, path, rule in (
        ([], "fields", "at least 1 item"),
        ([one] * 51, "fields", "at most 50 items"),
        ([{**one, "extra": 1}], "fields[0].extra", "unknown field"),
        ([{"target": label("Name")}], "fields[0].value", "required"),
        ([field(label("Name"), 3)], "fields[0].value", "string or boolean or object"),
    ):
        error = await client.err("browser_fill_form", {**addr, "fields": fields})
        assert error["code"] == "INVALID_ARGUMENT"
        assert error["details"] == {"field": path, "rule": rule}


async def test_library_callers_get_invalid_argument_naming_the_field(runtime: Runtime) -> None:
    one = field(label("Name"), "x")
    cases: list[tuple[object, str, str]] = [
        ("nope", "fields", "array"),
        ([], "fields", "at least 1 item"),
        ([one] * 51, "fields", "at most 50 items"),
        ([one, "x"], "fields[1]", "object"),
        ([{**one, "extra": 1}], "fields[0]", "only the keys target, value"),
        ([{"value": "x"}], "fields[0].target", "required"),
        ([one, {"target": label("A")}], "fields[1].value", "required"),
        ([field({"strategy": "xpath"}, "x")], "fields[0].target.strategy", "one of"),
        ([field({"ref": "NOT A REF"}, "x")], "fields[0].target.ref", "ref token"),
        ([field(label("Name"), 3)], "fields[0].value", 'string, boolean or {"secret": NAME}'),
        ([field(label("Name"), {"secret": "1A"})], "fields[0].value.secret", "a secret name"),
        ([field(label("Name"), "x" * 1_000_001)], "fields[0].value", "at most 1000000"),
    ]  # fmt: skip
    for fields, path, rule in cases:
        with pytest.raises(BrowserMeshError) as caught:
            await runtime.fill_form(
                PageCall(principal="local", session_id="s", page_id="p"), fields
            )
        err = caught.value
        assert err.code is ErrorCode.INVALID_ARGUMENT, (path, err)
        assert err.details["field"] == path and rule in err.details["rule"], (path, err.details)
        assert "filled" not in err.details  # refused before any work
    # The checks come before the session lookup: valid fields on an unknown session.
    with pytest.raises(BrowserMeshError) as caught:
        await runtime.fill_form(PageCall(principal="local", session_id="s", page_id="p"), [one])
    assert caught.value.code is ErrorCode.SESSION_NOT_FOUND
