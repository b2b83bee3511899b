"""Page tools' pure rules (issue 36 item 1, model/page_tools.py): names cleaned or dropped,
descriptions and schemas bounded, the listing's count and byte bounds, arguments checked,
answers redacted and bounded, isError text; and the WebMCP launch switch (engine/slots.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from browsermesh.engine.grid import grid_capabilities
from browsermesh.engine.slots import with_webmcp
from browsermesh.errors import BrowserMeshError, ErrorCode, error_payload, invalid_argument
from browsermesh.model.page_tools import (
    MAX_PAGE_TOOLS,
    MAX_PAGE_TOOLS_BYTES,
    MAX_TOOL_ARGUMENT_BYTES,
    MAX_TOOL_DESCRIPTION_CHARS,
    MAX_TOOL_NAME_CHARS,
    MAX_TOOL_RESULT_TEXT_BYTES,
    TRUNCATION_MARK,
    FrameTools,
    bound_tool_result,
    clean_tool_name,
    error_text,
    is_error_result,
    parse_tool_arguments,
    parse_tool_name,
    tool_listing,
)


def plain(text: str) -> str:
    return text


def hide(text: str) -> str:
    return text.replace("s3cret", "[REDACTED]")


def tool(name: Any, **extra: Any) -> dict[str, Any]:
    return {"name": name, "description": "d", **extra}


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("search", "search"),
        ("a.b-c_1", "a.b-c_1"),
        ("evil\x00name\x1b", "evilname"),
        ("x" * 200, "x" * MAX_TOOL_NAME_CHARS),
        ("has space", None),
        ("", None),
        ("\x07", None),
        ("ünïcode", None),
        (42, None),
        (None, None),
    ],
)
def test_names_are_cleaned_or_dropped(raw: object, expected: str | None) -> None:
    assert clean_tool_name(raw) == expected


def test_listing_marks_the_page_as_the_source_and_bounds_entries() -> None:
    long = "word " * 400
    big_schema = {"type": "object", "description": "y" * 9_000}
    main = FrameTools(
        None,
        [
            tool("ok", annotations={"readOnly": True, "debugging": True, "consequential": False}),
            tool("has space"),
            {"name": "long", "description": long, "inputSchema": big_schema},
            {"name": "secretive", "description": "key s3cret", "inputSchema": {"a": "s3cret"}},
            "not a dict",
        ],
    )
    child = FrameTools(
        {"kind": "iframe", "chain": [{"strategy": "css", "value": "iframe"}]}, [tool("inner")]
    )
    out = tool_listing([main, child], 1, hide)
    assert (out["source"], out["untrusted"]) == ("page", True)
    assert out["notice"].startswith("These tools")
    assert out["droppedNames"] == 2 and out["skippedFrames"] == 1
    by_name = {t["name"]: t for t in out["tools"]}
    assert list(by_name) == ["ok", "long", "secretive", "inner"]
    assert by_name["ok"]["annotations"] == {"readOnly": True}
    assert "frame" not in by_name["ok"] and by_name["inner"]["frame"] == child.frame
    described = by_name["long"]["description"]
    assert len(described) == MAX_TOOL_DESCRIPTION_CHARS and described.endswith(TRUNCATION_MARK)
    assert by_name["long"]["inputSchema"] == {"type": "object"}
    assert by_name["long"]["schemaOmitted"] is True
    assert by_name["secretive"]["description"] == "key [REDACTED]"
    assert by_name["secretive"]["inputSchema"] == {"a": "[REDACTED]"}
    assert "omittedTools" not in out


def test_listing_bounds_the_count_and_the_bytes() -> None:
    many = FrameTools(None, [tool(f"t{i}") for i in range(MAX_PAGE_TOOLS + 6)])
    out = tool_listing([many], 0, plain)
    assert len(out["tools"]) == MAX_PAGE_TOOLS and out["omittedTools"] == 6

    heavy = {"type": "object", "description": "z" * 8_000}
    fat = FrameTools(None, [tool(f"f{i}", inputSchema=heavy) for i in range(20)])
    out = tool_listing([fat], 0, plain)
    assert len(json.dumps(out["tools"], separators=(",", ":"))) <= MAX_PAGE_TOOLS_BYTES
    assert out["omittedTools"] == 20 - len(out["tools"]) > 0


def test_names_and_arguments_are_checked() -> None:
    assert parse_tool_name("search_catalog") == "search_catalog"
    for bad in ("has space", "", "x" * 129, 5, None, "tab\tname"):
        with pytest.raises(BrowserMeshError) as caught:
            parse_tool_name(bad)
        assert caught.value.details["field"] == "name"
    assert parse_tool_arguments(None) == {}
    assert parse_tool_arguments({"q": "x"}) == {"q": "x"}
    for bad_args in ([1], "x", 3, {"n": float("nan")}):
        with pytest.raises(BrowserMeshError) as caught:
            parse_tool_arguments(bad_args)
        assert caught.value.code is ErrorCode.INVALID_ARGUMENT
        assert caught.value.details["field"] == "arguments"
    with pytest.raises(BrowserMeshError) as caught:
        parse_tool_arguments({"blob": "x" * MAX_TOOL_ARGUMENT_BYTES})
    assert caught.value.bound is not None and caught.value.bound.number == MAX_TOOL_ARGUMENT_BYTES


def test_answers_are_redacted_and_bounded() -> None:
    answer = {
        "content": [{"type": "text", "text": "pw s3cret"}],
        "structuredContent": {"s3cret": ["s3cret", 1, None, True]},
    }
    out = bound_tool_result(answer, hide)
    assert not out.truncated
    assert out.value == {
        "content": [{"type": "text", "text": "pw [REDACTED]"}],
        "structuredContent": {"[REDACTED]": ["[REDACTED]", 1, None, True]},
    }
    assert bound_tool_result("bare", plain).value == "bare"
    assert bound_tool_result(None, plain).value is None
    assert bound_tool_result(42, plain).value == 42

    huge = {"content": [{"type": "text", "text": "a" * 40_000}, {"type": "text", "text": "b"}]}
    cut = bound_tool_result(huge, plain)
    assert cut.truncated
    first, second = cut.value["content"]
    assert first["text"].endswith(TRUNCATION_MARK)
    # Every string counts: the two "text" type values came first.
    assert len(first["text"]) == MAX_TOOL_RESULT_TEXT_BYTES - 4 + len(TRUNCATION_MARK)
    assert second == {"type": "text", "text": "b"}  # short strings keep the structure

    wide = {"list": list(range(30_000))}
    assert bound_tool_result(wide, plain).truncated


def test_is_error_answers_give_their_first_text() -> None:
    failing = {
        "isError": True,
        "content": [{"type": "image"}, {"type": "text", "text": "no\ns3cret"}],
    }
    assert is_error_result(failing) and not is_error_result({"isError": "yes"})
    assert error_text(failing, hide) == "no [REDACTED]"
    assert error_text({"isError": True}, hide) is None
    assert len(error_text({"content": [{"text": "e" * 900}]}, plain) or "") == 300


def test_page_tool_errors_pass_the_details_allowlist() -> None:
    missing = invalid_argument("name", "registered", reason="page_tool_not_found", toolName="nope")
    body = error_payload(missing)["error"]
    assert body["details"] == {
        "reason": "page_tool_not_found",
        "toolName": "nope",
        "field": "name",
        "rule": "registered",
    }
    assert 'Page tool "nope" is not registered on this page now.' in body["message"]
    assert "browser_page_tools" in body["nextStep"]
    failed = BrowserMeshError(
        ErrorCode.BROWSER_ERROR,
        variant="page_tool_error",
        details={"reason": "page_tool_error", "toolName": "bad name!", "toolText": "x\x00y"},
    )
    body = error_payload(failed)["error"]
    assert body["details"] == {"reason": "page_tool_error", "toolText": "xy"}
    assert "toolText" in body["nextStep"]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ((), ["--enable-features=WebMCP"]),
        (("--a",), ["--a", "--enable-features=WebMCP"]),
        (("--enable-features=Foo,Bar", "--b"), ["--enable-features=Foo,Bar,WebMCP", "--b"]),
        (("--enable-features=WebMCP",), ["--enable-features=WebMCP"]),
        (("--enable-features=",), ["--enable-features=WebMCP"]),
    ],
)
def test_webmcp_joins_the_one_enable_features_switch(
    args: tuple[str, ...], expected: list[str]
) -> None:
    assert with_webmcp(args, True) == expected
    assert with_webmcp(args, False) == list(args)


def test_grid_capabilities_carry_webmcp_unless_off() -> None:
    configured = json.dumps(
        {"browserName": "chrome", "goog:chromeOptions": {"args": ["--enable-features=Foo"]}}
    )
    on = grid_capabilities(configured, headless=True)["goog:chromeOptions"]["args"]
    assert "--enable-features=Foo,WebMCP" in on
    assert sum(a.startswith("--enable-features=") for a in on) == 1
    off = grid_capabilities(configured, headless=True, webmcp=False)["goog:chromeOptions"]["args"]
    assert "--enable-features=Foo" in off
