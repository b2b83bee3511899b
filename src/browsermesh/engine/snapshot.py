"""Snapshot capture (reference §6.4): scope, source budget, ARIA serialization, refs, table.

The serialized content goes back to the runtime, which pages and retains it. Refs are registered
in the page's registry only once the whole capture succeeded (a failed or cancelled capture
leaves the previous refs and generation unchanged). The source budget and the page's password
values come from `engine.page_source` (`page_secrets` is importable from here too).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from browsermesh.engine import elements
from browsermesh.engine.bounded import quietly
from browsermesh.engine.failures import timed
from browsermesh.engine.page_facts import NOTICES_SCRIPT, NOTICES_SELECTOR, PageFacts
from browsermesh.engine.page_source import (
    FRAME_PASSWORDS_SCRIPT,
    MAX_SOURCE_CHARS,
    source_budget,
    with_other_frames,
)
from browsermesh.engine.page_source import page_secrets as page_secrets
from browsermesh.engine.refs import RefEntry, release_retired
from browsermesh.errors import BrowserMeshError, ErrorCode
from browsermesh.model.action_table import ElementInfo, build_action_table, table_candidates
from browsermesh.model.aria import (
    AriaNode,
    cap_children,
    filter_interactive,
    parse_aria,
    redact_tree,
    render_aria,
    strip_iframe_children,
)
from browsermesh.model.deadline import OperationContext
from browsermesh.model.ids import base36
from browsermesh.model.locators import Locator, RefTarget
from browsermesh.model.paging import SnapshotOptions, clip_retained
from browsermesh.model.table_diff import TableLines, shown_lines
from browsermesh.model.tasks import all_of
from browsermesh.model.text import well_formed
from browsermesh.redact import SecretValues

if TYPE_CHECKING:
    from playwright.async_api import ElementHandle
    from playwright.async_api import Locator as PwLocator

    from browsermesh.engine.playwright_engine import PwPage

_ELEMENT_INFO = """els => els.map(e => {
  if (!e) return null;
  const tag = e.tagName.toLowerCase();
  const role = (e.getAttribute('role') || '').toLowerCase();
  const type = (e.getAttribute('type') || '').toLowerCase();
  const isSelect = tag === 'select';
  const editableCombo = role === 'combobox' && (tag === 'input' || e.isContentEditable);
  const textual = tag === 'textarea' || (tag === 'input' &&
    !['checkbox','radio','button','submit','reset','image','file','range','color','hidden']
      .includes(type));
  let checked = null;
  if (tag === 'input' && (type === 'checkbox' || type === 'radio'))
    checked = e.indeterminate ? 'mixed' : (e.checked ? 'checked' : 'unchecked');
  else if (e.hasAttribute('aria-checked')) {
    const v = e.getAttribute('aria-checked');
    checked = v === 'mixed' ? 'mixed' : (v === 'true' ? 'checked' : 'unchecked');
  }
  const exp = e.getAttribute('aria-expanded');
  const options = isSelect ? [...e.options].map(o => [o.label || o.text, o.selected, o.disabled])
    : [];
  const sel = isSelect && e.selectedIndex >= 0 ? e.options[e.selectedIndex] : null;
  return {
    tag, native_select: isSelect, editable_combobox: editableCombo,
    value: textual ? e.value : (editableCombo ? (e.value ?? e.textContent) : null),
    password: tag === 'input' && type === 'password',
    selected_label: sel ? (sel.label || sel.text) : null,
    options, checked,
    expanded: exp === null ? null : exp === 'true',
    pressed: e.getAttribute('aria-pressed') === 'true',
    disabled: !!e.disabled || e.getAttribute('aria-disabled') === 'true',
    readonly: !!e.readOnly || e.getAttribute('aria-readonly') === 'true',
  };
})"""


# The table's element facts, and the frame's password values when it is the top one.
_INFO_AND_SECRETS = f"""(_, [els, maxChars]) => {{
  const out = {{infos: ({_ELEMENT_INFO})(els)}};
  if (window === window.top) out.secrets = ({FRAME_PASSWORDS_SCRIPT})(maxChars);
  return out;
}}"""

_CSS_PATH = """e => {
  const parts = [];
  for (let n = e; n && n.nodeType === 1 && n !== document.documentElement; n = n.parentElement) {
    let i = 1;
    for (let s = n.previousElementSibling; s; s = s.previousElementSibling) i++;
    parts.unshift(`${n.tagName.toLowerCase()}:nth-child(${i})`);
  }
  return parts.length ? 'html > ' + parts.join(' > ') : 'html';
}"""


@dataclass
class Capture:
    """One capture's serialization and metadata (before paging).

    ``stops`` are the offsets where the 2nd, 3rd... page of an action table starts and
    ``page_refs`` the element lines per page; ``lines`` the table's element lines without
    refs (for diffs).
    """

    content: str
    refs: list[dict[str, str]] = field(default_factory=list)
    omissions: dict[str, Any] = field(default_factory=dict)
    clipped: bool = False
    stops: list[int] = field(default_factory=list)
    page_refs: list[int] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)
    # The lines are an ARIA snapshot's `role "name"` lines (model.table_diff.shown_lines).
    by_name: bool = False


async def _scope(
    page: PwPage, scope: Locator | RefTarget | None, ctx: OperationContext
) -> tuple[PwLocator, Any, bool]:
    """(scope locator, root for aria-ref lookups, scope lies in a collapsed region)."""
    p = page.page
    if scope is None:
        return p.locator("body"), p, False
    if isinstance(scope, RefTarget):
        entry = page.refs.lookup(scope.token, region=True)
        try:
            path = await timed(entry.handle.evaluate(_CSS_PATH), ctx.deadline)
            frame = await timed(entry.handle.owner_frame(), ctx.deadline)
        except BrowserMeshError:
            raise BrowserMeshError(ErrorCode.STALE_ELEMENT_REFERENCE) from None
        if frame is None:
            raise BrowserMeshError(ErrorCode.STALE_ELEMENT_REFERENCE)
        loc = frame.locator(path)
        same = await timed(
            loc.evaluate("(e, h) => e === h", entry.handle, timeout=ctx.deadline.budget_ms()),
            ctx.deadline,
        )
        if not same:
            raise BrowserMeshError(ErrorCode.STALE_ELEMENT_REFERENCE)
        return loc, frame, True
    root = await elements.resolve_root(p, scope, ctx, "snapshot")
    loc = elements.build_locator(root, scope)

    async def probe(el: Any, timeout_ms: float) -> None:
        await el.wait_for(state="attached", timeout=timeout_ms)

    await elements.on_locator(p, scope, ctx, "snapshot", probe)
    return loc, root, False


def redact_capture(cap: Capture, secrets: SecretValues) -> Capture:
    """The one exit of a capture: its text and every string of every ref pass `secrets`."""
    cap.content = secrets.text(cap.content)
    cap.refs = [{k: secrets.text(v) for k, v in ref.items()} for ref in cap.refs]
    return cap


async def _handles(
    root: Any, nodes: list[AriaNode], ctx: OperationContext, fetched: list[ElementHandle | None]
) -> list[ElementHandle | None]:
    async def one(node: AriaNode) -> ElementHandle | None:
        try:
            return await root.locator(f"aria-ref={node.pw_ref}").element_handle(  # type: ignore[no-any-return]
                timeout=max(ctx.deadline.remaining_ms(), 1)
            )
        except Exception:
            return None  # gone meanwhile, or out of budget: this node simply gets no ref

    handles = await all_of(*(one(n) for n in nodes))
    fetched.extend(handles)
    return handles


def _info(raw: dict[str, Any] | None, secrets: SecretValues) -> ElementInfo | None:
    if not raw:
        return None

    def clean(value: Any) -> str:
        return secrets.text(well_formed(str(value)))

    return ElementInfo(
        tag=str(raw["tag"])[:32],
        native_select=bool(raw["native_select"]),
        editable_combobox=bool(raw["editable_combobox"]),
        value=clean(raw["value"]) if isinstance(raw["value"], str) else None,
        password=bool(raw["password"]),
        selected_label=clean(raw["selected_label"]) if raw["selected_label"] is not None else None,
        options=tuple((clean(o[0]), bool(o[1]), bool(o[2])) for o in raw["options"]),
        checked=raw["checked"],
        expanded=raw["expanded"],
        pressed=bool(raw["pressed"]),
        disabled=bool(raw["disabled"]),
        readonly=bool(raw["readonly"]),
    )


async def capture(
    page: PwPage,
    opts: SnapshotOptions,
    scope: Locator | RefTarget | None,
    generation: int,
    now: float,
    ctx: OperationContext,
    facts: PageFacts | None = None,
) -> Capture:
    """Capture the scope in `opts.format`; registers new refs when refs were requested. A
    whole-page capture is given the page's `facts` (read before, `page_facts`) when it could
    read them; without, each is read on its own."""
    scope_loc, root, in_region = await _scope(page, scope, ctx)
    if facts is None:
        await source_budget(scope_loc, ctx)
        secrets = await page_secrets(page.page, ctx.deadline)
    else:
        secrets = SecretValues(facts.secrets.values())
    with_refs = opts.format == "actions" or opts.include_refs
    raw = await timed(
        scope_loc.aria_snapshot(
            mode="ai" if with_refs else "default",
            depth=None if opts.format == "actions" else opts.max_depth,
            boxes=opts.format == "aria" and opts.include_bounding_boxes,
            timeout=ctx.deadline.budget_ms(),
        ),
        ctx.deadline,
    )
    raw = well_formed(raw)
    omissions: dict[str, Any] = {
        "nonInteractiveNodes": 0,
        "maxChildrenNodes": 0,
        "maxRefsNodes": 0,
        "collapsedNodes": 0,
        "sourceLimitReached": False,
    }
    refs: list[dict[str, str]] = []
    table = _Table()
    tag = f"s{base36(generation)}"
    entries: dict[str, RefEntry] = {}
    fetched: list[ElementHandle | None] = []
    # With secrets on the page the tree is always parsed, so that they are replaced in names
    # and values before anything is built from them (YAML quoting could hide them from a
    # replacement in the raw text).
    needs_tree = (
        with_refs or opts.interactive_only or opts.max_children is not None or bool(secrets)
    )
    shown: TableLines | None = None
    # A whole-page capture is what a later diff compares against, whatever its format.
    whole = scope is None and opts.format == "aria" and opts.max_depth is None
    if not needs_tree:
        text = raw
        if whole:
            shown = await _shown(page, await asyncio.to_thread(parse_aria, raw), ctx, facts)
    else:
        nodes = await asyncio.to_thread(parse_aria, raw)
        redact_tree(nodes, secrets)
        strip_iframe_children(nodes)
        if whole:  # before any filter: the diff compares whole pages
            shown = await _shown(page, nodes, ctx, facts)
        if opts.format == "actions":
            text = await _action_table(
                page,
                nodes,
                opts,
                root,
                tag,
                (in_region, scope is not None),
                ctx,
                entries,
                refs,
                omissions,
                fetched,
                secrets,
                table,
                facts,
            )
        else:
            if opts.interactive_only:
                nodes, dropped = filter_interactive(nodes)
                omissions["nonInteractiveNodes"] = dropped
            if opts.max_children is not None:
                nodes, capped = cap_children(nodes, opts.max_children)
                omissions["maxChildrenNodes"] = capped
            tokens: dict[int, str] = {}
            if with_refs:
                await _aria_refs(
                    nodes, opts, root, tag, ctx, entries, refs, omissions, tokens, fetched
                )
            text = await asyncio.to_thread(render_aria, nodes, lambda n: tokens.get(id(n)))
    # Values are read before and after capture: a value typed meanwhile is redacted too (the
    # top frame's came with the table's element read when there was one).
    if table.secrets_read:
        secrets.add(
            (await with_other_frames(page.page, ctx.deadline, table.secrets_after)).values()
        )
    else:
        await page_secrets(page.page, ctx.deadline, secrets)
    redacted = redact_capture(Capture(text, refs), secrets)
    content, clipped = clip_retained(redacted.content)
    refs = redacted.refs
    omissions["sourceLimitReached"] = clipped
    if with_refs:
        page.refs.advance(generation)
        for token, entry in entries.items():
            entry.expires_at = now + page.refs.ttl_s
            page.refs.entries[token] = entry
        kept = {id(e.handle) for e in entries.values()}
        await release_retired(page.refs)
        await _dispose_unused(fetched, kept)
    if shown is not None:
        table.lines, table.keys = list(shown.lines), list(shown.keys)
    lines = [secrets.text(line) for line in table.lines]
    keys = [secrets.text(line) for line in table.keys]
    return Capture(
        content,
        refs,
        omissions,
        clipped,
        table.stops,
        table.page_refs,
        lines,
        keys,
        by_name=shown is not None,
    )


async def _shown(
    page: PwPage, nodes: list[AriaNode], ctx: OperationContext, facts: PageFacts | None
) -> TableLines:
    """An unscoped ARIA capture's key and element lines for a later diff: the notices are read
    as an action table reads them (the tree's names are already redacted, or had no secrets)."""
    notices = facts.notices if facts is not None else await _notices(page, ctx)
    return await asyncio.to_thread(shown_lines, nodes, notices)


async def _notices(page: PwPage, ctx: OperationContext) -> list[str]:
    raw = await timed(page.page.evaluate(NOTICES_SCRIPT, NOTICES_SELECTOR), ctx.deadline)
    return [well_formed(str(n)) for n in raw]


@dataclass
class _Table:
    """What an action-table capture adds to `Capture`: page stops, refs per page, lines."""

    stops: list[int] = field(default_factory=list)
    page_refs: list[int] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)
    # The top frame's password values as the element read brought them (after the tree).
    secrets_read: bool = False
    secrets_after: list[Any] | None = None


