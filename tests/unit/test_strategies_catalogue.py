"""The locator-strategy catalogue (model/strategies.py, issue 32): every entry carries what each
layer needs, and every layer reads it (parser, errors allowlist, schema enum, Playwright
builder, export builder, candidates, describer order)."""

from __future__ import annotations

import re
import typing
from typing import Any

import pytest
from playwright.async_api import Frame, FrameLocator, Locator, Page

from browsermesh.engine.locators import build, build_locator
from browsermesh.errors import BrowserMeshError, ErrorCode, error_payload
from browsermesh.mcp.schemas import locator as locator_schema
from browsermesh.model.aria import parse_aria
from browsermesh.model.candidates import rank
from browsermesh.model.export_python import locator_expr
from browsermesh.model.locators import Selector, parse_locator
from browsermesh.model.strategies import CATALOGUE, DESCRIBED, STRATEGIES, Strategy

VALUES: dict[Strategy, str] = {
    "role": "button",
    "text": "Save",
    "label": "Name",
    "placeholder": "Find",
    "alt": "Company logo",
    "title": "Close dialog",
    "testId": "save-button",
    "css": "#save",
}


class Recorder:
    """A Playwright root that records the method calls made on it (and on what they return)."""

    def __init__(self, calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]]) -> None:
        self.calls = calls

    def __getattr__(self, method: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Recorder:
            self.calls.append((method, args, kwargs))
            return self

        return call


def wire(strategy: Strategy, **extra: Any) -> dict[str, Any]:
    return {"strategy": strategy, "value": VALUES[strategy], **extra}


def test_the_catalogue_has_one_entry_per_strategy_in_the_published_order() -> None:
    assert tuple(typing.get_args(Strategy)) == STRATEGIES == tuple(CATALOGUE)
    assert all(e.strategy == s for s, e in CATALOGUE.items())
    assert set(VALUES) == set(STRATEGIES)  # this test covers every strategy


def test_the_published_enum_is_the_catalogue() -> None:
    schema = locator_schema(documented=True)
    assert schema["properties"]["strategy"]["enum"] == list(STRATEGIES)


@pytest.mark.parametrize("root", [Page, Frame, FrameLocator, Locator])
def test_every_playwright_method_exists_on_every_root(root: type) -> None:
    for entry in CATALOGUE.values():
        assert callable(getattr(root, entry.playwright, None)), (root, entry.strategy)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_the_engine_builds_with_the_entrys_method(strategy: Strategy) -> None:
    entry = CATALOGUE[strategy]
    calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []
    build(Recorder(calls), parse_locator(wire(strategy)).selector)
    method, args, _ = calls[0]
    assert method == entry.playwright
    if entry.takes_exact and not entry.takes_name:  # `exact` applies to the value
        assert isinstance(args[0], re.Pattern)  # the normalized whole name
        calls.clear()
        build(Recorder(calls), parse_locator(wire(strategy, exact=False)).selector)
        assert calls[0][1] == (VALUES[strategy],)  # Playwright's any-case substring
    else:
        assert args[0] == VALUES[strategy]


def test_the_engine_builds_inside_a_container() -> None:
    calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []
    locator = parse_locator({**wire("alt"), "within": wire("title")})
    build_locator(Recorder(calls), locator)
    assert [c[0] for c in calls] == ["get_by_title", "get_by_alt_text"]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_the_export_writes_the_entrys_method(strategy: Strategy) -> None:
    entry, value = CATALOGUE[strategy], repr(VALUES[strategy])
    exact = locator_expr("page", parse_locator(wire(strategy)).wire())
    if entry.takes_exact and not entry.takes_name:  # `exact` applies to the value
        assert exact == f"page.{entry.playwright}(exact({value}))"
        loose = locator_expr("page", parse_locator(wire(strategy, exact=False)).wire())
        assert loose == f"page.{entry.playwright}({value})"
    else:
        assert exact == f"page.{entry.playwright}({value})"


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_the_parser_takes_name_and_exact_as_the_entry_says(strategy: Strategy) -> None:
    entry = CATALOGUE[strategy]
    for key, takes in (("name", entry.takes_name), ("exact", entry.takes_exact)):
        raw = wire(strategy, **{key: "Save" if key == "name" else False})
        if takes:
            parse_locator(raw)
        else:
            with pytest.raises(BrowserMeshError) as refused:
                parse_locator(raw)
            assert refused.value.details["field"] == f"locator.{key}"
    echo = parse_locator(wire(strategy)).wire()
    assert ("exact" in echo) is entry.takes_exact  # `exact: true` filled in where it applies


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_the_errors_allowlist_keeps_every_strategy(strategy: Strategy) -> None:
    error = BrowserMeshError(
        ErrorCode.ELEMENT_NOT_FOUND,
        details={"reason": "element_not_found", "locator": wire(strategy)},
    )
    assert error_payload(error)["error"]["details"]["locator"]["strategy"] == strategy


TREE = parse_aria(
    '- img "Company logo"\n- button "Close dialog"\n- button "Save"\n- textbox "Name"\n'
    '- textbox "Find"\n- paragraph: Save'
)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_every_candidate_form_reads_the_selector(strategy: Strategy) -> None:
    selector = Selector(strategy, VALUES[strategy], "Save" if strategy == "role" else None)
    found = rank(TREE, selector)
    if CATALOGUE[strategy].candidates == "none":
        assert found == []
    else:
        assert found, strategy


def test_alt_and_title_candidates_are_the_named_nodes() -> None:
    alt = rank(TREE, Selector("alt", "company logo", exact=False))
    assert (alt[0].node.role, alt[0].node.name) == ("img", "Company logo")
    title = rank(TREE, Selector("title", "Close"))
    assert (title[0].node.role, title[0].node.name) == ("button", "Close dialog")


def test_the_describer_order_is_issue_20s() -> None:
    assert DESCRIBED == ("role", "label", "placeholder", "testId", "text")
    numbered = sorted(e.described for e in CATALOGUE.values() if e.described is not None)
    assert numbered == list(range(len(DESCRIBED)))  # no gaps, no ties
