"""A page's WebMCP tools (issue 36 item 1, profile `webmcp`, reference §35) through
Playwright's `frame.webmcp`: list them per frame, count them, call one.

Playwright 1.65's `frame.webmcp.tools()` and `call_tool()` see only their own frame's tools, so
a page's tools are the union over its frames; a frame whose read fails (a cross-origin iframe
without `allow="tools"`, a frame that navigated meanwhile) is skipped and counted. Everything a
tool says goes through `model.page_tools` with the page's password values and the text
redactor (§17.2) before it leaves the engine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from browsermesh.engine.bounded import bounded
from browsermesh.engine.describe import frame_chain
from browsermesh.engine.elements import resolve_frame
from browsermesh.engine.failures import as_browser_error, raw_cause, translated, within
from browsermesh.engine.page_source import page_secrets
from browsermesh.errors import BrowserMeshError, ErrorCode, invalid_argument
from browsermesh.model.deadline import OperationContext
from browsermesh.model.locators import Selector
from browsermesh.model.page_tools import (
    FrameTools,
    Redact,
    ToolResult,
    bound_tool_result,
    clean_tool_name,
    error_text,
    is_error_result,
    tool_listing,
)
from browsermesh.model.tasks import all_of
from browsermesh.model.text import well_formed
from browsermesh.redact import SecretValues
from browsermesh.text_redact import redact_text

if TYPE_CHECKING:
    from playwright.async_api import Frame, Page

__all__ = ["call_tool", "count_tools", "list_tools"]

_OP: Final = "page_tools"
_THREW: Final = "Tool was executed but the invocation failed"
_UNKNOWN: Final = "No WebMCP tool named"
_COUNT_MS: Final = 2_000.0
"""At most this long for a count riding along with a snapshot or a navigation."""
_FRAME_MS: Final = 3_000.0
"""At most this long for one frame's listing: a frame that does not answer (an out-of-process
iframe still loading, a busy frame) is skipped and counted instead of holding the whole call."""


def _redactor(secrets: SecretValues) -> Redact:
    def redact(text: str) -> str:
        return redact_text(secrets.text(well_formed(text)), max_chars=11 * len(text) + 16)

    return redact


async def _frame_tools(frame: Frame, ctx: OperationContext) -> list[Any] | None:
    """One frame's raw tools; None when the frame cannot be read (skipped, not an error)."""
    try:
        timeout = max(1.0, min(_FRAME_MS, ctx.deadline.remaining_ms()))
        tools: list[Any] = await within(frame.webmcp.tools(timeout=timeout), ctx.deadline)
    except BrowserMeshError:
        raise
    except Exception:
        return None
    return tools


async def _address(frame: Frame, ctx: OperationContext) -> dict[str, Any] | None:
    """A child frame's `frame` address (§5.2: its iframes' CSS paths, outer first)."""
    try:
        chain: list[Selector] = await within(frame_chain(frame), ctx.deadline)
    except BrowserMeshError:
        raise
    except Exception:
        return None
    return {"kind": "iframe", "chain": [step.wire() for step in chain]}


async def list_tools(
    page: Page, chain: tuple[Selector, ...] | None, ctx: OperationContext
) -> dict[str, Any]:
    """`browser_page_tools`' result: the tools of every frame (main frame first), or of the one
    frame `chain` addresses (§5.2 resolution; an empty chain is the main frame)."""
    frames = [await resolve_frame(page, chain, ctx, _OP)] if chain is not None else page.frames
    found: list[FrameTools] = []
    skipped = 0
    # Every frame at once: a slow frame costs its own bound, not the sum of all.
    read = await all_of(*(_frame_tools(frame, ctx) for frame in frames))
    for frame, tools in zip(frames, read, strict=True):
        if tools is None:
            skipped += 1
            continue
        if not tools:
            continue
        if frame.parent_frame is None:
            found.append(FrameTools(None, tools))
            continue
        address = await _address(frame, ctx)
        if address is None:
            skipped += 1
            continue
        found.append(FrameTools(address, tools))
    secrets = await page_secrets(page, ctx.deadline) if found else SecretValues()
    return tool_listing(found, skipped, _redactor(secrets))


async def count_tools(page: Page, ctx: OperationContext) -> int | None:
    """How many callable tools the page's frames register now (names a listing keeps), within
    a small share of the call's budget; None when it could not be counted in time."""

    async def one(frame: Frame) -> int:
        try:
            tools = await frame.webmcp.tools(timeout=_COUNT_MS)
        except Exception:
            return 0
        return sum(1 for t in tools if isinstance(t, dict) and clean_tool_name(t.get("name")))

    async def count() -> int:
        return sum(await all_of(*(one(frame) for frame in page.frames)))

    budget = min(_COUNT_MS, ctx.deadline.remaining_ms() / 4)
    if budget < 20:
        return None
    try:
        return await bounded(count(), budget)
    except Exception:
        return None


def _not_registered(name: str) -> BrowserMeshError:
    """INVALID_ARGUMENT naming `name`: the frame does not register it now (never the page's
    own message, which lists every tool it has)."""
    return invalid_argument(
        "name",
        "a tool that frame registers now",
        reason="page_tool_not_found",
        toolName=name,
    )


def _tool_failure(exc: Exception, name: str, timeout_ms: float) -> BrowserMeshError:
    cause = raw_cause(exc)
    if _THREW in str(exc):
        return BrowserMeshError(
            ErrorCode.BROWSER_ERROR,
            variant="page_tool_threw",
            details={"reason": "page_tool_threw", "toolName": name},
            cause=cause,
        )
    if _UNKNOWN in str(exc):  # unregistered between the check and the call
        return _not_registered(name)
    return as_browser_error(timeout_ms)(exc)


async def call_tool(
    page: Page,
    chain: tuple[Selector, ...],
    name: str,
    arguments: dict[str, Any],
    ctx: OperationContext,
) -> ToolResult:
    """Call the page tool `name` of the frame `chain` addresses with `arguments`, within the
    call's remaining budget: its answer redacted and bounded; a name the frame does not
    register now → INVALID_ARGUMENT `page_tool_not_found`; an `isError` answer → BROWSER_ERROR
    `page_tool_error` carrying its first text; a tool that threw → `page_tool_threw`."""
    frame = await resolve_frame(page, chain, ctx, _OP)
    with translated(as_browser_error(ctx.deadline.timeout_ms)):
        tools = await within(
            frame.webmcp.tools(timeout=max(1.0, ctx.deadline.remaining_ms())), ctx.deadline
        )
    if not any(isinstance(t, dict) and t.get("name") == name for t in tools):
        raise _not_registered(name)
    try:
        raw = await within(
            frame.webmcp.call_tool(name, arguments, timeout=max(1.0, ctx.deadline.remaining_ms())),
            ctx.deadline,
        )
    except BrowserMeshError:
        raise
    except Exception as exc:
        raise _tool_failure(exc, name, ctx.deadline.timeout_ms) from None
    redact = _redactor(await page_secrets(page, ctx.deadline))
    if is_error_result(raw):
        details: dict[str, Any] = {"reason": "page_tool_error", "toolName": name}
        text = error_text(raw, redact)
        if text:
            details["toolText"] = text
        raise BrowserMeshError(ErrorCode.BROWSER_ERROR, variant="page_tool_error", details=details)
    return bound_tool_result(raw, redact)
