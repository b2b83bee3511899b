"""Candidates and renewed refs for element errors (issue 13): the next call can succeed
without a snapshot.

Best effort within a small budget: a page that cannot answer in time gets an error without
candidates, never a later or different error. Names pass the page's password values (issue 12)
like every capture.

For LOCATOR_AMBIGUOUS the candidates are the locator's own matches in document order (issue 31
item 5): the visible ones as the ARIA tree names them, the hidden ones (not in the tree) read
from the DOM and marked ``hidden: true``; each carries where it is, a link's path, and ``nth``
(its position among the matches) where nothing else tells two apart.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from browsermesh.engine.bounded import bounded
from browsermesh.engine.page_source import page_secrets
from browsermesh.errors import BrowserMeshError
from browsermesh.model.aria import parse_aria, redact_tree, strip_iframe_children
from browsermesh.model.candidates import distinguish, link_path, rank
from browsermesh.model.deadline import Deadline
from browsermesh.model.limits import MAX_CANDIDATES
from browsermesh.model.locators import Selector, exact_name_pattern
from browsermesh.model.text import well_formed
from browsermesh.redact import SecretValues

if TYPE_CHECKING:
    from playwright.async_api import ElementHandle, Page
    from playwright.async_api import Locator as PwLocator

    from browsermesh.engine.refs import RefEntry, RefRegistry

CANDIDATES_MS = 1_000
"""At most this long (and never past the call's deadline) to find candidates."""


# Per match (the first 20): hidden or not, which of the tree's picks it is, and for a match the
# tree does not show, its role, name, href and where it is, read from the DOM.
_MATCHES = """(els, picks) => els.slice(0, 20).map(e => {
  const clean = t => (t || '').replace(/\\s+/g, ' ').trim().slice(0, 200);
  const hidden = !e.getClientRects().length || getComputedStyle(e).visibility === 'hidden';
  const pick = picks.indexOf(e);
  if (pick >= 0 && !hidden) return {hidden, pick};
  const tag = e.tagName.toLowerCase();
  const implicit = {a: e.hasAttribute('href') ? 'link' : 'generic', button: 'button',
    select: 'combobox', textarea: 'textbox', img: 'img', li: 'listitem', tr: 'row'};
  const type = (e.getAttribute('type') || 'text').toLowerCase();
  const input = {checkbox: 'checkbox', radio: 'radio', button: 'button', submit: 'button',
    reset: 'button', search: 'searchbox', range: 'slider', number: 'spinbutton'};
  const role = e.getAttribute('role') || (tag === 'input' ? (input[type] || 'textbox')
    : (/^h[1-6]$/.test(tag) ? 'heading' : (implicit[tag] || tag)));
  const name = clean(e.getAttribute('aria-label') || e.textContent || e.getAttribute('title')
    || e.getAttribute('placeholder') || e.getAttribute('alt'));
  const landmarks = 'main,nav,aside,header,footer,form[aria-label],section[aria-label],dialog,'
    + '[role=main],[role=navigation],[role=region],[role=dialog],[role=search],[role=form],'
    + '[role=complementary],[role=banner],[role=contentinfo],[role=menu],[role=toolbar]';
  const landRoles = {main: 'main', nav: 'navigation', aside: 'complementary', header: 'banner',
    footer: 'contentinfo', form: 'form', section: 'region', dialog: 'dialog'};
  let place = null;
  const row = e.closest('tr,[role=row]');
  const land = (e.parentElement && e.parentElement.closest(landmarks)) || null;
  if (row && row !== e) place = {role: 'row', name: clean(row.getAttribute('aria-label')
    || row.textContent).slice(0, 120)};
  if (!place) {
    let heading = null;
    for (const h of (land || document).querySelectorAll('h1,h2,h3,h4,h5,h6,[role=heading]')) {
      if (!(h.compareDocumentPosition(e) & Node.DOCUMENT_POSITION_FOLLOWING)) break;
      if (h.closest(landmarks) === land) heading = h;  // not one of another landmark
    }
    if (heading) place = {role: 'heading', name: clean(heading.textContent).slice(0, 120)};
  }
  if (!place && land) place = {role: land.getAttribute('role')
    || landRoles[land.tagName.toLowerCase()] || 'region',
    name: clean(land.getAttribute('aria-label'))};
  return {hidden, pick, role, name, place, href: tag === 'a' ? e.getAttribute('href') : null};
})"""


async def near(
    page: Page,
    root: Any,
    selector: Selector,
    registry: RefRegistry | None,
    budget_ms: float,
    *,
    matches_only: bool = False,
    matches: PwLocator | None = None,
) -> list[dict[str, Any]]:
    """Up to five `details.candidates` entries for `selector` under `root` (page or frame);
    with `matches` (LOCATOR_AMBIGUOUS: the locator's Playwright locator), its matches."""
    budget_ms = min(budget_ms, CANDIDATES_MS)
    if budget_ms < 20:
        return []
    try:
        return await bounded(
            _near(page, root, selector, registry, budget_ms, matches_only, matches), budget_ms
        )
    except (Exception, TimeoutError):  # best effort: the error itself is already decided
        return []


async def _near(
    page: Page,
    root: Any,
    selector: Selector,
    registry: RefRegistry | None,
    budget_ms: float,
    matches_only: bool,
    matches: PwLocator | None,
) -> list[dict[str, Any]]:
    raw = await root.locator("body").aria_snapshot(mode="ai", timeout=budget_ms)
    nodes = await asyncio.to_thread(parse_aria, well_formed(raw))
    secrets = await page_secrets(page, Deadline(int(budget_ms)))
    redact_tree(nodes, secrets)
    strip_iframe_children(nodes)
    picks = rank(nodes, selector, matches_only=matches_only)
    handles: list[ElementHandle | None] = []
    for pick in picks:
        handle = None
        if pick.node.pw_ref:
            handle = await root.locator(f"aria-ref={pick.node.pw_ref}").element_handle(
                timeout=budget_ms
            )
        handles.append(handle)

    def ref_of(handle: ElementHandle | None, role: str | None, name: str | None) -> str | None:
        return registry.add(handle, role, name) if registry and handle else None

    if matches is None:
        live_picks = zip(picks, handles, strict=True)
        return [p.detail(ref_of(h, p.node.role, p.node.name)) for p, h in live_picks]
    found = await matches.evaluate_all(_MATCHES, [h for h in handles if h is not None])
    live = [(p, h) for p, h in zip(picks, handles, strict=True) if h is not None]
    out: list[dict[str, Any]] = []
    positions: list[int | None] = []
    for position, seen in enumerate(found):
        if len(out) >= MAX_CANDIDATES:
            break
        if not seen["hidden"] and 0 <= seen["pick"] < len(live):
            pick, handle = live[seen["pick"]]
            out.append(pick.detail(ref_of(handle, pick.node.role, pick.node.name)))
        else:
            out.append(await _from_dom(seen, matches.nth(position), secrets, ref_of, budget_ms))
        positions.append(position)
    distinguish(out, positions)
    return out


async def _from_dom(
    seen: dict[str, Any],
    match: PwLocator,
    secrets: SecretValues,
    ref_of: Callable[[ElementHandle | None, str | None, str | None], str | None],
    budget_ms: float,
) -> dict[str, Any]:
    """The candidate entry of a match the ARIA tree does not show (hidden, or not named)."""
    name = secrets.text(well_formed(str(seen.get("name") or "")))
    detail: dict[str, Any] = {"role": str(seen.get("role") or ""), "name": name}
    if seen["hidden"]:
        detail["hidden"] = True
    handle = await match.element_handle(timeout=budget_ms)
    ref = ref_of(handle, detail["role"], name or None)
    if ref:
        detail["ref"] = ref
    place = seen.get("place")
    if isinstance(place, dict):
        detail["container"] = {
            "role": str(place.get("role") or ""),
            "name": secrets.text(well_formed(str(place.get("name") or ""))),
        }
    path = link_path(seen.get("href")) if isinstance(seen.get("href"), str) else None
    if path:
        detail["path"] = path
    return detail


async def renew(registry: RefRegistry, entry: RefEntry, budget_ms: float) -> str | None:
    """A fresh ref for an expired `entry` whose element is still in its document, when the same
    role and name still resolve to exactly one element in its frame; None otherwise (or when
    the page cannot answer in time)."""
    if entry.role is None or not entry.name:
        return None
    budget_ms = min(budget_ms, CANDIDATES_MS)
    try:
        return await bounded(_renew(registry, entry, budget_ms), budget_ms)
    except (Exception, TimeoutError):
        return None


async def _renew(registry: RefRegistry, entry: RefEntry, budget_ms: float) -> str | None:
    if not await entry.handle.evaluate("e => e.isConnected"):
        return None  # replaced or removed: stale for that reason, not only expired
    frame = await entry.handle.owner_frame()
    if frame is None or entry.role is None or entry.name is None:
        return None
    loc = frame.get_by_role(entry.role, name=re.compile(exact_name_pattern(entry.name)))  # type: ignore[arg-type]
    if await loc.count() != 1:
        return None
    handle = await loc.element_handle(timeout=budget_ms)
    if handle is None:
        return None
    return registry.add(handle, entry.role, entry.name)


def with_details(error: BrowserMeshError, **details: Any) -> BrowserMeshError:
    """`error` with more details (only the non-empty ones)."""
    error.details.update({k: v for k, v in details.items() if v})
    return error
