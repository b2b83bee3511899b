"""Snapshot options (§6.2, §6.3), bounding and cursor pagination (§6.6, §6.7)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from browsermesh.errors import BrowserMeshError, ErrorCode, error_payload
from browsermesh.model.paging import (
    RETAINED_MAX_CHARS,
    SNAPSHOT_OPTION_KEYS,
    SnapshotOptions,
    SnapshotStore,
    clip_retained,
    content_format,
    normalize_snapshot_options,
    page_content,
    parse_cursor,
)
from browsermesh.model.text import utf8_len
from tests.support.examples import examples

# --------------------------------------------------------------------------------------------
# Options
# --------------------------------------------------------------------------------------------


def invalid(args: dict[str, Any]) -> BrowserMeshError:
    with pytest.raises(BrowserMeshError) as info:
        normalize_snapshot_options(args)
    assert info.value.code is ErrorCode.INVALID_ARGUMENT
    return info.value


def test_defaults_for_aria() -> None:
    options = normalize_snapshot_options({})
    assert options == SnapshotOptions()
    assert isinstance(options, SnapshotOptions)
    assert options.applied_bounds(None) == {
        "format": "aria",
        "scope": None,
        "maxDepth": None,
        "includeBoundingBoxes": False,
        "maxChars": 50_000,
        "maxBytes": 65_536,
        "includeRefs": False,
        "maxRefs": 50,
        "interactiveOnly": False,
        "maxChildren": None,
    }


def test_defaults_for_actions() -> None:
    options = normalize_snapshot_options({"format": "actions", "maxRefs": 7})
    assert isinstance(options, SnapshotOptions)
    assert options.include_refs is True and options.max_refs == 7
    scope = {"strategy": "role", "value": "navigation", "exact": True}
    bounds = options.applied_bounds(scope)
    assert bounds["format"] == "actions" and bounds["scope"] == scope
    assert bounds["includeRefs"] is True and bounds["maxDepth"] is None
    assert bounds["includeBoundingBoxes"] is False and bounds["interactiveOnly"] is False
    assert bounds["maxChildren"] is None and bounds["maxRefs"] == 7
    assert list(bounds) == [
        "format",
        "scope",
        "maxDepth",
        "includeBoundingBoxes",
        "maxChars",
        "maxBytes",
        "includeRefs",
        "maxRefs",
        "interactiveOnly",
        "maxChildren",
    ]


def test_all_aria_options() -> None:
    scope = {"strategy": "css", "value": "main"}
    options = normalize_snapshot_options(
        {
            "format": "aria",
            "scope": scope,
            "maxDepth": 0,
            "includeBoundingBoxes": True,
            "maxChars": 1,
            "maxBytes": 131_072,
            "includeRefs": True,
            "maxRefs": 100,
            "interactiveOnly": True,
            "maxChildren": 1000,
        }
    )
    assert options == SnapshotOptions(
        format="aria",
        scope=scope,
        max_depth=0,
        include_bounding_boxes=True,
        max_chars=1,
        max_bytes=131_072,
        include_refs=True,
        max_refs=100,
        interactive_only=True,
        max_children=1000,
    )


def test_integral_floats_are_integers() -> None:
    options = normalize_snapshot_options({"maxChars": 10.0})
    assert isinstance(options, SnapshotOptions) and options.max_chars == 10
    assert isinstance(options.max_chars, int)
    invalid({"maxChars": 10.5})
    invalid({"maxChars": float("nan")})
    invalid({"maxChars": True})
    invalid({"maxChars": "10"})


@pytest.mark.parametrize(
    ("name", "low", "high"),
    [
        ("maxChars", 1, 100_000),
        ("maxBytes", 1, 131_072),
        ("maxRefs", 1, 100),
        ("maxDepth", 0, 100),
        ("maxChildren", 1, 1000),
    ],
)
def test_numeric_ranges_carry_a_bound_clause(name: str, low: int, high: int) -> None:
    extra: dict[str, Any] = {"includeRefs": True} if name == "maxRefs" else {}
    assert isinstance(normalize_snapshot_options({name: low, **extra}), SnapshotOptions)
    assert isinstance(normalize_snapshot_options({name: high, **extra}), SnapshotOptions)
    error = invalid({name: high + 1, **extra})
    assert error.message == f"Invalid argument. Bound: {name} <= {high}."
    error = invalid({name: low - 1, **extra})
    assert error.message == f"Invalid argument. Bound: {name} >= {low}."


@pytest.mark.parametrize(
    "key", ["maxDepth", "includeBoundingBoxes", "interactiveOnly", "maxChildren"]
)
def test_aria_only_options_with_actions(key: str) -> None:
    value: Any = False if key in ("includeBoundingBoxes", "interactiveOnly") else 5
    error = invalid({"format": "actions", key: value})
    assert error.bound is None and error.internal["field"] == key


def test_include_refs_rules() -> None:
    invalid({"format": "actions", "includeRefs": False})
    ok = normalize_snapshot_options({"format": "actions", "includeRefs": True})
    assert isinstance(ok, SnapshotOptions) and ok.include_refs
    invalid({"maxRefs": 5})
    invalid({"maxRefs": 5, "includeRefs": False})
    ok = normalize_snapshot_options({"maxRefs": 5, "includeRefs": True})
    assert isinstance(ok, SnapshotOptions) and ok.max_refs == 5


@pytest.mark.parametrize(
    "args",
    [
        {"format": "html"},
        {"format": None},
        {"scope": "body"},
        {"scope": None},
        {"includeRefs": "true"},
        {"interactiveOnly": 1},
        {"maxDepth": None},
    ],
)
def test_wrong_types(args: dict[str, Any]) -> None:
    invalid(args)


def test_cursor_alone_is_returned() -> None:
    assert normalize_snapshot_options({"cursor": "snapshot_x.5"}) == "snapshot_x.5"
    assert normalize_snapshot_options({"cursor": "x", "timeoutMs": 100}) == "x"


@pytest.mark.parametrize("key", SNAPSHOT_OPTION_KEYS)
def test_cursor_with_any_other_option_is_rejected(key: str) -> None:
    invalid({"cursor": "snapshot_x.5", key: None})


@pytest.mark.parametrize("cursor", ["", "x" * 161, 5, None])
def test_cursor_value_checks(cursor: object) -> None:
    invalid({"cursor": cursor})


# --------------------------------------------------------------------------------------------
# Bounding
# --------------------------------------------------------------------------------------------


def test_contract_worked_example_bytes_and_chars() -> None:
    page = page_content("- document", 0, 4, 4, clipped=False)
    assert page.text == "- do" and page.next_offset == 4 and page.partial
    assert page.truncation == {
        "truncated": True,
        "byMaxChars": True,
        "byMaxBytes": True,
        "originalChars": 10,
        "originalBytes": 10,
        "returnedChars": 4,
        "returnedBytes": 4,
    }
    assert content_format("aria", page.partial) == "aria-yaml-fragment"


def test_contract_worked_example_through_the_store() -> None:
    store = SnapshotStore(now=lambda: 100.0, wall_now=lambda: 0.0, new_id=lambda: "snapshot_a")
    bounds = {"maxChars": 4, "maxBytes": 4}
    page, pagination = store.first_page("- document", bounds, "aria", False)
    assert page.text == "- do"
    assert pagination == {
        "snapshotId": "snapshot_a",
        "nextCursor": "snapshot_a.4",
        "offsetChars": 0,
        "expiresAt": "1970-01-01T00:00:30.000Z",
    }
    entry, second, pagination2 = store.read("snapshot_a.4")
    assert entry.format == "aria" and second.text == "cume"
    assert pagination2["offsetChars"] == 4 and pagination2["nextCursor"] == "snapshot_a.8"
    _, last, pagination3 = store.read("snapshot_a.8")
    assert last.text == "nt" and last.next_offset is None and last.partial
    assert last.truncation["truncated"] is False and last.truncation["byMaxChars"] is False
    assert pagination3 == {
        "snapshotId": "snapshot_a",
        "nextCursor": None,
        "offsetChars": 8,
        "expiresAt": "1970-01-01T00:00:30.000Z",
    }


def test_complete_first_page_retains_nothing() -> None:
    store = SnapshotStore()
    page, pagination = store.first_page(
        "- document", {"maxChars": 10, "maxBytes": 10}, "aria", False
    )
    assert page.text == "- document" and not page.partial and page.next_offset is None
    assert page.truncation["truncated"] is False
    assert pagination == {
        "snapshotId": None,
        "nextCursor": None,
        "offsetChars": 0,
        "expiresAt": None,
    }
    assert len(store) == 0
    assert content_format("actions", page.partial) == "action-table"
    assert content_format("actions", True) == "action-table-fragment"
    assert content_format("aria", False) == "aria-yaml"


def test_a_four_byte_emoji_is_never_split() -> None:
    content = "a😀b"
    page = page_content(content, 0, 10, 4, clipped=False)
    assert page.text == "a" and page.next_offset == 1
    assert page.truncation == {
        "truncated": True,
        "byMaxChars": False,
        "byMaxBytes": True,
        "originalChars": 3,
        "originalBytes": 6,
        "returnedChars": 1,
        "returnedBytes": 1,
    }
    page = page_content(content, 1, 10, 5, clipped=False)
    assert page.text == "😀b" and page.next_offset is None
    assert page.truncation["returnedChars"] == 2 and page.truncation["returnedBytes"] == 5
    assert page.partial and not page.truncation["truncated"]
    page = page_content(content, 1, 1, 5, clipped=False)
    assert page.text == "😀" and page.truncation["byMaxChars"] and not page.truncation["byMaxBytes"]


def test_multibyte_bytes_and_chars_exact() -> None:
    content = "日本語テキスト 😀 Ünïcödé"
    page = page_content(content, 0, 100, 10, clipped=False)
    assert page.text == "日本語"
    assert page.truncation["returnedBytes"] == 9 and page.truncation["returnedChars"] == 3
    assert page.truncation["originalChars"] == len(content)
    assert page.truncation["originalBytes"] == len(content.encode("utf-8"))
    assert page.truncation["byMaxBytes"] and not page.truncation["byMaxChars"]


def test_not_even_one_code_point_fits() -> None:
    with pytest.raises(BrowserMeshError) as info:
        page_content("ab😀", 2, 10, 3, clipped=False)
    assert info.value.code is ErrorCode.INVALID_ARGUMENT
    internal = info.value.internal
    assert {k: internal[k] for k in ("maxBytes", "requiredBytes", "offsetChars")} == {
        "maxBytes": 3,
        "requiredBytes": 4,
        "offsetChars": 2,
    }
    details = error_payload(info.value)["error"]["details"]
    assert details["field"] == "maxBytes" and details["rule"].startswith("at least 4,")
    with pytest.raises(BrowserMeshError):
        page_content("é", 0, 1, 1, clipped=False)


def test_offset_past_the_end_is_stale() -> None:
    for offset in (3, 4):
        with pytest.raises(BrowserMeshError) as info:
            page_content("abc", offset, 10, 10, clipped=False)
        assert info.value.code is ErrorCode.STALE_SNAPSHOT_CURSOR


def test_empty_content_is_one_complete_page() -> None:
    page = page_content("", 0, 10, 10, clipped=False)
    assert page.text == "" and page.next_offset is None and not page.partial
    assert page.truncation["originalChars"] == 0


def test_clipped_source_forces_truncated_and_partial() -> None:
    big = "x" * (RETAINED_MAX_CHARS + 5)
    clipped, was_clipped = clip_retained(big)
    assert len(clipped) == RETAINED_MAX_CHARS and was_clipped
    assert clip_retained("small") == ("small", False)
    page = page_content("abc", 0, 10, 10, clipped=True)
    assert page.text == "abc" and page.next_offset is None
    assert page.partial and page.truncation["truncated"]
    assert not page.truncation["byMaxChars"] and not page.truncation["byMaxBytes"]


@settings(max_examples=examples(150), deadline=None, suppress_health_check=list(HealthCheck))
@given(
    content=st.text(st.characters(codec="utf-8"), min_size=1, max_size=3000),
    max_chars=st.integers(1, 500),
    max_bytes=st.integers(4, 700),
)
def test_reading_through_cursors_reconstructs_content(
    content: str, max_chars: int, max_bytes: int
) -> None:
    store = SnapshotStore(now=lambda: 0.0, wall_now=lambda: 0.0)
    bounds = {"maxChars": max_chars, "maxBytes": max_bytes}
    page, pagination = store.first_page(content, bounds, "actions", False)
    pieces = [page.text]
    offset = 0
    while True:
        assert 1 <= len(page.text) <= max_chars
        assert utf8_len(page.text) <= max_bytes
        assert page.truncation["returnedBytes"] == utf8_len(page.text)
        assert page.truncation["returnedChars"] == len(page.text)
        assert page.truncation["originalBytes"] == utf8_len(content)
        assert pagination["offsetChars"] == offset
        if page.next_offset is None:
            assert pagination["nextCursor"] is None
            break
        more = content[offset + len(page.text)]
        assert page.truncation["byMaxChars"] == (len(page.text) == max_chars)
        assert page.truncation["byMaxBytes"] == (utf8_len(page.text) + utf8_len(more) > max_bytes)
        assert page.truncation["byMaxChars"] or page.truncation["byMaxBytes"]
        offset = page.next_offset
        _, page, pagination = store.read(pagination["nextCursor"])
        pieces.append(page.text)
    assert "".join(pieces) == content
    assert len(store) == (0 if len(pieces) == 1 else 1)


# --------------------------------------------------------------------------------------------
# Cursors
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cursor", "expected"),
    [
        ("a.1", ("a", 1)),
        ("a.b.3", ("a.b", 3)),
        ("snapshot_4f1c.120", ("snapshot_4f1c", 120)),
        ("c1x7q.120", ("c1x7q", 120)),
        ("a.9007199254740991", ("a", 2**53 - 1)),
        ("a.007", ("a", 7)),
    ],
)
def test_parse_cursor(cursor: str, expected: tuple[str, int]) -> None:
    assert parse_cursor(cursor) == expected


@pytest.mark.parametrize(
    "cursor",
    [
        "a.0",
        "a.-1",
        ".5",
        "a.b",
        "a.9007199254740992",
        "a",
        "a.",
        "a.+5",
        "a.1e3",
        "a. 5",
        "a.５",
        "",
    ],
)
def test_malformed_cursors_are_stale(cursor: str) -> None:
    with pytest.raises(BrowserMeshError) as info:
        parse_cursor(cursor)
    assert info.value.code is ErrorCode.STALE_SNAPSHOT_CURSOR


# --------------------------------------------------------------------------------------------
# Retained snapshots
# --------------------------------------------------------------------------------------------


class FakeClock:
    def __init__(self) -> None:
        self.mono = 1000.0
        self.wall = 1_700_000_000.0

    def now(self) -> float:
        return self.mono

    def wall_now(self) -> float:
        return self.wall


def stale(store: SnapshotStore, cursor: str) -> None:
    with pytest.raises(BrowserMeshError) as info:
        store.read(cursor)
    assert info.value.code is ErrorCode.STALE_SNAPSHOT_CURSOR


def test_store_ids_ttl_and_expiry_instant() -> None:
    clock = FakeClock()
    store = SnapshotStore(now=clock.now, wall_now=clock.wall_now)
    snapshot_id = store.put("abcdef", {"maxChars": 2, "maxBytes": 2}, "aria", False)
    assert re.fullmatch(r"c[0-9a-z]{4,}", snapshot_id)  # model.ids: kind c
    entry = store.get(snapshot_id)
    assert entry is not None and entry.content == "abcdef" and not entry.clipped
    assert entry.expires_at == 1030.0
    assert entry.expires_at_iso == "2023-11-14T22:13:50.000Z"
    clock.mono = 1029.999
    assert store.read(f"{snapshot_id}.2")[1].text == "cd"
    clock.mono = 1030.0  # expiresAt <= now: gone
    assert store.get(snapshot_id) is None
    stale(store, f"{snapshot_id}.2")
    assert len(store) == 0


def test_store_keeps_at_most_four() -> None:
    clock = FakeClock()
    store = SnapshotStore(now=clock.now, wall_now=clock.wall_now)
    ids = []
    for i in range(5):
        clock.mono += 1
        ids.append(store.put(f"content {i}", {"maxChars": 3, "maxBytes": 3}, "aria", False))
    assert len(store) == 4
    assert store.get(ids[0]) is None
    assert all(store.get(i) is not None for i in ids[1:])
    stale(store, f"{ids[0]}.3")


def test_store_prunes_expired_on_put_and_clear_drops_all() -> None:
    clock = FakeClock()
    store = SnapshotStore(now=clock.now, wall_now=clock.wall_now)
    old = store.put("old content", {"maxChars": 3, "maxBytes": 3}, "aria", False)
    clock.mono += 31
    new = store.put("new content", {"maxChars": 3, "maxBytes": 3}, "actions", True)
    assert len(store) == 1 and store.get(old) is None
    entry, page, _ = store.read(f"{new}.3")
    assert entry.format == "actions" and entry.clipped and page.partial
    assert page.truncation["truncated"]
    store.clear()
    assert store.get(new) is None
    stale(store, f"{new}.3")


def test_store_rejects_unknown_ids_and_out_of_range_offsets() -> None:
    store = SnapshotStore()
    snapshot_id = store.put("abcdef", {"maxChars": 2, "maxBytes": 2}, "aria", False)
    stale(store, "snapshot_unknown.2")
    stale(store, "c0zzz.2")  # the short-id shape, never issued (counters start at 1)
    stale(store, f"{snapshot_id}.6")
    stale(store, f"{snapshot_id}.60")
    stale(store, f"{snapshot_id}.0")
    stale(store, snapshot_id)
    assert store.read(f"{snapshot_id}.5")[1].text == "f"
