"""Tool specifications, argument validation and the result envelope (§3.3, §16.1).

A handler is thin: it receives validated arguments, calls one runtime method and returns the
structured result. Everything that can go wrong becomes an `isError` result here, a schema
failure included (`INVALID_ARGUMENT`, `mcp.validation`); no exception text ever reaches the
SDK. Every success is made lean here (`mcp.lean`), for every tool alike.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import mcp.types as types

from browsermesh.errors import BrowserMeshError, ErrorCode, error_payload, internal_error
from browsermesh.mcp.lean import lean_result
from browsermesh.mcp.schemas import Schema, with_dialect
from browsermesh.mcp.validation import first_argument_error, unknown_tool
from browsermesh.model.call_label import serving
from browsermesh.model.tool_hints import Hints as Hints
from browsermesh.runtime.calls import PageCall

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

    from browsermesh.mcp.forwarding import FleetRouter
    from browsermesh.runtime.runtime import Runtime


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call as a handler sees it."""

    runtime: Runtime
    principal: str
    args: dict[str, Any]

    def session_id(self) -> object:
        return self.args.get("sessionId")

    def page_id(self) -> object:
        return self.args.get("pageId")

    def page(self) -> PageCall:
        """The page this call addresses, with its budget, as the runtime takes it."""
        return PageCall(
            principal=self.principal,
            session_id=self.args.get("sessionId"),
            page_id=self.args.get("pageId"),
            timeout_ms=self.args.get("timeoutMs"),
        )

    def page_result(self, operation_id: str, **fields: Any) -> dict[str, Any]:
        """The common shape of page-addressed results: the operation id, then the tool's
        fields. The page's address is the client's own (issue 31 item 9: not echoed)."""
        return {"operationId": operation_id, **fields}


@dataclass(slots=True)
class ToolOutput:
    """A success: `structured` becomes structuredContent; `leading` blocks go before the JSON
    text block (screenshots); `text` replaces the JSON text (runtime_info's summary)."""

    structured: dict[str, Any]
    leading: list[types.ContentBlock] = field(default_factory=list)
    text: str | None = None


Handler = Callable[[ToolCall], Awaitable[ToolOutput | dict[str, Any]]]


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolSpec:
    """Everything published about a tool, and its handler."""

    name: str
    title: str
    description: str
    profile: str
    hints: Hints
    input_schema: Schema
    output_schema: Schema
    handler: Handler
    verbatim: tuple[str, ...] = ()
    """Result fields passed as they are, never made lean (the page's own JSON values)."""

    def published(self, input_schema: Schema, output_schema: Schema) -> types.Tool:
        return types.Tool(
            name=self.name,
            title=self.title,
            description=self.description,
            input_schema=input_schema,
            output_schema=output_schema,
            # No annotations.title: Tool.title carries it on both eras (2025-06-18 on), and the
            # copy cost 1.1 kB of tools/list (docs/decisions.md, issue 31, discovery room).
            annotations=published_hints(self.hints),
        )

    def full_input_schema(self) -> Schema:
        return with_dialect(self.input_schema)

    def full_output_schema(self) -> Schema:
        return with_dialect(self.output_schema)


def published_hints(hints: Hints) -> types.ToolAnnotations:
    """The hints whose value differs from the MCP default (readOnly false, destructive true,
    idempotent false, openWorld true): a client reads an absent hint as its default, so the
    defaults cost every connection bytes and say nothing (issue 34: 1.9 kB of tools/list).
    destructiveHint stays on read-only tools too: some clients read it alone."""
    return types.ToolAnnotations(
        read_only_hint=True if hints.read_only else None,
        destructive_hint=None if hints.destructive else False,
        idempotent_hint=True if hints.idempotent else None,
        open_world_hint=False if not hints.open_world else None,
    )


