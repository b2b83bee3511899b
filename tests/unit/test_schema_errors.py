"""Issue 31 item 7: a call that fails the published input schema answers BrowserMesh's
`INVALID_ARGUMENT` with `details.field` and `details.rule`, for every tool of the default
profiles and on both protocol eras, through the SDK's in-memory client."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from mcp import Client

from browsermesh.config import default_config
from browsermesh.mcp.server import create_server
from browsermesh.runtime.runtime import Runtime
from tests.fakes import FakeEngine
from tests.support.clients import ERAS

pytestmark = pytest.mark.anyio

_TYPES = {"string": "x", "integer": 1, "number": 1, "boolean": True, "object": {}, "array": []}
_WRONG = {"string": 5, "integer": "5", "number": "5", "boolean": "yes", "object": 5, "array": 5}


def minimal(schema: dict[str, Any]) -> Any:
    """A smallest instance the schema accepts (the required fields, recursively)."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = kind[0]
    if kind == "object":
        props = schema.get("properties", {})
        return {k: minimal(props.get(k, {})) for k in schema.get("required", [])}
    if kind == "string":
        return "x" * max(schema.get("minLength", 1), 1)
    if kind == "integer":
        return schema.get("minimum", 1)
    if kind == "array":
        return [minimal(schema.get("items", {})) for _ in range(schema.get("minItems", 0))]
    return _TYPES.get(str(kind), "x")


def cases(tool: Any) -> list[tuple[str, dict[str, Any], str, str]]:
    """(case, arguments, field, rule) for one tool: each breaks one rule of its schema."""
    schema = tool.input_schema
    base = minimal(schema)
    assert not list(Draft202012Validator(schema).iter_errors(base)), tool.name
    props: dict[str, Any] = schema.get("properties", {})
    out = [("unknown field", {**base, "zzUnknown": 1}, "zzUnknown", "unknown field")]
    for name in schema.get("required", [])[:1]:
        missing = {k: v for k, v in base.items() if k != name}
        out.append(("missing required", missing, name, "required"))
    typed = [(k, p) for k, p in props.items() if isinstance(p.get("type"), str)]
    if typed:
        name, prop = typed[-1]
        out.append(("wrong type", {**base, name: _WRONG[prop["type"]]}, name, prop["type"]))
    enums = [(k, p) for k, p in props.items() if "enum" in p]
    if enums:
        name, prop = enums[0]
        rule = "one of: " + ", ".join(prop["enum"])
        out.append(("out of enum", {**base, name: "zz-not-a-member"}, name, rule))
    longs = [(k, p) for k, p in props.items() if "maxLength" in p]
    if longs:
        name, prop = longs[0]
        limit = prop["maxLength"]
        over = {**base, name: "x" * (limit + 1)}
        out.append(("over-long string", over, name, f"at most {limit} characters"))
    return out


@pytest.fixture(params=ERAS)
async def client(request: pytest.FixtureRequest) -> AsyncIterator[Client]:
    runtime = Runtime(default_config(), FakeEngine())
    async with Client(create_server(runtime), mode=request.param) as c:
        yield c
    await runtime.shutdown()


def invalid(result: Any) -> dict[str, Any]:
    """The INVALID_ARGUMENT error of a result (exactly one text block, no structuredContent)."""
    assert result.is_error and result.structured_content is None
    assert len(result.content) == 1
    error: dict[str, Any] = json.loads(result.content[0].text)["error"]
    assert error["code"] == "INVALID_ARGUMENT", error
    assert "operationId" not in error  # the runtime never accepted the call
    return error


async def test_every_schema_failure_of_every_tool_is_invalid_argument(client: Client) -> None:
    tools = (await client.list_tools()).tools
    assert len(tools) == 43
    seen: set[str] = set()
    for tool in tools:
        for case, args, field, rule in cases(tool):
            error = invalid(await client.call_tool(tool.name, args))
            assert error["details"] == {"field": field, "rule": rule}, (tool.name, case)
            assert error["nextStep"].startswith("Fix details.field"), (tool.name, case)
            if case == "over-long string":
                limit = int(rule.split()[2])
                assert error["message"].endswith(f"Bound: {field} <= {limit}."), error
            seen.add(case)
    assert seen == {
        "unknown field",
        "missing required",
        "wrong type",
        "out of enum",
        "over-long string",
    }


@pytest.mark.parametrize(
    ("tool", "args", "field", "rule"),
    [
        # nested paths: a locator's strategy, an array item's field (runtime-style names)
        (
            "browser_click",
            {"sessionId": "s", "pageId": "p", "locator": {"strategy": "xpath", "value": "a"}},
            "locator.strategy",
            "one of: role, text, label, placeholder, alt, title, testId, css",
        ),
        (
            "browser_fill_form",
            {"sessionId": "s", "pageId": "p", "fields": [{"target": {}}] * 2},
            "fields[0].value",
            "required",
        ),
        (
            "browser_fill_form",
            {
                "sessionId": "s",
                "pageId": "p",
                "fields": [{"target": {}, "value": "a"}, {"target": {}, "value": 5}],
            },
            "fields[1].value",
            "string or boolean or object",
        ),
        (
            "browser_fill_form",
            {"sessionId": "s", "pageId": "p", "fields": []},
            "fields",
            "at least 1 item",
        ),
        # an unknown key that is no identifier is not echoed: the object it is in is named
        ("browser_session_list", {"a b": 1}, "arguments", "unknown field"),
        (
            "browser_session_create",
            {"metadata": {"k": "x" * 513}},
            "metadata.k",
            "at most 512 characters",
        ),
        (
            "browser_session_create",
            {"metadata": {"k\u0001": "v"}},
            "metadata",
            "keys: no control characters",
        ),
        ("browser_session_create", {"name": "a\u0007"}, "name", "no control characters"),
        (
            "browser_navigate",
            {"sessionId": "s", "pageId": "p", "url": "u", "timeoutMs": 1.5},
            "timeoutMs",
            "integer",
        ),
        ("browser_session_create", {"count": True}, "count", "integer"),
        # several faults: the first in path order is named
        ("browser_navigate", {"url": 5}, "sessionId", "required"),
    ],
)
async def test_paths_and_rules(
    client: Client, tool: str, args: dict[str, Any], field: str, rule: str
) -> None:
    error = invalid(await client.call_tool(tool, args))
    assert error["details"] == {"field": field, "rule": rule}


async def test_unknown_tool_is_invalid_argument_without_echoing_the_name(client: Client) -> None:
    error = invalid(await client.call_tool("x" * 5000, {}))
    assert error["details"] == {"field": "name", "rule": "a tool name listed by tools/list"}
    assert len(json.dumps(error)) < 400


async def test_runtime_and_schema_checks_word_a_mistake_alike(client: Client) -> None:
    """browser_click's locator is checked by the schema, browser_hover's (an open object in
    tools/list) by the runtime: the same bad strategy reads the same."""
    bad = {"sessionId": "s", "pageId": "p", "locator": {"strategy": "xpath", "value": "a"}}
    schema = invalid(await client.call_tool("browser_click", bad))
    created = await client.call_tool("browser_session_create", {})
    made = created.structured_content
    addr = {"sessionId": made["session"]["sessionId"], "pageId": made["initialPage"]["pageId"]}
    runtime = invalid(await client.call_tool("browser_hover", {**bad, **addr}))
    assert runtime["details"] == schema["details"]
    assert runtime["message"] == schema["message"] == "Invalid argument."
