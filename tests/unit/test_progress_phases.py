"""Phase texts (model.progress): readable, bounded, and never a URL's path, query or user."""

from __future__ import annotations

from browsermesh.model.matchers import (
    DownloadWait,
    LoadCondition,
    NavigationWait,
    TextCondition,
    parse_condition,
)
from browsermesh.model.progress import (
    PHASE_TEXT_CHARS,
    condition_phase,
    event_phase,
    loading_phase,
    quoted,
)


def test_loading_shows_the_origin_only() -> None:
    assert (
        loading_phase("https://u:pw@shop.test:8443/a?token=x#y") == "loading https://shop.test:8443"
    )
    assert loading_phase("http://127.0.0.1/x") == "loading http://127.0.0.1"
    assert loading_phase("http://[::1]:9/p") == "loading http://[::1]:9"
    assert loading_phase("data:text/html,secret") == "loading the page"
    assert loading_phase("http://[bad/") == "loading the page"


def test_waited_for_text_is_one_bounded_line() -> None:
    assert quoted("Saved") == "'Saved'"
    long = quoted("a\n b " + "x" * 100)
    assert long.startswith("'a b x") and len(long) == PHASE_TEXT_CHARS + 2 and long.endswith("…'")


def test_condition_and_event_phases() -> None:
    assert condition_phase(TextCondition("Saved", True)) == "waiting for text 'Saved'"
    assert condition_phase(TextCondition("Busy", False)) == "waiting for text 'Busy' to disappear"
    assert condition_phase(LoadCondition("load")) == "waiting for the page's load event"
    url = parse_condition({"kind": "url", "matcher": {"kind": "glob", "value": "**/secret?x=1"}})
    assert condition_phase(url) == "waiting for the URL to match"
    located = parse_condition(
        {"kind": "locator", "locator": {"strategy": "css", "value": "#x"}, "state": "visible"}
    )
    assert condition_phase(located) == "waiting for the element to be visible"
    assert event_phase(DownloadWait()) == "waiting for a download"
    assert event_phase(NavigationWait(None, "load")) == "waiting for a navigation"
