"""Matching rules, locator parsing, candidate ranking and the new error details (issue 13)."""

from __future__ import annotations

import json
import re
import typing

import pytest
from playwright._impl.internal_structures import AriaRole  # the Literal get_by_role accepts

from browsermesh.errors import BrowserMeshError, ErrorCode, error_payload
from browsermesh.model.aria import parse_aria
from browsermesh.model.candidates import rank
from browsermesh.model.locators import (
    ROLES,
    Selector,
    exact_name_pattern,
    normalize_name,
    parse_locator,
)


def test_roles_are_exactly_what_get_by_role_accepts() -> None:
    assert set(ROLES) == set(typing.get_args(AriaRole))


@pytest.mark.parametrize(
    ("text", "normalized"),
    [
        ("Username:", "Username"),
        ("  Price *", "Price"),
        ("Due\n   date :*", "Due date"),
        ("***", "***"),  # nothing but decoration stays as it is
        ("a:b", "a:b"),
    ],
)
def test_normalize_name(text: str, normalized: str) -> None:
    assert normalize_name(text) == normalized


@pytest.mark.parametrize(
    ("value", "matches", "misses"),
    [
        (
            "Username",
            ["Username", "Username:", " Username * ", "Username:*"],
            ["username", "Usernames"],
        ),
        ("Price:", ["Price", "Price:"], ["Price list"]),
        ("a.b (x) [y]", ["a.b (x) [y]", "a.b  (x)\n[y]:"], ["aXb (x) [y]"]),
        ("C++ / C#", ["C++ / C#"], ["C+ / C#"]),
    ],
)
def test_exact_name_pattern(value: str, matches: list[str], misses: list[str]) -> None:
    pattern = re.compile(exact_name_pattern(value))
    assert all(pattern.search(text) for text in matches)
    assert not any(pattern.search(text) for text in misses)


def _invalid(raw: object) -> dict[str, object]:
    with pytest.raises(BrowserMeshError) as caught:
        parse_locator(raw, "action.target")
    assert caught.value.code is ErrorCode.INVALID_ARGUMENT
    details: dict[str, object] = error_payload(caught.value)["error"]["details"]
    return details


def test_exact_and_within_parse_and_echo() -> None:
    loc = parse_locator(
        {
            "strategy": "label",
            "value": "Name",
            "exact": False,
            "within": {"strategy": "role", "value": "form", "name": "Add product"},
        }
    )
    assert loc.selector == Selector("label", "Name", exact=False)
    assert loc.within == Selector("role", "form", "Add product", True)
    assert loc.wire()["within"] == {
        "strategy": "role",
        "value": "form",
        "name": "Add product",
        "exact": True,
    }
    assert parse_locator({"strategy": "text", "value": "x"}).wire() == {
        "strategy": "text",
        "value": "x",
        "exact": True,
    }


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"strategy": "xpath", "value": "//a"}, "action.target.strategy"),
        ({"strategy": "role", "value": "buton"}, "action.target.value"),
        ({"strategy": "text", "value": "x", "exact": "yes"}, "action.target.exact"),
        ({"strategy": "testId", "value": "x", "exact": True}, "action.target.exact"),
        ({"strategy": "text", "value": "x", "nme": "y"}, "action.target.nme"),
        (
            {
                "strategy": "text",
                "value": "x",
                "within": {"strategy": "css", "value": "a", "within": {}},
            },
            "action.target.within.within",
        ),
        (
            {
                "strategy": "text",
                "value": "x",
                "within": {"strategy": "css", "value": "a", "frame": {}},
            },
            "action.target.within.frame",
        ),
        ({"strategy": "css", "value": "text=Save"}, "action.target.value"),
    ],
)
def test_invalid_locators_name_the_field_and_rule(raw: object, field: str) -> None:
    details = _invalid(raw)
    assert details["field"] == field
    assert isinstance(details["rule"], str) and details["rule"]


