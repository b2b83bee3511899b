"""The Playwright builder of every locator strategy (reference §5.1, catalogue
`model.strategies`): a selector becomes the `get_by_...` call of its entry, under a page, a
frame or a container. Exhaustive by `match` + `assert_never`: a strategy without its case is a
mypy error, never a fall-through to CSS."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, assert_never

from browsermesh.model.locators import LABELLED_ROLES, Locator, Selector, exact_name_pattern

if TYPE_CHECKING:
    from playwright.async_api import Locator as PwLocator

__all__ = ["Root", "build", "build_locator"]

Root = Any  # Page or FrameLocator: both offer get_by_role/locator/...


# `label` also finds LABELLED_ROLES controls by accessible name, which is what browser_snapshot
# prints: Playwright's own label match reads the label's whole text, so `<label>Quantity
# <select>…</select></label>` ("Quantity 1 2 3") would never equal "Quantity".


def _matcher(value: str, exact: bool) -> str | re.Pattern[str]:
    """Exact: the normalized, case-sensitive whole name (model.locators.exact_name_pattern);
    otherwise Playwright's case-insensitive substring match of the string itself."""
    return re.compile(exact_name_pattern(value)) if exact else value


def build(root: Root, sel: Selector) -> PwLocator:
    """A Playwright locator for one selector under `root` (page, frame or container): the
    method of the strategy's catalogue entry (`model.strategies`)."""
    loc: PwLocator
    match sel.strategy:
        case "role":
            if sel.name is None:
                loc = root.get_by_role(sel.value)
            else:
                loc = root.get_by_role(sel.value, name=_matcher(sel.name, sel.exact))
        case "text":
            loc = root.get_by_text(_matcher(sel.value, sel.exact))
        case "label":
            name = _matcher(sel.value, sel.exact)
            loc = root.get_by_label(name)
            for role in LABELLED_ROLES:
                loc = loc.or_(root.get_by_role(role, name=name))
        case "placeholder":
            loc = root.get_by_placeholder(_matcher(sel.value, sel.exact))
        case "alt":
            loc = root.get_by_alt_text(_matcher(sel.value, sel.exact))
        case "title":
            loc = root.get_by_title(_matcher(sel.value, sel.exact))
        case "testId":
            loc = root.get_by_test_id(sel.value)
        case "css":
            loc = root.locator(sel.value)
        case _:
            assert_never(sel.strategy)
    return loc


def build_locator(root: Root, locator: Locator) -> PwLocator:
    """The final Playwright locator under a frame root, inside `locator.within` when given
    (the container's strictness is checked by `resolve`)."""
    base = root if locator.within is None else build(root, locator.within)
    return build(base, locator.selector)