async def _dispose_unused(fetched: list[ElementHandle | None], kept: set[int]) -> None:
    """Handles read for the capture but not registered as refs are released at once."""
    unused = [h for h in fetched if h is not None and id(h) not in kept]
    await all_of(*(quietly(h.dispose()) for h in unused))


async def _aria_refs(
    nodes: list[AriaNode],
    opts: SnapshotOptions,
    root: Any,
    tag: str,
    ctx: OperationContext,
    entries: dict[str, RefEntry],
    refs: list[dict[str, str]],
    omissions: dict[str, Any],
    tokens: dict[int, str],
    fetched: list[ElementHandle | None],
) -> None:
    from browsermesh.model.action_table import qualifying_nodes

    qualifying = qualifying_nodes(nodes)
    chosen = qualifying[: opts.max_refs]
    omissions["maxRefsNodes"] = len(qualifying) - len(chosen)
    handles = await _handles(root, chosen, ctx, fetched)
    tags = await _tags(handles, ctx)
    index = 0
    for node, handle, tag_name in zip(chosen, handles, tags, strict=True):
        if handle is None or tag_name is None:
            continue
        index += 1
        token = f"{tag}e{index}"
        tokens[id(node)] = token
        entries[token] = RefEntry(handle, 0.0, role=node.role, name=node.name)
        item = {"ref": token, "role": node.role[:64], "tag": tag_name}
        if node.name:
            item["name"] = node.name if len(node.name) <= 120 else node.name[:119] + "…"
        refs.append(item)


