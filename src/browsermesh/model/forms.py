"""browser_fill_form's fields (issue 15): their parsing, and which operation a value takes.

A field is `{target, value}`: `target` is an ElementTarget (a Locator or `{ref}`, exactly as
`action.target` of browser_action_and_wait), `value` a string (text, select) or a boolean
(checkbox, switch, radio). Shapes, count and value types are checked before any work; whether
the value fits the element is only known once the element is resolved (`field_operation`), so
that refusal names `value` and the runtime places it at its field (`fields[k].value`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from browsermesh.errors import Bound, invalid_argument
from browsermesh.model.arguments import (
    MAX_FILL_CHARS,
    action_argument,
    bounded_string,
    secret_flag,
)
from browsermesh.model.element_ops import ElementOp
from browsermesh.model.locators import Target, parse_element_target
from browsermesh.model.secret_refs import SecretRef, parse_secret_ref

MAX_FIELDS: Final = 50
FieldKind = Literal["text", "select", "checkbox", "radio"]
_KEYS = ("target", "value")


@dataclass(frozen=True, slots=True)
class FormField:
    """One field to apply: where, and what (never logged or echoed: it may be a password)."""

    target: Target
    value: str | bool
    # The client marked the value secret (issue 20): a test export reads it from the
    # environment instead of quoting it.
    secret: bool = False
    # The secret the client named instead of a value (issue 36, §36): `value` is empty until
    # the runtime looked it up (`with_value`).
    named: SecretRef | None = None

    def with_value(self, value: str) -> FormField:
        """This field with its named secret's `value` (the runtime's lookup)."""
        return dataclasses.replace(self, value=value)

    def __repr__(self) -> str:
        return f"FormField({self.target!r}, <{type(self.value).__name__}>)"


def parse_fields(raw: object) -> tuple[FormField, ...]:
    """`fields`: 1..50 objects `{target, value}` (INVALID_ARGUMENT naming e.g. `fields[2].value`).

    A string value has browser_fill's bound (`MAX_FILL_CHARS`); a select's stricter option
    bound applies once the element is known to be a select."""
    if not isinstance(raw, list):
        raise invalid_argument("fields", "array")
    if not raw:
        raise invalid_argument("fields", "at least 1 item", bound=Bound("fields", ">=", 1))
    if len(raw) > MAX_FIELDS:
        raise invalid_argument(
            "fields", f"at most {MAX_FIELDS} items", bound=Bound("fields", "<=", MAX_FIELDS)
        )
    return tuple(_field(item, f"fields[{k}]") for k, item in enumerate(raw))


def _field(item: object, where: str) -> FormField:
    if not isinstance(item, dict):
        raise invalid_argument(where, "object")
    if any(key not in (*_KEYS, "secret") for key in item):
        raise invalid_argument(where, "only the keys target, value, secret")
    for key in _KEYS:
        if key not in item:
            raise invalid_argument(f"{where}.{key}", "required")
    target = parse_element_target(item["target"], f"{where}.target")
    value = item["value"]
    secret = secret_flag(item.get("secret"), f"{where}.secret")
    if isinstance(value, bool):
        return FormField(target, value, secret)
    ref = parse_secret_ref(value, f"{where}.value")
    if ref is not None:
        return FormField(target, "", True, ref)
    if not isinstance(value, str):
        raise invalid_argument(f"{where}.value", 'string, boolean or {"secret": NAME}')
    return FormField(target, bounded_string(value, f"{where}.value", MAX_FILL_CHARS), secret)


def field_kind(state: Mapping[str, Any]) -> FieldKind:
    """The kind of the element `state` describes (`{tag, type, role, editable}` of the control,
    after following a `<label>` to its control): native elements by tag and type first, then
    the explicit ARIA role; anything else takes text (fill), whose own checks refuse it."""
    tag, kind, role = state.get("tag"), state.get("type"), state.get("role")
    if tag == "select":
        return "select"
    if tag == "input" and kind in ("checkbox", "radio"):
        return "checkbox" if kind == "checkbox" else "radio"
    if tag in ("input", "textarea") or state.get("editable"):
        return "text"
    if role in ("checkbox", "switch", "menuitemcheckbox"):
        return "checkbox"
    if role in ("radio", "menuitemradio"):
        return "radio"
    if role in ("listbox", "combobox"):
        return "select"
    return "text"


def field_operation(kind: FieldKind, value: str | bool) -> tuple[ElementOp, str | None]:
    """The element operation (and its argument) that applies `value` to a `kind` element;
    INVALID_ARGUMENT on `value` when it does not fit (the value itself is never named)."""
    if kind == "checkbox":
        if not isinstance(value, bool):
            raise invalid_argument("value", "a boolean: the target is a checkbox or switch")
        return ("check" if value else "uncheck"), None
    if kind == "radio":
        if value is not True:
            rule = (
                "true: a radio button cannot be unchecked (set true on another radio of its group)"
                if value is False
                else "true: the target is a radio button"
            )
            raise invalid_argument("value", rule)
        return "check", None
    if isinstance(value, bool):
        what = (
            "an option's value or label: the target is a select"
            if kind == "select"
            else ("a string: the target is not a checkbox, switch or radio")
        )
        raise invalid_argument("value", what)
    op: ElementOp = "select_option" if kind == "select" else "fill"
    return op, action_argument(op, value)
