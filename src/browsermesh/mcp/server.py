"""The MCP server factory: publication (profiles, compaction, dialect) and dispatch.

Built on the SDK's low-level `Server` so the published schemas are exactly ours (§23).
"""

from __future__ import annotations

from typing import Any

import mcp.types as types
from mcp.server import Server, ServerRequestContext

from browsermesh._version import __version__
from browsermesh.mcp.registry import ToolDispatcher, ToolSpec
from browsermesh.runtime.runtime import LOCAL_PRINCIPAL, Runtime


def all_tool_specs() -> list[ToolSpec]:
    """Every tool BrowserMesh has, in publication order."""
    from browsermesh.mcp.schemas import CONTEXT_SETTINGS
    from browsermesh.mcp.tools import (
        capture,
        interaction,
        navigation,
        observe,
        sessions,
        state,
        waits,
    )

    return [
        *sessions.specs(CONTEXT_SETTINGS),
        *navigation.specs(),
        *interaction.specs(),
        *capture.specs(),
        *waits.specs(),
        *observe.specs(),
        *state.specs(),
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
    specs = [s for s in all_tool_specs() if s.profile in profiles]
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

    server: Server[Any] = Server(
        "browsermesh",
        version=__version__,
        instructions=instructions,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    return server
