"""What a navigation answered (issue 31 item 2): status, title and the header's key text.

After `browser_navigate`, a history step or an action-and-wait that navigated, the result says
whether it worked without a second call: the main document's HTTP status (from the navigation's
own response, so none for about:blank or a same-document step), the title and the key text
lines of the action table's header (`browsermesh.model.action_table.key_lines`, the one
function that computes them).

Cost: one page evaluation reads the title, the notices, the main frame's password values (to
redact) and the node count (the snapshot's source budget); then, only within that budget, one
ARIA read gives the tree the key lines come from. Both share a short slice of the call's
deadline: the navigation itself has succeeded, so a read that fails or runs out leaves the
result at url and status instead of failing the call.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from browsermesh.engine import quiet
from browsermesh.engine.failures import within
from browsermesh.engine.page_facts import NOTICES_SCRIPT, NOTICES_SELECTOR
from browsermesh.engine.page_source import (
    FRAME_PASSWORDS_SCRIPT,
    MAX_SOURCE_CHARS,
    MAX_SOURCE_NODES,
    known_secrets,
)
from browsermesh.model.action_table import key_lines
from browsermesh.model.aria import parse_aria, redact_tree, strip_iframe_children
from browsermesh.model.deadline import Deadline
from browsermesh.model.navigation import Landing
from browsermesh.model.text import well_formed
from browsermesh.redact import SecretValues

if TYPE_CHECKING:
    from playwright.async_api import Page, Response

READ_MS = 3_000
"""At most this long (within the call's deadline) for the landing's page reads."""

_LANDING_SCRIPT = f"""([sel, maxChars]) => ({{
  quiet: ({quiet.READ_SCRIPT})(),
  title: document.title,
  notices: ({NOTICES_SCRIPT})(sel),
  secrets: ({FRAME_PASSWORDS_SCRIPT})(maxChars),
  nodes: document.getElementsByTagName('*').length,
}})"""


async def _facts(page: Page, deadline: Deadline) -> dict[str, Any] | None:
    """One read of the landing script (within `READ_MS` of the deadline); None when the page
    cannot answer."""
    read = Deadline(max(1, int(min(deadline.remaining_ms(), READ_MS))))
    try:
        facts: dict[str, Any] = await within(
            page.evaluate(_LANDING_SCRIPT, [NOTICES_SELECTOR, MAX_SOURCE_CHARS]), read
        )
    except Exception:
        return None
    return facts


def document_status(page: Page, response: Response | None) -> int | None:
    """The HTTP status of `response` when it is the main frame's document, else None."""
    if response is None:
        return None
    try:
        return response.status if response.frame == page.main_frame else None
    except Exception:  # a response whose frame is gone says nothing about this page
        return None


async def landing(
    page: Page, status: int | None, deadline: Deadline, *, settle: bool = True
) -> Landing:
    """The page's `Landing`, with `settle` once it has settled (engine.quiet: a single-page app
    renders after its fetches): `status` as given, title and key lines as read (best effort).
    The read also says whether the page is quiet: an already quiet page costs that one
    evaluation; another is read again once it has settled."""
    facts = await (
        quiet.settled_read(page, deadline, lambda: _facts(page, deadline))
        if settle
        else _facts(page, deadline)
    )
    url = page.url
    if facts is None:  # navigated again, closed, or out of time: the navigation still stands
        return Landing(url, status)
    read = Deadline(max(1, int(min(deadline.remaining_ms(), READ_MS))))
    if facts.get("secrets") is None:  # values beyond the budget: nothing can be redacted
        return Landing(url, status)
    secrets = known_secrets(page)
    secrets.add(well_formed(str(v)) for v in facts["secrets"])
    title = secrets.text(well_formed(str(facts.get("title") or "")))
    keys: list[str] = []
    if int(facts.get("nodes") or 0) <= MAX_SOURCE_NODES:
        keys = await _keys(page, facts, secrets, read)
    return Landing(url, status, title, tuple(keys))


async def _keys(
    page: Page, facts: dict[str, Any], secrets: SecretValues, read: Deadline
) -> list[str]:
    """The header's key lines for the page's tree, redacted like a snapshot's."""
    try:
        raw = await within(
            page.locator("body").aria_snapshot(mode="ai", timeout=max(1.0, read.remaining_ms())),
            read,
        )
    except Exception:
        return []
    nodes = await asyncio.to_thread(parse_aria, well_formed(raw))
    redact_tree(nodes, secrets)
    strip_iframe_children(nodes)
    notices = [secrets.text(well_formed(str(n))) for n in facts.get("notices") or []]
    return [secrets.text(line) for line in key_lines(nodes, notices)]