async def _tags(handles: list[ElementHandle | None], ctx: OperationContext) -> list[str | None]:
    live = [h for h in handles if h is not None]
    if not live:
        return [None] * len(handles)
    names = await timed(
        live[0].evaluate("(_, els) => els.map(e => e.tagName.toLowerCase())", live),
        ctx.deadline,
    )
    it = iter(names)
    return [str(next(it))[:32] if h is not None else None for h in handles]


async def _action_table(
    page: PwPage,
    nodes: list[AriaNode],
    opts: SnapshotOptions,
    root: Any,
    tag: str,
    scoping: tuple[bool, bool],
    ctx: OperationContext,
    entries: dict[str, RefEntry],
    refs: list[dict[str, str]],
    omissions: dict[str, Any],
    fetched: list[ElementHandle | None],
    secrets: SecretValues,
    out: _Table,
    facts: PageFacts | None,
) -> str:
    in_region, scoped = scoping
    rows = opts.tables == "rows"
    candidates = table_candidates(
        nodes, scope_in_region=in_region, keep_roots=scoped, table_rows=rows
    )
    handles = await _handles(root, candidates, ctx, fetched)
    live = [h for h in handles if h is not None]
    infos: dict[str, ElementInfo] = {}
    if live:
        read = await timed(
            live[0].evaluate(_INFO_AND_SECRETS, [live, MAX_SOURCE_CHARS]), ctx.deadline
        )
        if "secrets" in read:  # read in the top frame, after the tree: the values after capture
            out.secrets_after = read["secrets"]
            out.secrets_read = True
        it = iter(read["infos"])
        for node, handle in zip(candidates, handles, strict=True):
            if handle is None:
                continue
            info = _info(next(it), secrets)
            if info is not None and node.pw_ref:
                infos[node.pw_ref] = info
    by_ref = {n.pw_ref: h for n, h in zip(candidates, handles, strict=True) if h is not None}
    title = facts.title if facts is not None else await timed(page.page.title(), ctx.deadline)
    title = secrets.text(well_formed(title))
    notices: list[str] = []
    if not scoped:
        found = facts.notices if facts is not None else await _notices(page, ctx)
        notices = [secrets.text(n) for n in found]
    table = build_action_table(
        nodes,
        title=title,
        url=secrets.text(page.page.url),
        info=infos,
        element_token=lambda i: f"{tag}e{i}",
        region_token=lambda i: f"{tag}r{i}",
        max_refs=opts.max_refs,
        scope_in_region=in_region,
        keep_roots=scoped,
        notices=notices,
        table_rows=rows,
    )
    out.stops, out.page_refs, out.lines = table.stops, table.page_refs, table.lines
    out.keys = table.keys
    for token, node in table.element_nodes:
        handle = by_ref.get(node.pw_ref)
        if handle is not None:
            # A row has no name in the AI tree: its ref is not renewed by role and name.
            entries[token] = RefEntry(handle, 0.0, role=node.role, name=node.name)
    for token, node in table.region_nodes:
        region_handle = await _handles(root, [node], ctx, fetched)
        if region_handle[0] is not None:
            entries[token] = RefEntry(region_handle[0], 0.0, region=True)
    refs.extend(table.refs)
    omissions["maxRefsNodes"] = table.max_refs_nodes
    omissions["collapsedNodes"] = table.collapsed_nodes
    return table.text
