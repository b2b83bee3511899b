"""The MCP server factory: publication (profiles, compaction, dialect) and dispatch.

Built on the SDK's low-level `Server` so the published schemas are exactly ours (§23). This file
wires handlers to the modules that do the work: tools (`registry`), prompts (`prompts`),
resources (`resources`), completions (`completions`), and between-call notifications
(`clients`, `feed`).
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import AsyncIterator
from typing import Any

import anyio
import mcp.types as types
from mcp import MCPError
from mcp.server import NotificationOptions, Server, ServerRequestContext
from mcp.server.models import InitializationOptions
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp_types.version import MODERN_PROTOCOL_VERSIONS as MODERN_ERA

from browsermesh._version import __version__
from browsermesh.config import Config
from browsermesh.log import EventLog
from browsermesh.mcp import feed, prompts
from browsermesh.mcp.clients import LOGGER, MCP_LEVELS, Clients, connection_of
from browsermesh.mcp.completions import Completions
from browsermesh.mcp.registry import ToolDispatcher, ToolSpec
from browsermesh.mcp.resources import INVALID_PARAMS, TEMPLATES, SessionResources
from browsermesh.runtime.runtime import LOCAL_PRINCIPAL, Runtime


def all_tool_specs(config: Config | None = None) -> list[ToolSpec]:
    """Every tool BrowserMesh has, in publication order."""
    from browsermesh.mcp.schemas import CONTEXT_SETTINGS
    from browsermesh.mcp.tools import (
        capture,
        evaluate,
        files,
        find,
        forms,
        interaction,
        navigation,
        network,
        observe,
        review,
        sessions,
        snapshot,
        state,
        testing,
        vision,
        waits,
        webmcp,
    )

    return [
        *sessions.specs(CONTEXT_SETTINGS),
        *network.specs(),
        *navigation.specs(),
        *snapshot.specs(),
        *find.specs(),
        *interaction.specs(),
        *forms.specs(),
        *capture.specs(),
        *waits.specs(),
        *observe.specs(None if config is None else config.observability_page_size),
        *state.specs(),
        *files.specs(),
        *evaluate.specs(),
        *testing.specs(),
        *review.specs(),
        *vision.specs(),
        *webmcp.specs(),
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


def tracing_configured() -> bool:
    """Whether an OpenTelemetry tracer provider is installed (by `opentelemetry-instrument` or
    the embedding program, before the server is made); otherwise spans go nowhere."""
    from opentelemetry import trace

    provider = trace.get_tracer_provider()
    return not isinstance(provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider)


class BrowserMeshServer(Server[Any]):
    """The SDK server, advertising `resources.listChanged` on the handshake era too.

    The SDK derives that flag from `NotificationOptions`, which its own transports (Streamable
    HTTP, the in-memory client) never pass; on 2026-07-28 it follows `subscriptions/listen`.

    Two per-call costs of the SDK are trimmed (issue 33), neither visible on the wire: its
    OpenTelemetry middleware is dropped when no tracer provider is installed (a span per
    message that nobody records), and the 2026-07-28 `serverInfo` stamp is copied flat instead
    of deep-copied (its values are strings, so both copies are equal and unshared)."""

    dispatcher: ToolDispatcher | None = None
    """The tool dispatcher, which the fleet's channel also runs forwarded calls through."""
    resources: SessionResources | None = None
    """The session resources, which the fleet's channel also reads for other replicas."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not tracing_configured():
            self.middleware = [m for m in self.middleware if not _is_tracing(m)]
        self._stamp: dict[str, Any] | None = None

    @property
    def server_info_stamp(self) -> dict[str, Any]:
        if self._stamp is None:
            stamp = self.server_info.model_dump(by_alias=True, mode="json", exclude_none=True)
            if any(isinstance(v, dict | list) for v in stamp.values()):
                return super().server_info_stamp  # nested values (icons): the SDK's deep copy
            self._stamp = stamp
        return dict(self._stamp)

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or NotificationOptions(resources_changed=True),
            experimental_capabilities,
            extensions,
        )


def _is_tracing(middleware: object) -> bool:
    """The SDK's OpenTelemetry middleware (on by default in 2.3, not exported): matched by its
    module, so an SDK that moves or renames it keeps its own."""
    return type(middleware).__module__ == "mcp.server._otel"


def create_server(runtime: Runtime, *, instructions: str | None = None) -> Server[Any]:
    """An MCP server exposing the configured tool profiles of `runtime`."""
    profiles = set(runtime.config.tools)
    specs = [s for s in all_tool_specs(runtime.config) if s.profile in profiles]
    h = Handlers(runtime, specs)
    with warnings.catch_warnings():
        # The SDK marks logging deprecated for the 2026-07-28 wire; handshake-era clients
        # (most in the field) still use logging/setLevel.
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        server = BrowserMeshServer(
            "browsermesh",
            version=__version__,
            instructions=instructions,
            on_list_tools=h.list_tools,
            on_call_tool=h.call_tool,
            on_list_prompts=h.list_prompts,
            on_get_prompt=h.get_prompt,
            on_list_resources=h.list_resources,
            on_list_resource_templates=h.list_resource_templates,
            on_read_resource=h.read_resource,
            on_subscribe_resource=h.subscribe,
            on_unsubscribe_resource=h.unsubscribe,
            on_subscriptions_listen=h.listen,
            on_completion=h.complete,
            on_set_logging_level=h.set_logging_level,
            lifespan=h.lifespan,
        )
    # The fleet's channel runs forwarded calls and reads through the same handlers (§37.6).
    server.dispatcher = h.dispatcher
    server.resources = h.resources
    return server


class Handlers:
    """What the server answers, one method per MCP request, over one runtime: the published
    tools and their dispatcher, the connections' listeners (`Clients`), the session resources
    and the completions."""

    def __init__(self, runtime: Runtime, specs: list[ToolSpec]) -> None:
        self.dispatcher = ToolDispatcher(specs, runtime)
        # While a person holds a session, its reads go on (issue 34): the read-only tools.
        runtime.core.hold_exempt = frozenset(s.name for s in all_tool_specs() if s.hints.read_only)
        self.log = runtime.log
        self.published = publish(specs, runtime.config.schema_refs)
        self.clients = Clients(runtime.owner_of)
        runtime.log.gated.append((self.clients.wants_records, self.clients.on_record))
        self.resources = SessionResources(runtime, self.clients, self.dispatcher.router)
        runtime.watchers.append(self.resources)
        self.completions = Completions(runtime)

    async def list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=self.published)

    async def call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        principal = principal_of(ctx)
        async with feed.running(call_feed(ctx, self.clients, self.log)):
            return await self.dispatcher.call(params.name, params.arguments, principal)

    async def set_logging_level(
        self, ctx: ServerRequestContext[Any], params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        self.clients.listener(ctx, principal_of(ctx)).log_level = params.level
        return types.EmptyResult()

    @contextlib.asynccontextmanager
    async def lifespan(self, _server: Server[Any]) -> AsyncIterator[dict[str, Any]]:
        # The one sender of between-call notifications; it lives as long as the server runs.
        async with anyio.create_task_group() as group:
            group.start_soon(self.clients.run)
            try:
                yield {}
            finally:
                self.clients.close()
                group.cancel_scope.cancel()

    async def list_prompts(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=prompts.PROMPTS)

    async def get_prompt(
        self, ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        return prompts.get_prompt(params.name, params.arguments)

    async def list_resources(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        principal = principal_of(ctx)
        if ctx.protocol_version not in MODERN_ERA:
            self.clients.listener(ctx, principal)  # so that list_changed reaches this connection
        return await self.resources.fleet_list(principal)

    async def list_resource_templates(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=TEMPLATES)

    async def read_resource(
        self, ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        return await self.resources.read(principal_of(ctx), str(params.uri))

    async def subscribe(
        self, ctx: ServerRequestContext[Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        uri = str(params.uri)
        self.resources.check_subscribable(uri)
        if not self.clients.subscribe(ctx, principal_of(ctx), uri):
            raise MCPError(INVALID_PARAMS, "Too many subscriptions")
        return types.EmptyResult()

    async def unsubscribe(
        self, ctx: ServerRequestContext[Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        self.clients.listener(ctx, principal_of(ctx)).subscriptions.discard(str(params.uri))
        return types.EmptyResult()

    async def listen(
        self, ctx: ServerRequestContext[Any], params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        return await self.clients.listen(ctx, params, principal_of(ctx))

    async def complete(
        self, ctx: ServerRequestContext[Any], params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        return self.completions.complete(principal_of(ctx), params)


def call_feed(
    ctx: ServerRequestContext[Any], clients: Clients, log: EventLog
) -> feed.CallFeed | None:
    """The feed of a call that asked for progress or log lines; None when it asked for none.
    A progress token too long to echo (`feed.echoable_progress_token`) asks for nothing."""
    meta: dict[str, Any] = dict(ctx.meta or {})
    token = meta.get("progressToken", meta.get("progress_token"))
    wants_progress = token is not None and feed.echoable_progress_token(token)
    if token is not None and not wants_progress:
        log.warn(
            "progress.token_ignored",
            principal=principal_of(ctx),
            reason=f"progressToken is not a string of at most {feed.MAX_PROGRESS_TOKEN_CHARS} "
            "characters or a 64-bit integer",
        )
    if ctx.protocol_version in MODERN_ERA:
        threshold = meta.get(types.LOG_LEVEL_META_KEY)
    else:
        threshold = clients.log_level(ctx)
    wants_logs = threshold in MCP_LEVELS
    if not wants_progress and not wants_logs:
        return None
    session, request_id = ctx.session, ctx.request_id

    async def send_progress(value: float, message: str) -> None:
        await session.report_progress(value, None, message)

    async def send_log(level: str, data: dict[str, Any]) -> None:
        params = types.LoggingMessageNotificationParams(level=level, logger=LOGGER, data=data)  # type: ignore[arg-type]
        note = types.LoggingMessageNotification(params=params)
        await session.send_notification(note, related_request_id=request_id)

    return feed.CallFeed(
        send_progress=send_progress if wants_progress else None,
        send_log=send_log if wants_logs else None,
        log_threshold=threshold if wants_logs else None,
        connection=connection_of(ctx),
    )
