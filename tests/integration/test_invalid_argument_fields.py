"""Realistic argument mistakes through the real MCP client name their field and rule (issue 13).

A client hit nine opaque `INVALID_ARGUMENT`s in one task. Each mistake below is one a model
makes (a wait kind from another tool, an xpath locator, a URL without a scheme, a viewport in
physical pixels...) that passes the published schema and is refused by the runtime: the error's
details carry the JSON path from the tool's argument root and the rule it broke, the next step
points at them, and the caller's value never comes back.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support.clients import ToolClient

pytestmark = pytest.mark.anyio

C = "canaryQ7zX"
"""A distinctive string no field path or rule contains."""
FIELD_NEXT_STEP = "Fix details.field so that it satisfies details.rule, then call again."
BUTTON = {"strategy": "role", "value": "button", "name": "Save"}

# tool, arguments (besides the page address), field, the rule's start, a bound clause or None
MISTAKES: list[tuple[str, dict[str, Any], str, str, str | None]] = [
    (
        # (a limit over the page size is refused by the published schema, whose maximum is the
        # configured page size, so it never reaches the runtime)
        "browser_observe",
        {"source": "console", "sinceEventId": f"{C}.3"},
        "sinceEventId",
        "an eventId or nextCursor that browser_observe returned for this page and source",
        None,
    ),
    (
        "browser_wait",
        {"condition": {"kind": "visible", "locator": {"strategy": "text", "value": C}}},
        "condition.kind",
        "one of: url, load, locator, text",
        None,
    ),
    (
        "browser_wait",
        {
            "condition": {
                "kind": "locator",
                "locator": {"strategy": "text", "value": C},
                "state": "shown",
            }
        },
        "condition.state",
        "one of: visible, hidden, attached, detached, enabled, disabled",
        None,
    ),
    (
        "browser_wait",
        {"condition": {"kind": "url", "matcher": {"kind": "regex", "value": f"^{C}$"}}},
        "condition.matcher.kind",
        "one of: exact, glob",
        None,
    ),
    (
        "browser_action_and_wait",
        {"action": {"kind": "tap", "target": BUTTON}, "wait": {"kind": "navigation"}},
        "action.kind",
        "one of: click, press, hover",
        None,
    ),
    (
        "browser_action_and_wait",
        {"action": {"kind": "click", "target": BUTTON}, "wait": {"kind": "load"}},
        "wait.kind",
        "one of: navigation, response, popup, dialog",
        None,
    ),
    (
        "browser_action_and_wait",
        {
            "action": {
                "kind": "click",
                "target": {"strategy": "xpath", "value": f"//a[@id='{C}']"},
            },
            "wait": {"kind": "popup"},
        },
        "action.target.strategy",
        "one of: role, text, label, placeholder, alt, title, testId, css",
        None,
    ),
    (
        "browser_navigate",
        {"url": f"{C}.example.com/login"},
        "url",
        "an absolute http or https URL with a host",
        None,
    ),
    ("browser_get_title", {"timeoutMs": 0}, "timeoutMs", "at least 1", " Bound: timeoutMs >= 1."),
    (
        "browser_snapshot",
        {"scope": {"role": "main", "name": C}},
        "scope.strategy",
        "one of: role, text",
        None,
    ),
    (
        "browser_snapshot",
        {"cursor": f"snapshot_{C}.10", "maxChars": 500},
        "cursor",
        "alone: a cursor excludes the options maxChars",
        None,
    ),
    (
        "browser_screenshot",
        {"capture": {"kind": "element"}},
        "capture.locator",
        'required with kind "element"',
        None,
    ),
]


def assert_names_field(
    error: dict[str, Any], field: str, rule: str, clause: str | None, label: str
) -> None:
    assert error["code"] == "INVALID_ARGUMENT", label
    details = error["details"]
    assert details["field"] == field, label
    assert details["rule"].startswith(rule), (label, details["rule"])
    assert error["nextStep"] == FIELD_NEXT_STEP, label
    if clause is not None:
        assert error["message"] == "Invalid argument." + clause, label
    assert C not in json.dumps(error, ensure_ascii=False), label


async def test_realistic_mistakes_name_their_field_and_rule(client: ToolClient) -> None:
    s, p = await client.session()
    addr = {"sessionId": s, "pageId": p}
    for tool, args, field, rule, clause in MISTAKES:
        error = await client.err(tool, {**addr, **args})
        assert_names_field(error, field, rule, clause, f"{tool} {field}")
    # a bad URL still carries the reason clients of the earlier payload read
    error = await client.err("browser_navigate", {**addr, "url": f"{C}.example.com/login"})
    assert error["details"]["reason"] == "invalid_url"
    # nothing was harmed: the page still answers
    assert (await client.ok("browser_get_url", addr))["url"] == "about:blank"


async def test_session_level_mistakes_name_their_field_and_rule(client: ToolClient) -> None:
    error = await client.err(
        "browser_session_create",
        {"contextSettings": {"viewport": {"width": 25_600, "height": 1440}}, "name": C},
    )
    assert_names_field(
        error,
        "contextSettings.viewport.width",
        "at most 10000",
        " Bound: viewport.width <= 10000.",
        "viewport",
    )
    error = await client.err(
        "browser_session_create", {"contextSettings": {"timezoneId": f"Europe/{C}"}}
    )
    assert_names_field(
        error, "contextSettings.timezoneId", "a valid IANA time zone name", None, "timezone"
    )
    s, _ = await client.session()
    error = await client.err("browser_state_save", {"sessionId": s, "stateId": f"buyer {C}"})
    assert_names_field(error, "stateId", "1..128 characters of A-Z", None, "stateId")
