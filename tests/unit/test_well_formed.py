"""`well_formed`: lone surrogates become U+FFFD, everything else is kept (property-tested)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from browsermesh.model.jsonvalue import bound_page_json, bound_result
from browsermesh.model.text import well_formed

# High surrogates only: a high one followed by a low one would be a valid pair (joined).
HIGH = ("\ud800", "\udbff")
LONE = st.sampled_from(HIGH)


@given(st.text())
def test_valid_text_is_unchanged(text: str) -> None:
    assert well_formed(text) == text


@given(st.lists(st.one_of(st.text(max_size=5), LONE), max_size=8))
def test_result_always_encodes_and_keeps_valid_parts(parts: list[str]) -> None:
    out = well_formed("".join(parts))
    out.encode("utf-8")
    assert out == "".join("\ufffd" if p in HIGH else p for p in parts)


def test_a_split_pair_is_joined_and_a_lone_low_one_replaced() -> None:
    assert well_formed("a\ud83d\ude00b") == "a\U0001f600b"
    assert well_formed("\udc00x\udfff") == "\ufffdx\ufffd"


def test_evaluation_results_are_cleaned_in_keys_and_values() -> None:
    value, truncated = bound_result({"k\ud800": ["v\udfff", 1, None]})
    assert value == {"k\ufffd": ["v\ufffd", 1, None]} and truncated is False


def test_a_container_inside_itself_becomes_circular() -> None:
    a: dict[str, object] = {"n": 1}
    a["x"] = a
    a["y"] = [a, "k"]
    value, truncated = bound_result(a)
    assert value == {"n": 1, "x": "[Circular]", "y": ["[Circular]", "k"]} and not truncated


def test_shared_references_cost_bounded_work() -> None:
    # Found by fuzzing: `a.x = a; a.y = a` (or a deep DAG) doubled the work at every level and
    # froze the server; pytest's timeout fails this test if that comes back.
    node: dict[str, object] = {}
    for _ in range(100):
        node = {"x": node, "y": node}
    value, truncated = bound_result(node)
    assert truncated is True and isinstance(value, str) and len(value.encode()) <= 65_536


def test_page_json_is_parsed_and_bounded_like_a_value() -> None:
    assert bound_page_json('{"k\\ud800":[1,null]}', False) == ({"k\ufffd": [1, None]}, False)


def test_a_cut_page_json_becomes_its_prefix() -> None:
    text = "[" + ",".join(["1"] * 40_000) + ","
    value, truncated = bound_page_json(text, True)
    assert truncated and value == text[:65_536]


def test_page_json_that_is_not_json_is_refused() -> None:
    with pytest.raises(ValueError):
        bound_page_json("[1,", False)
