"""browser_find's pure part (model.find, issue 31 item 1): arguments, lines, matching, excerpts,
anchors, paging and the lean result; and the registry dropping expired find refs."""

from __future__ import annotations

from typing import Any

import pytest

from browsermesh.engine.refs import RefRegistry
from browsermesh.errors import BrowserMeshError
from browsermesh.model.clock import Clock
from browsermesh.model.find import (
    ELLIPSIS,
    LINE_CHARS,
    MAX_RESULT_CHARS,
    Anchor,
    Hits,
    Line,
    build_line,
    common_anchor,
    excerpt,
    parse_find,
    result,
    search,
)
from browsermesh.model.locators import Selector


def invalid(args: dict[str, Any]) -> tuple[str, str]:
    with pytest.raises(BrowserMeshError) as caught:
        parse_find(args)
    assert caught.value.code.value == "INVALID_ARGUMENT"
    return caught.value.details["field"], caught.value.details["rule"]


def line(*parts: str) -> Line:
    built = build_line([(p, None, i) for i, p in enumerate(parts)])
    assert built is not None
    return built


def test_arguments_are_checked_field_by_field() -> None:
    assert invalid({})[0] == "text"
    assert invalid({"text": ""})[0] == "text"
    assert invalid({"text": "x" * 1001})[0] == "text"
    assert invalid({"text": "  \n "}) == ("text", "some text other than whitespace")
    assert invalid({"text": "a", "regex": "yes"}) == ("regex", "boolean")
    assert invalid({"text": "a", "limit": 0})[0] == "limit"
    assert invalid({"text": "a", "limit": 101})[0] == "limit"
    field, rule = invalid({"text": "(a", "regex": True})
    assert field == "text" and rule.startswith("a valid regular expression (missing )")
    assert invalid({"text": "a", "within": "main"}) == ("within", "object")
    assert invalid({"text": "a", "within": {"strategy": "nope", "value": "x"}})[0] == (
        "within.strategy"
    )
    assert invalid({"text": "a", "frame": {"kind": "iframe"}})[0] == "frame"
    assert invalid({"text": "a", "cursor": "junk"})[0] == "cursor"


def test_scope_joins_within_and_frame() -> None:
    assert parse_find({"text": "a"}).scope is None
    frame = {"kind": "iframe", "chain": [{"strategy": "css", "value": "iframe"}]}
    only_frame = parse_find({"text": "a", "frame": frame}).scope
    assert only_frame is not None and only_frame.selector == Selector("css", "body")
    assert only_frame.frames == (Selector("css", "iframe"),)
    both = parse_find({"text": "a", "frame": frame, "within": {"strategy": "css", "value": "#s"}})
    assert both.scope is not None and both.scope.selector.value == "#s" and both.scope.frames


def test_a_cursor_belongs_to_its_search() -> None:
    query = parse_find({"text": "item"})
    cursor = query.cursor(20)
    assert parse_find({"text": "item", "cursor": cursor}).offset == 20
    assert invalid({"text": "items", "cursor": cursor})[0] == "cursor"
    assert invalid({"text": "item", "regex": True, "cursor": cursor})[0] == "cursor"
    scoped = {"text": "item", "within": {"strategy": "css", "value": "main"}, "cursor": cursor}
    assert invalid(scoped)[0] == "cursor"


def test_lines_normalise_whitespace_and_keep_segment_offsets() -> None:
    built = line("  Shipping   is\n", "  free ", "today  ")
    assert built.text == "Shipping is free today"
    assert built.starts == (0, 12, 17)
    assert build_line([("  \n ", None, 0)]) is None
    shown = build_line([("DEPENDENCIES (2)", "dependencies (2)", 3)])
    assert shown is not None and shown.dom == "dependencies (2)" and shown.anchors == (3,)
    same = build_line([("Price", "Price", 0)])
    assert same is not None and same.dom is None


def test_literal_matches_any_case_across_whitespace_and_counts_lines() -> None:
    lines = [line("3 results"), line("Shipping  is free"), line("results, results")]
    hits = search(lines, [], parse_find({"text": "RESULTS"}))
    assert hits.count == 2 and [h.text for h in hits.page] == ["3 results", "results, results"]
    assert search(lines, [], parse_find({"text": "shipping is"})).count == 1
    # Special characters of a literal are literal.
    assert search([line("a.b (1)")], [], parse_find({"text": "(1)"})).count == 1
    assert search([line("axb")], [], parse_find({"text": "a.b"})).count == 0


def test_patterns_are_case_sensitive_and_the_dom_text_also_counts() -> None:
    transformed = build_line([("DEPENDENCIES (2)", "dependencies (2)", 0)])
    assert transformed is not None
    dom = search([transformed], [], parse_find({"text": r"dependencies \(\d\)", "regex": True}))
    assert [h.text for h in dom.page] == ["dependencies (2)"]
    shown = search([transformed], [], parse_find({"text": "DEPENDENCIES", "regex": True}))
    assert [h.text for h in shown.page] == ["DEPENDENCIES (2)"]
    assert search([line("Price")], [], parse_find({"text": "price", "regex": True})).count == 0
    assert search([line("Price")], [], parse_find({"text": "(?i)price", "regex": True})).count


