"""Page operations that read: observe, evaluate, snapshot, find, screenshot (files in and out
are runtime/transfers.py)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from browsermesh.engine.capture import Screenshot
from browsermesh.errors import Bound, BrowserMeshError, ErrorCode, invalid_argument
from browsermesh.model.arguments import bounded_string
from browsermesh.model.deadline import OperationContext
from browsermesh.model.find import parse_find
from browsermesh.model.jsonvalue import MAX_JSON_BYTES
from browsermesh.model.jsonvalue import compact as compact_json
from browsermesh.model.locators import (
    Locator,
    RefTarget,
    Target,
    parse_element_target,
    parse_locator,
    parse_ref,
)
from browsermesh.model.observe_query import parse_query
from browsermesh.model.paging import (
    SNAPSHOT_OPTION_KEYS,
    normalize_snapshot_options,
    snapshot_result,
)
from browsermesh.model.png import ScreenshotLimits
from browsermesh.model.table_diff import TableLines
from browsermesh.persistence.states import LOCAL_PRINCIPAL as LOCAL_PRINCIPAL  # mcp imports it
from browsermesh.runtime.calls import PageCall
from browsermesh.runtime.checks import MAX_EXPRESSION_CHARS, parse_capture
from browsermesh.runtime.core import RuntimeCore, first_page
from browsermesh.runtime.page_tools import page_tool_count
from browsermesh.runtime.session import (
    PageRecord,
    SessionRecord,
)


class PageReads:
    """What reads a page: observations, evaluate, snapshots, find and screenshots."""

    def __init__(self, core: RuntimeCore) -> None:
        self.core = core
        # The engine under the name its calls have always had here (call lines unchanged).
        self.engine = core.engine

    async def observe(self, call: PageCall, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """Read one source's captured events (non-destructive, cursor-paged, optionally
        filtered or newest first), or one request's detail (`requestId`)."""

        async def job(
            rec: SessionRecord, page: PageRecord, ctx: OperationContext
        ) -> dict[str, Any]:
            assert page.observations is not None
            return page.observations.query(parse_query(args))

        return await self.core.run_page_op(call, "browser_observe", job)

    async def evaluate(
        self,
        call: PageCall,
        expression: object,
        arg: object,
    ) -> tuple[str, tuple[Any, bool]]:
        """Run caller JavaScript (eval profile); the result is JSON-bounded."""
        source = bounded_string(expression, "expression", MAX_EXPRESSION_CHARS, min_chars=1)
        try:
            arg_bytes = len(compact_json(arg).encode("utf-8"))
        except (TypeError, ValueError):
            raise invalid_argument("arg", "a JSON value (finite numbers, no cycles)") from None
        if arg_bytes > MAX_JSON_BYTES:
            raise BrowserMeshError(
                ErrorCode.LIMIT_EXCEEDED, bound=Bound("argBytes", "<=", MAX_JSON_BYTES)
            )

        async def job(
            rec: SessionRecord, page: PageRecord, ctx: OperationContext
        ) -> tuple[Any, bool]:
            return await self.engine.evaluate(page.handle, source, arg, ctx)

        return await self.core.run_page_op(call, "browser_evaluate", job)

    async def snapshot(self, call: PageCall, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """A bounded ARIA snapshot or action table; continuations read retained text only."""
        parsed = normalize_snapshot_options(args)
        scope_wire: dict[str, Any] | None = None
        scope: Locator | RefTarget | None = None
        if not isinstance(parsed, str) and parsed.scope is not None:
            scope = parse_element_target(parsed.scope, "scope")
            scope_wire = {"ref": scope.token} if isinstance(scope, RefTarget) else scope.wire()

        async def job(
            rec: SessionRecord, page: PageRecord, ctx: OperationContext
        ) -> dict[str, Any]:
            if isinstance(parsed, str):
                entry, piece, pagination = page.snapshots.read(parsed)
                return snapshot_result(
                    piece,
                    pagination,
                    entry.format,
                    entry.bounds,
                    None,
                    given=False,
                    stops=entry.stops,
                )
            cap = await self.engine.snapshot(page.handle, parsed, scope, ctx)
            piece, pagination, bounds = first_page(page, parsed, scope_wire, cap)
            # A whole-page capture of either format is what a later diff compares against; a
            # rows view (tables: "rows") is a reading aid, so the diff keeps the default table.
            default = parsed.format == "actions" and parsed.tables == "summary"
            if (default and scope is None) or cap.by_name:
                page.last_table = TableLines(tuple(cap.keys), tuple(cap.lines), cap.by_name)
            given = any(key in args for key in SNAPSHOT_OPTION_KEYS if key != "format")
            out = snapshot_result(
                piece, pagination, parsed.format, bounds, cap.refs, given=given, stops=cap.stops
            )
            count = await page_tool_count(self.core, page, ctx)
            if count:  # issue 36 item 1: only while the webmcp profile is published
                out["pageTools"] = count
            return out

        return await self.core.run_page_op(call, "browser_snapshot", job)

    async def find(self, call: PageCall, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """browser_find: the page's lines matching a text or a pattern (model.find), with refs;
        the arguments are checked (and a pattern compiled) before the call is queued."""
        query = parse_find(args)

        async def job(
            rec: SessionRecord, page: PageRecord, ctx: OperationContext
        ) -> dict[str, Any]:
            return await self.engine.find(page.handle, query, ctx)

        return await self.core.run_page_op(call, "browser_find", job)

    async def screenshot(
        self,
        call: PageCall,
        capture: object,
        highlight: object = None,
    ) -> tuple[str, Screenshot]:
        """A PNG of the viewport, the full page or one element, within the configured limits;
        with `highlight`, one element boxed in it (reference §9)."""
        kind, locator = parse_capture(capture)
        mark = parse_highlight(highlight)
        cfg = self.core.config
        limits = ScreenshotLimits(
            cfg.screenshot_max_dimension, cfg.screenshot_max_pixels, cfg.screenshot_max_bytes
        )

        # With `vision` published, the viewport and its scale factor too: a vision model maps
        # the picture (CSS pixels) to browser_mouse coordinates (issue 36 item 3).
        vision = "vision" in cfg.tools

        async def job(rec: SessionRecord, page: PageRecord, ctx: OperationContext) -> Screenshot:
            shot = await self.engine.screenshot(page.handle, kind, locator, limits, ctx, mark)
            if not vision:
                return shot
            return replace(shot, viewport=await self.engine.viewport(page.handle, ctx))

        return await self.core.run_page_op(call, "browser_screenshot", job)


def parse_highlight(raw: object) -> Target | None:
    """`highlight` of browser_screenshot: `{ref}` or `{locator}`, exactly one."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise invalid_argument("highlight", "object")
    if len(raw) != 1 or not set(raw) <= {"locator", "ref"}:
        raise invalid_argument("highlight", "exactly one of locator or ref")
    if "ref" in raw:
        return parse_ref(raw["ref"], "highlight.ref")
    return parse_locator(raw["locator"], "highlight.locator")
