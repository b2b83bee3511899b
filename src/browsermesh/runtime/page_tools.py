"""Page tools (issue 36 item 1, profile `webmcp`, reference §35): the WebMCP tools a page
registers, listed and called through the page's serial queue like any page call.

Calls are not recorded (like browser_evaluate): what a page tool does is the page's own code,
and an export could not show it (docs/decisions.md, Issue 36).
"""

from __future__ import annotations

from typing import Any

from browsermesh.errors import BrowserMeshError, ErrorCode
from browsermesh.model.deadline import OperationContext
from browsermesh.model.locators import Selector, parse_frames
from browsermesh.model.page_tools import ToolResult, parse_tool_arguments, parse_tool_name
from browsermesh.runtime.calls import PageCall
from browsermesh.runtime.core import RuntimeCore
from browsermesh.runtime.session import PageRecord, SessionRecord

PROFILE = "webmcp"


def counts_page_tools(core: RuntimeCore) -> bool:
    """Whether snapshot and navigation results count the page's tools: the profile is
    published and the browser has WebMCP (otherwise nothing pays the round trips)."""
    return PROFILE in core.config.tools and core.engine.webmcp


async def page_tool_count(core: RuntimeCore, page: PageRecord, ctx: OperationContext) -> int | None:
    """The page's tool count for a snapshot or navigation result (None: not counted)."""
    if not counts_page_tools(core):
        return None
    count: int | None = await core.engine.page_tool_count(page.handle, ctx)
    return count


class PageTools:
    """browser_page_tools and browser_page_tool_call."""

    def __init__(self, core: RuntimeCore) -> None:
        self.core = core

    def _require_webmcp(self) -> None:
        if not self.core.engine.webmcp:
            raise BrowserMeshError(
                ErrorCode.BROWSER_ERROR, variant="webmcp_off", details={"reason": "webmcp_off"}
            )

    async def list_tools(self, call: PageCall, frame: object) -> tuple[str, dict[str, Any]]:
        """The tools of every frame of the page, or of the one `frame` addresses (§5.2)."""
        chain: tuple[Selector, ...] | None = None if frame is None else parse_frames(frame, "frame")
        self._require_webmcp()

        async def job(
            rec: SessionRecord, page: PageRecord, ctx: OperationContext
        ) -> dict[str, Any]:
            return await self.core.engine.page_tools(page.handle, chain, ctx)

        return await self.core.run_page_op(call, "browser_page_tools", job)

    async def call_tool(
        self, call: PageCall, name: object, arguments: object, frame: object
    ) -> tuple[str, ToolResult]:
        """Call one page tool (of the main frame, or of `frame`) within the call's budget."""
        tool = parse_tool_name(name)
        args = parse_tool_arguments(arguments)
        chain = parse_frames(frame, "frame")
        self._require_webmcp()

        async def job(rec: SessionRecord, page: PageRecord, ctx: OperationContext) -> ToolResult:
            return await self.core.engine.page_tool_call(page.handle, chain, tool, args, ctx)

        return await self.core.run_page_op(call, "browser_page_tool_call", job)
