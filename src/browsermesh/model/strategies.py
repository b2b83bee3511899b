"""The locator-strategy catalogue (reference §5.1, issue 32): one entry per strategy, read by
every layer.

A leaf module (it imports nothing of BrowserMesh, like `model.limits`): the locator parser
(`model.locators`), the error details allowlist (`errors`), the published schema enum
(`mcp.schemas`), the Playwright builder (`engine.elements.build`), the export builder
(`model.export_python`), the candidates of element errors (`model.candidates`) and the element
describer (`engine.describe`) all read their field here. The builders and the describer dispatch
on `Strategy` with `match` + `typing.assert_never`, so a strategy one of them forgot is a mypy
error, never a silent fall-through to CSS; tests/unit/test_strategies_catalogue.py checks that
every entry carries what each layer needs.

Adding a strategy: a name in `Strategy`, its entry in `CATALOGUE` (the order is the published
enum's), then the `case` mypy asks for in each builder.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, Literal

__all__ = [
    "CATALOGUE",
    "DESCRIBED",
    "STRATEGIES",
    "CandidateForm",
    "Strategy",
    "StrategyEntry",
    "entry",
]

Strategy = Literal["role", "text", "label", "placeholder", "alt", "title", "testId", "css"]

CandidateForm = Literal["role", "form", "text", "name", "words", "none"]
"""How `model.candidates` reads a selector for ELEMENT_NOT_FOUND / LOCATOR_AMBIGUOUS candidates:
`role` (the selector's role and its `name`), `form` (the value names a form control of
`LABELLED_ROLES`), `text` (the value names any named node or a node's text content), `name`
(the value names any named node), `words` (a test id read as words: `save-button` may be the
button "Save"), `none` (the value is no name: no candidate is near)."""


@dataclass(frozen=True, slots=True)
class StrategyEntry:
    """What each layer needs to know about one strategy."""

    strategy: Strategy
    takes_name: bool
    """Whether the selector takes `name` (an accessible name beside the value)."""
    takes_exact: bool
    """Whether `exact` applies (to `name` for role, else to `value`): exact by default, the
    normalized whole name (`model.locators.exact_name_pattern`); `exact: false` is Playwright's
    case-insensitive substring. Elsewhere `exact` is refused with the field named."""
    playwright: str
    """The Playwright locator method the engine calls and the export writes (`get_by_...`)."""
    candidates: CandidateForm
    described: int | None
    """The strategy's place in the element describer's order for a ref (issue 20: 0 is tried
    first); None: the describer never proposes it (css is its fallback, always last)."""


def _entries(*entries: StrategyEntry) -> Mapping[Strategy, StrategyEntry]:
    return MappingProxyType({e.strategy: e for e in entries})


CATALOGUE: Final[Mapping[Strategy, StrategyEntry]] = _entries(
    StrategyEntry("role", True, True, "get_by_role", "role", 0),
    StrategyEntry("text", False, True, "get_by_text", "text", 4),
    StrategyEntry("label", False, True, "get_by_label", "form", 1),
    StrategyEntry("placeholder", False, True, "get_by_placeholder", "form", 2),
    # issue 32: an <img>/<area>/<input> by its alt text, any element by its title attribute;
    # matched like text and label. Not described: a ref's role and name come first and already
    # are the alt text or title where they name the element.
    StrategyEntry("alt", False, True, "get_by_alt_text", "name", None),
    StrategyEntry("title", False, True, "get_by_title", "name", None),
    StrategyEntry("testId", False, False, "get_by_test_id", "words", 3),
    StrategyEntry("css", False, False, "locator", "none", None),
)
"""Every strategy, in the published enum's order."""

STRATEGIES: Final[tuple[Strategy, ...]] = tuple(CATALOGUE)
DESCRIBED: Final[tuple[Strategy, ...]] = tuple(
    e.strategy
    for e in sorted(CATALOGUE.values(), key=lambda e: -1 if e.described is None else e.described)
    if e.described is not None
)
"""The strategies the element describer tries for a ref, in its order (then a CSS path)."""


def entry(strategy: Strategy) -> StrategyEntry:
    """The catalogue entry of `strategy`."""
    return CATALOGUE[strategy]
