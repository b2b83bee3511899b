"""String-argument bounds and the CSS-only rule of the `css` strategy (issue 12 #11, #12)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from browsermesh.errors import SELECTOR_ENGINES, BrowserMeshError, ErrorCode, error_payload
from browsermesh.model.arguments import (
    MAX_FILL_CHARS,
    MAX_SELECTOR_CHARS,
    action_argument,
    bounded_string,
)
from browsermesh.model.locators import non_css_engine, parse_locator, public_engine
from browsermesh.runtime.calls import PageCall
from browsermesh.runtime.runtime import Runtime
from tests.fakes import FakeEngine

pytestmark = pytest.mark.anyio


def refused(call: Any, *args: Any, **kwargs: Any) -> BrowserMeshError:
    with pytest.raises(BrowserMeshError) as info:
        call(*args, **kwargs)
    assert info.value.code is ErrorCode.INVALID_ARGUMENT
    return info.value


# ------------------------------------------------------------------------------ bounds


def test_bounded_string_checks_type_and_both_ends() -> None:
    assert bounded_string("abc", "f", 3) == "abc"
    assert bounded_string("", "f", 3) == ""
    assert refused(bounded_string, "abcd", "f", 3).message.endswith(" Bound: f <= 3.")
    assert refused(bounded_string, "", "f", 3, min_chars=1).message.endswith(" Bound: f >= 1.")
    assert refused(bounded_string, 5, "f", 3).internal["field"] == "f"
    # code points, not bytes
    assert bounded_string("é" * 3, "f", 3) == "é" * 3


def test_action_arguments_have_their_bounds() -> None:
    assert action_argument("click", None) is None
    assert action_argument("fill", "") == ""
    assert action_argument("fill", "x" * MAX_FILL_CHARS) == "x" * MAX_FILL_CHARS
    fill = refused(action_argument, "fill", "x" * (MAX_FILL_CHARS + 1))
    assert fill.message.endswith(" Bound: value <= 1000000.")
    assert refused(action_argument, "press", "").message.endswith(" Bound: key >= 1.")
    assert refused(action_argument, "press", "K" * 65).message.endswith(" Bound: key <= 64.")
    assert action_argument("press", "Control+A") == "Control+A"
    select = refused(action_argument, "select_option", "o" * 4097)
    assert select.message.endswith(" Bound: value <= 4096.")
    assert refused(action_argument, "fill", None).internal["field"] == "value"


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"strategy": "css", "value": "a" * (MAX_SELECTOR_CHARS + 1)}, "locator.value"),
        ({"strategy": "testId", "value": "a" * (MAX_SELECTOR_CHARS + 1)}, "locator.value"),
        (
            {"strategy": "role", "value": "link", "name": "n" * (MAX_SELECTOR_CHARS + 1)},
            "locator.name",
        ),
        (
            {
                "strategy": "css",
                "value": "a",
                "frame": {"kind": "iframe", "chain": [{"strategy": "label", "value": "l" * 5000}]},
            },
            "locator.frame.chain.0.value",
        ),
    ],
)
def test_locator_strings_are_bounded(raw: dict[str, Any], field: str) -> None:
    error = refused(parse_locator, raw)
    assert error.message.endswith(f" Bound: {field} <= 4096.")
    assert error.internal["field"] == field


def test_locator_strings_at_the_bound_pass() -> None:
    value = "a" * MAX_SELECTOR_CHARS
    assert parse_locator({"strategy": "css", "value": value}).selector.value == value
    named = parse_locator({"strategy": "role", "value": "link", "name": value})
    assert named.selector.name == value
    assert parse_locator({"strategy": "role", "value": "link", "name": ""}).selector.name == ""
    assert refused(parse_locator, {"strategy": "role", "value": "link", "name": 3})


async def test_the_runtime_checks_action_arguments_before_queueing(tmp_path: Any) -> None:
    from browsermesh.config import default_config

    engine = FakeEngine()
    runtime = Runtime(default_config(timeout_ms=1000, data_dir=tmp_path), engine)
    try:
        _, view, page = await runtime.create_session()
        session = view["sessionId"]
        target = {"locator": {"strategy": "label", "value": "Name"}}
        calls = list(engine.calls)
        with pytest.raises(BrowserMeshError) as info:
            await runtime.element_action(
                PageCall(principal="local", session_id=session, page_id=page),
                "press",
                target,
                "K" * 65,
            )
        assert info.value.message.endswith(" Bound: key <= 64.")
        with pytest.raises(BrowserMeshError) as info:
            await runtime.element_action(
                PageCall(principal="local", session_id=session, page_id=page), "fill", target, None
            )
        assert info.value.code is ErrorCode.INVALID_ARGUMENT
        assert engine.calls == calls  # refused before the session queue, no engine call
    finally:
        await runtime.shutdown()


# ---------------------------------------------------------------------------- CSS only


@pytest.mark.parametrize(
    ("value", "engine"),
    [
        ("xpath=//a", "xpath"),
        ("text=Hi", "text"),
        (" text = Hi", "text"),
        ("css=a", "css"),
        ("id=x", "id"),
        ("data-testid=x", "data-testid"),
        ("internal:role=button", "internal:role"),
        ("internal:has-text=x", "internal:has-text"),
        ("nth=1", "nth"),
        ("visible=true", "visible"),
        ("_react=App", "_react"),
        ("*css=a", "css"),
        ("a >> nth=1", ">>"),
        ("div>>span", ">>"),
        ('a[title="x"] >> b', ">>"),
        ("//a", "xpath"),
        ("  //a", "xpath"),
        ("(//a)[1]", "xpath"),
        ("..", "xpath"),
        ("../a", "xpath"),
        ('"Hello"', "text"),
        ("'Hello'", "text"),
        ("a:visible", ":visible"),
        (":visible:", ":visible"),
        ("li:not(:visible)", ":visible"),
        ('button:has-text("x")', ":has-text"),
        ('a:TEXT("x")', ":text"),
        (":text-is('x')", ":text-is"),
        (":text-matches('x')", ":text-matches"),
        (":nth-match(a, 2)", ":nth-match"),
        (":light(a)", ":light"),
        ("a:near(b)", ":near"),
        ("a:left-of(b)", ":left-of"),
    ],
)
def test_non_css_selectors_name_their_engine(value: str, engine: str) -> None:
    assert non_css_engine(value) == engine
    error = refused(parse_locator, {"strategy": "css", "value": value})
    assert error.internal["engine"] == engine
    assert error.internal["field"] == "locator.value"
    # the client sees the strategy and the kind of selector (a fixed vocabulary), never its own
    # selector back
    payload = error_payload(error)["error"]
    details = payload["details"]
    assert {k: details[k] for k in ("locator", "selectorEngine", "field")} == {
        "locator": {"strategy": "css"},
        "selectorEngine": public_engine(engine),
        "field": "locator.value",
    }
    assert details["rule"].startswith("CSS only")
    assert payload["details"]["selectorEngine"] in SELECTOR_ENGINES
    assert value not in json.dumps(payload)
    assert payload["message"] == "Invalid argument."


@pytest.mark.parametrize(
    "value",
    [
        "a",
        "#submit",
        "div > span",
        "a[href]",
        'a[href="x=y"]',
        "a[href='x=y']",
        "input[name=q]",
        'a[href^="http"]',
        "a[data-x*=y]",
        'a[title=">>"]',
        "a[title='a >> b']",
        'a[data-x=":visible"]',
        "a\\:visible",
        "li:nth-child(2)",
        "li:nth-of-type(2n+1)",
        "div:has(> span)",
        "p:is(.a, .b)",
        "p:where(.a)",
        "#x:not(.y)",
        ":scope > li",
        "a:hover",
        "a::before",
        "input:checked",
        "a:first-child, b:last-child",
        "ul li + li ~ li",
        "text",  # an element named `text` is CSS
        ".visible",
        "[text]",
    ],
)
def test_ordinary_css_is_accepted(value: str) -> None:
    assert non_css_engine(value) is None
    assert parse_locator({"strategy": "css", "value": value}).selector.value == value


def test_other_strategies_may_contain_engine_syntax() -> None:
    # text, label, placeholder and testId values are matched literally by Playwright
    for strategy in ("text", "label", "placeholder", "testId"):
        assert parse_locator({"strategy": strategy, "value": "xpath=//a >> nth=1"})
