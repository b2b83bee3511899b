"""Issue 31 item 9: lean results, made in the one result envelope for every tool."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp import Client

from browsermesh.config import default_config
from browsermesh.mcp.server import all_tool_specs, create_server
from browsermesh.runtime.runtime import Runtime
from tests.fakes import FakeEngine
from tests.support.clients import ERAS, ToolClient

pytestmark = pytest.mark.anyio

CSS = {"strategy": "css", "value": "#x"}


@pytest.fixture(params=ERAS)
async def fake_client(request: pytest.FixtureRequest) -> AsyncIterator[ToolClient]:
    config = default_config(tools=("core", "observability", "persistence", "files", "eval"))
    runtime = Runtime(config, FakeEngine())
    async with Client(create_server(runtime), mode=request.param) as client:
        yield await ToolClient.of(client)
    await runtime.shutdown()


async def raw_structured(c: ToolClient, name: str, args: dict[str, Any]) -> dict[str, Any]:
    """structuredContent of a success, and a check that its text is the same JSON."""
    result = await c.raw(name, args)
    assert not result.is_error, result.content[0].text
    data: dict[str, Any] = result.structured_content
    assert json.loads(result.content[-1].text) == data
    assert result.content[-1].text == json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return data


async def test_page_results_do_not_repeat_the_address(fake_client: ToolClient) -> None:
    c = fake_client
    s, p = await c.session()
    addr = {"sessionId": s, "pageId": p}
    landed = await raw_structured(c, "browser_navigate", {**addr, "url": "http://a.test/"})
    assert set(landed) == {"operationId", "url"}
    # nothing changed: no `changes: {}`, only the operation id
    assert set(await raw_structured(c, "browser_click", {**addr, "locator": CSS})) == {
        "operationId"
    }
    title = await raw_structured(c, "browser_get_title", addr)
    assert set(title) == {"operationId", "title"}
    shot = await c.raw("browser_screenshot", addr)
    assert set(shot.structured_content) == {"operationId", "width", "height", "bytes"}
    snapshot = await raw_structured(c, "browser_snapshot", addr)
    assert "partial" not in snapshot and snapshot["contentFormat"] == "aria-yaml"


async def test_ids_the_server_made_stay(fake_client: ToolClient) -> None:
    c = fake_client
    made = await raw_structured(c, "browser_session_create", {})
    s = made["session"]["sessionId"]
    assert made["initialPage"]["sessionId"] == s and made["initialPage"]["pageId"]
    assert "metadata" not in made["session"] and "contextSettings" not in made["session"]
    page = await raw_structured(c, "browser_page_create", {"sessionId": s})
    assert set(page) == {"operationId", "pageId", "page"}  # the new page's id stays
    listed = await raw_structured(c, "browser_page_list", {"sessionId": s})
    assert "sessionId" not in listed
    assert all(view["sessionId"] == s for view in listed["pages"])  # ids in lists stay
    got = await raw_structured(c, "browser_session_get", {"sessionId": s})
    assert set(got) == {"operationId", "session"} and got["session"]["sessionId"] == s


async def test_a_required_list_stays_when_empty(fake_client: ToolClient) -> None:
    assert (await raw_structured(fake_client, "browser_session_list", {}))["sessions"] == []


async def test_the_pages_own_json_is_passed_verbatim(fake_client: ToolClient) -> None:
    c = fake_client
    s, p = await c.session()
    value = {"a": None, "b": [], "c": {}, "d": [None, {}]}
    data = await raw_structured(
        c,
        "browser_evaluate",
        {"sessionId": s, "pageId": p, "expression": "x => x", "arg": value},
    )
    assert data["result"] == value


def test_no_output_schema_requires_an_echoed_id() -> None:
    """An id the input takes is left out of the result, so no schema may require it."""
    for spec in all_tool_specs():
        inputs = set(spec.input_schema.get("properties", {}))
        required = set(spec.output_schema.get("required", ()))
        echoed = {k for k in inputs & required if k.endswith("Id")}
        assert not echoed, (spec.name, echoed)
