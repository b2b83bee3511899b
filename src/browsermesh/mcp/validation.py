"""Schema failures as BrowserMesh's `INVALID_ARGUMENT` (issue 31 item 7).

Arguments are checked against the published input schema (expanded, JSON Schema 2020-12) before
the handler runs, as before; a failure now answers the same payload as every runtime argument
check: `INVALID_ARGUMENT` with `details.field` (a path in the arguments, `locator.strategy`,
`fields[2].value`) and `details.rule` (`string`, `one of: role, text, ...`, `unknown field`,
`required`, `at most 128 characters` with its bound clause). The words are those of the runtime
checks (`model.arguments`, `model.matchers.one_of`), so one mistake reads the same whichever
check saw it first. Neither ever echoes a value; a field name is named only when it is a short
identifier (caller text otherwise).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any, Final

from browsermesh.errors import Bound, BrowserMeshError, invalid_argument
from browsermesh.mcp.schemas import NO_CONTROL
from browsermesh.model.matchers import one_of

ROOT_FIELD: Final = "arguments"
"""`field` of a failure that names no field of its own (an unknown key that is no identifier)."""
UNKNOWN_TOOL_RULE: Final = "a tool name listed by tools/list"
_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,31}$")
_PATTERN_RULES: Final = {NO_CONTROL: "no control characters"}


def field_path(parts: Iterable[Any], extra: str | None = None) -> str:
    """`a.b[2].c` for the path parts (and an `extra` key); a key that is not a short
    identifier ends the path at its parent (it is caller text)."""
    out = ""
    for part in [*parts, *([extra] if extra is not None else [])]:
        if isinstance(part, int):
            out += f"[{part}]"
        elif isinstance(part, str) and _KEY.match(part):
            out += f".{part}" if out else part
        else:
            break
    return out or ROOT_FIELD


_PLURALS: Final = {"character": "characters", "item": "items", "entry": "entries"}


def _count(number: int, noun: str) -> str:
    return f"{number} {noun if number == 1 else _PLURALS[noun]}"


def _type_rule(expected: Any) -> str:
    names = expected if isinstance(expected, list) else [expected]
    return " or ".join(map(str, names))  # the runtime's words: `string`, `integer`


_BOUNDS: Final = {
    "maxLength": ("<=", "character"),
    "minLength": (">=", "character"),
    "maxItems": ("<=", "item"),
    "minItems": (">=", "item"),
    "maxProperties": ("<=", "entry"),
    "minProperties": (">=", "entry"),
    "maximum": ("<=", None),
    "minimum": (">=", None),
}


def _bounded(field: str, op: str, number: Any, noun: str | None) -> tuple[str, Bound | None]:
    """`at most`/`at least` rules and their bound clause, as `model.arguments` words them."""
    word = "at most" if op == "<=" else "at least"
    if isinstance(number, float) and not number.is_integer():  # no clause: it takes integers
        return f"{word} {number}", None
    amount = _count(int(number), noun) if noun else str(int(number))
    return f"{word} {amount}", Bound(field, "<=" if op == "<=" else ">=", int(number))


def _rule(error: Any, field: str) -> tuple[str, Bound | None]:
    """The rule a jsonschema error broke at `field`, and its numeric bound if it has one."""
    validator = error.validator
    value = error.validator_value
    if validator == "type":
        return _type_rule(value), None
    if validator in _BOUNDS and isinstance(value, int | float) and not isinstance(value, bool):
        op, noun = _BOUNDS[validator]
        return _bounded(field, op, value, noun)
    if validator == "enum":
        return one_of(tuple(map(str, value))), None
    if validator == "const":
        return one_of((str(value),)), None
    if validator == "pattern":
        return _PATTERN_RULES.get(value, "the documented format"), None
    if validator == "uniqueItems":
        return "each item once", None
    if validator == "not":
        return "not a reserved name", None
    return "the shape the input schema gives", None


def argument_error(error: Any) -> BrowserMeshError:
    """One jsonschema `ValidationError` as `INVALID_ARGUMENT` naming its field and rule."""
    path = list(error.absolute_path)
    validator = error.validator
    value = error.validator_value
    if validator == "required":
        missing = next((n for n in value if n not in error.instance), value[0])
        return invalid_argument(field_path(path, missing), "required")
    if validator == "additionalProperties" and value is False:
        known = error.schema.get("properties", {})
        extra = sorted(k for k in error.instance if k not in known)
        return invalid_argument(field_path(path, extra[0] if extra else None), "unknown field")
    if validator in ("oneOf", "anyOf") and error.context:
        return argument_error(_deepest(error.context))
    field = field_path(path)
    rule, bound = _rule(error, field)
    if "propertyNames" in error.relative_schema_path:  # a key of `field` broke it
        return invalid_argument(field, f"keys: {rule}")
    return invalid_argument(field, rule, bound=bound)


def _deepest(errors: Sequence[Any]) -> Any:
    """The member error that got furthest into the arguments (the shape the caller meant)."""
    return max(errors, key=lambda e: len(e.absolute_path))


def _order(error: Any) -> list[tuple[int, int, str]]:
    """Errors sorted by path, indexes as numbers (a path mixes keys and indexes)."""
    return [(0, p, "") if isinstance(p, int) else (1, 0, str(p)) for p in error.absolute_path]


def first_argument_error(errors: Iterable[Any]) -> BrowserMeshError | None:
    """The first failure in path order (a result names one field, as runtime checks do)."""
    found = sorted(errors, key=_order)
    return argument_error(found[0]) if found else None


def unknown_tool() -> BrowserMeshError:
    """A call to a tool this server does not list (the name is caller text: not echoed)."""
    return invalid_argument("name", UNKNOWN_TOOL_RULE)