def compact_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def error_result(error: BrowserMeshError) -> types.CallToolResult:
    """Application failure: one text block, the compact payload, no structuredContent."""
    text = compact_json(error_payload(error))
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def success_result(out: ToolOutput) -> types.CallToolResult:
    """A success: the leading blocks, then the text (the compact JSON of structuredContent
    unless the tool wrote its own), structuredContent as given (already lean)."""
    text = out.text if out.text is not None else compact_json(out.structured)
    content: list[types.ContentBlock] = [*out.leading, types.TextContent(type="text", text=text)]
    return types.CallToolResult(content=content, structured_content=out.structured)


class ToolDispatcher:
    """Validates arguments against the expanded schema, runs the handler, shapes the result
    (the one envelope: lean structuredContent, its compact JSON as the text)."""

    def __init__(self, specs: list[ToolSpec], runtime: Runtime) -> None:
        self.runtime = runtime
        self.specs = {s.name: s for s in specs}
        self._validators: dict[str, Validator] = {}
        self.router: FleetRouter | None = None
        if runtime.fleet is not None:
            from browsermesh.mcp.forwarding import FleetRouter

            self.router = FleetRouter(runtime, runtime.fleet)

    def _validator(self, spec: ToolSpec) -> Validator:
        """The tool's argument validator, built on the tool's first call: jsonschema is not
        imported before a tool is called, so start-up does not pay for it (issue 33)."""
        validator = self._validators.get(spec.name)
        if validator is None:
            from jsonschema import Draft202012Validator

            validator = Draft202012Validator(spec.full_input_schema())
            self._validators[spec.name] = validator
        return validator

    async def call(
        self,
        name: str,
        arguments: dict[str, Any] | None,
        principal: str,
        *,
        forwarded: bool = False,
    ) -> types.CallToolResult:
        """Run one call of `principal`. `forwarded`: another replica of the fleet sent it
        (reference §37.6), so it runs here whatever the directory says (one hop)."""
        started = time.monotonic()
        spec = self.specs.get(name)
        if spec is None:
            return error_result(unknown_tool())
        args = arguments if arguments is not None else {}
        invalid = first_argument_error(self._validator(spec).iter_errors(args))
        if invalid is not None:
            return error_result(invalid)
        try:
            if self.router is not None and not forwarded:
                routed = await self._routed(name, args, principal, started)
                if isinstance(routed, types.CallToolResult):
                    return routed
            with serving(name, args):
                out = await spec.handler(ToolCall(self.runtime, principal, args))
            if self.router is not None and not forwarded and name == "browser_session_list":
                out = await self._fleet_list(out, principal)
        except asyncio.CancelledError:
            raise
        except BrowserMeshError as err:
            if err.code is ErrorCode.RUNTIME_SHUTTING_DOWN and self.router is not None:
                err = self.router.stopping(args) or err
            return error_result(err)
        except Exception as exc:
            return error_result(internal_error(exc))
        if isinstance(out, dict):
            out = ToolOutput(out)
        # The one place results are made lean (issue 31 item 9), before the text is written.
        out.structured = lean_result(
            out.structured, args, spec.output_schema.get("required", ()), spec.verbatim
        )
        return success_result(out)

    async def _routed(
        self, name: str, args: dict[str, Any], principal: str, started: float
    ) -> types.CallToolResult | None:
        """The fleet's answer for a call this replica should not run (reference §37.5-§37.7):
        another replica's, or an error that says why the session cannot be reached; raises
        that error. None: run it here."""
        router = self.router
        assert router is not None
        session_id = args.get("sessionId")
        if name == "browser_session_create":
            session_id = args.get("fromSessionId")  # a fork is made where its source lives
            if session_id is None:
                over = router.over_limit(args)
                return await router.place(args, principal, started) if over else None
        routed = await router.route(name, args, principal, started, session_id)
        if isinstance(routed, BrowserMeshError):
            raise routed
        return routed

    async def _fleet_list(
        self, out: ToolOutput | dict[str, Any], principal: str
    ) -> ToolOutput | dict[str, Any]:
        """browser_session_list across the fleet: this replica's, then the others' (§37.7)."""
        assert self.router is not None
        structured = out.structured if isinstance(out, ToolOutput) else out
        others = await self.router.fleet_sessions(principal)
        if others:
            structured["sessions"] = [*structured["sessions"], *others]
        return out