def test_invalid_locator_never_echoes_the_value() -> None:
    details = _invalid({"strategy": "css", "value": "xpath=//secret-canary"})
    assert "secret-canary" not in json.dumps(details)
    assert details["selectorEngine"] == "xpath"


TREE = """
- navigation "Main":
  - link "Home" [ref=e1]
  - link "Products" [ref=e2]
- form "Add product" [ref=e3]:
  - textbox "Name:" [ref=e4]
  - combobox "Category:" [ref=e5]
  - button "Save" [ref=e6]
  - button "Save and add another" [ref=e7]
- table [ref=e8]:
  - row "Blue teapot" [ref=e9]:
    - button "Delete" [ref=e10]
  - row "Red cup" [ref=e11]:
    - button "Delete" [ref=e12]
- paragraph [ref=e13]: Welcome back, friend
"""


def test_candidates_for_a_miss_are_near_names_of_the_same_role_with_locators() -> None:
    picks = rank(parse_aria(TREE), Selector("role", "button", "save changes"))
    names = [p.node.name for p in picks]
    assert names[:2] == ["Save", "Save and add another"]
    assert picks[0].locator == {
        "strategy": "role",
        "value": "button",
        "name": "Save",
        "exact": True,
    }
    assert picks[0].container is not None and picks[0].container.name == "Add product"


def test_candidates_for_a_label_are_form_controls() -> None:
    picks = rank(parse_aria(TREE), Selector("label", "name"))
    assert [(p.node.role, p.node.name) for p in picks] == [("textbox", "Name:")]


def test_candidates_for_text_include_text_content() -> None:
    picks = rank(parse_aria(TREE), Selector("text", "Welcome back"))
    assert picks[0].detail("s1c1") == {
        "role": "paragraph",
        "name": "Welcome back, friend",
        "ref": "s1c1",
        "locator": {"strategy": "text", "value": "Welcome back, friend", "exact": True},
    }


def test_ambiguous_candidates_are_the_matches_scoped_by_their_container() -> None:
    picks = rank(parse_aria(TREE), Selector("role", "button", "Delete"), matches_only=True)
    assert [p.container.name for p in picks if p.container] == ["Blue teapot", "Red cup"]
    assert picks[1].locator == {
        "strategy": "role",
        "value": "button",
        "name": "Delete",
        "exact": True,
        "within": {"strategy": "role", "value": "row", "name": "Red cup", "exact": True},
    }


def test_css_gets_no_candidates_and_at_most_five_are_listed() -> None:
    assert rank(parse_aria(TREE), Selector("css", "#nope")) == []
    many = "\n".join(f'- button "Item {i}"' for i in range(20))
    assert len(rank(parse_aria(many), Selector("role", "button", "item"))) == 5


def test_error_details_allowlist_for_candidates_fresh_ref_and_fields() -> None:
    err = BrowserMeshError(
        ErrorCode.ELEMENT_NOT_FOUND,
        details={
            "candidates": [
                {
                    "role": "button",
                    "name": "x" * 1000,
                    "ref": "s1c1",
                    "secret": "no",
                    "locator": {
                        "strategy": "role",
                        "value": "button",
                        "within": {
                            "strategy": "css",
                            "value": "#a",
                            "within": {"strategy": "css", "value": "b"},
                        },
                    },
                },
                {"role": "button", "ref": "not a ref!"},
                *({"role": "link", "name": str(i)} for i in range(10)),
            ],
            "freshRef": "../etc",
            "field": "url; rm -rf",
            "coveredBy": {"role": "dialog", "name": "Cookie\x00 banner"},
        },
    )
    details = error_payload(err)["error"]["details"]
    candidates = details["candidates"]
    assert len(candidates) == 5
    assert "secret" not in candidates[0] and len(candidates[0]["name"]) <= 256
    assert "within" not in candidates[0]["locator"]["within"]  # one level only
    assert "ref" not in candidates[1]
    assert "freshRef" not in details and "field" not in details
    assert details["coveredBy"] == {"role": "dialog", "name": "Cookie banner"}
