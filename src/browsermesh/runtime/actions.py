"""Page operations that act: navigation and history, element actions, forms, scroll, drag,
visible text, waits, action-and-wait."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from browsermesh.engine.protocol import HistoryStep
from browsermesh.errors import Bound, BrowserMeshError, ErrorCode
from browsermesh.model.arguments import action_argument, named_argument, secret_flag
from browsermesh.model.content_text import tab_rows
from browsermesh.model.deadline import OperationContext
from browsermesh.model.element_ops import ELEMENT_OPERATIONS, ElementOp
from browsermesh.model.forms import FormField as ParsedField
from browsermesh.model.forms import parse_fields
from browsermesh.model.ids import short_id
from browsermesh.model.locators import (
    parse_locator,
    parse_target,
)
from browsermesh.model.matchers import (
    ActionSpec,
    FileChooserWait,
    HandbackCondition,
    WaitSpec,
    parse_action,
    parse_condition,
    parse_wait,
)
from browsermesh.model.mouse import MouseGesture, check_in_viewport, parse_gesture
from browsermesh.model.navigation import Landing
from browsermesh.model.options import parse_option_choice
from browsermesh.model.paging import (
    normalize_snapshot_options,
)
from browsermesh.model.recording import (
    ActAndWait,
    Action,
    Drag,
    FormField,
    FormFill,
    History,
    Mouse,
    Navigate,
    Scroll,
    Wait,
)
from browsermesh.model.snapshot_options import tables_option
from browsermesh.model.table_diff import FollowMode, TableLines, parse_follow, table_diff
from browsermesh.model.text import bound_text
from browsermesh.persistence.states import LOCAL_PRINCIPAL as LOCAL_PRINCIPAL  # mcp imports it
from browsermesh.runtime.calls import PageCall
from browsermesh.runtime.checks import scroll_delta, validate_http_url, validate_timeout
from browsermesh.runtime.core import RuntimeCore, first_page
from browsermesh.runtime.forms import fill_fields
from browsermesh.runtime.handover import Handover
from browsermesh.runtime.page_tools import page_tool_count
from browsermesh.runtime.recording import Recorder, Replay, expectation, step_at
from browsermesh.runtime.secrets import use_secret
from browsermesh.runtime.session import (
    PageRecord,
    SessionRecord,
)

POPUP_CLOSE_GRACE_MS = 1_000
"""How long closing a popup over the page limit may take past the call's deadline."""


