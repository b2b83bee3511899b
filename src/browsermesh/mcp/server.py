"""The MCP server factory: publication (profiles, compaction, dialect) and dispatch.

Built on the SDK's low-level `Server` so the published schemas are exactly ours (§23).
"""

from __future__ import annotations

import json
from typing import Any

import mcp.types as types
from mcp import MCPError
from mcp.server import Server, ServerRequestContext

from browsermesh._version import __version__
from browsermesh.config import Config
from browsermesh.errors import BrowserMeshError
from browsermesh.mcp import prompts
from browsermesh.mcp.registry import ToolDispatcher, ToolSpec
from browsermesh.runtime.runtime import LOCAL_PRINCIPAL, Runtime


def all_tool_specs(config: Config | None = None) -> list[ToolSpec]:
    """Every tool BrowserMesh has, in publication order."""
    from browsermesh.mcp.schemas import CONTEXT_SETTINGS
    from browsermesh.mcp.tools import (
        capture,
        evaluate,
        files,
        forms,
        interaction,
        navigation,
        observe,
        sessions,
        snapshot,
        state,
        waits,
    )

    return [
        *sessions.specs(CONTEXT_SETTINGS),
        *navigation.specs(),
        *snapshot.specs(),
        *interaction.specs(),
        *forms.specs(),
        *capture.specs(),
        *waits.specs(),
        *observe.specs(None if config is None else config.observability_page_size),
        *state.specs(),
        *files.specs(),
        *evaluate.specs(),
    ]


def publish(specs: list[ToolSpec], schema_refs: bool) -> list[types.Tool]:
    """The `tools/list` payload; compaction touches only what is sent, never validation."""
    from browsermesh.mcp.compaction import compact_schema

    tools = []
    for spec in specs:
        inp, out = spec.full_input_schema(), spec.full_output_schema()
        if schema_refs:
            inp, out = compact_schema(inp), compact_schema(out)
        tools.append(spec.published(inp, out))
    return tools


def principal_of(ctx: ServerRequestContext[Any]) -> str:
    """The caller's principal: `local` over stdio and unauthenticated loopback HTTP."""
    try:
        from mcp.server.auth.middleware.auth_context import get_access_token

        token = get_access_token()
    except Exception:
        token = None
    return token.client_id if token is not None and token.client_id else LOCAL_PRINCIPAL


def create_server(runtime: Runtime, *, instructions: str | None = None) -> Server[Any]:
    """An MCP server exposing the configured tool profiles of `runtime`."""
    profiles = set(runtime.config.tools)
    specs = [s for s in all_tool_specs(runtime.config) if s.profile in profiles]
    dispatcher = ToolDispatcher(specs, runtime)
    published = publish(specs, runtime.config.schema_refs)

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=published)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        return await dispatcher.call(params.name, params.arguments, principal_of(ctx))

    async def list_prompts(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=prompts.PROMPTS)

    async def get_prompt(
        ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        return prompts.get_prompt(params.name, params.arguments)

    async def list_resources(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[SESSIONS_RESOURCE])

    async def read_resource(
        ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        if str(params.uri) != SESSIONS_URI:
            raise MCPError(-32602, "Resource not found", {"uri": str(params.uri)})
        try:
            _, views = runtime.list_sessions(principal_of(ctx))
        except BrowserMeshError as err:
            raise MCPError(-32603, err.message) from None
        text = json.dumps({"sessions": views}, indent=2, ensure_ascii=False)
        contents = types.TextResourceContents(
            uri=SESSIONS_URI, mime_type="application/json", text=text
        )
        return types.ReadResourceResult(contents=[contents])

    server: Server[Any] = Server(
        "browsermesh",
        version=__version__,
        instructions=instructions,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
    )
    return server


SESSIONS_URI = "browsermesh://sessions"
SESSIONS_RESOURCE = types.Resource(
    name="sessions",
    title="Live BrowserMesh sessions",
    uri=SESSIONS_URI,
    description="Your sessions, as browser_session_list returns them.",
    mime_type="application/json",
)
