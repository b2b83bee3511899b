"""What a capture may read from a page (reference §6.4, issue 12): the source budget and the
page's password values.

Before a snapshot is taken, `source_budget` refuses a scope of more than `MAX_SOURCE_NODES`
nodes or `MAX_SOURCE_CHARS` characters (`LIMIT_EXCEEDED`). `page_secrets` reads every password
value of every frame (bounded by the same character budget): every capture is redacted with
them, and so are the page texts other calls return (titles, visible text, dialog messages,
change notices, candidates' and covering elements' names).

A session's named secrets (issue 36, §36) join them: once the runtime filled a secret by name
(`remember_secrets`), every set of page secrets of that context starts with its values, so a
page that echoes one (a text field holding it, a welcome line) reads ``[REDACTED]`` too.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Final

from browsermesh.engine.failures import timed, within
from browsermesh.errors import Bound, BrowserMeshError, ErrorCode
from browsermesh.model.deadline import Deadline, OperationContext
from browsermesh.model.tasks import all_of
from browsermesh.model.text import well_formed
from browsermesh.redact import SecretValues

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext, Frame, Page
    from playwright.async_api import Locator as PwLocator

__all__ = [
    "MAX_SOURCE_CHARS",
    "MAX_SOURCE_NODES",
    "SOURCE_BUDGET_SCRIPT",
    "SOURCE_LIMITS",
    "frame_values",
    "known_secrets",
    "page_secrets",
    "remember_secrets",
    "source_budget",
    "with_other_frames",
    "within_budget",
]

MAX_SOURCE_NODES = 20_000
MAX_SOURCE_CHARS = 2_000_000

# Counts nodes and characters under the scope, stopping as soon as a budget is exceeded.
SOURCE_BUDGET_SCRIPT = """(root, limits) => {
  let nodes = 0, chars = 0;
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT);
  for (let n = root; n; n = walker.nextNode()) {
    nodes++;
    if (n.nodeType === 3) { chars += n.data.length; }
    else {
      for (const a of n.attributes) chars += a.name.length + a.value.length;
      if (n.tagName === 'INPUT' && n.value) chars += n.value.length;
    }
    if (nodes > limits.nodes || chars > limits.chars) return {over: true, nodes, chars};
  }
  return {over: false, nodes, chars};
}"""
# Every non-empty password value of one frame's document, open shadow roots included: the
# whole page's values are redacted from any capture of it, whatever its scope (a "show
# password" label elsewhere may copy one). Over `maxChars` in all, the answer is `null`.
FRAME_PASSWORDS_SCRIPT = """maxChars => {
  const out = new Set();
  let chars = 0;
  const visit = root => {
    for (const el of root.querySelectorAll('*')) {
      if (el.tagName === 'INPUT' && (el.type || '').toLowerCase() === 'password' && el.value
          && !out.has(el.value)) { out.add(el.value); chars += el.value.length; }
      if (el.shadowRoot) visit(el.shadowRoot);
    }
  };
  visit(document);
  return chars > maxChars ? null : [...out];
}"""


SOURCE_LIMITS = {"nodes": MAX_SOURCE_NODES, "chars": MAX_SOURCE_CHARS}
"""The argument of `SOURCE_BUDGET_SCRIPT`."""


async def source_budget(scope: PwLocator, ctx: OperationContext) -> None:
    """Refuse a scope over the source budget (`LIMIT_EXCEEDED`, bound ``sourceNodes`` or
    ``sourceChars``): counting stops in the page as soon as one is exceeded."""
    result = await timed(
        scope.evaluate(SOURCE_BUDGET_SCRIPT, SOURCE_LIMITS, timeout=ctx.deadline.budget_ms()),
        ctx.deadline,
    )
    within_budget(result)


def within_budget(result: dict[str, Any]) -> None:
    """`LIMIT_EXCEEDED` when `SOURCE_BUDGET_SCRIPT` (perhaps riding along with another read)
    found its scope over the budget."""
    if result.get("over"):
        over_nodes = result.get("nodes", 0) > MAX_SOURCE_NODES
        bound = (
            Bound("sourceNodes", "<=", MAX_SOURCE_NODES)
            if over_nodes
            else Bound("sourceChars", "<=", MAX_SOURCE_CHARS)
        )
        raise BrowserMeshError(
            ErrorCode.LIMIT_EXCEEDED,
            bound=bound,
            internal={"maxSourceNodes": MAX_SOURCE_NODES, "maxSourceChars": MAX_SOURCE_CHARS},
        )


# By Playwright context, because every page read below is handed the Playwright page alone;
# weak, so a closed context takes its values with it.
_NAMED: Final[weakref.WeakKeyDictionary[BrowserContext, SecretValues]] = weakref.WeakKeyDictionary()


def remember_secrets(context: BrowserContext, values: Iterable[str]) -> None:
    """Make `values` secrets of every page of `context` from now on (§36)."""
    _NAMED.setdefault(context, SecretValues()).add(values)


def known_secrets(page: Page) -> SecretValues:
    """A new set of secrets for a read of `page`: its context's named secrets, if any."""
    named = _NAMED.get(page.context) if _NAMED else None
    return SecretValues(named.values()) if named else SecretValues()


def frame_values(values: list[Any] | None, into: SecretValues) -> SecretValues:
    """One frame's password values as `FRAME_PASSWORDS_SCRIPT` answered them (it may ride along
    with another read), added to `into` (which starts with the context's named secrets,
    `known_secrets`); `LIMIT_EXCEEDED` (bound ``sourceChars``)
    when they were over the source budget (the answer ``null``)."""
    if values is None:
        raise BrowserMeshError(
            ErrorCode.LIMIT_EXCEEDED, bound=Bound("sourceChars", "<=", MAX_SOURCE_CHARS)
        )
    into.add(well_formed(str(v)) for v in values)
    return into


async def with_other_frames(
    page: Page, deadline: Deadline, top_values: list[Any] | None
) -> SecretValues:
    """The page's password values when a read of the top frame brought its own
    (`FRAME_PASSWORDS_SCRIPT`'s answer, `frame_values`): the other frames' are read now, one
    evaluation each, and only when there are other frames."""
    secrets = frame_values(top_values, known_secrets(page))
    return await page_secrets(page, deadline, secrets, frames=page.frames[1:])


async def page_secrets(
    page: Page,
    deadline: Deadline,
    into: SecretValues | None = None,
    *,
    frames: Sequence[Frame] | None = None,
) -> SecretValues:
    """The password values of every frame of `page` (or of `frames` only: a read that brought
    the main frame's passes the others), added to `into` when given (within the deadline).

    A frame that detaches or navigates meanwhile is skipped (its document, and its values,
    are gone); a page whose values exceed the source budget cannot be captured at all.
    """

    async def one(frame: Frame) -> list[Any] | None:
        try:
            values: list[Any] | None = await within(
                frame.evaluate(FRAME_PASSWORDS_SCRIPT, MAX_SOURCE_CHARS), deadline
            )
        except BrowserMeshError:
            raise
        except Exception:
            return []  # the frame detached or navigated: its document, and its values, are gone
        return values

    secrets = into if into is not None else known_secrets(page)
    for values in await all_of(*(one(f) for f in (page.frames if frames is None else frames))):
        frame_values(values, secrets)
    return secrets
