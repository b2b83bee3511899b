"""URL globs, wait conditions and action-and-wait specs (runtime validation)."""

from __future__ import annotations

import pytest

from browsermesh.errors import BrowserMeshError, ErrorCode
from browsermesh.model.locators import parse_locator, parse_target
from browsermesh.model.matchers import parse_action, parse_condition, parse_matcher, parse_wait


@pytest.mark.parametrize(
    ("glob", "url", "expected"),
    [
        ("**/orders/*", "http://h.test/orders/12", True),
        ("**/orders/*", "http://h.test/orders/12/x", False),
        ("http://*/a", "http://h.test/a", True),
        ("http://*/a", "http://h.test/b/a", False),
        ("**", "anything/at/all", True),
        ("http://h.test/a?b=1", "http://h.test/a?b=1", True),
        ("http://h.test/a.b", "http://h.test/aXb", False),  # every other char is literal
        ("*.html", "x.html", True),
    ],
)
def test_glob(glob: str, url: str, expected: bool) -> None:
    assert parse_matcher({"kind": "glob", "value": glob}).matches(url) is expected


def invalid(fn: object, *args: object) -> ErrorCode:
    with pytest.raises(BrowserMeshError) as info:
        fn(*args)  # type: ignore[operator]
    return info.value.code


def test_matcher_validation() -> None:
    assert invalid(parse_matcher, {"kind": "glob", "value": "*" * 33}) is ErrorCode.INVALID_ARGUMENT
    assert parse_matcher({"kind": "glob", "value": "*" * 32}).kind == "glob"
    assert invalid(parse_matcher, {"kind": "regex", "value": "a"}) is ErrorCode.INVALID_ARGUMENT
    assert invalid(parse_matcher, {"kind": "exact", "value": "a\nb"}) is ErrorCode.INVALID_ARGUMENT
    assert invalid(parse_matcher, {"kind": "exact", "value": "x" * 2049}) is (
        ErrorCode.INVALID_ARGUMENT
    )


def test_conditions() -> None:
    assert parse_condition({"kind": "load", "state": "load"}).state == "load"  # type: ignore[union-attr]
    for bad in (
        {"kind": "load", "state": "networkidle"},
        {"kind": "text", "text": "", "state": "present"},
        {"kind": "text", "text": "x" * 2001, "state": "present"},
        {"kind": "locator", "locator": {"strategy": "css", "value": "a"}, "state": "gone"},
        {"kind": "script", "source": "1"},
        {"kind": "url", "matcher": {"kind": "glob", "value": "a"}, "extra": 1},
    ):
        assert invalid(parse_condition, bad) is ErrorCode.INVALID_ARGUMENT


def test_waits_and_actions() -> None:
    assert parse_wait({"kind": "navigation"}).load_state == "load"  # type: ignore[union-attr]
    assert (
        invalid(
            parse_wait,
            {"kind": "dialog", "dialogType": "alert", "action": "dismiss", "promptText": "x"},
        )
        is ErrorCode.INVALID_ARGUMENT
    )
    assert (
        invalid(
            parse_wait,
            {"kind": "response", "matcher": {"kind": "exact", "value": "u"}, "method": "get"},
        )
        is ErrorCode.INVALID_ARGUMENT
    )
    assert (
        invalid(
            parse_wait,
            {"kind": "response", "matcher": {"kind": "exact", "value": "u"}, "status": 99},
        )
        is ErrorCode.INVALID_ARGUMENT
    )
    ok = parse_wait(
        {"kind": "dialog", "dialogType": "prompt", "action": "accept", "promptText": "hi"}
    )
    assert ok.prompt_text == "hi"  # type: ignore[union-attr]
    assert parse_action({"kind": "press", "target": {"ref": "s1e1"}, "key": "Enter"}).key == "Enter"
    assert parse_action({"kind": "hover", "target": {"ref": "s1e1"}}).kind == "hover"
    assert invalid(parse_action, {"kind": "tap", "target": {"ref": "s1e1"}}) is (
        ErrorCode.INVALID_ARGUMENT
    )
    assert invalid(parse_action, {"kind": "hover", "target": {"ref": "s1e1"}, "key": "a"}) is (
        ErrorCode.INVALID_ARGUMENT
    )


def test_locators() -> None:
    loc = parse_locator({"strategy": "role", "value": "link", "name": "Home"})
    assert loc.wire() == {"strategy": "role", "value": "link", "name": "Home", "exact": True}
    framed = parse_locator(
        {
            "strategy": "css",
            "value": "b",
            "frame": {"kind": "iframe", "chain": [{"strategy": "css", "value": "#f"}]},
        }
    )
    assert framed.describe() == "css=b, frameDepth=1"
    for bad in (
        {"strategy": "role", "value": "not-a-role"},
        {"strategy": "xpath", "value": "//a"},
        {"strategy": "css", "value": ""},
        {"strategy": "css", "value": "a", "name": "x"},
        {"strategy": "css", "value": "a", "frame": {"kind": "iframe", "chain": []}},
        {
            "strategy": "css",
            "value": "a",
            "frame": {"kind": "iframe", "chain": [{"strategy": "css", "value": "f"}] * 6},
        },
        {"value": "a"},
    ):
        assert invalid(parse_locator, bad) is ErrorCode.INVALID_ARGUMENT
    assert invalid(parse_target, {}) is ErrorCode.INVALID_ARGUMENT
    assert invalid(parse_target, {"ref": "s1e1", "locator": {"strategy": "css", "value": "a"}}) is (
        ErrorCode.INVALID_ARGUMENT
    )
    assert parse_target({"ref": "@s1e1"}).token == "s1e1"  # type: ignore[union-attr]
    assert invalid(parse_target, {"ref": "S1E1!"}) is ErrorCode.INVALID_ARGUMENT