class PageActions:
    """What changes a page: navigation, element actions and forms (with `changes` and the
    follow-up snapshot), scrolling, dragging, waits and action-and-wait."""

    def __init__(self, core: RuntimeCore, recorder: Recorder, handover: Handover) -> None:
        self.core = core
        self.recorder = recorder
        self.handover = handover
        # The engine under the name its calls have always had here (call lines unchanged).
        self.engine = core.engine

    async def navigate(self, call: PageCall, url: object) -> tuple[str, Landing]:
        """Load `url`; the operation id and where the page landed (status, title, key text)."""
        target = validate_http_url(url)

        async def job(rec: SessionRecord, page: PageRecord, ctx: OperationContext) -> Landing:
            self.core.clear_snapshots(page)
            landed = await self.engine.navigate(page.handle, target, ctx)
            self.recorder.record(rec, Navigate(**step_at(rec, page, ctx), url=target))
            return await self._with_tool_count(landed, page, ctx)

        return await self.core.run_page_op(call, "browser_navigate", job)

    async def history(
        self,
        call: PageCall,
        step: HistoryStep,
    ) -> tuple[str, Landing]:
        """One history step; the operation id and where the page landed."""

        async def job(rec: SessionRecord, page: PageRecord, ctx: OperationContext) -> Landing:
            self.core.clear_snapshots(page)
            landed = await self.engine.history(page.handle, step, ctx)
            self.recorder.record(rec, History(**step_at(rec, page, ctx), step=step))
            return await self._with_tool_count(landed, page, ctx)

        return await self.core.run_page_op(call, f"browser_{step}", job)

    async def _with_tool_count(
        self, landed: Landing, page: PageRecord, ctx: OperationContext
    ) -> Landing:
        """`landed` with the page's WebMCP tool count while the `webmcp` profile is published."""
        count = await page_tool_count(self.core, page, ctx)
        return landed if count is None else replace(landed, page_tools=count)

    async def get_url(self, call: PageCall) -> tuple[str, str]:
        async def job(rec: SessionRecord, page: PageRecord, ctx: OperationContext) -> str:
            return self.engine.current_url(page.handle)

        return await self.core.run_page_op(call, "browser_get_url", job)

    async def get_title(self, call: PageCall) -> tuple[str, str]:
        async def job(rec: SessionRecord, page: PageRecord, ctx: OperationContext) -> str:
            return await self.engine.title(page.handle, ctx)

        return await self.core.run_page_op(call, "browser_get_title", job)

    async def element_action(
        self,
        call: PageCall,
        op: ElementOp,
        args: dict[str, Any],
        arg: str | None,
    ) -> tuple[str, dict[str, Any]]:
        """One of the 10 element actions on exactly one of `locator` / `ref`; returns the
        operation id and ``{changes, diff|snapshot?}`` (issue 15), select_option's also
        ``selected`` (issue 31). select_option reads its choice from `args` itself."""
        target = parse_target(args)
        choice = parse_option_choice(args) if ELEMENT_OPERATIONS[op].chooses else None
        named = named_argument(op, arg) if choice is None else None
        if named is not None:
            arg = self.core.secrets.value(call.principal, named)
        else:
            arg = action_argument(op, arg) if choice is None else None
        follow = parse_follow(args.get("snapshot"))
        secret = secret_flag(args.get("secret"))

        async def job(
            rec: SessionRecord, page: PageRecord, ctx: OperationContext
        ) -> dict[str, Any]:
            if named is not None and arg is not None:
                use_secret(self.engine, rec, named.name, arg)
            replay = await self.recorder.replayable(rec, page.handle, target, ctx)
            changes, own = await self.engine.act(page.handle, target, op, choice or arg, ctx)
            if replay is not None:
                value = None
                if arg is not None:
                    password = await self.recorder.is_password(page.handle, target, ctx, replay)
                    value = self.recorder.value(
                        rec, replay.locator, arg, secret=(secret or password)
                    )
                where = step_at(rec, page, ctx)
                step = Action(**where, op=op, locator=replay.locator, value=value, option=choice)
                self.recorder.record(rec, step)
            return {**own, "changes": changes, **await self._follow(page, follow, changes, ctx)}

        return await self.core.run_page_op(call, f"browser_{op}", job)

    async def _follow(
        self,
        page: PageRecord,
        mode: FollowMode | None,
        changes: dict[str, Any],
        ctx: OperationContext,
    ) -> dict[str, Any]:
        """The action table after an interaction: whole (``actions``, paged like
        browser_snapshot) or as lines added and removed since the page's last table (``diff``).
        Either way the page's refs become the new table's."""
        if mode is None or changes.get("pageClosed"):
            return {}
        opts = normalize_snapshot_options({"format": "actions"})
        assert not isinstance(opts, str)
        cap = await self.engine.snapshot(page.handle, opts, None, ctx)
        previous, page.last_table = page.last_table, TableLines(tuple(cap.keys), tuple(cap.lines))
        if mode == "diff":
            refs = [r["ref"] for r in cap.refs]
            return {"diff": table_diff(previous, page.last_table, refs)}
        piece, pagination, _ = first_page(page, opts, None, cap)
        out = {"snapshot": piece.text}
        if pagination["nextCursor"] is not None:
            out["nextCursor"] = pagination["nextCursor"]
        return out

    async def fill_form(
        self,
        call: PageCall,
        fields: object,
        follow_snapshot: object = None,
    ) -> tuple[str, dict[str, Any]]:
        """Several fields of one form, in order, in one queue slot under one deadline; stops at
        the first failing field (runtime/forms.py). `{filled, changes, diff|snapshot?}`."""
        parsed = tuple(
            f.with_value(self.core.secrets.value(call.principal, f.named)) if f.named else f
            for f in parse_fields(fields)
        )
        follow = parse_follow(follow_snapshot)

        async def job(
            rec: SessionRecord, page: PageRecord, ctx: OperationContext
        ) -> dict[str, Any]:
            for field in parsed:
                if field.named is not None and isinstance(field.value, str):
                    use_secret(self.engine, rec, field.named.name, field.value)

            async def describe(field: ParsedField) -> Replay | None:
                return await self.recorder.replayable(rec, page.handle, field.target, ctx)

            watch = await self.engine.watch_changes(page.handle, ctx)
            try:
                done = await fill_fields(self.engine, page.handle, parsed, ctx, describe)
            except BaseException:
                await watch.close()
                raise
            self._record_form(rec, page, ctx, parsed, done)
            changes = await watch.finish(ctx, settle=False)
            follow_up = await self._follow(page, follow, changes, ctx)
            return {"filled": len(done), "changes": changes, **follow_up}

        return await self.core.run_page_op(call, "browser_fill_form", job)

    def _record_form(
        self,
        rec: SessionRecord,
        page: PageRecord,
        ctx: OperationContext,
        parsed: tuple[ParsedField, ...],
        done: list[tuple[ElementOp, Replay | None]],
    ) -> None:
        fields: list[FormField] = []
        for field, (op, replay) in zip(parsed, done, strict=True):
            if replay is None:
                return  # not recording
            value = None
            if isinstance(field.value, str):
                secret = field.secret or replay.password
                value = self.recorder.value(rec, replay.locator, field.value, secret=secret)
            fields.append(FormField(locator=replay.locator, op=op, value=value))
        self.recorder.record(rec, FormFill(**step_at(rec, page, ctx), fields=tuple(fields)))

    async def scroll(
        self,
        call: PageCall,
        delta_x: object,
        delta_y: object,
    ) -> str:
        dx, dy = scroll_delta(delta_x, "deltaX"), scroll_delta(delta_y, "deltaY")

        async def job(rec: SessionRecord, page: PageRecord, ctx: OperationContext) -> None:
            await self.engine.scroll(page.handle, dx, dy, ctx)
            self.recorder.record(rec, Scroll(**step_at(rec, page, ctx), dx=dx, dy=dy))

        op_id, _ = await self.core.run_page_op(call, "browser_scroll", job)
        return op_id

    async def drag(
        self,
        call: PageCall,
        source: object,
        target: object,
    ) -> str:
        src, dst = parse_locator(source, "source"), parse_locator(target, "target")

        async def job(rec: SessionRecord, page: PageRecord, ctx: OperationContext) -> None:
            await self.engine.drag(page.handle, src, dst, ctx)
            self.recorder.record(
                rec, Drag(**step_at(rec, page, ctx), source=src.wire(), target=dst.wire())
            )

        op_id, _ = await self.core.run_page_op(call, "browser_drag_and_drop", job)
        return op_id

    async def mouse(self, call: PageCall, args: Mapping[str, Any]) -> tuple[str, MouseGesture]:
        """A mouse gesture at CSS pixels of the viewport (issue 36 item 3, profile `vision`);
        INVALID_ARGUMENT naming the coordinate outside the page's viewport."""
        gesture = parse_gesture(args, lambda value: scroll_delta(value, "deltaY"))

        async def job(rec: SessionRecord, page: PageRecord, ctx: OperationContext) -> None:
            check_in_viewport(gesture, await self.engine.viewport(page.handle, ctx))
            await self.engine.mouse(page.handle, gesture, ctx)
            self.recorder.record(rec, Mouse(**step_at(rec, page, ctx), gesture=gesture))

        op_id, _ = await self.core.run_page_op(call, "browser_mouse", job)
        return op_id, gesture

    async def visible_text(
        self,
        call: PageCall,
        locator: object,
        args: Mapping[str, Any] | None = None,
    ) -> tuple[str, dict[str, Any]]:
        """The element's rendered innerText, cut to the configured chars then bytes; with
        ``tables: "rows"`` a table row's cells are joined with `` | `` (issue 31 item 3)."""
        loc = parse_locator(locator)
        rows = tables_option(args or {}) == "rows"
        max_chars = self.core.config.visible_text_max_chars
        max_bytes = self.core.config.visible_text_max_bytes

        async def job(
            rec: SessionRecord, page: PageRecord, ctx: OperationContext
        ) -> dict[str, Any]:
            text = await self.engine.visible_text(page.handle, loc, ctx)
            cut = bound_text(tab_rows(text) if rows else text, max_chars, max_bytes)
            return {
                "text": cut.text,
                "truncation": {
                    "truncated": cut.truncated,
                    "originalChars": cut.original_chars,
                    "originalBytes": cut.original_bytes,
                    "returnedChars": cut.returned_chars,
                    "returnedBytes": cut.returned_bytes,
                    "maxChars": max_chars,
                    "maxBytes": max_bytes,
                },
            }

        return await self.core.run_page_op(call, "browser_visible_text", job)

    async def wait(
        self,
        call: PageCall,
        condition: object,
    ) -> tuple[str, dict[str, Any]]:
        """One passive condition, holding the session queue until satisfied or timed out; the
        hand-back is waited for off the queue (reads go on meanwhile) and says what the person
        did."""
        cond = parse_condition(condition)
        if isinstance(cond, HandbackCondition):
            budget = validate_timeout(call.timeout_ms, self.core.config.timeout_ms)
            return short_id("o"), await self.handover.wait_handback(call, budget)

        async def job(rec: SessionRecord, page: PageRecord, ctx: OperationContext) -> None:
            await self.engine.wait(page.handle, cond, ctx)
            self.recorder.record(rec, Wait(**step_at(rec, page, ctx), condition=cond))

        op_id, _ = await self.core.run_page_op(call, "browser_wait", job)
        return op_id, {}

    async def action_and_wait(
        self,
        call: PageCall,
        action: object,
        wait: object,
        follow_snapshot: object = None,
    ) -> tuple[str, dict[str, Any]]:
        """Register the waiter, act, await the event; a popup becomes a managed page. The result
        also carries ``changes`` and, with ``follow_snapshot``, the table or its diff."""
        act = parse_action(action)
        spec = parse_wait(wait)
        follow = parse_follow(follow_snapshot)
        if isinstance(spec, FileChooserWait):  # files resolved (and refused) before any work
            owner = self.core.lookup(call.principal, call.session_id)
            files = self.core.files.payloads(owner.session_id, list(spec.files), "wait.files")
            spec = FileChooserWait(tuple(files))

        async def job(
            rec: SessionRecord, page: PageRecord, ctx: OperationContext
        ) -> dict[str, Any]:
            replay = await self.recorder.replayable(rec, page.handle, act.target, ctx)
            try:
                result = await self._act_and_wait(rec, page, act, spec, ctx)
            finally:
                self.core.clear_snapshots(page)
            changes = result.pop("_changes", {})
            if replay is not None:
                step = ActAndWait(
                    **step_at(rec, page, ctx),
                    op=act.kind,
                    locator=replay.locator,
                    key=act.key,
                    expect=expectation(spec, result),
                )
                self.recorder.record(rec, step)
            follow_up = await self._follow(page, follow, changes, ctx)
            return {"event": result, "changes": changes, **follow_up}

        return await self.core.run_page_op(call, "browser_action_and_wait", job)

    async def _act_and_wait(
        self,
        rec: SessionRecord,
        page: PageRecord,
        act: ActionSpec,
        spec: WaitSpec,
        ctx: OperationContext,
    ) -> dict[str, Any]:
        """The engine's action-and-wait; a download becomes its artifact, a popup a page."""
        event, popup = await self.engine.action_and_wait(page.handle, act, spec, ctx)
        raw_download = event.pop("_download", None)
        if raw_download is not None:
            try:
                artifact = await self.core.files.finished(
                    raw_download, ctx.deadline.remaining_ms() / 1000
                )
            except TimeoutError:
                raise ctx.deadline.timeout_error() from None
            return {
                "kind": "download",
                "artifact": artifact.view(),
                "_changes": event.get("_changes", {}),
            }
        if popup is None:
            return event
        if len(rec.pages) >= self.core.config.max_pages:
            # Cleanup of a page nobody may keep: a short grace past the deadline.
            await self.engine.close_page(popup, ctx.at_least(POPUP_CLOSE_GRACE_MS))
            raise BrowserMeshError(
                ErrorCode.LIMIT_EXCEEDED,
                bound=Bound("pages", "<=", self.core.config.max_pages, "BROWSERMESH_MAX_PAGES"),
            )
        new_page = self.core.register_page(rec, popup)
        return {
            "kind": "popup",
            "page": rec.page_view(new_page, self.engine.current_url(popup)),
            "_changes": event.get("_changes", {}),
        }
