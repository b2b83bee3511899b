"""Observability rings, cursors and bounded reads (contract §8, §17)."""

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

EVENT_ID_RE = re.compile(
    r"cursor_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}_[0-9a-z]{10}"
)


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
            assert result["nextCursor"] == cursor
            return out
        assert result["nextCursor"] == result["events"][-1]["eventId"]
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
        "sessionId": "session_1",
        "pageId": "page_1",
        "kind": "console",
        "level": "warning",
        "text": "low disk",
    }
    assert EVENT_ID_RE.fullmatch(event["eventId"])
    assert event["eventId"].endswith("_0000000001")
    assert console["droppedCount"] == 0 and console["gap"] is False

    (err,) = obs.read("pageError", None, None, True)["events"]
    assert err["kind"] == "page_error" and err["text"] == "TypeError: x is undefined"
    assert err["eventId"].endswith("_0000000002")  # same ring as console
    assert err["eventId"].rsplit("_", 1)[0] == event["eventId"].rsplit("_", 1)[0]

    request, response = obs.read("network", None, None, False)["events"]
    assert request["eventId"].endswith("_0000000001")  # own ring, own sequence
    assert request["eventId"].rsplit("_", 1)[0] != event["eventId"].rsplit("_", 1)[0]
    assert request["kind"] == "request" and response["kind"] == "response"
    assert request["requestId"] == response["requestId"] == "request_1"
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
    namespace = first_id.rsplit("_", 1)[0]
    fourth = obs.read("console", namespace + "_0000000004", None, True)
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
    namespace = console_id.rsplit("_", 1)[0]
    for malformed in (
        "",
        "x",
        "x" * 129,
        namespace,
        namespace + "_",
        namespace + "_1",
        namespace + "_000000000A",
        namespace + "_00000000_1",
        namespace + "_0000000000",
        "cursor_" + "_0000000001",
    ):
        invalid(lambda m=malformed: obs.read("console", m, None, False))  # type: ignore[misc]
    invalid(lambda: obs.read("console", namespace + "_0000000002", None, False))  # beyond
    assert obs.read("console", namespace + "_0000000001", None, False)["events"] == []


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

    # Smallest string bound: 128 code points of a 3-byte script still overflow 512 bytes.
    cjk = make(string_chars=128, response_bytes=1024)
    cjk.request(key, "GET", "https://example.com/" + "漢" * 200, "fetch")
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
    assert event["requestId"] == "request_1"


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
        ("request", "request_1"),
        ("request", "request_2"),
        ("response", "request_1"),
    ]
    assert network[2]["durationMs"] == 250
    (failed,) = obs.read("requestFailed", None, None, False)["events"]
    assert failed["requestId"] == "request_1"
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
    assert events[9]["requestId"] == "request_a"
    assert events[35]["requestId"] == "request_10"


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
    assert responded[0] == "request_b"  # requests 1..10 were dropped from tracking
    assert responded[-1] == "request_1e"  # request 50

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


@settings(max_examples=60, deadline=None)
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
