"""Length bounds of free-text tool arguments, checked before any work starts (issue 12 #11).

The published schemas leave most strings unbounded to keep discovery small, and Playwright pays
for every character of a selector on every poll: a 10 MB CSS selector with `timeoutMs: 500`
answered after 6-7 s. So every string that reaches the engine has a bound here, and the check
runs at parse time, before the call enters a session queue.

Bounds (code points), with where each is enforced:

| argument | bound | where |
|---|---|---|
| locator `value` (every strategy) and role `name` | 4,096 | `model.locators` |
| `browser_fill.value` | 1,000,000 (may be empty), or `{secret: NAME}` (§36) | `action_argument` |
| `browser_press.key`, `action.key` | 1..64 (§4.6, §7.2) | `action_argument`, `model.matchers` |
| `browser_select_option.value` | 4,096 (may be empty) | `action_argument` |
| `browser_fill_form.fields` | 1..50; `value` as fill/select option | `model.forms` |
| `url` | 1..8,192 (reference §4.5) | `runtime.validate_http_url` |
| `expression` | 1..10,000 (reference §10) | `Runtime.evaluate` |
| matcher `value`, `text`, `promptText` | 2,048 / 2,000 / 2,000 (reference §7) | `model.matchers` |
| `stateId` | 1..128 and its regex (reference §11) | `persistence.states` |
| `cursor` / `sinceEventId` | 1..160 / 1..128 (§8.1) | `model.paging` / `model.observe` |
| labels, context settings | reference §13.8, §12 | `model.labels`, `model.settings` |

`sessionId` and `pageId` are only looked up in a dictionary (a miss is `SESSION_NOT_FOUND` /
`PAGE_NOT_FOUND`), so their length costs nothing and they have no bound of their own.
"""

from __future__ import annotations

from typing import Final

from browsermesh.errors import Bound, BrowserMeshError, invalid_argument
from browsermesh.model.element_ops import ELEMENT_OPERATIONS, ElementOp
from browsermesh.model.limits import MAX_FILL_CHARS as MAX_FILL_CHARS
from browsermesh.model.limits import MAX_KEY_CHARS as MAX_KEY_CHARS
from browsermesh.model.limits import MAX_OPTION_CHARS as MAX_OPTION_CHARS
from browsermesh.model.secret_refs import SecretRef, parse_secret_ref

MAX_SELECTOR_CHARS: Final = 4_096
"""Locator `value` and role `name`: far beyond any real selector or accessible name."""


def _characters(count: int) -> str:
    return f"{count} character" + ("" if count == 1 else "s")


def too_long(field: str, max_chars: int) -> BrowserMeshError:
    """`INVALID_ARGUMENT` naming `field` (details and the bound clause, e.g.
    `locator.value <= 4096`) and the rule `at most 4096 characters`."""
    return invalid_argument(
        field, f"at most {_characters(max_chars)}", bound=Bound(field, "<=", max_chars)
    )


def bounded_string(value: object, field: str, max_chars: int, *, min_chars: int = 0) -> str:
    """`value` if it is a string of `min_chars..max_chars` code points, else `INVALID_ARGUMENT`
    naming `field` (a full JSON path from the tool's argument root) and the rule it broke.

    The length is checked first, so nothing else ever scans an over-long string."""
    if not isinstance(value, str):
        raise invalid_argument(field, "string")
    if len(value) > max_chars:
        raise too_long(field, max_chars)
    if len(value) < min_chars:
        raise invalid_argument(
            field, f"at least {_characters(min_chars)}", bound=Bound(field, ">=", min_chars)
        )
    return value


def bounded_int(value: object, field: str, low: int, high: int) -> int:
    """`value` if it is an integer (not a bool) of `low..high`, else `INVALID_ARGUMENT` naming
    `field` with the bound it broke."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise invalid_argument(field, "integer")
    if value < low:
        raise invalid_argument(field, f"at least {low}", bound=Bound(field, ">=", low))
    if value > high:
        raise invalid_argument(field, f"at most {high}", bound=Bound(field, "<=", high))
    return value


def action_argument(op: ElementOp, arg: object) -> str | None:
    """The validated extra argument of an element action (its catalogue entry's `argument`:
    `fill`, `press`, `select_option`); `None` for the actions that take none."""
    spec = ELEMENT_OPERATIONS[op].argument
    if spec is None:
        return None
    return bounded_string(arg, spec.field, spec.max_chars, min_chars=spec.min_chars)


def named_argument(op: ElementOp, arg: object) -> SecretRef | None:
    """The secret `arg` names (`{"secret": NAME}`, §36) when `op`'s argument may be one and it
    is an object; None otherwise (then `action_argument` checks it)."""
    spec = ELEMENT_OPERATIONS[op].argument
    if spec is None or not spec.by_name:
        return None
    return parse_secret_ref(arg, spec.field)


def one_of(raw: object, field: str, choices: tuple[str, ...]) -> str:
    """An argument that must be one of `choices` (a tool's `action`)."""
    if raw not in choices:
        raise invalid_argument(field, "one of: " + ", ".join(choices))
    assert isinstance(raw, str)
    return raw


def optional_bool(raw: object, field: str, default: bool) -> bool:
    """An optional boolean argument: absent (None) is `default`."""
    if raw is None:
        return default
    if not isinstance(raw, bool):
        raise invalid_argument(field, "a boolean")
    return raw


def secret_flag(raw: object, field: str = "secret") -> bool:
    """The optional `secret` flag of a typed value (issue 20): absent is False."""
    return optional_bool(raw, field, False)
