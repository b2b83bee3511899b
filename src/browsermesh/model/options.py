"""What `browser_select_option` picks (issue 31 items 6 and 14): by value, by label or by index.

A call names exactly one of `value`, `label` or `index`, each one item or an array of items
(a multi-select). `value` keeps the meaning it always had (an option's value, or else its
label: Playwright's plain string), so older calls keep working; `label` matches the visible
label only; `index` is the option's 0-based position. The exported Playwright call uses the
same mode (`select_option("v")`, `select_option(label=...)`, `select_option(index=...)`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from browsermesh.errors import Bound, invalid_argument
from browsermesh.model.arguments import MAX_OPTION_CHARS, bounded_int, bounded_string

SelectMode = Literal["value", "label", "index"]
SELECT_MODES: Final[tuple[SelectMode, ...]] = ("value", "label", "index")
MAX_OPTION_ITEMS: Final = 100
"""Items one call may select (a multi-select's array)."""
MAX_OPTION_INDEX: Final = 100_000
MAX_SELECTED_REPORTED: Final = 100
"""Selected options a result lists (`selected`); `selectedCount` says how many there were."""
MAX_SELECTED_CHARS: Final = 200
"""Characters of one reported value or label (page text, cut like other page text)."""
_EXACTLY_ONE: Final = "exactly one of value, label, index"


@dataclass(frozen=True, slots=True)
class OptionChoice:
    """The options to select: `mode` and its `items`; `many` when they came as an array."""

    mode: SelectMode
    items: tuple[str | int, ...]
    many: bool = False

    def playwright_args(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The positional and keyword arguments of Playwright's `select_option` for this
        choice (`value` as Playwright's plain string: an option's value or label)."""
        given: Any = list(self.items) if self.many else self.items[0]
        if self.mode == "value":
            return (given,), {}
        return (), {self.mode: given}


def _item(mode: SelectMode, raw: object, field: str) -> str | int:
    if mode == "index":
        return bounded_int(raw, field, 0, MAX_OPTION_INDEX)
    return bounded_string(raw, field, MAX_OPTION_CHARS)


def parse_option_choice(args: Mapping[str, Any]) -> OptionChoice:
    """The validated choice of a browser_select_option call, else `INVALID_ARGUMENT` naming the
    field (`label`, `index[2]`...) and its rule."""
    given = [mode for mode in SELECT_MODES if args.get(mode) is not None]
    if len(given) != 1:
        raise invalid_argument(given[1] if given else "value", _EXACTLY_ONE)
    mode = given[0]
    raw = args[mode]
    if not isinstance(raw, list):
        return OptionChoice(mode, (_item(mode, raw, mode),))
    if not 1 <= len(raw) <= MAX_OPTION_ITEMS:
        rule = f"1..{MAX_OPTION_ITEMS} items"
        bound = Bound(mode, "<=", MAX_OPTION_ITEMS) if raw else Bound(mode, ">=", 1)
        raise invalid_argument(mode, rule, bound=bound)
    items = tuple(_item(mode, item, f"{mode}[{n}]") for n, item in enumerate(raw))
    return OptionChoice(mode, items, many=True)