def test_a_slow_pattern_is_an_invalid_argument_within_its_budget() -> None:
    query = parse_find({"text": "(a+)+$", "regex": True})
    with pytest.raises(BrowserMeshError) as caught:
        search([line("a" * 5000 + "b")], [], query, budget_s=0.3)
    assert caught.value.details["field"] == "text"
    assert "matches within 0.3 s" in caught.value.details["rule"]


def test_excerpts_keep_the_match_visible() -> None:
    assert excerpt("short", 0, 5) == ("short", 0, 5)
    text = "x" * 300 + "NEEDLE" + "y" * 300
    cut, start, end = excerpt(text, 300, 306)
    assert len(cut) <= LINE_CHARS and cut[start:end] == "NEEDLE"
    assert cut.startswith(ELLIPSIS) and cut.endswith(ELLIPSIS)
    head, s, e = excerpt("NEEDLE" + "y" * 300, 0, 6)
    assert head.startswith("NEEDLE") and head.endswith(ELLIPSIS) and (s, e) == (0, 6)
    tail, s, e = excerpt("y" * 300 + "NEEDLE", 300, 306)
    assert tail.endswith("NEEDLE") and tail[s:e] == "NEEDLE"
    huge, s, e = excerpt("z" * 50 + "q" * 400, 50, 450)
    assert len(huge) <= LINE_CHARS and huge.startswith(ELLIPSIS + "q")


def test_the_anchor_is_the_nearest_element_holding_the_whole_match() -> None:
    # 0: a row, 1: a link inside it, 2: a button elsewhere.
    anchors = [Anchor("row"), Anchor("link", up=0), Anchor("button")]
    assert common_anchor(anchors, [1, 1]) == 1
    assert common_anchor(anchors, [1, 0]) == 0
    assert common_anchor(anchors, [1, 2]) == -1
    assert common_anchor(anchors, [1, -1]) == -1
    mixed = build_line([("Order ", None, 0), ("7", None, 1), (" shipped", None, 0)])
    assert mixed is not None
    assert search([mixed], anchors, parse_find({"text": "7"})).page[0].anchor == 1
    assert search([mixed], anchors, parse_find({"text": "order 7"})).page[0].anchor == 0
    assert search([mixed], anchors, parse_find({"text": "shipped"})).page[0].anchor == 0


def test_pages_are_bounded_by_limit_and_by_characters() -> None:
    lines = [line(f"Item {i}") for i in range(1, 46)]
    first = search(lines, [], parse_find({"text": "item", "limit": 20}))
    assert (first.count, len(first.page), first.next_offset) == (45, 20, 20)
    query = parse_find({"text": "item", "cursor": parse_find({"text": "item"}).cursor(40)})
    last = search(lines, [], query)
    assert [h.text for h in last.page] == [f"Item {i}" for i in range(41, 46)]
    assert last.next_offset is None
    long_lines = [line(f"{i:03d} " + "w" * 400) for i in range(100)]
    wide = search(long_lines, [], parse_find({"text": "w", "limit": 100}))
    assert sum(len(h.text) for h in wide.page) <= MAX_RESULT_CHARS
    assert wide.count == 100 and wide.next_offset == len(wide.page) < 100


def test_the_result_is_lean() -> None:
    query = parse_find({"text": "x"})
    assert result(Hits(0, [], None), [], [], query, truncated=False) == {"count": 0}
    hits = search([line("x one"), line("x two")], [Anchor("row")], query)
    full = result(hits, ["s1c1", None], ["row", None], query, truncated=True)
    assert full == {
        "count": 2,
        "matches": [{"text": "x one", "ref": "s1c1", "role": "row"}, {"text": "x two"}],
        "truncated": True,
    }
    paged = search([line("x")] * 3, [], parse_find({"text": "x", "limit": 1}))
    assert result(paged, [None], [None], query, truncated=False)["nextCursor"] == query.cursor(1)


class _Clock(Clock):
    now = 100.0

    def monotonic(self) -> float:
        return self.now


def test_expired_unrenewable_refs_are_dropped_and_the_rest_kept() -> None:
    clock = _Clock()
    registry = RefRegistry(clock, ttl_s=30.0, new_generation=lambda: 1)
    handle: Any = object()  # never touched: dropping hands the entry back for release
    found = registry.add(handle, "row", None)
    named = registry.add(handle, "button", "Save")  # renewable: its lookup offers a fresh ref
    assert found and named and registry.drop_expired() == []
    clock.now += 31
    dropped = registry.drop_expired()
    assert [e.role for e in dropped] == ["row"] and set(registry.entries) == {named}
