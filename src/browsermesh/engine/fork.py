"""What a fork copies out of a live context, and how the copy's sessionStorage is put back
(issue 19 #4; docs/decisions.md, "Forks").

- **Cookies, localStorage and IndexedDB** come from Playwright's `storage_state(indexed_db=True)`
  and seed the new context's `storage_state`, as a saved state does (without touching disk).
  OPFS and virtual WebAuthn credentials are not copied.
- **sessionStorage** belongs to one tab and one origin, and no storage-state field carries it.
  It is read from the source's open pages (the main frame of each http(s) page, through
  `page.session_storage`); when two pages show the same origin, the first one read wins (the
  runtime passes the default page first). It is written back into the fork's first page only
  (a new tab starts with empty sessionStorage, as a browser's does) by one page init script per
  origin, run in the top frame before the page's own scripts. Each script runs once: it is
  removed when the page's main frame first commits a document of its origin, so a fork that
  clears its sessionStorage (signs out) and navigates again stays signed out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from browsermesh.engine.bounded import quietly
from browsermesh.engine.failures import timed
from browsermesh.model.deadline import OperationContext
from browsermesh.model.network import origin_of
from browsermesh.model.tasks import TaskOwner

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext, Page

SessionStorage = dict[str, dict[str, str]]
"""origin (`http://127.0.0.1:8000`) → that origin's sessionStorage items."""

_SEED_SCRIPT = """(() => {{
  if (window !== window.top || location.origin !== {origin}) return;
  try {{
    for (const [name, value] of {items}) sessionStorage.setItem(name, value);
  }} catch (error) {{}}
}})();"""


async def copy_storage(
    context: BrowserContext, pages: list[Page], ctx: OperationContext
) -> tuple[dict[str, Any], SessionStorage]:
    """The context's storage state (cookies, localStorage, IndexedDB) and the sessionStorage
    of `pages`' origins, within the call's deadline."""
    state: dict[str, Any] = dict(await timed(context.storage_state(indexed_db=True), ctx.deadline))
    session: SessionStorage = {}
    for page in pages:
        origin = origin_of(page.url)
        if origin is None or origin in session or page.is_closed():
            continue
        items = await timed(page.session_storage.items(), ctx.deadline)
        if items:
            session[origin] = {item["name"]: item["value"] for item in items}
    return state, session


class SessionStorageSeed:
    """Puts a fork's sessionStorage into its first page, once per origin (module doc)."""

    def __init__(self, cleanups: TaskOwner) -> None:
        self._scripts: dict[str, Any] = {}  # origin → the Disposable of its init script
        # The removals in flight, each bounded by `quietly`: owned by the engine's cleanups,
        # which its stop awaits (the page may close before a removal ends).
        self._cleanups = cleanups

    async def install(self, page: Page, storage: Mapping[str, Mapping[str, str]]) -> None:
        """Add the init scripts before the page's first navigation (the caller bounds it)."""
        page.on("framenavigated", lambda frame: self._committed(page, frame))
        for origin, items in storage.items():
            script = _SEED_SCRIPT.format(
                origin=json.dumps(origin), items=json.dumps(list(items.items()))
            )
            self._scripts[origin] = await page.add_init_script(script)

    @property
    def pending(self) -> list[str]:
        """Origins whose sessionStorage the page has not received yet (tests)."""
        return list(self._scripts)

    def _committed(self, page: Page, frame: Any) -> None:
        if frame != page.main_frame:
            return
        origin = origin_of(frame.url)
        script = None if origin is None else self._scripts.pop(origin, None)
        if script is None:
            return
        self._cleanups.spawn(quietly(script.close()))
