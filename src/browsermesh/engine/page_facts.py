"""What a whole page says before it is captured (issue 33): its notices and, in one
evaluation, the facts a whole-page snapshot needs before the ARIA tree.

`NOTICES_SELECTOR` / `NOTICES_SCRIPT` find the outcome messages the ARIA tree does not mark (the
action table's header, a navigation's key lines and `changes` read them). `page_facts` reads,
in one evaluation of the top frame, whether the page is quiet (engine.quiet), the source budget
of its body (engine.page_source), its password values, its title and its notices.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from browsermesh.engine import quiet
from browsermesh.engine.failures import timed
from browsermesh.engine.page_source import (
    FRAME_PASSWORDS_SCRIPT,
    SOURCE_BUDGET_SCRIPT,
    SOURCE_LIMITS,
    with_other_frames,
    within_budget,
)
from browsermesh.errors import BrowserMeshError
from browsermesh.model.deadline import OperationContext
from browsermesh.model.text import well_formed
from browsermesh.redact import SecretValues

if TYPE_CHECKING:
    from playwright.async_api import Page

__all__ = ["NOTICES_SCRIPT", "NOTICES_SELECTOR", "PageFacts", "page_facts"]

# Outcome messages the ARIA tree does not mark: `aria-live` regions without a live role and the
# flash-message markup of common frameworks (Django `messagelist`, Bootstrap `alert`, Rails
# `flash`, `errornote`...). Visible ones only, first few, each bounded.
NOTICES_SELECTOR = (
    '[aria-live]:not([aria-live="off"]):not([role]), .messagelist > li, .messages > li, '
    ".alert:not([role]), .flash, .notice, .notification, .toast, .errornote, .errorlist > li"
)
NOTICES_SCRIPT = """sel => {
  const out = [];
  for (const el of document.querySelectorAll(sel)) {
    if (out.length >= 6) break;
    if (!el.getClientRects().length) continue;
    const text = (el.innerText || '').trim().slice(0, 300);
    if (text && !out.includes(text)) out.push(text);
  }
  return out;
}"""

# What a whole-page capture reads before the ARIA tree, in one evaluation (issue 33): whether
# the page is quiet, the source budget of its body, the top frame's password values, its title
# and its notices (null without a body: the capture then takes the long way).
_FACTS = f"""([sel, limits]) => document.body ? ({{
  quiet: ({quiet.READ_SCRIPT})(),
  budget: ({SOURCE_BUDGET_SCRIPT})(document.body, limits),
  secrets: ({FRAME_PASSWORDS_SCRIPT})(limits.chars),
  title: document.title,
  notices: ({NOTICES_SCRIPT})(sel),
}}) : null"""


@dataclass(frozen=True, slots=True)
class PageFacts:
    """What `_FACTS` read: the page's password values (every frame's), title and notices."""

    secrets: SecretValues
    title: str
    notices: list[str]


async def page_facts(page: Page, ctx: OperationContext) -> PageFacts | None:
    """A whole page's facts once it has settled (engine.quiet; a page read busy is settled
    and read again); None when it has no body or cannot answer (the caller settles and reads
    each on its own). `LIMIT_EXCEEDED` when the body is over the source budget."""
    raw = await quiet.settled_read(page, ctx.deadline, lambda: _read_facts(page, ctx))
    if raw is None:
        return None
    within_budget(raw["budget"])
    secrets = await with_other_frames(page, ctx.deadline, raw["secrets"])
    notices = [well_formed(str(n)) for n in raw.get("notices") or []]
    return PageFacts(secrets, well_formed(str(raw.get("title") or "")), notices)


async def _read_facts(page: Page, ctx: OperationContext) -> dict[str, Any] | None:
    try:
        raw: dict[str, Any] | None = await timed(
            page.evaluate(_FACTS, [NOTICES_SELECTOR, SOURCE_LIMITS]), ctx.deadline
        )
    except BrowserMeshError:
        raise
    except Exception:  # navigating (the context is gone): the long way answers
        return None
    return raw
