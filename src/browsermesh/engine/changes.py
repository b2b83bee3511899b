"""What an interaction changed (issue 15): the compact ``changes`` object of every result.

A `ChangeWatch` is started before the action and finished after it, inside the same deadline:

- in the page, a MutationObserver counts interactive elements added and removed and remembers
  the alert/status/live/flash-message elements that changed; the popups shown before (dialogs,
  listboxes, menus) are remembered, so that one shown after is named in ``opened`` with its
  role, name and key text (issue 31 item 10); the Navigation API's ``navigate``
  event says whether a cross-document navigation started (a form post, a link);
- on the Playwright side, listeners count main-frame navigations, popups and downloads, and
  (for plain actions) record and dismiss dialogs, which is what Playwright does anyway when
  nobody listens.

After the action the watch lets the page settle: click-like actions wait until the DOM has been
quiet for `QUIET_MS` (at most `SETTLE_MAX_MS`), others only flush pending records. A started
navigation is awaited to ``domcontentloaded`` within the deadline. Nothing here ever fails the
interaction it describes: when the page cannot be read (it navigated, closed or hangs) the
watch reports what it knows.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from browsermesh.engine.actionability import Companion
from browsermesh.engine.bounded import bounded, first_done, quietly
from browsermesh.engine.page_facts import NOTICES_SELECTOR
from browsermesh.engine.page_source import (
    FRAME_PASSWORDS_SCRIPT,
    MAX_SOURCE_CHARS,
    page_secrets,
    with_other_frames,
)
from browsermesh.engine.waits import Listeners
from browsermesh.model.deadline import OperationContext
from browsermesh.model.tasks import TaskOwner
from browsermesh.model.text import well_formed
from browsermesh.redact import SecretValues, cut_chars, sanitize_url

if TYPE_CHECKING:
    from playwright.async_api import Dialog, Request, Response

    from browsermesh.engine.playwright_engine import PwPage

__all__ = ["QUIET_MS", "SETTLE_MAX_MS", "ChangeWatch"]

QUIET_MS = 100
"""Click-like actions: the DOM must have been quiet this long before the result is read."""
SETTLE_MAX_MS = 1_000
"""…but the settle never waits longer than this (a ticking clock is never quiet)."""
NAVIGATION_WAIT_MS = 10_000
"""A started navigation is awaited at most this long (and never past the deadline)."""
INSTALL_MAX_MS = 1_000
"""The in-page observer gets at most this long (and a quarter of the budget) to install."""
MAX_TEXTS = 5
TEXT_CHARS = 200
MAX_OPENED = 3
"""At most this many newly shown popups are named in ``opened``."""
URL_CHARS = 2_000
TITLE_CHARS = 120

_INTERACTIVE = (
    "a[href],button,input:not([type=hidden]),select,textarea,summary,[contenteditable=''],"
    "[contenteditable=true],[role=button],[role=link],[role=checkbox],[role=radio],[role=tab],"
    "[role=menuitem],[role=switch],[role=combobox],[role=textbox],[role=searchbox],"
    "[role=option],[role=slider],[role=spinbutton],[role=treeitem],[role=gridcell]"
)
_POPUPS = "[role=dialog],[role=alertdialog],dialog,[role=listbox],[role=menu]"
_LIVE = "[role=alert],[role=status],[role=log],[aria-live]:not([aria-live=off])," + (
    NOTICES_SELECTOR
)

# Keeps the watch state on the window under a registered symbol (read and dropped once after
# the action): a returned handle would cost a round trip more to release.
_INSTALL = """([interactive, live, popups]) => {
  const count = n => n.nodeType !== 1 ? 0
    : (n.matches(interactive) ? 1 : 0) + n.querySelectorAll(interactive).length;
  const shown = el => el.getClientRects().length > 0 && el.getAttribute('aria-hidden') !== 'true';
  const st = {added: 0, removed: 0, live: new Set(), navigating: false,
              last: performance.now(), title: document.title, url: location.href,
              popups, before: new Set([...document.querySelectorAll(popups)].filter(shown))};
  const note = el => {
    const l = el && el.closest ? el.closest(live) : null;
    if (l) st.live.add(l);
  };
  st.take = records => {
    for (const r of records) {
      st.last = performance.now();
      for (const n of r.addedNodes) {
        st.added += count(n);
        if (n.nodeType === 1) {
          note(n);
          for (const m of n.querySelectorAll(live)) st.live.add(m);
        } else note(n.parentElement);
      }
      for (const n of r.removedNodes) st.removed += count(n);
      note(r.target.nodeType === 1 ? r.target : r.target.parentElement);
    }
  };
  st.observer = new MutationObserver(st.take);
  st.observer.observe(document, {subtree: true, childList: true, characterData: true});
  if (window.navigation) {
    // Read at the end: a handler may still cancel the navigation (preventDefault).
    st.onNavigate = e => { if (!e.destination.sameDocument) st.navEvents.push(e); };
    st.navEvents = [];
    window.navigation.addEventListener('navigate', st.onNavigate);
  }
  window[Symbol.for('browsermesh.changes')] = st;
  return true;
}"""

_READ = """async ([quietMs, maxMs, maxTexts, textChars, maxOpened, maxChars]) => {
  const passwords = (__PASSWORDS__);
  const key = Symbol.for('browsermesh.changes');
  const st = window[key];
  if (!st) return null;
  delete window[key];
  const start = performance.now();
  st.last = Math.max(st.last, start - (quietMs ? 0 : 1));
  const started = () => (st.navEvents || []).some(e => !e.defaultPrevented);
  while (quietMs && !started() && performance.now() - start < maxMs
         && performance.now() - st.last < quietMs) {
    await new Promise(r => setTimeout(r, 20));
    st.take(st.observer.takeRecords());
  }
  st.take(st.observer.takeRecords());
  st.observer.disconnect();
  st.navigating = st.navigating || (st.navEvents || []).some(e => !e.defaultPrevented);
  if (st.onNavigate) window.navigation.removeEventListener('navigate', st.onNavigate);
  const texts = [];
  for (const el of st.live) {
    if (texts.length >= maxTexts) break;
    if (!el.isConnected || !el.getClientRects().length) continue;
    const t = (el.innerText || '').trim().slice(0, textChars);
    if (t && !texts.includes(t)) texts.push(t);
  }
  const opened = [];
  const clean = t => (t || '').split('\\n').map(l => l.replace(/\\s+/g, ' ').trim())
    .filter(Boolean).join(' · ');
  for (const el of document.querySelectorAll(st.popups)) {
    if (opened.length >= maxOpened) break;
    if (st.before.has(el) || !el.getClientRects().length) continue;
    if (el.parentElement && el.parentElement.closest(st.popups)) continue;  // the outer one is
    const tag = el.tagName.toLowerCase();
    const by = el.getAttribute('aria-labelledby');
    const labelled = by ? by.split(/\\s+/).map(id => document.getElementById(id))
      .filter(Boolean).map(n => n.textContent).join(' ') : '';
    const heading = el.querySelector('h1,h2,h3,h4,h5,h6,[role=heading]');
    const name = el.getAttribute('aria-label') || labelled || (heading ? heading.textContent : '');
    opened.push({role: el.getAttribute('role') || (tag === 'dialog' ? 'dialog' : tag),
                 name: clean(name).slice(0, textChars),
                 text: clean(el.innerText).slice(0, textChars)});
  }
  const out = {added: st.added, removed: st.removed, navigating: st.navigating, texts, opened,
               title: document.title, titleBefore: st.title, url: location.href};
  // The main frame's password values ride along when there is page text to redact.
  if (texts.length || opened.length || out.title !== st.title) out.secrets = passwords(maxChars);
  return out;
}"""

_READ = _READ.replace("__PASSWORDS__", FRAME_PASSWORDS_SCRIPT)

# The outcome texts of a freshly loaded document (after a navigation): its live regions and
# flash messages as they stand, its title and its password values (to redact them).
_LOADED_TEXTS = """([live, maxTexts, textChars, maxChars]) => {
  const texts = [];
  for (const el of document.querySelectorAll(live)) {
    if (texts.length >= maxTexts) break;
    if (!el.getClientRects().length) continue;
    const t = (el.innerText || '').trim().slice(0, textChars);
    if (t && !texts.includes(t)) texts.push(t);
  }
  return {texts, title: document.title, secrets: (__PASSWORDS__)(maxChars)};
}""".replace("__PASSWORDS__", FRAME_PASSWORDS_SCRIPT)


@dataclass
class ChangeWatch:
    """Watches one page while one interaction runs; `finish` builds the ``changes`` object.

    ``handle_dialogs``: plain actions record and dismiss dialogs here; action-and-wait handles
    its own and only reports them (``dialog`` events it saw are counted by the caller).
    """

    page: PwPage
    handle_dialogs: bool = True
    _installed: bool = False
    _url_before: str = ""
    _listeners: Listeners | None = None
    _navigated: asyncio.Event = field(default_factory=asyncio.Event)
    # Set when a started navigation ends without a new document: a download, a failed or
    # 204/205 navigation request.
    _no_document: asyncio.Event = field(default_factory=asyncio.Event)
    _dialogs: list[dict[str, str]] = field(default_factory=list)
    # Dialog dismissals started from the dialog listener: owned by the watch, whose `close`
    # (always reached: `finish` ends with it, a failed start or action calls it) awaits them.
    _dismissals: TaskOwner = field(default_factory=TaskOwner)
    _popups: int = 0
    _downloads: int = 0
    _companion: Companion | None = None

    async def start(self, ctx: OperationContext) -> None:
        """Install the listeners and the in-page observer (best effort, within the deadline)."""
        self.listen()
        try:
            self._installed = await self._install(ctx)
        except BaseException:
            # Cancelled while installing: the caller never gets the watch to close, so the
            # listeners (and a dismissal a dialog started meanwhile) are closed here.
            await self.close()
            raise

    def companion(self, ctx: OperationContext) -> Companion:
        """After `listen`: the in-page observer's installation as a companion of the action's
        first element read (one page evaluation for both, issue 33), or on its own."""

        async def alone() -> bool:
            return await self._install(ctx)

        self._companion = Companion(_INSTALL, [_INTERACTIVE, _LIVE, _POPUPS], alone)
        return self._companion

    async def _install(self, ctx: OperationContext) -> bool:
        # A page that does not answer at once (a busy main thread) gets no observer rather
        # than eating the action's budget: the action then reports what the listeners saw.
        budget = min(INSTALL_MAX_MS, max(ctx.deadline.remaining_ms() / 4, 1))
        with contextlib.suppress(Exception):
            return bool(
                await bounded(
                    self.page.page.evaluate(_INSTALL, [_INTERACTIVE, _LIVE, _POPUPS]), budget
                )
            )
        return False

    def listen(self) -> None:
        """Listen to the page's navigations, popups, downloads and dialogs (the URL before
        is taken now)."""
        p = self.page.page
        self._url_before = p.url
        listeners = Listeners(self.page)
        main = p.main_frame
        listeners.on("framenavigated", lambda f: self._navigated.set() if f == main else None)
        listeners.on("popup", self._on_popup)
        listeners.on("download", self._on_download)
        listeners.on("requestfailed", self._on_request_failed)
        listeners.on("response", self._on_response)
        if self.handle_dialogs:
            listeners.on("dialog", self._on_dialog)
        self._listeners = listeners

    def _on_popup(self, _: object) -> None:
        self._popups += 1

    def _on_download(self, _: object) -> None:
        self._downloads += 1
        self._no_document.set()  # a navigation that became a download loads no document

    def _main_navigation(self, request: Request) -> bool:
        try:
            return request.is_navigation_request() and request.frame == self.page.page.main_frame
        except Exception:
            return False  # the frame went away

    def _on_request_failed(self, request: Request) -> None:
        if self._main_navigation(request):
            self._no_document.set()

    def _on_response(self, response: Response) -> None:
        if not self._main_navigation(response.request):
            return
        disposition = response.headers.get("content-disposition", "")
        if response.status in (204, 205) or "attachment" in disposition.lower():
            self._no_document.set()

    def _on_dialog(self, dialog: Dialog) -> None:
        if len(self._dialogs) < MAX_TEXTS:  # a page looping over alert() stays bounded
            message = cut_chars(well_formed(dialog.message), TEXT_CHARS)
            self._dialogs.append({"type": dialog.type, "message": message})
        self._dismissals.spawn(quietly(dialog.dismiss()))

    async def finish(self, ctx: OperationContext, *, settle: bool) -> dict[str, Any]:
        """The ``changes`` object (keys only for what changed); always removes the listeners."""
        try:
            return await self._finish(ctx, settle)
        finally:
            await self.close()

    async def close(self) -> None:
        """Remove the listeners, finish dialog dismissals, release the in-page state (idempotent;
        the action failed or the changes were read)."""
        if self._listeners is not None:
            self._listeners.remove_all()
            self._listeners = None
        try:
            await self._dismissals.drain()  # each is bounded by `quietly`
        finally:
            # Cancelled meanwhile: the dismissals still running are cancelled and awaited, so
            # none outlives the watch.
            await self._dismissals.aclose()
        # An observer left installed (the action failed) disconnects with its document; it
        # holds nothing but counters and the elements it saw change.

    async def _finish(self, ctx: OperationContext, settle: bool) -> dict[str, Any]:
        p = self.page.page
        changes: dict[str, Any] = {}
        read: dict[str, Any] | None = None
        if self._companion is not None:
            self._installed = bool(self._companion.result)
        if self._installed and not p.is_closed():
            quiet = QUIET_MS if settle else 0
            budget = min(SETTLE_MAX_MS + 500, max(ctx.deadline.remaining_ms() - 50, 1))
            limits = [quiet, SETTLE_MAX_MS, MAX_TEXTS, TEXT_CHARS, MAX_OPENED, MAX_SOURCE_CHARS]
            with contextlib.suppress(Exception):  # the document went away: it navigated
                read = await bounded(p.evaluate(_READ, limits), budget)
        # An installed observer that cannot be read any more means its document went away.
        lost = self._installed and read is None
        navigating = lost or (read is not None and bool(read["navigating"]))
        if (
            (navigating or self._navigated.is_set())
            and not p.is_closed()
            and await self._await_navigation(ctx)
        ):
            changes["navigated"] = True
            read = await self._loaded(ctx)
        if p.is_closed():
            return {"pageClosed": True}
        url = p.url
        if url != self._url_before:
            changes["url"] = sanitize_url(url, max_chars=URL_CHARS)
        if read is not None:
            before = read.get("titleBefore")
            if before is None or read["title"] != before:
                changes["title"] = cut_chars(well_formed(str(read["title"])), TITLE_CHARS)
            if not changes.get("navigated"):
                for key in ("added", "removed"):
                    if read.get(key):
                        changes[key] = int(read[key])
            texts = [cut_chars(well_formed(str(t)), TEXT_CHARS) for t in read.get("texts", [])]
            if texts:
                changes["text"] = texts
            opened = [_opened(o) for o in read.get("opened", [])[:MAX_OPENED]]
            if opened:
                changes["opened"] = opened
        if self._dialogs:
            changes["dialogs"] = list(self._dialogs)
        if self._popups:
            changes["popups"] = self._popups
        if self._downloads:
            changes["downloads"] = self._downloads
        return await self._redacted(changes, read, ctx)

    async def _await_navigation(self, ctx: OperationContext) -> bool:
        """Wait for a started main-frame navigation to commit and reach ``domcontentloaded``;
        False when none came (a download, a 204, a cancelled one) within the bound."""
        p = self.page.page
        bound_ms = min(NAVIGATION_WAIT_MS, max(ctx.deadline.remaining_ms() - 100, 1))
        if not self._navigated.is_set():
            waiters = TaskOwner()  # this call's: the one still waiting is cancelled and awaited
            racing = {
                waiters.spawn(self._navigated.wait()),
                waiters.spawn(self._no_document.wait()),
            }
            try:
                await first_done(racing, bound_ms)
            finally:
                await waiters.aclose()
        if not self._navigated.is_set():
            return False
        with contextlib.suppress(Exception):
            await p.wait_for_load_state(
                "domcontentloaded", timeout=max(ctx.deadline.remaining_ms() - 100, 1)
            )
        return True

    async def _loaded(self, ctx: OperationContext) -> dict[str, Any] | None:
        """The new document's outcome texts and title (None when it cannot be read)."""
        with contextlib.suppress(Exception):
            limits = [_LIVE, MAX_TEXTS, TEXT_CHARS, MAX_SOURCE_CHARS]
            loaded: dict[str, Any] = await bounded(
                self.page.page.evaluate(_LOADED_TEXTS, limits),
                max(ctx.deadline.remaining_ms() - 50, 1),
            )
            return {**loaded, "titleBefore": None}
        return None

    async def _secrets(self, read: dict[str, Any] | None, ctx: OperationContext) -> SecretValues:
        """The page's password values: the main frame's as the last read brought them (when it
        did), the other frames' read now."""
        p = self.page.page
        if read is None or "secrets" not in read:
            return await page_secrets(p, ctx.deadline)
        return await with_other_frames(p, ctx.deadline, read["secrets"])

    async def _redacted(
        self, changes: dict[str, Any], read: dict[str, Any] | None, ctx: OperationContext
    ) -> dict[str, Any]:
        """Page text in `changes` (title, texts, dialog messages) passes the page's password
        values, like every other capture."""
        if not any(k in changes for k in ("title", "text", "dialogs", "opened")):
            return changes
        try:
            secrets = await self._secrets(read, ctx)
        except Exception:
            # The values cannot be read: drop the page text rather than risk one.
            for key in ("title", "text", "opened"):
                changes.pop(key, None)
            for dialog in changes.get("dialogs", []):
                dialog["message"] = ""
            return changes
        if "title" in changes:
            changes["title"] = secrets.text(changes["title"])
        if "text" in changes:
            changes["text"] = [secrets.text(t) for t in changes["text"]]
        for dialog in changes.get("dialogs", []):
            dialog["message"] = secrets.text(dialog["message"])
        for popup in changes.get("opened", []):
            for key in ("name", "text"):
                if key in popup:
                    popup[key] = secrets.text(popup[key])
        return changes


def _opened(raw: dict[str, Any]) -> dict[str, str]:
    """``{role, name?, text?}`` of a popup shown by the action (bounded; empty parts left out)."""
    out = {"role": cut_chars(well_formed(str(raw.get("role") or "")), 32)}
    for key in ("name", "text"):
        value = cut_chars(well_formed(str(raw.get(key) or "")), TEXT_CHARS)
        if value:
            out[key] = value
    return out
