"""Observability rings, cursors and bounded reads (reference §8, §17)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from browsermesh.errors import BrowserMeshError, ErrorCode
from browsermesh.model.clock import Clock
from browsermesh.model.observe import (
    MAX_DURATION_MS,
    MAX_EVENTS_PER_SECOND,
    ObserveLimits,
    PageObservations,
)
from browsermesh.model.observe_query import RESOURCE_TYPES, parse_query
from tests.support.examples import examples

# `<namespace>.<base-36 sequence>`: namespace = model.ids.short_id("n") (issue 15)
EVENT_ID_RE = re.compile(r"n[0-9a-z]{4,}\.[1-9a-z][0-9a-z]*")


def seq_of(event_id: str) -> int:
    return int(event_id.rsplit(".", 1)[1], 36)


class FakeClock(Clock):
    """A settable clock (seconds)."""

    def __init__(self, wall: float = 1_740_830_400.0, mono: float = 1000.0) -> None:
        self.wall_value = wall
        self.mono_value = mono

    def wall(self) -> float:
        return self.wall_value

    def monotonic(self) -> float:
        return self.mono_value


class BrokenClock(Clock):
    def wall(self) -> float:
        raise RuntimeError("boom")

    def monotonic(self) -> float:
        raise RuntimeError("boom")


def make(
    events: int = 200,
    string_chars: int = 2048,
    page_size: int = 100,
    response_bytes: int = 65_536,
    clock: Clock | None = None,
    page_id: str = "page_1",
) -> PageObservations:
    limits = ObserveLimits(
        events_per_ring=events,
        string_chars=string_chars,
        page_size=page_size,
        response_bytes=response_bytes,
    )
    return PageObservations("session_1", page_id, limits, clock or FakeClock())


def compact(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def error_of(call: Callable[[], Any]) -> BrowserMeshError:
    with pytest.raises(BrowserMeshError) as info:
        call()
    return info.value


def invalid(call: Callable[[], Any]) -> BrowserMeshError:
    error = error_of(call)
    assert error.code is ErrorCode.INVALID_ARGUMENT
    return error


def read_all(obs: PageObservations, source: Any, limit: int = 7, **kw: Any) -> list[dict[str, Any]]:
    """Page through everything with `limit`, checking cursor continuity."""
    out: list[dict[str, Any]] = []
    cursor: str | None = None
    for _ in range(10_000):
        result = obs.read(source, cursor, limit, kw.get("include_text", False))
        if not result["events"]:
            if result["nextCursor"] == cursor:
                return out
            # it passed over events of other kinds: the cursor moves past them, once
            assert cursor is None or seq_of(result["nextCursor"]) > seq_of(cursor)
            again = obs.read(source, result["nextCursor"], limit, kw.get("include_text", False))
            assert again["events"] == [] and again["nextCursor"] == result["nextCursor"]
            return out
        # the last returned event, or a later one the read passed over (another kind)
        assert seq_of(result["nextCursor"]) >= seq_of(result["events"][-1]["eventId"])
        out.extend(result["events"])
        cursor = result["nextCursor"]
    raise AssertionError("paging did not terminate")


# --------------------------------------------------------------------------- shapes


def test_event_shapes_and_ids() -> None:
    obs = make()
    obs.console("warning", "low disk")
    obs.page_error("TypeError: x is undefined")
    key = object()
    obs.request(key, "get", "https://example.com/a?b=1#frag", "document")
    obs.response(key, 200)

    console = obs.read("console", None, None, True)
    assert set(console) == {"source", "events", "nextCursor", "droppedCount", "gap"}
    assert console["source"] == "console"
    (event,) = console["events"]
    assert event == {
        "eventId": event["eventId"],
        "timestamp": "2025-03-01T12:00:00.000Z",
        "kind": "console",
        "level": "warning",
        "text": "low disk",
    }
    assert EVENT_ID_RE.fullmatch(event["eventId"])
    assert event["eventId"].endswith(".1")
    assert console["droppedCount"] == 0 and console["gap"] is False

    (err,) = obs.read("pageError", None, None, True)["events"]
    assert err["kind"] == "page_error" and err["text"] == "TypeError: x is undefined"
    assert err["eventId"].endswith(".2")  # same ring as console
    assert err["eventId"].rsplit(".", 1)[0] == event["eventId"].rsplit(".", 1)[0]

    request, response = obs.read("network", None, None, False)["events"]
    assert request["eventId"].endswith(".1")  # own ring, own sequence
    assert request["eventId"].rsplit(".", 1)[0] != event["eventId"].rsplit(".", 1)[0]
    assert request["kind"] == "request" and response["kind"] == "response"
    assert request["requestId"] == response["requestId"] == "r1"
    assert request["method"] == "GET"
    assert request["url"] == "https://example.com/a?b=1"
    assert request["resourceType"] == "document"
    assert "status" not in request
    assert response["status"] == 200 and response["durationMs"] == 0


def test_text_omitted_without_include_text() -> None:
    obs = make()
    obs.console("log", "hello")
    obs.page_error("bad")
    assert "text" not in obs.read("console", None, None, False)["events"][0]
    assert "text" not in obs.read("pageError", None, None, False)["events"][0]


def test_field_bounds() -> None:
    obs = make(string_chars=128)
    obs.console("x" * 100, "y" * 500)
    (event,) = obs.read("console", None, None, True)["events"]
    assert len(event["level"]) == 64 and event["level"].endswith("…")
    assert len(event["text"]) == 128 and event["text"].endswith("…")
    key = object()
    obs.request(key, "m" * 40, "https://example.com/" + "p" * 300, "r" * 80)
    obs.response(key, 5000)
    request, response = obs.read("network", None, None, False)["events"]
    assert request["method"] == "M" * 31 + "…"
    assert len(request["url"]) == 128 and request["url"].endswith("…")
    assert len(request["resourceType"]) == 64
    assert response["status"] == 999


def test_lone_surrogates_never_break_reads() -> None:
    obs = make()
    obs.console("log", "bad \ud800 text")
    (event,) = obs.read("console", None, None, True)["events"]
    compact(event)  # encodes
    assert "\ufffd" in event["text"]


# --------------------------------------------------------------------------- rings


def test_network_flood_never_evicts_console_warning() -> None:
    obs = make(events=200)
    obs.console("warning", "the one warning")
    keys = [object() for _ in range(1000)]
    for index, key in enumerate(keys):
        obs.request(key, "GET", f"https://example.com/{index}", "fetch")
    console = obs.read("console", None, None, True)
    assert [e["text"] for e in console["events"]] == ["the one warning"]
    assert console["droppedCount"] == 0
    network = obs.read("network", None, 100, False)
    assert network["droppedCount"] == 800
    assert network["events"][0]["url"] == "https://example.com/800"


def test_dropped_count_is_cumulative_per_ring() -> None:
    obs = make(events=5)
    for index in range(12):
        obs.console("log", f"m{index}")
    assert obs.read("console", None, None, False)["droppedCount"] == 7
    assert obs.read("pageError", None, None, False)["droppedCount"] == 7
    obs.page_error("e")
    assert obs.read("console", None, None, False)["droppedCount"] == 8
    assert obs.read("network", None, None, False)["droppedCount"] == 0
    assert obs.read("requestFailed", None, None, False)["droppedCount"] == 0


def test_source_reads_only_its_kinds() -> None:
    obs = make()
    ok, bad = object(), object()
    obs.console("log", "c")
    obs.page_error("p")
    obs.request(ok, "GET", "https://example.com/ok", "fetch")
    obs.request(bad, "GET", "https://example.com/bad", "fetch")
    obs.response(ok, 500)
    obs.request_failed(bad, "net::ERR_CONNECTION_REFUSED")
    assert [e["kind"] for e in obs.read("console", None, None, False)["events"]] == ["console"]
    assert [e["kind"] for e in obs.read("pageError", None, None, False)["events"]] == ["page_error"]
    assert [e["kind"] for e in obs.read("network", None, None, False)["events"]] == [
        "request",
        "request",
        "response",
    ]
    (failed,) = obs.read("requestFailed", None, None, False)["events"]
    assert failed["kind"] == "request_failed"
    assert failed["failure"] == "net::ERR_CONNECTION_REFUSED"
    assert failed["url"] == "https://example.com/bad"


# --------------------------------------------------------------------------- cursors


def test_cursor_paging_is_exact_and_without_duplicates() -> None:
    obs = make()
    for index in range(30):
        obs.console("log", f"m{index}")
        obs.page_error(f"e{index}")
    console = read_all(obs, "console", limit=7, include_text=True)
    assert [e["text"] for e in console] == [f"m{i}" for i in range(30)]
    assert len({e["eventId"] for e in console}) == 30
    errors = read_all(obs, "pageError", limit=4, include_text=True)
    assert [e["text"] for e in errors] == [f"e{i}" for i in range(30)]


def test_reads_never_consume_and_default_limit() -> None:
    obs = make()
    for index in range(60):
        obs.console("log", f"m{index}")
    first = obs.read("console", None, None, False)
    again = obs.read("console", None, None, False)
    assert first == again
    assert len(first["events"]) == 50
    assert len(make(page_size=10).read("console", None, None, False)["events"]) == 0
    small = make(page_size=10)
    for index in range(20):
        small.console("log", f"m{index}")
    assert len(small.read("console", None, None, False)["events"]) == 10


def test_next_cursor_echoes_since_when_nothing_new() -> None:
    obs = make()
    assert obs.read("console", None, None, False)["nextCursor"] is None
    obs.console("log", "a")
    cursor = obs.read("console", None, None, False)["nextCursor"]
    result = obs.read("console", cursor, None, False)
    assert result["events"] == [] and result["nextCursor"] == cursor and result["gap"] is False
    # A cursor of the shared console ring works for pageError too (no page errors yet).
    assert obs.read("pageError", cursor, None, False)["nextCursor"] == cursor
    obs.console("log", "b")
    (event,) = obs.read("console", cursor, None, True)["events"]
    assert event["text"] == "b"


def test_gap_after_eviction() -> None:
    obs = make(events=5)
    for index in range(3):
        obs.console("log", f"m{index}")
    first_id = obs.read("console", None, 1, False)["nextCursor"]  # seq 1
    third_id = obs.read("console", None, 3, False)["nextCursor"]  # seq 3
    for index in range(3, 9):  # seqs 4..9; ring keeps 5..9
        obs.console("log", f"m{index}")
    result = obs.read("console", first_id, None, True)
    assert result["gap"] is True
    assert [e["text"] for e in result["events"]] == [f"m{i}" for i in range(4, 9)]
    assert result["droppedCount"] == 4
    # seq 3 < oldest retained (5) − 1 → gap; seq 4 = oldest − 1 → no gap.
    assert obs.read("console", third_id, None, False)["gap"] is True
    namespace = first_id.rsplit(".", 1)[0]
    fourth = obs.read("console", namespace + ".4", None, True)
    assert fourth["gap"] is False
    assert [e["text"] for e in fourth["events"]] == [f"m{i}" for i in range(4, 9)]
    oldest_id = fourth["events"][0]["eventId"]  # seq 5
    assert obs.read("console", oldest_id, None, False)["gap"] is False
    assert obs.read("console", None, None, False)["gap"] is False


def test_since_event_id_rejections() -> None:
    obs = make()
    other = make(page_id="page_2")
    obs.console("log", "c")
    key = object()
    obs.request(key, "GET", "https://example.com/", "fetch")
    other.console("log", "x")
    console_id = obs.read("console", None, None, False)["nextCursor"]
    network_id = obs.read("network", None, None, False)["nextCursor"]
    other_id = other.read("console", None, None, False)["nextCursor"]
    assert console_id and network_id and other_id

    invalid(lambda: obs.read("console", network_id, None, False))  # other ring
    invalid(lambda: obs.read("network", console_id, None, False))
    invalid(lambda: obs.read("requestFailed", console_id, None, False))
    invalid(lambda: obs.read("console", other_id, None, False))  # other page
    namespace = console_id.rsplit(".", 1)[0]
    for malformed in (
        "",
        "x",
        "x" * 129,
        namespace,
        namespace + ".",
        namespace + "_1",  # the old separator
        namespace + ".01",  # not canonical: one id per sequence
        namespace + ".0",
        namespace + ".A",
        namespace + ".1.1",
        namespace + ". 1",
        namespace + ".1\n",
        namespace + "x.1",
        "." + "1",
        namespace + "." + "1" * 14,  # more digits than any sequence
        f"cursor_{namespace}_0000000001",
    ):
        invalid(lambda m=malformed: obs.read("console", m, None, False))  # type: ignore[misc]
    invalid(lambda: obs.read("console", namespace + ".2", None, False))  # beyond
    assert obs.read("console", namespace + ".1", None, False)["events"] == []


# --------------------------------------------------------------------------- arguments


def test_limit_ceiling_message() -> None:
    obs = make(page_size=100)
    error = invalid(lambda: obs.read("console", None, 101, False))
    assert error.message == (
        "Invalid argument. Bound: limit <= 100 (BROWSERMESH_OBSERVABILITY_PAGE_SIZE)."
    )
    assert obs.read("console", None, 100, False)["events"] == []
    small = make(page_size=7)
    assert invalid(lambda: small.read("console", None, 8, False)).message == (
        "Invalid argument. Bound: limit <= 7 (BROWSERMESH_OBSERVABILITY_PAGE_SIZE)."
    )
    invalid(lambda: obs.read("console", None, 0, False))
    invalid(lambda: obs.read("console", None, True, False))


def test_include_text_rejected_for_network_sources() -> None:
    obs = make()
    invalid(lambda: obs.read("network", None, None, True))
    invalid(lambda: obs.read("requestFailed", None, None, True))
    invalid(lambda: obs.read("bogus", None, None, False))  # type: ignore[arg-type]


# --------------------------------------------------------------------------- byte budget


def test_oversized_text_is_shortened_to_fit() -> None:
    obs = make(events=10, string_chars=8192, response_bytes=1024)
    obs.console("log", "é" * 5000)
    obs.console("log", "second")
    result = obs.read("console", None, 10, True)
    (event,) = result["events"]
    assert event["text"].endswith("…")
    assert set(event["text"][:-1]) == {"é"}
    assert len(compact(result["events"])) <= 1024 - 512
    # Maximal: one more code point would not fit.
    longer = dict(event, text="é" + event["text"])
    assert len(compact([longer])) > 1024 - 512
    assert result["nextCursor"] == event["eventId"]
    # The second event is left for the next read.
    follow = obs.read("console", result["nextCursor"], 10, True)
    assert [e["text"] for e in follow["events"]] == ["second"]
    # Without text the same event fits unshortened.
    assert len(obs.read("console", None, 10, False)["events"]) == 2


def test_byte_budget_leaves_later_events_for_the_next_read() -> None:
    obs = make(events=100, string_chars=8192, response_bytes=4096)
    for index in range(20):
        obs.console("log", f"{index}:" + "x" * 600)
    pages: list[list[dict[str, Any]]] = []
    cursor: str | None = None
    while True:
        result = obs.read("console", cursor, 100, True)
        if not result["events"]:
            break
        assert len(compact(result["events"])) <= 4096 - 512
        pages.append(result["events"])
        cursor = result["nextCursor"]
    assert all(len(page) < 20 for page in pages) and len(pages) > 1
    texts = [e["text"] for page in pages for e in page]
    assert texts == [f"{index}:" + "x" * 600 for index in range(20)]  # none shortened


def test_failure_text_is_shortened() -> None:
    obs = make(string_chars=8192, response_bytes=1024)
    key = object()
    obs.request(key, "GET", "https://example.com/", "fetch")
    obs.request_failed(key, "net::ERR_FAILED " + "z" * 4000)
    result = obs.read("requestFailed", None, None, False)
    (event,) = result["events"]
    assert event["failure"].startswith("net::ERR_FAILED z")
    assert event["failure"].endswith("…")
    assert len(compact(result["events"])) <= 512


def _assert_too_large(call: Callable[[], Any], response_bytes: int) -> None:
    error = error_of(call)
    assert error.code is ErrorCode.LIMIT_EXCEEDED
    assert error.message == (
        f"Configured resource limit exceeded. Bound: responseBytes <= {response_bytes} "
        "(BROWSERMESH_OBSERVABILITY_RESPONSE_BYTES)."
    )


def test_limit_exceeded_when_even_a_minimal_event_cannot_fit() -> None:
    # Both values are inside their configured ranges (string chars 128..8192,
    # response bytes 1024..262144): a 2,000-char URL cannot fit 512 bytes, and a URL is
    # never shortened at read time.
    obs = make(string_chars=2048, response_bytes=1024)
    key = object()
    obs.request(key, "GET", "https://example.com/" + "a" * 1980, "fetch")
    obs.request_failed(key, "net::ERR_FAILED")
    _assert_too_large(lambda: obs.read("network", None, None, False), 1024)
    # The failure text would be shortened to "…", and that still does not fit.
    _assert_too_large(lambda: obs.read("requestFailed", None, None, False), 1024)

    # Smallest string bound: 128 code points of a 4-byte script still overflow 512 bytes.
    cjk = make(string_chars=128, response_bytes=1024)
    cjk.request(key, "GET", "https://example.com/" + "\U00020000" * 200, "fetch")
    _assert_too_large(lambda: cjk.read("network", None, None, False), 1024)


# --------------------------------------------------------------------------- sanitization


def test_secrets_never_appear_in_any_read() -> None:
    obs = make()
    obs.console("log", "login token=abc123 and password=hunter2")
    obs.console("error", "Authorization: Bearer abc123")
    obs.page_error("failed with password=hunter2, token=abc123")
    key = object()
    obs.request(
        key, "POST", "https://user:hunter2@example.com/x?token=abc123&password=hunter2", "xhr"
    )
    obs.response(key, 401)
    obs.request_failed(key, "net::ERR_ABORTED token=abc123 password=hunter2")
    dumps = []
    for source, text in (
        ("console", True),
        ("console", False),
        ("pageError", True),
        ("pageError", False),
        ("network", False),
        ("requestFailed", False),
    ):
        result = obs.read(source, None, None, text)  # type: ignore[arg-type]
        assert result["events"], source
        dumps.append(json.dumps(result, ensure_ascii=False))
    blob = "\n".join(dumps)
    assert "abc123" not in blob
    assert "hunter2" not in blob
    assert "token=[REDACTED]" in blob and "password=[REDACTED]" in blob


def test_non_http_urls_are_dropped_and_not_tracked() -> None:
    obs = make()
    keys = [object() for _ in range(5)]
    for key, url in zip(
        keys,
        [
            "data:text/plain,hello",
            "blob:https://example.com/1234",
            "javascript:alert(1)",
            "not a url",
            "ftp://example.com/file",
        ],
        strict=True,
    ):
        obs.request(key, "GET", url, "other")
        obs.response(key, 200)
        obs.request_failed(key, "net::ERR_FAILED")
    assert obs.read("network", None, None, False)["events"] == []
    assert obs.read("requestFailed", None, None, False)["events"] == []
    assert obs.inflight_count == 0
    good = object()
    obs.request(good, "GET", "http://example.com/", "document")
    (event,) = obs.read("network", None, None, False)["events"]
    assert event["requestId"] == "r1"


# --------------------------------------------------------------------------- tracking


def test_request_response_failed_share_request_id() -> None:
    clock = FakeClock()
    obs = make(clock=clock)
    first, second = object(), object()
    obs.request(first, "GET", "https://example.com/1", "fetch")
    obs.request(second, "GET", "https://example.com/2", "fetch")
    clock.mono_value += 0.25
    obs.response(first, 200)
    clock.mono_value += 0.5
    obs.request_failed(first, "net::ERR_ABORTED")
    obs.request_failed(first, "again")  # untracked after failure → ignored
    obs.response(first, 200)  # ignored
    network = obs.read("network", None, None, False)["events"]
    assert [(e["kind"], e["requestId"]) for e in network] == [
        ("request", "r1"),
        ("request", "r2"),
        ("response", "r1"),
    ]
    assert network[2]["durationMs"] == 250
    (failed,) = obs.read("requestFailed", None, None, False)["events"]
    assert failed["requestId"] == "r1"
    assert failed["durationMs"] == 750
    assert failed["method"] == "GET" and failed["url"] == "https://example.com/1"
    assert failed["resourceType"] == "fetch"
    assert obs.inflight_count == 1

    obs.request_finished(second)
    obs.response(second, 200)
    assert obs.inflight_count == 0
    assert len(obs.read("network", None, None, False)["events"]) == 3


def test_request_ids_use_base36_counter() -> None:
    obs = make(events=100)
    keys = [object() for _ in range(40)]
    for key in keys:
        obs.request(key, "GET", "https://example.com/", "fetch")
    events = obs.read("network", None, 100, False)["events"]
    assert events[9]["requestId"] == "ra"
    assert events[35]["requestId"] == "r10"


def test_duration_rounding_and_clamping() -> None:
    clock = FakeClock()
    obs = make(clock=clock)
    cases = [
        (0.0026, 3),
        (0.0014, 1),
        (-5.0, 0),
        (86_400.0, MAX_DURATION_MS),
        (1e9, MAX_DURATION_MS),
    ]
    keys = [object() for _ in cases]
    for key, (delta, _expected) in zip(keys, cases, strict=True):
        clock.mono_value = 1000.0
        obs.request(key, "GET", "https://example.com/", "fetch")
        clock.mono_value = 1000.0 + delta
        obs.response(key, 200)
    responses = [e for e in obs.read("network", None, None, False)["events"] if "status" in e]
    assert [e["durationMs"] for e in responses] == [expected for _delta, expected in cases]


def test_inflight_map_is_bounded() -> None:
    obs = make(events=20)  # bound = max(32, 40) = 40
    keys = [object() for _ in range(50)]
    for key in keys:
        obs.request(key, "GET", "https://example.com/", "fetch")
    assert obs.inflight_count == 40
    cursor = read_all(obs, "network", limit=100)[-1]["eventId"]
    responded: list[str] = []
    for key in keys:
        obs.response(key, 204)
        new = obs.read("network", cursor, None, False)
        if new["events"]:
            (event,) = new["events"]
            assert event["kind"] == "response"
            responded.append(event["requestId"])
            cursor = new["nextCursor"]
    assert len(responded) == 40
    assert responded[0] == "rb"  # requests 1..10 were dropped from tracking
    assert responded[-1] == "r1e"  # request 50

    small = make(events=1)  # bound = max(32, 2) = 32
    more = [object() for _ in range(40)]
    for key in more:
        small.request(key, "GET", "https://example.com/", "fetch")
    assert small.inflight_count == 32


def test_capture_never_raises() -> None:
    obs = make(clock=BrokenClock())
    key = object()
    obs.console("log", "x")
    obs.page_error("x")
    obs.request(key, "GET", "https://example.com/", "fetch")
    obs.response(key, 200)
    obs.request_failed(key, "x")
    obs.request_finished(key)
    ok = make()
    ok.console(None, None)  # type: ignore[arg-type]
    ok.request(key, None, None, None)  # type: ignore[arg-type]
    ok.request(["unhashable"], "GET", "https://example.com/", "fetch")
    ok.response(key, "200")  # type: ignore[arg-type]
    ok.request_failed(object(), "untracked")
    ok.request_finished(object())
    assert len(ok.read("console", None, None, False)["events"]) == 1


def test_dispose_clears_everything() -> None:
    obs = make(events=2)
    key = object()
    for index in range(5):
        obs.console("log", f"{index}")
    obs.request(key, "GET", "https://example.com/", "fetch")
    obs.dispose()
    assert obs.disposed
    assert obs.inflight_count == 0
    result = obs.read("console", None, None, False)
    assert result["events"] == [] and result["droppedCount"] == 0
    obs.console("log", "after")
    obs.response(key, 200)
    assert obs.read("console", None, None, False)["events"] == []
    assert obs.read("network", None, None, False)["events"] == []


def test_limits_validation() -> None:
    with pytest.raises(ValueError):
        ObserveLimits(events_per_ring=0, string_chars=128, page_size=1, response_bytes=1024)


# --------------------------------------------------------------------------- property


@settings(max_examples=examples(60), deadline=None)
@given(
    ops=st.lists(st.sampled_from(["console", "error", "request"]), max_size=80),
    capacity=st.integers(min_value=1, max_value=30),
    limit=st.integers(min_value=1, max_value=10),
)
def test_paging_returns_exactly_the_retained_events(
    ops: list[str], capacity: int, limit: int
) -> None:
    obs = make(events=capacity, page_size=10)
    keys: list[object] = []
    for index, op in enumerate(ops):
        if op == "console":
            obs.console("log", f"c{index}")
        elif op == "error":
            obs.page_error(f"e{index}")
        else:
            keys.append(object())
            obs.request(keys[-1], "GET", f"https://example.com/{index}", "fetch")
    console_ops = [(i, op) for i, op in enumerate(ops) if op != "request"][-capacity:]
    expected_console = [f"c{i}" for i, op in console_ops if op == "console"]
    expected_errors = [f"e{i}" for i, op in console_ops if op == "error"]
    assert [e["text"] for e in read_all(obs, "console", limit, include_text=True)] == (
        expected_console
    )
    assert [e["text"] for e in read_all(obs, "pageError", limit, include_text=True)] == (
        expected_errors
    )
    network_ops = [i for i, op in enumerate(ops) if op == "request"][-capacity:]
    assert [e["url"] for e in read_all(obs, "network", limit)] == [
        f"https://example.com/{i}" for i in network_ops
    ]


# --------------------------------------------------------------------------- ingestion cap


def test_each_ring_admits_a_bounded_number_of_events_per_second() -> None:
    clock = FakeClock()
    obs = make(clock=clock)
    admitted = sum(obs.admit("console") for _ in range(MAX_EVENTS_PER_SECOND + 50))
    assert admitted == MAX_EVENTS_PER_SECOND
    assert obs.read("console", None, None, False)["droppedCount"] == 50
    assert obs.admit("network")  # the other ring has its own allowance
    assert obs.reopens_in("console") == pytest.approx(1.0)
    clock.mono_value += 0.4
    assert not obs.admit("console") and obs.reopens_in("console") == pytest.approx(0.6)
    clock.mono_value += 0.6
    assert obs.reopens_in("console") == 0 and obs.admit("console")
    assert obs.read("pageError", None, None, False)["droppedCount"] == 51


def test_popups_are_console_ring_events_with_sanitized_urls() -> None:
    obs = make(string_chars=128)
    obs.popup("https://user:pw@example.com/p?token=abc&x=1#frag", closed=True)
    obs.popup("about:blank", closed=False)
    events = obs.read("console", None, None, True)["events"]
    assert [(e["kind"], e["closed"]) for e in events] == [("popup", True), ("popup", False)]
    assert events[0]["url"] == "https://example.com/p?token=[REDACTED]&x=1"
    assert events[1]["url"] == "about:blank"
    assert "abc" not in json.dumps(events) and "pw@" not in json.dumps(events)
    assert obs.read("pageError", None, None, True)["events"] == []


# --------------------------------------------------------------------------- filters (issue 15)


def query(obs: PageObservations, **args: Any) -> dict[str, Any]:
    """One browser_observe call as the runtime makes it."""
    return obs.query(parse_query(args))


def traffic(obs: PageObservations) -> None:
    """Six requests: GET/POST fetches with statuses, an image, a script, a failure."""
    rows = [
        ("GET", "https://shop.test/api/items?page=1", "fetch", 200),
        ("POST", "https://shop.test/api/orders", "fetch", 201),
        ("GET", "https://shop.test/api/missing", "xhr", 404),
        ("GET", "https://shop.test/img/logo.png", "image", 200),
        ("GET", "https://cdn.test/app.js", "script", 500),
        ("DELETE", "https://shop.test/api/orders/7", "fetch", None),
    ]
    for method, url, kind, status in rows:
        key = object()
        obs.request(key, method, url, kind)
        if status is None:
            obs.request_failed(key, "net::ERR_CONNECTION_REFUSED")
        else:
            obs.response(key, status)


def test_each_filter_selects_its_events() -> None:
    obs = make()
    traffic(obs)
    api = query(obs, source="network", url="**/api/**")["events"]
    assert {e["url"] for e in api} == {
        "https://shop.test/api/items?page=1",
        "https://shop.test/api/orders",
        "https://shop.test/api/missing",
        "https://shop.test/api/orders/7",
    }
    # `*` stops at `/`: /api/* is not /api/orders/7
    one_level = query(obs, source="network", url="https://shop.test/api/*")["events"]
    assert {e["url"].rsplit("/", 1)[1] for e in one_level} == {"items?page=1", "orders", "missing"}
    posts = query(obs, source="network", method="POST")["events"]
    assert [(e["kind"], e["method"]) for e in posts] == [("request", "POST"), ("response", "POST")]
    images = query(obs, source="network", resourceType="image")["events"]
    assert [e["kind"] for e in images] == ["request", "response"]
    assert all(e["resourceType"] == "image" for e in images)
    errors = query(obs, source="network", statusMin=400)["events"]
    assert [(e["kind"], e["status"]) for e in errors] == [("response", 404), ("response", 500)]
    ok = query(obs, source="network", statusMax=299)["events"]
    assert sorted(e["status"] for e in ok) == [200, 200, 201]
    exact = query(obs, source="network", statusMin=404, statusMax=404)["events"]
    assert [e["url"] for e in exact] == ["https://shop.test/api/missing"]


def test_a_status_filter_excludes_events_without_a_status() -> None:
    obs = make()
    traffic(obs)
    statused = query(obs, source="network", statusMin=100)["events"]
    assert len(statused) == 5 and all(e["kind"] == "response" for e in statused)
    assert query(obs, source="requestFailed", statusMin=100)["events"] == []
    (failed,) = query(obs, source="requestFailed", method="DELETE")["events"]
    assert failed["kind"] == "request_failed"
    assert query(obs, source="requestFailed", url="**/items*")["events"] == []


def test_combined_filters_must_all_match() -> None:
    obs = make()
    traffic(obs)
    both = query(obs, source="network", url="**/api/**", method="GET", statusMin=400)["events"]
    assert [(e["status"], e["url"]) for e in both] == [(404, "https://shop.test/api/missing")]
    none = query(obs, source="network", resourceType="image", statusMin=500)["events"]
    assert none == []
    typed = query(obs, source="network", resourceType="fetch", method="POST", statusMax=201)
    assert [e["status"] for e in typed["events"]] == [201]


def test_the_url_filter_sees_the_sanitized_url() -> None:
    obs = make()
    key = object()
    obs.request(key, "GET", "https://u:pw@shop.test/login?token=abc&next=1#f", "document")
    # the secret is not there to match: the glob sees `token=[REDACTED]`
    assert query(obs, source="network", url="**token=abc**")["events"] == []
    (event,) = query(obs, source="network", url="**token=[REDACTED]**")["events"]
    assert "abc" not in event["url"] and "pw" not in event["url"]
    hit = query(obs, source="network", url="https://shop.test/login?token=*&next=1")["events"]
    assert len(hit) == 1


def test_limit_counts_matching_events_and_the_cursor_passes_over_the_rest() -> None:
    obs = make()
    for index in range(10):
        folder = "api" if index % 3 == 0 else "img"
        obs.request(object(), "GET", f"https://shop.test/{folder}/{index}", "fetch")
    first = query(obs, source="network", url="**/api/*", limit=2)
    assert [e["url"][-1] for e in first["events"]] == ["0", "3"]
    # stopped at a matching event it could not return: the cursor is the last returned one
    assert first["nextCursor"] == first["events"][-1]["eventId"]
    rest = query(obs, source="network", url="**/api/*", limit=2, sinceEventId=first["nextCursor"])
    assert [e["url"][-1] for e in rest["events"]] == ["6", "9"]
    # examined everything after 9: nothing was left, so the cursor is the ring's newest event
    assert rest["nextCursor"] == rest["events"][-1]["eventId"]
    obs.request(object(), "GET", "https://shop.test/img/10", "fetch")
    passed = query(obs, source="network", url="**/api/*", sinceEventId=rest["nextCursor"])
    assert passed["events"] == []
    newest = query(obs, source="network", limit=1, newestFirst=True)["events"][0]["eventId"]
    assert passed["nextCursor"] == newest  # moved past the non-matching event, once
    again = query(obs, source="network", url="**/api/*", sinceEventId=passed["nextCursor"])
    assert again["events"] == [] and again["nextCursor"] == passed["nextCursor"]


def test_filtered_reads_keep_the_byte_budget() -> None:
    obs = make(events=100, string_chars=2048, response_bytes=2048)
    for index in range(30):
        obs.request(object(), "GET", f"https://shop.test/api/{index}/" + "p" * 300, "fetch")
        obs.request(object(), "GET", f"https://shop.test/img/{index}", "image")
    seen: list[str] = []
    cursor = None
    for _ in range(100):
        args: dict[str, Any] = {"source": "network", "resourceType": "fetch", "limit": 100}
        result = query(obs, **args, **({"sinceEventId": cursor} if cursor else {}))
        assert len(compact(result["events"])) <= 2048 - 512
        if not result["events"]:
            break
        seen += [e["url"].split("/")[4] for e in result["events"]]
        cursor = result["nextCursor"]
    assert seen == [str(i) for i in range(30)]


def test_newest_first_is_a_tail_read() -> None:
    obs = make()
    for index in range(8):
        obs.request(object(), "GET", f"https://shop.test/{index}", "fetch")
    tail = query(obs, source="network", newestFirst=True, limit=3)
    assert [e["url"][-1] for e in tail["events"]] == ["7", "6", "5"]
    assert tail["nextCursor"] == tail["events"][0]["eventId"]  # the newest event
    assert query(obs, source="network", sinceEventId=tail["nextCursor"])["events"] == []
    obs.request(object(), "GET", "https://shop.test/8", "fetch")
    forward = query(obs, source="network", sinceEventId=tail["nextCursor"])
    assert [e["url"][-1] for e in forward["events"]] == ["8"]
    # after sinceEventId only, newest first; nothing newer echoes it
    since = tail["events"][2]["eventId"]  # /5
    between = query(obs, source="network", newestFirst=True, sinceEventId=since)
    assert [e["url"][-1] for e in between["events"]] == ["8", "7", "6"]
    latest = between["nextCursor"]
    echo = query(obs, source="network", newestFirst=True, sinceEventId=latest)
    assert echo["events"] == [] and echo["nextCursor"] == latest
    assert query(make(), source="network", newestFirst=True)["nextCursor"] is None
    # filtered: the newest matching events, the cursor still the ring's newest
    odd = query(obs, source="network", newestFirst=True, url="**/3", limit=2)
    assert [e["url"][-1] for e in odd["events"]] == ["3"]
    assert odd["nextCursor"] == latest


def test_newest_first_works_for_console_sources_and_keeps_the_budget() -> None:
    obs = make(events=100, string_chars=8192, response_bytes=4096)
    for index in range(20):
        obs.console("log", f"{index}:" + "x" * 600)
    result = query(obs, source="console", newestFirst=True, includeText=True, limit=100)
    assert len(compact(result["events"])) <= 4096 - 512
    texts = [e["text"].split(":")[0] for e in result["events"]]
    assert texts == [str(i) for i in range(19, 19 - len(texts), -1)] and len(texts) < 20
    assert result["nextCursor"] == result["events"][0]["eventId"]


def _field(call: Callable[[], Any]) -> tuple[str, str]:
    error = invalid(call)
    return error.details["field"], error.details["rule"]


def test_filter_arguments_are_checked_and_named() -> None:
    obs = make()
    for name, value in (
        ("url", "**"),
        ("method", "GET"),
        ("statusMin", 200),
        ("statusMax", 299),
        ("resourceType", "fetch"),
    ):
        for source in ("console", "pageError"):
            assert _field(lambda n=name, v=value, s=source: query(obs, source=s, **{n: v})) == (  # type: ignore[misc]
                name,
                "only with source network or requestFailed",
            )
    for args, expected in (
        ({"url": ""}, ("url", "at least 1 character")),
        ({"url": "x" * 2049}, ("url", None)),
        ({"url": "a\tb"}, ("url", "no control characters")),
        ({"url": "*" * 33}, ("url", "at most 32 wildcards (*)")),
        ({"url": 5}, ("url", None)),
        ({"method": "get"}, ("method", "an uppercase HTTP method (1..16 letters A-Z)")),
        ({"method": "A" * 17}, ("method", None)),
        ({"method": "GET\n"}, ("method", None)),
        ({"statusMin": 99}, ("statusMin", "integer in 100..599")),
        ({"statusMax": 600}, ("statusMax", "integer in 100..599")),
        ({"statusMin": True}, ("statusMin", None)),
        ({"statusMax": "404"}, ("statusMax", None)),
        ({"statusMin": 500, "statusMax": 400}, ("statusMin", "at most statusMax")),
        ({"resourceType": "img"}, ("resourceType", None)),
        ({"newestFirst": "yes"}, ("newestFirst", "boolean")),
    ):
        field, rule = _field(lambda a=args: query(obs, source="network", **a))  # type: ignore[misc]
        assert field == expected[0], args
        assert expected[1] is None or rule.startswith(expected[1]), (args, rule)
    # the bounds themselves pass
    assert query(obs, source="network", url="*" * 32, method="A" * 16, statusMin=100, statusMax=599)
    assert query(obs, source="network", url="x" * 2048)["events"] == []
    for kind in RESOURCE_TYPES:
        assert query(obs, source="requestFailed", resourceType=kind)["events"] == []


def test_request_id_stands_alone() -> None:
    obs = make()
    traffic(obs)
    assert _field(lambda: query(obs, source="requestFailed", requestId="r1")) == (
        "requestId",
        "only with source network",
    )
    assert _field(lambda: query(obs, source="console", requestId="r1"))[0] == "requestId"
    for name, value in (
        ("sinceEventId", "x"),
        ("limit", 5),
        ("newestFirst", True),
        ("url", "**"),
        ("method", "GET"),
        ("statusMin", 200),
        ("statusMax", 200),
        ("resourceType", "fetch"),
        ("includeText", True),
    ):
        assert _field(
            lambda n=name, v=value: query(obs, source="network", requestId="r1", **{n: v})  # type: ignore[misc]
        ) == (name, "not with requestId")
    assert query(obs, source="network", requestId="r1", newestFirst=False)["request"]
    assert _field(lambda: query(obs, source="network", requestId=7))[0] == "requestId"
    for unknown in ("r99", "", "request_1", "R1"):
        assert _field(lambda u=unknown: query(obs, source="network", requestId=u)) == (  # type: ignore[misc]
            "requestId",
            "a requestId of a retained network event of this page",
        )


# --------------------------------------------------------------------------- request detail


SECRET_HEADERS = {
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": "42",
    "Set-Cookie": "sid=cookie-secret-1; HttpOnly",
    "Authorization": "Bearer auth-secret-2",
    "Cookie": "sid=cookie-secret-3",
    "X-Api-Key": "key-secret-4",
    "ETag": '"v1"',
    "Cache-Control": "no-store",
    "Last-Modified": "Wed, 21 Oct 2015 07:28:00 GMT",
    "Content-Disposition": 'attachment; filename="report.csv"; token=disp-secret-5',
    "Location": "/next?session=loc-secret-6&page=2#frag",
}


def test_request_detail_carries_allowlisted_headers_and_timing() -> None:
    clock = FakeClock()
    obs = make(clock=clock)
    key = object()
    obs.request(key, "post", "https://shop.test/api/orders?token=url-secret-7", "fetch")
    clock.mono_value += 0.125
    timing = {
        "startTime": 1_740_830_400_000.5,
        "domainLookupStart": -1,
        "domainLookupEnd": -1,
        "connectStart": 0.4,
        "secureConnectionStart": -1,
        "connectEnd": 1.6,
        "requestStart": 2.2,
        "responseStart": 120.49,
        "responseEnd": -1,
    }
    obs.response(key, 302, SECRET_HEADERS, timing)
    obs.request_finished(key, {**timing, "responseEnd": 130.5})
    result = query(obs, source="network", requestId="r1")
    assert set(result) == {"source", "request"} and result["source"] == "network"
    assert result["request"] == {
        "requestId": "r1",
        "method": "POST",
        "url": "https://shop.test/api/orders?token=[REDACTED]",
        "resourceType": "fetch",
        "status": 302,
        "durationMs": 125,
        "timing": {
            "connectStart": 0,
            "connectEnd": 2,
            "requestStart": 2,
            "responseStart": 120,
            "responseEnd": 130,
        },
        "responseHeaders": {
            "content-type": "application/json; charset=utf-8",
            "content-length": "42",
            "content-disposition": 'attachment; filename="report.csv"; token=[REDACTED]',
            "location": "https://shop.test/next?session=[REDACTED]&page=2",
            "cache-control": "no-store",
            "etag": '"v1"',
            "last-modified": "Wed, 21 Oct 2015 07:28:00 GMT",
        },
    }
    blob = json.dumps(result)
    assert "secret" not in blob and "cookie" not in blob.lower()
    assert "authorization" not in blob.lower()


def test_request_detail_of_a_failure_and_of_a_request_without_response() -> None:
    obs = make()
    pending, failing = object(), object()
    obs.request(pending, "GET", "https://shop.test/slow", "document")
    obs.request(failing, "GET", "https://shop.test/gone", "image")
    obs.request_failed(failing, "net::ERR_FAILED token=fail-secret", {"requestStart": 3.0})
    assert query(obs, source="network", requestId="r1")["request"] == {
        "requestId": "r1",
        "method": "GET",
        "url": "https://shop.test/slow",
        "resourceType": "document",
        "responseHeaders": {},
    }
    failed = query(obs, source="network", requestId="r2")["request"]
    assert failed["failure"] == "net::ERR_FAILED token=[REDACTED]"
    assert failed["timing"] == {"requestStart": 3} and "status" not in failed


def test_header_values_are_bounded_and_locations_sanitized() -> None:
    obs = make()
    key = object()
    obs.request(key, "GET", "https://shop.test/a/b", "document")
    obs.response(
        key,
        301,
        {"content-type": "t" * 2000, "LOCATION": "javascript:alert(1)", "etag": "\ud800"},
    )
    headers = query(obs, source="network", requestId="r1")["request"]["responseHeaders"]
    assert len(headers["content-type"]) == 512 and headers["content-type"].endswith("…")
    assert headers["location"] == "<redacted-url>"
    compact(headers)  # well-formed
    other = object()
    obs.request(other, "GET", "https://shop.test/a/b", "document")
    obs.response(other, 302, {"location": "c?code=zzz"})
    assert query(obs, source="network", requestId="r2")["request"]["responseHeaders"] == {
        "location": "https://shop.test/a/c?code=[REDACTED]"
    }


def test_request_detail_lives_as_long_as_its_events() -> None:
    obs = make(events=4)
    first, second = object(), object()
    obs.request(first, "GET", "https://shop.test/1", "fetch")  # event 1
    obs.response(first, 200, {"etag": "a"})  # event 2
    obs.request(second, "GET", "https://shop.test/2", "fetch")  # event 3
    obs.request(object(), "GET", "https://shop.test/3", "fetch")  # event 4
    obs.request(object(), "GET", "https://shop.test/4", "fetch")  # 5: evicts r1's request event
    assert query(obs, source="network", requestId="r1")["request"]["responseHeaders"] == {
        "etag": "a"
    }
    obs.request(object(), "GET", "https://shop.test/5", "fetch")  # 6: evicts r1's response
    assert _field(lambda: query(obs, source="network", requestId="r1"))[0] == "requestId"
    assert obs.detail_count == 4
    # a tracked request whose events were evicted gets a detail again with its next event
    obs.request(object(), "GET", "https://shop.test/6", "fetch")
    obs.request(object(), "GET", "https://shop.test/7", "fetch")  # r2's request event is gone
    assert _field(lambda: query(obs, source="network", requestId="r2"))[0] == "requestId"
    obs.response(second, 204, {"content-length": "0"})
    detail = query(obs, source="network", requestId="r2")["request"]
    assert detail["status"] == 204 and detail["responseHeaders"] == {"content-length": "0"}
    assert obs.detail_count <= 4
    obs.dispose()
    assert obs.detail_count == 0


def test_request_detail_keeps_the_response_budget() -> None:
    obs = make(string_chars=8192, response_bytes=1024)
    key = object()
    obs.request(key, "GET", "https://shop.test/x", "fetch")
    obs.request_failed(key, "net::ERR_FAILED " + "z" * 4000)
    detail = query(obs, source="network", requestId="r1")["request"]
    assert detail["failure"].endswith("…") and len(compact(detail)) <= 1024 - 512


# --------------------------------------------------------------------------- polling property


FILTERS: list[dict[str, Any]] = [
    {},
    {"url": "**/api/**"},
    {"method": "POST"},
    {"statusMin": 400},
    {"statusMax": 299, "resourceType": "fetch"},
    {"resourceType": "image"},
]


def _expected(event: dict[str, Any], flt: dict[str, Any]) -> bool:
    if event["kind"] not in ("request", "response"):
        return False
    if "url" in flt and "/api/" not in event["url"]:
        return False
    if "method" in flt and event["method"] != flt["method"]:
        return False
    if "resourceType" in flt and event["resourceType"] != flt["resourceType"]:
        return False
    if "statusMin" in flt or "statusMax" in flt:
        status = event.get("status")
        if status is None:
            return False
        if status < flt.get("statusMin", 0) or status > flt.get("statusMax", 999):
            return False
    return True


@settings(max_examples=examples(150), deadline=None)
@given(
    steps=st.lists(
        st.one_of(
            st.tuples(
                st.just("request"),
                st.sampled_from(["GET", "POST"]),
                st.sampled_from(["api", "img"]),
                st.sampled_from(["fetch", "image"]),
            ),
            st.tuples(st.just("respond"), st.integers(0, 30), st.sampled_from([200, 404, 500])),
            st.tuples(st.just("fail"), st.integers(0, 30), st.just("")),
            st.tuples(st.just("console"), st.just(""), st.just("")),
            st.tuples(st.just("poll"), st.integers(1, 5), st.booleans()),
        ),
        max_size=60,
    ),
    flt=st.sampled_from(FILTERS),
    capacity=st.sampled_from([3, 8, 200, 200]),  # 200: nothing evicted, so exactness is checked
)
def test_polling_with_next_cursor_never_misses_nor_repeats(
    steps: list[tuple[Any, Any, Any]], flt: dict[str, Any], capacity: int
) -> None:
    """A client polling with nextCursor (any limit, sometimes starting with a newestFirst tail)
    gets every matching event exactly once, in order, unless a read reported a gap."""
    obs = make(events=capacity, page_size=10)
    keys: list[object] = []
    got: list[dict[str, Any]] = []
    cursor: str | None = None
    gap = False
    skipped_before: int | None = None  # seq below which a tail read skipped on purpose

    def poll(limit: int, tail: bool) -> None:
        nonlocal cursor, gap, skipped_before
        args: dict[str, Any] = {"source": "network", "limit": limit, **flt}
        if cursor is not None:
            args["sinceEventId"] = cursor
        if tail:
            args["newestFirst"] = True
        result = query(obs, **args)
        gap = gap or result["gap"]
        events = list(reversed(result["events"])) if tail else result["events"]
        if tail and events:
            skipped_before = seq_of(events[0]["eventId"])
        got.extend(events)
        cursor = result["nextCursor"]

    for step in steps:
        if step[0] == "request":
            keys.append(object())
            obs.request(keys[-1], step[1], f"https://shop.test/{step[2]}/{len(keys)}", step[3])
        elif step[0] in ("respond", "fail") and keys:
            key = keys[step[1] % len(keys)]
            if step[0] == "respond":
                obs.response(key, step[2])
            else:
                obs.request_failed(key, "net::ERR_FAILED")
        elif step[0] == "console":
            obs.console("log", "noise")
        elif step[0] == "poll":
            poll(step[1], step[2] and cursor is None)
    for _ in range(500):  # drain forward: a read that returns nothing examined everything
        count = len(got)
        poll(1, False)
        if len(got) == count:
            break
    ids = [e["eventId"] for e in got]
    assert len(ids) == len(set(ids)), "an event was returned twice"
    assert [seq_of(i) for i in ids] == sorted(seq_of(i) for i in ids)
    assert all(_expected(e, flt) for e in got)
    if not gap and capacity == 200:  # nothing evicted: exactly the matching events
        matching = [e for e in read_all(obs, "network", limit=10) if _expected(e, flt)]
        if skipped_before is not None:  # the tail read skipped older events on purpose
            matching = [e for e in matching if seq_of(e["eventId"]) >= skipped_before]
        assert [e["eventId"] for e in matching] == ids
