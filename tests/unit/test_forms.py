"""browser_fill_form's pure rules (model.forms, runtime.forms.at_field, the error clause)."""

from __future__ import annotations

from typing import Any

import pytest

from browsermesh.errors import Bound, BrowserMeshError, ErrorCode, error_payload, invalid_argument
from browsermesh.model.forms import FieldKind, field_kind, field_operation
from browsermesh.runtime.forms import at_field


@pytest.mark.parametrize(
    ("state", "kind"),
    [
        ({"tag": "select", "type": "", "role": ""}, "select"),
        ({"tag": "input", "type": "checkbox", "role": "switch"}, "checkbox"),
        ({"tag": "input", "type": "radio", "role": ""}, "radio"),
        ({"tag": "input", "type": "date", "role": ""}, "text"),
        ({"tag": "input", "type": "text", "role": "combobox"}, "text"),  # an autocomplete input
        ({"tag": "textarea", "type": "", "role": ""}, "text"),
        ({"tag": "div", "type": "", "role": "textbox", "editable": True}, "text"),
        ({"tag": "span", "type": "", "role": "switch"}, "checkbox"),
        ({"tag": "div", "type": "", "role": "radio"}, "radio"),
        ({"tag": "div", "type": "", "role": "listbox"}, "select"),
        ({"tag": "button", "type": "", "role": ""}, "text"),  # fill refuses it (not_editable)
        ({}, "text"),
    ],
)
def test_kind_comes_from_tag_and_type_then_role(state: dict[str, Any], kind: FieldKind) -> None:
    assert field_kind(state) == kind


def test_operation_per_kind_and_value() -> None:
    assert field_operation("text", "x") == ("fill", "x")
    assert field_operation("select", "Germany") == ("select_option", "Germany")
    assert field_operation("checkbox", True) == ("check", None)
    assert field_operation("checkbox", False) == ("uncheck", None)
    assert field_operation("radio", True) == ("check", None)
    for kind, value in (("text", True), ("select", False), ("checkbox", "yes"), ("radio", False)):
        with pytest.raises(BrowserMeshError) as caught:
            field_operation(kind, value)  # type: ignore[arg-type]
        assert caught.value.details["field"] == "value", (kind, value)
    with pytest.raises(BrowserMeshError) as caught:
        field_operation("select", "x" * 4_097)  # browser_select_option's own bound
    assert caught.value.bound == Bound("value", "<=", 4_096)


def test_at_field_places_the_error_and_the_message_names_it() -> None:
    own = at_field(invalid_argument("value", "a boolean", bound=Bound("value", "<=", 1)), 3)
    assert own.details == {"field": "fields[3].value", "rule": "a boolean", "filled": 3}
    assert own.bound is not None and own.bound.name == "fields[3].value"
    found = at_field(BrowserMeshError(ErrorCode.ELEMENT_NOT_FOUND), 0)
    body = error_payload(found)["error"]
    assert body["details"] == {"reason": "element_not_found", "field": "fields[0]", "filled": 0}
    assert body["message"].endswith(" Stopped at fields[0]; no field was applied.")
    one = error_payload(at_field(BrowserMeshError(ErrorCode.OPERATION_TIMEOUT), 1))["error"]
    assert one["message"].endswith("the 1 field before it stay applied.")
    # `filled` is allowlisted like matchCount: a hostile value is dropped, a huge one clamped.
    for raw, kept in ((True, None), (-1, None), ("2", None), (10**30, 1_000_000)):
        err = BrowserMeshError(ErrorCode.OPERATION_TIMEOUT, details={"filled": raw})
        assert error_payload(err)["error"].get("details", {}).get("filled") == kept
