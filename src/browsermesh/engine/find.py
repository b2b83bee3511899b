"""browser_find's page side (issue 31 item 1): one evaluation reads what a person sees as lines,
`model.find` matches them, and the matches' elements become refs of the page's registry.

The evaluation walks the scope (the main document's `body`, or a container / frame resolved as
every locator is) and answers lines of segments `[shown, dom|null, anchor]` plus the anchors
(the nearest element a match may name: a control an element tool acts on, or a row, cell,
heading or list item) as `{role, up}`; the anchors' elements stay in the page behind one
handle until the refs of the chosen matches are taken from it. Hidden elements are skipped;
CSS `text-transform` is applied to the shown text; accessible names (aria-label, alt, a
control's title) and form values (never a password field's) are read as text; a table row is
one line, its cells joined with " | ". Every line passes the page's password values
(`page_secrets`, as the snapshot's) before it is matched.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

from browsermesh.engine import elements
from browsermesh.engine.bounded import bounded, quietly
from browsermesh.engine.failures import timed
from browsermesh.engine.page_source import MAX_SOURCE_CHARS, MAX_SOURCE_NODES, page_secrets
from browsermesh.model.deadline import OperationContext
from browsermesh.model.find import (
    MATCH_BUDGET_S,
    MAX_LINES,
    Anchor,
    FindQuery,
    Line,
    build_line,
    result,
    search,
    slow_pattern,
)
from browsermesh.model.tasks import all_of
from browsermesh.model.text import well_formed
from browsermesh.redact import SecretValues

if TYPE_CHECKING:
    from playwright.async_api import JSHandle

    from browsermesh.engine.playwright_engine import PwPage

__all__ = ["find"]

# Roles a match may name: what an element tool acts on, and the rows, cells, headings and list
# items a client addresses. Implicit roles follow HTML-AAM for the elements that carry text.
READ_SCRIPT = """(root, lim) => {
  const NAMED = new Set(['link','button','checkbox','radio','switch','textbox','searchbox',
    'combobox','listbox','option','menuitem','menuitemcheckbox','menuitemradio','tab',
    'slider','spinbutton','treeitem','row','cell','gridcell','columnheader','rowheader',
    'heading','listitem']);
  const CELLS = new Set(['cell','gridcell','columnheader','rowheader']);
  const SKIP = new Set(['SCRIPT','STYLE','NOSCRIPT','TEMPLATE','HEAD','IFRAME','FRAME',
    'OBJECT','EMBED']);
  const NO_VALUE = new Set(['hidden','password','checkbox','radio','file','image','range',
    'color']);
  const BUTTONS = new Set(['button','submit','reset']);
  const lines = [], anchors = [], els = [], memo = new Map(), styles = new Map();
  let segs = [], nodes = 0, chars = 0, over = false;
  const style = e => {
    let s = styles.get(e);
    if (!s) { s = getComputedStyle(e); styles.set(e, s); }
    return s;
  };
  const inputRole = e => {
    const t = (e.getAttribute('type') || 'text').toLowerCase();
    if (t === 'checkbox' || t === 'radio') return t;
    if (BUTTONS.has(t) || t === 'image') return 'button';
    if (t === 'range') return 'slider';
    if (t === 'number') return 'spinbutton';
    if (t === 'search') return e.hasAttribute('list') ? 'combobox' : 'searchbox';
    if (t === 'hidden' || t === 'file' || t === 'color') return '';
    return e.hasAttribute('list') ? 'combobox' : 'textbox';
  };
  const roleOf = e => {
    const explicit = (e.getAttribute('role') || '').trim().split(/\\s+/)[0].toLowerCase();
    if (explicit) return explicit;
    const tag = e.tagName;
    if (tag === 'A' || tag === 'AREA') return e.hasAttribute('href') ? 'link' : '';
    if (tag === 'BUTTON' || tag === 'SUMMARY') return 'button';
    if (tag === 'INPUT') return inputRole(e);
    if (tag === 'TEXTAREA') return 'textbox';
    if (tag === 'SELECT') return (e.multiple || e.size > 1) ? 'listbox' : 'combobox';
    if (tag === 'OPTION') return 'option';
    if (/^H[1-6]$/.test(tag)) return 'heading';
    if (tag === 'TR') return 'row';
    if (tag === 'TD') return 'cell';
    if (tag === 'TH') return e.closest('thead') || e.getAttribute('scope') === 'col' ||
      !e.parentElement || e.parentElement.firstElementChild !== e ? 'columnheader' : 'rowheader';
    if (tag === 'LI') return 'listitem';
    if (e.isContentEditable && (!e.parentElement || !e.parentElement.isContentEditable))
      return 'textbox';
    return '';
  };
  const anchorOf = e => {
    if (!e || e.nodeType !== 1) return -1;
    if (memo.has(e)) return memo.get(e);
    let index;
    if (e.tagName === 'LABEL' && e.control) index = anchorOf(e.control);
    else {
      const role = roleOf(e);
      if (NAMED.has(role)) {
        index = anchors.length;
        anchors.push(null); els.push(e);
        memo.set(e, index);
        anchors[index] = {role, up: anchorOf(e.parentElement || e.getRootNode().host)};
        return index;
      }
      index = anchorOf(e.parentElement || e.getRootNode().host);
    }
    memo.set(e, index);
    return index;
  };
  const transform = (text, e) => {
    const t = style(e).textTransform;
    if (t === 'uppercase') return text.toUpperCase();
    if (t === 'lowercase') return text.toLowerCase();
    if (t === 'capitalize') return text.replace(/(^|\\s)(\\S)/g, (m, a, b) => a + b.toUpperCase());
    return text;
  };
  const push = (text, dom, anchor) => {
    if (over || !text) return;
    chars += text.length;
    if (chars > lim.chars) { over = true; return; }
    if (dom === null) dom = text;
    const last = segs[segs.length - 1];
    if (last && last[2] === anchor) {  // one segment per run of one anchor: less to carry
      const joined = (last[1] === null ? last[0] : last[1]) + dom;
      last[0] += text;
      last[1] = joined === last[0] ? null : joined;
    } else segs.push([text, dom === text ? null : dom, anchor]);
  };
  const flush = () => {
    if (segs.some(s => /\\S/.test(s[0]))) {
      if (lines.length >= lim.lines) over = true; else lines.push(segs);
    }
    segs = [];
  };
  const norm = s => (s || '').replace(/\\s+/g, ' ').trim().toLowerCase();
  const controlText = (e, anchor) => {
    const tag = e.tagName;
    if (tag === 'SELECT') {
      for (const o of e.selectedOptions) push(' ' + (o.label || o.text) + ' ', null, anchor);
      return;
    }
    const type = (e.getAttribute('type') || 'text').toLowerCase();
    if (tag === 'INPUT' && NO_VALUE.has(type)) {
      if (type === 'image' && e.alt) push(' ' + e.alt + ' ', null, anchor);
      return;
    }
    const value = e.value || '';
    if (value) push(' ' + value + ' ', null, anchor);
    else if (e.placeholder) push(' ' + e.placeholder + ' ', null, anchor);
  };
  const visit = (node, row) => {
    if (over) return;
    if (++nodes > lim.nodes) { over = true; return; }
    if (node.nodeType === 3) {
      const parent = node.parentElement;
      if (!parent || style(parent).visibility !== 'visible') return;
      const dom = node.data;
      push(transform(dom, parent), dom, row >= 0 ? row : anchorOf(parent));
      return;
    }
    if (node.nodeType !== 1 || SKIP.has(node.tagName)) return;
    const e = node, s = style(e);
    // checkVisibility: no box in the flat tree (a closed <details>, content-visibility).
    if (s.display === 'none' || (s.display !== 'contents' && !e.checkVisibility())) return;
    const shown = s.visibility === 'visible';
    const role = roleOf(e);
    const anchor = row >= 0 ? row : anchorOf(e);
    if (role === 'row' && row < 0 && shown) {
      flush();
      const here = anchorOf(e);
      for (const child of e.childNodes) visit(child, here);
      flush();
      return;
    }
    const block = !s.display.startsWith('inline') && s.display !== 'contents';
    if (row >= 0 && CELLS.has(role) && segs.some(x => /\\S/.test(x[0])))
      push(' | ', null, row);
    else if (e.tagName === 'BR' || block) { if (row >= 0) push(' ', null, row); else flush(); }
    if (shown) {
      // In a row only what its cells show: a row checkbox's "Select this object" is noise.
      const alt = e.tagName === 'IMG' ? e.alt : '';
      const label = row >= 0 ? alt : e.getAttribute('aria-label') || alt ||
        (NAMED.has(role) && !norm(e.textContent) ? e.title : '');
      if (label && !norm(e.textContent).includes(norm(label)))
        push(' ' + label + ' ', null, anchor);
      if (['INPUT', 'TEXTAREA', 'SELECT'].includes(e.tagName)) {
        controlText(e, anchor);
        return;
      }
    } else if (['INPUT', 'TEXTAREA', 'SELECT'].includes(e.tagName)) return;
    const slotted = e.tagName === 'SLOT' ? e.assignedNodes() : [];
    const kids = slotted.length ? slotted : (e.shadowRoot || e).childNodes;
    for (const child of kids) visit(child, row);
    if (block && row < 0) flush();
  };
  visit(root, -1);
  flush();
  return {data: JSON.stringify({lines, anchors, over}), els};
}"""

_PICK = "(r, idx) => idx.map(i => r.els[i])"
_DOCUMENT = "document.body || document.documentElement"


async def _read(page: PwPage, query: FindQuery, ctx: OperationContext) -> JSHandle:
    """The evaluation's handle, over the main document's body or the resolved scope."""
    limits = {"nodes": MAX_SOURCE_NODES * 5, "chars": MAX_SOURCE_CHARS, "lines": MAX_LINES}
    if query.scope is None:
        return await timed(
            page.page.evaluate_handle(f"lim => ({READ_SCRIPT})({_DOCUMENT}, lim)", limits),
            ctx.deadline,
        )

    async def call(el: Any, timeout_ms: float) -> Any:
        return await el.evaluate_handle(READ_SCRIPT, limits, timeout=timeout_ms)

    return await elements.on_locator(  # type: ignore[no-any-return]
        page.page, query.scope, ctx, "find", call, page.refs
    )


def _segment(raw: list[Any], secrets: SecretValues) -> tuple[str, str | None, int]:
    """One segment, redacted; a transformed copy of a password value (`text-transform`
    changed its case, so the value itself no longer occurs) shows as the redacted DOM text."""
    shown = secrets.text(well_formed(str(raw[0])))
    if raw[1] is None:
        return shown, None, int(raw[2])
    dom = well_formed(str(raw[1]))
    clean = secrets.text(dom)
    return (clean if clean != dom else shown), clean, int(raw[2])


def _lines(raw: list[Any], secrets: SecretValues) -> list[Line]:
    """The page's lines, each segment and the whole line redacted; a line whose redaction
    crosses segments keeps its text redacted but loses its segment anchors."""
    out = []
    for raw_line in raw:
        segments = [_segment(s, secrets) for s in raw_line]
        line = build_line(segments)
        if line is None:
            continue
        if secrets and len(segments) > 1:
            joined = build_line([(str(s[0]), s[1], int(s[2])) for s in raw_line])
            whole = secrets.text(joined.text) if joined is not None else line.text
            if whole != line.text:  # a value split over elements
                line = Line(whole, (0,), (-1,))
        out.append(line)
    return out


async def _refs(
    page: PwPage, handle: JSHandle, anchors: list[Anchor], wanted: list[int], ctx: OperationContext
) -> tuple[list[str | None], list[str | None]]:
    """One ref per distinct anchor of the chosen matches (registry `add`: the refs a snapshot
    handed out stay valid), and its role."""
    await all_of(*(quietly(e.handle.dispose()) for e in page.refs.drop_expired()))
    distinct = [i for i in dict.fromkeys(wanted) if 0 <= i < len(anchors)]
    tokens: dict[int, str] = {}
    if distinct:
        picked = await timed(handle.evaluate_handle(_PICK, distinct), ctx.deadline)
        try:
            props = await timed(picked.get_properties(), ctx.deadline)
            for position, index in enumerate(distinct):
                prop = props.get(str(position))
                element = None if prop is None else prop.as_element()
                if element is None:
                    continue
                token = page.refs.add(element, anchors[index].role, None)
                if token is not None:
                    tokens[index] = token
        finally:
            await quietly(picked.dispose())
    refs = [tokens.get(i) for i in wanted]
    roles = [anchors[i].role if i in tokens else None for i in wanted]
    return refs, roles


async def find(page: PwPage, query: FindQuery, ctx: OperationContext) -> dict[str, Any]:
    """Search the page (or the query's scope) and answer browser_find's lean result."""
    secrets = await page_secrets(page.page, ctx.deadline)
    handle = await _read(page, query, ctx)
    try:
        # One string: Playwright's own serialization of a large object takes seconds.
        data = json.loads(await timed(handle.evaluate("r => r.data"), ctx.deadline))
        # Values typed meanwhile are redacted too (as a capture does).
        await page_secrets(page.page, ctx.deadline, secrets)
        anchors = [
            Anchor(str(a.get("role", ""))[:32], int(a.get("up", -1)))
            for a in data.get("anchors", [])
        ]
        budget_s = max(0.1, min(MATCH_BUDGET_S, ctx.deadline.remaining_ms() / 1000 - 0.5))

        # Worker threads: a large page's lines take a while, and a pattern's search is
        # bounded by the wall clock here (an answer at the budget; the thread stops at its
        # next line or at `regex`'s own timeout, never holding the event loop).
        lines = await asyncio.to_thread(_lines, list(data.get("lines", [])), secrets)
        searching = asyncio.to_thread(search, lines, anchors, query, budget_s)
        try:
            hits = await (bounded(searching, budget_s * 1000) if query.regex else searching)
        except TimeoutError:
            raise slow_pattern(budget_s) from None
        refs, roles = await _refs(page, handle, anchors, [h.anchor for h in hits.page], ctx)
    finally:
        await quietly(handle.dispose())
    return result(hits, refs, roles, query, truncated=bool(data.get("over")))
