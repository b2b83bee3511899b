"""Popups nobody asked for: reported, and closed at once past the session's page limit (issue 12).

A page calling `window.open` 200 times grew Chromium by ~500 MB and slowed its session: popups
opened outside `browser_action_and_wait` were simply not registered (§13.6), so nothing bounded
them. Each managed page gets a `PopupGuard`:

- the first popup while an action-and-wait runs on the page is the waiter's (it registers the
  popup or closes it, §7);
- any other popup is reported on the page's observation sink (a console-ring ``popup`` event) and
  closed at once when the context then holds more pages than the session's page limit; below
  the limit it stays open, unmanaged as before, and its own popups are guarded the same way.

The limit counts every open page of the context (managed or not), so the context never holds
more than the limit through popups; managed pages stay bounded by the runtime's own check.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from browsermesh.engine.bounded import quietly
from browsermesh.model.observe import PageObservations
from browsermesh.model.tasks import TaskOwner

if TYPE_CHECKING:
    from playwright.async_api import Page


class PopupGuard:
    """Guards the popups of one managed page (and of the unmanaged popups it leaves open)."""

    def __init__(
        self, sink: PageObservations, page_limit: Callable[[], int], closes: TaskOwner
    ) -> None:
        """`closes` owns the popup closes this guard starts (each bounded by `quietly`): the
        engine's, awaited by its `stop` (a popup may outlive the page that opened it)."""
        self._sink = sink
        self._page_limit = page_limit
        self._expecting = False
        self._closes = closes

    def watch(self, page: Page, *, managed: bool) -> None:
        """Guard the popups `page` opens from now on."""
        page.on("popup", lambda popup: self._on_popup(popup, managed))

    @contextlib.contextmanager
    def expecting(self) -> Iterator[None]:
        """While inside, the managed page's next popup belongs to the caller (action-and-wait)."""
        self._expecting = True
        try:
            yield
        finally:
            self._expecting = False

    def _on_popup(self, popup: Page, managed: bool) -> None:
        if managed and self._expecting:
            self._expecting = False  # the waiter's; a second one is guarded as usual
            return
        over = len(popup.context.pages) > self._page_limit()
        if self._sink.admit("console"):
            self._sink.popup(popup.url, closed=over)
        if not over:
            self.watch(popup, managed=False)
            return
        self._closes.spawn(quietly(popup.close()))
