"""Text the page shows, for `browser_wait {kind: "text"}` (issue 31 item 11).

A text wait matches what a snapshot shows, whichever way the page wrote it: the rendered text
(`innerText`, CSS `text-transform` applied) and the DOM text (text nodes outside scripts and
styles) are both accepted, whitespace-normalized. `exact: false` (the default) is a
case-insensitive substring of the page's text; `exact: true` is an element's whole text,
case-sensitive, as a text locator with `exact: true` matches (a trailing `:` or `*` decoration
is not part of it). A wait that times out names the nearest text the page shows
(`details.nearest`): bounded, and redacted like snapshot text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from browsermesh.engine.failures import within
from browsermesh.engine.page_source import page_secrets
from browsermesh.errors import MAX_NEAREST_CHARS, BrowserMeshError
from browsermesh.model.deadline import Deadline, OperationContext
from browsermesh.model.matchers import TextCondition
from browsermesh.model.text import well_formed
from browsermesh.redact import cut_chars

if TYPE_CHECKING:
    from playwright.async_api import Page

NEAREST_MS = 500
"""The nearest-text read after a timeout gets this long of its own (the budget is spent)."""
MAX_CHARS = 1_000_000
MAX_ELEMENTS = 20_000

_COMMON = """
  const norm = s => (s || '').replace(/\\s+/g, ' ').trim();
  const plain = s => norm(s).replace(/[\\s:*]+$/, '') || norm(s);
  const skip = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE']);
  const domText = root => {
    // No filter callback: a page that opens windows can make one "no longer runnable".
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    let out = '';
    for (let n = walker.nextNode(); n && out.length < maxChars; n = walker.nextNode())
      if (!(n.parentElement && skip.has(n.parentElement.tagName))) out += n.data;
    return out;
  };
"""

_PRESENT = (
    """([want, exact, maxChars, maxElements]) => {"""
    + _COMMON
    + """
  const body = document.body;
  if (!body) return false;
  const target = plain(want), low = target.toLowerCase();
  const shown = norm(body.innerText.slice(0, maxChars)).toLowerCase();
  const dom = norm(domText(body)).toLowerCase();
  if (!exact) return shown.includes(norm(want).toLowerCase())
    || dom.includes(norm(want).toLowerCase());
  if (!shown.includes(low) && !dom.includes(low)) return false;
  let seen = 0;
  for (const el of [body, ...body.querySelectorAll('*')]) {
    if (++seen > maxElements) break;
    if (skip.has(el.tagName)) continue;
    const text = el.textContent;
    if (text.length < target.length || text.length > target.length * 4 + 200) continue;
    const own = plain(text);
    if (own === target) return true;
    if (own.toLowerCase() === low && plain(el.innerText) === target) return true;
  }
  return false;
}"""
)

# Bigram similarity of the wanted text to windows of each shown line; the best window, with a
# little context, is the answer (null below a floor: nothing like it on the page).
_NEAREST = """([want, maxChars, outChars]) => {
  const norm = s => (s || '').replace(/\\s+/g, ' ').trim();
  const body = document.body;
  if (!body) return null;
  const target = norm(want).toLowerCase();
  const grams = s => {
    const m = new Map();
    for (let i = 0; i < s.length - 1; i++) {
      const g = s.slice(i, i + 2);
      m.set(g, (m.get(g) || 0) + 1);
    }
    return m;
  };
  const wanted = grams(target);
  const size = Math.max(1, target.length - 1);
  const dice = part => {
    const g = grams(part);
    let both = 0, total = 0;
    for (const [k, v] of g) { total += v; both += Math.min(v, wanted.get(k) || 0); }
    return (2 * both) / (size + Math.max(1, total));
  };
  let best = null, score = 0, budget = maxChars;
  const width = Math.max(2, target.length);
  const step = Math.max(1, Math.floor(width / 2));
  for (const raw of body.innerText.slice(0, maxChars).split('\\n')) {
    const line = norm(raw);
    if (!line) continue;
    const low = line.toLowerCase();
    for (let i = 0; ; i += step) {
      const s = dice(low.slice(i, i + width + 1));
      if (s > score) { score = s; best = [line, i]; }
      budget -= width;
      if (i + width >= low.length || budget < 0) break;
    }
    if (budget < 0) break;
  }
  if (!best || score < 0.3) return null;
  const [line, at] = best;
  const start = line.length <= outChars ? 0 : Math.max(0, at - 40);
  return line.slice(start, start + outChars);
}"""


async def present(page: Page, cond: TextCondition, ctx: OperationContext) -> bool:
    """Whether the page shows `cond.text` now (see the module docstring)."""
    found = await within(
        page.evaluate(_PRESENT, [cond.text, cond.exact, MAX_CHARS, MAX_ELEMENTS]), ctx.deadline
    )
    return bool(found)


async def nearest(page: Page, cond: TextCondition) -> str | None:
    """The shown text nearest to `cond.text`, redacted and bounded; None when nothing is near
    or the page cannot answer within `NEAREST_MS`."""
    deadline = Deadline(NEAREST_MS)
    try:
        raw = await within(
            page.evaluate(_NEAREST, [cond.text, 200_000, MAX_NEAREST_CHARS]), deadline
        )
        if not isinstance(raw, str) or not raw:
            return None
        secrets = await page_secrets(page, deadline)
    except (BrowserMeshError, Exception):
        return None  # best effort: the timeout itself is already decided
    return cut_chars(secrets.text(well_formed(raw)), MAX_NEAREST_CHARS)
