"""What MCP clients see: profiles, discovery budget, schemas, prompts, resource, instructions."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from mcp import Client, MCPError

from browsermesh.config import default_config
from browsermesh.config.constants import ALL_PROFILES
from browsermesh.mcp.compaction import dereference
from browsermesh.mcp.instructions import INSTRUCTIONS
from browsermesh.mcp.server import all_tool_specs, create_server
from browsermesh.runtime.runtime import Runtime
from tests.fakes import FakeEngine
from tests.support.clients import ERAS, ToolClient

pytestmark = pytest.mark.anyio

DIALECT = "https://json-schema.org/draft/2020-12/schema"
CORE = 35


async def tools_of(**config: Any) -> tuple[list[Any], int]:
    runtime = Runtime(default_config(**config), FakeEngine())
    async with Client(create_server(runtime)) as client:
        result = await client.list_tools()
    payload = result.model_dump(by_alias=True, exclude_none=True, mode="json")
    size = len(json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode())
    return result.tools, size


@pytest.fixture(params=ERAS)
async def fake_client(request: pytest.FixtureRequest) -> AsyncIterator[ToolClient]:
    runtime = Runtime(default_config(), FakeEngine())
    async with Client(
        create_server(runtime, instructions=INSTRUCTIONS), mode=request.param
    ) as client:
        yield await ToolClient.of(client)
    await runtime.shutdown()


def test_profiles_are_total_and_disjoint() -> None:
    specs = all_tool_specs()
    assert len(specs) == 51 and len({s.name for s in specs}) == 51
    counts = {p: sum(1 for s in specs if s.profile == p) for p in ALL_PROFILES}
    assert counts == {
        "core": CORE,
        "observability": 1,
        "persistence": 3,
        "files": 4,
        "eval": 1,
        "testing": 4,
        "vision": 1,
        "webmcp": 2,
    }


async def test_profile_selection() -> None:
    default, _ = await tools_of()
    assert len(default) == 43 and "browser_evaluate" not in {t.name for t in default}
    core, _ = await tools_of(tools=("core",))
    assert len(core) == CORE
    with_eval, _ = await tools_of(tools=("core", "eval"))
    assert {t.name for t in with_eval} - {t.name for t in core} == {"browser_evaluate"}


async def test_discovery_budget() -> None:
    _, default_size = await tools_of()
    _, core_size = await tools_of(tools=("core",))
    assert default_size <= 30_000, default_size
    assert core_size <= 25_000, core_size
    # The opt-in webmcp profile (issue 36 item 1) adds its two tools and nothing else.
    with_webmcp, webmcp_size = await tools_of(
        tools=("core", "observability", "persistence", "files", "webmcp")
    )
    assert {t.name for t in with_webmcp} >= {"browser_page_tools", "browser_page_tool_call"}
    assert len(with_webmcp) == 45 and webmcp_size - default_size < 2_000, webmcp_size


async def test_every_tool_is_fully_published() -> None:
    tools, _ = await tools_of(tools=("core", "observability", "persistence", "files", "eval"))
    specs = {s.name: s for s in all_tool_specs()}
    for tool in tools:
        assert tool.title and tool.description
        # Published as a client reads them: absent = the MCP default (issue 34).
        hints, spec = tool.annotations, specs[tool.name].hints
        read = (
            bool(hints.read_only_hint),
            hints.destructive_hint is not False,
            bool(hints.idempotent_hint),
            hints.open_world_hint is not False,
        )
        assert read == (spec.read_only, spec.destructive, spec.idempotent, spec.open_world)
        assert tool.output_schema["type"] == "object"
        for schema in (tool.input_schema, tool.output_schema):
            assert schema["$schema"] == DIALECT
            Draft202012Validator.check_schema(schema)
            assert '"discriminator"' not in json.dumps(schema)
        assert '"null"' not in json.dumps(tool.input_schema)
        assert tool.input_schema.get("additionalProperties") is False
    by_name = {t.name: t for t in tools}
    click = by_name["browser_click"].description
    phrases = ("exactly by default", "LOCATOR_AMBIGUOUS", "ELEMENT_NOT_FOUND", "iframe")
    for phrase in (*phrases, "ELEMENT_NOT_ACTIONABLE"):
        assert phrase in click
    evaluate = by_name["browser_evaluate"].description
    assert "arbitrary JavaScript" in evaluate and "only" in evaluate
    aw = by_name["browser_action_and_wait"].description
    assert "pageId" in aw and "atomically" in aw
    form = by_name["browser_fill_form"].description
    for phrase in ("in order", "first failing", "details.field", "details.filled", "browser_fill"):
        assert phrase in form


CORPUS: list[dict[str, Any]] = [
    {},
    {"sessionId": "s"},
    {"sessionId": "s", "pageId": "p"},
    {"sessionId": "s", "pageId": "p", "timeoutMs": "5"},
    {"sessionId": "s", "pageId": "p", "locator": {"strategy": "css", "value": "a"}},
    {"sessionId": "s", "pageId": "p", "locator": {"strategy": "xpath", "value": "a"}},
    {"sessionId": "s", "pageId": "p", "source": "console", "limit": 5},
    {"sessionId": "s", "pageId": "p", "source": "network", "includeText": True},
    {"sessionId": "s", "pageId": "p", "url": "http://x/", "bogus": 1},
    {"name": "x", "metadata": {"constructor": "y"}},
    {"sessionId": "s", "pageId": "p", "deltaX": 1, "deltaY": 2},
    {"sessionId": "s", "pageId": "p", "format": "actions", "maxChars": 0},
]


async def test_ref_and_expanded_publications_agree() -> None:
    compact, compact_size = await tools_of(
        tools=("core", "observability", "persistence", "files", "eval")
    )
    expanded, expanded_size = await tools_of(
        tools=("core", "observability", "persistence", "files", "eval"), schema_refs=False
    )
    assert compact_size <= expanded_size
    by_name = {t.name: t for t in expanded}
    for tool in compact:
        other = by_name[tool.name]
        assert dereference(tool.input_schema) == other.input_schema
        assert dereference(tool.output_schema) == other.output_schema
        a = Draft202012Validator(tool.input_schema)
        b = Draft202012Validator(other.input_schema)
        for instance in CORPUS:
            assert a.is_valid(instance) == b.is_valid(instance), (tool.name, instance)


async def test_prompts_render(fake_client: ToolClient) -> None:
    client = fake_client.client
    listed = {p.name: p for p in (await client.list_prompts()).prompts}
    assert listed["parallel_roles"].title == "Test as several roles at once"
    assert listed["diagnose_page"].title == "Diagnose a failing page"
    several = await client.get_prompt(
        "parallel_roles", {"task": "Buy a teapot", "roles": "buyer, admin ,,"}
    )
    text = several.messages[0].content.text  # type: ignore[union-attr]
    assert several.messages[0].role == "user"
    assert "Buy a teapot" in text and "2 independent roles" in text
    assert "- buyer" in text and "- admin" in text and "browser_session_create" in text
    assert "browser_request_help" in text  # issue 34: a person can take a session over
    one = await client.get_prompt("parallel_roles", {"task": "t", "roles": "solo"})
    assert "1 independent role:" in one.messages[0].content.text  # type: ignore[union-attr]
    diag = await client.get_prompt(
        "diagnose_page", {"url": "https://example.test/x", "symptom": "blank page"}
    )
    body = diag.messages[0].content.text  # type: ignore[union-attr]
    for word in ("https://example.test/x", "blank page", "pageError", "requestFailed", "gap"):
        assert word in body
    with pytest.raises(MCPError):
        await client.get_prompt("diagnose_page", {"url": "file:///etc/passwd"})


async def test_sessions_resource(fake_client: ToolClient) -> None:
    client = fake_client.client
    resources = (await client.list_resources()).resources
    assert [str(r.uri) for r in resources] == ["browsermesh://sessions"]
    empty = await client.read_resource("browsermesh://sessions")
    assert json.loads(empty.contents[0].text) == {"sessions": []}  # type: ignore[union-attr]
    sid, _ = await fake_client.session(name="res")
    data = await client.read_resource("browsermesh://sessions")
    content = data.contents[0]
    assert content.mime_type == "application/json"
    sessions = json.loads(content.text)["sessions"]  # type: ignore[union-attr]
    assert [s["sessionId"] for s in sessions] == [sid]
    assert content.text.startswith('{\n  "sessions"')  # type: ignore[union-attr]


def test_instructions_budget_and_sections() -> None:
    assert len(INSTRUCTIONS.encode()) <= 1280
    sections = INSTRUCTIONS.split("\n\n")
    assert len(sections) == 3
    assert "sessionId" in sections[0] and "no current session" in sections[0]
    assert "duplicates" in sections[1] and "secrets" in sections[1]
    assert "BROWSERMESH_AGENT_GUIDELINES=false" in sections[2]
