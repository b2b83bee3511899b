"""MCP clients of an in-memory server: `ToolClient` checks every result it gets, `tool_client`
connects one to a runtime, and the small steps most tests start with (`open_page`, `whoami`)."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from jsonschema import Draft202012Validator
from mcp import Client

from browsermesh.mcp.server import create_server
from browsermesh.runtime.runtime import Runtime
from tests.fixtures.site import FixtureSite
from tests.support.results import assert_lean

ERAS = ["auto", "legacy"]
"""The SDK client's protocol eras (`mode=`): the `mcp_client` fixture runs a test in each."""
OPERATION_ID = re.compile(r"o[0-9a-z]{4,}")
"""An operation id (model.ids `short_id("o")`); tests check only the kind letter and the
alphabet, never the counter, so ids stay opaque to them."""


class ToolClient:
    """A thin wrapper over the SDK client that checks every success against its outputSchema
    (`raw` included: the server does not validate its own results, issue 33, so the suite
    does, on every result it gets), that the compatibility text equals structuredContent, and
    that the result is lean."""

    def __init__(self, client: Client, tools: dict[str, Any]) -> None:
        self.client = client
        self.tools = tools
        self._validators: dict[str, Draft202012Validator] = {}

    def check_output(self, name: str, data: Any) -> None:
        """`data` (a success's structuredContent) against the tool's published outputSchema."""
        validator = self._validators.get(name)
        if validator is None:
            validator = self._validators[name] = Draft202012Validator(
                self.tools[name].output_schema
            )
        validator.validate(data)

    @classmethod
    async def of(cls, client: Client) -> ToolClient:
        """A ToolClient over a connected SDK client, with the tools it lists."""
        return cls(client, {t.name: t for t in (await client.list_tools()).tools})

    async def raw(self, name: str, args: dict[str, Any] | None = None, **kw: Any) -> Any:
        result = await self.client.call_tool(name, args or {}, **kw)
        if not result.is_error and name in self.tools:
            self.check_output(name, result.structured_content)
        return result

    async def ok(self, name: str, args: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
        return self.success(name, args, await self.raw(name, args, **kw))

    def success(self, name: str, args: dict[str, Any] | None, result: Any) -> dict[str, Any]:
        """`result` of `name(args)`, checked to be a lean success; its structuredContent."""
        assert not result.is_error, result.content[0].text
        data: dict[str, Any] = result.structured_content
        schema = self.tools[name].output_schema
        assert_lean(name, data, args or {}, schema.get("required", ()))
        text_blocks = [c for c in result.content if c.type == "text"]
        if name != "browser_runtime_info":
            assert json.loads(text_blocks[-1].text) == data
        assert OPERATION_ID.fullmatch(data["operationId"])
        return data

    async def err(self, name: str, args: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
        result = await self.raw(name, args, **kw)
        assert result.is_error and result.structured_content is None
        assert len(result.content) == 1
        payload: dict[str, Any] = json.loads(result.content[0].text)
        assert payload["ok"] is False
        return payload["error"]

    async def session(self, *, tries: int = 1, **args: Any) -> tuple[str, str]:
        """A new session's (sessionId, initial pageId). A create has the runtime's default
        budget (it takes no `timeoutMs`, reference §15.2), which a loaded machine can pass while
        it starts Chromium or makes a context: tests whose runtime has a small default give
        `tries` > 1, and a create that ran out of time is tried again (any other error fails)."""
        for _ in range(tries - 1):
            result = await self.raw("browser_session_create", args)
            if not result.is_error:
                break
            if json.loads(result.content[0].text)["error"]["code"] != "OPERATION_TIMEOUT":
                break
        else:
            result = await self.raw("browser_session_create", args)
        data = self.success("browser_session_create", args, result)
        return data["session"]["sessionId"], data["initialPage"]["pageId"]


@asynccontextmanager
async def tool_client(runtime: Runtime, **client_options: Any) -> AsyncIterator[ToolClient]:
    """An in-memory MCP client of a server over `runtime` (`mode=`, `message_handler=`...)."""
    async with Client(create_server(runtime), **client_options) as c:
        yield await ToolClient.of(c)


async def open_page(c: ToolClient, url: str) -> dict[str, str]:
    """A new session's first page, navigated to `url`: its address."""
    s, p = await c.session()
    addr = {"sessionId": s, "pageId": p}
    await c.ok("browser_navigate", {**addr, "url": url})
    return addr


async def whoami(tc: ToolClient, site: FixtureSite, sid: str, pid: str, value: str | None) -> str:
    """What the fixture site's `/whoami` says a session stored (its title), after storing
    `value` first when one is given: isolation checks across sessions and backends."""
    addr = {"sessionId": sid, "pageId": pid}
    if value is not None:
        await tc.ok("browser_navigate", {**addr, "url": site.url(f"/?value={value}")})
    await tc.ok("browser_navigate", {**addr, "url": site.url("/whoami")})
    title: str = (await tc.ok("browser_get_title", addr))["title"]
    return title
