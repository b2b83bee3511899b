"""The error model: codes, fixed messages, bound clauses and the details allowlist."""

from __future__ import annotations

import json
from typing import Any

from browsermesh.errors import (
    ACTIONABILITY_REASONS,
    MAX_NEAREST_CHARS,
    Bound,
    BrowserMeshError,
    ErrorCode,
    clean_details,
    error_payload,
    internal_error,
)
from browsermesh.model.locators import parse_locator


def test_twenty_one_codes_each_with_message_and_next_step() -> None:
    assert len(ErrorCode) == 22
    for code in ErrorCode:
        err = BrowserMeshError(code)
        assert 0 < len(err.message) <= 512 and err.next_step


def test_payload_shape_and_bound_clause() -> None:
    err = BrowserMeshError(
        ErrorCode.INVALID_ARGUMENT,
        bound=Bound("limit", "<=", 100, "BROWSERMESH_OBSERVABILITY_PAGE_SIZE"),
        operation_id="operation_x",
        cause="raw engine text with secret=1",
    )
    payload = error_payload(err)
    assert payload["ok"] is False
    body = payload["error"]
    assert body["message"] == (
        "Invalid argument. Bound: limit <= 100 (BROWSERMESH_OBSERVABILITY_PAGE_SIZE)."
    )
    assert body["operationId"] == "operation_x" and "details" not in body
    assert "secret" not in json.dumps(payload)


def test_browser_error_has_three_fixed_variants() -> None:
    texts = {
        BrowserMeshError(ErrorCode.BROWSER_ERROR, variant=v).message
        for v in ("launch", "connect", "operation")
    }
    assert texts == {
        "Chromium could not be started. Run: browsermesh --install-browser",
        "Could not connect to the configured browser endpoint.",
        "The browser operation failed.",
    }


def test_details_allowlist() -> None:
    details = clean_details(
        ErrorCode.NAVIGATION_FAILED,
        {
            "reason": "connection",
            "timeoutMs": 999_999,
            "url": "http://user:pw@h.test/p?token=abc#f",
            "operation": "click",
            "remediation": "rm -rf /",
            "locator": {"strategy": "css", "value": "a\x00b" + "x" * 300, "frame": {}},
            "cookie": "secret",
            "cause": "raw",
        },
    )
    assert details["reason"] == "connection" and details["timeoutMs"] == 300_000
    assert details["url"] == "http://h.test/p"
    assert "remediation" not in details and "cookie" not in details and "cause" not in details
    assert details["locator"]["value"].startswith("ab") and len(details["locator"]["value"]) == 256
    assert "frame" not in details["locator"]
    assert clean_details(ErrorCode.OPERATION_TIMEOUT, None) == {"reason": "timeout"}


class Hostile(dict[str, Any]):
    def get(self, key: str, default: Any = None) -> Any:
        raise RuntimeError("boom")


def test_hostile_details_never_raise_and_stay_small() -> None:
    cyclic: dict[str, Any] = {"reason": "other"}
    cyclic["self"] = cyclic
    for raw in (
        cyclic,
        Hostile(reason="x"),
        {"timeoutMs": 10**400},
        {"password": "p" * 10_000},
        {"timeoutMs": float("nan")},
        42,
        "text",
    ):
        payload = error_payload(BrowserMeshError(ErrorCode.BROWSER_ERROR, details=raw))  # type: ignore[arg-type]
        text = json.dumps(payload)
        assert len(text) < 2000 and "ppppp" not in text


def test_internal_error_hides_exception_text() -> None:
    err = internal_error(ValueError("/home/user/secret path"))
    assert "secret" not in json.dumps(error_payload(err))
    assert err.cause and "secret" in err.cause  # kept for debug logs only


def test_not_actionable_has_a_next_step_for_each_reason() -> None:
    """Issue 31 #4: its own code, a next step that fits the reason, never "larger timeoutMs"."""
    hints = {
        "disabled": "browser_wait",
        "hidden": "scroll",
        "not_editable": "textbox",
        "covered": "coveredBy",
        "file_input": "browser_file_upload",
        "detached": "re-rendered",
        "not_file_input": "file chooser",
    }
    assert set(hints) == ACTIONABILITY_REASONS
    steps = set()
    for reason, hint in hints.items():
        body = error_payload(
            BrowserMeshError(ErrorCode.ELEMENT_NOT_ACTIONABLE, details={"reason": reason})
        )["error"]
        assert body["code"] == "ELEMENT_NOT_ACTIONABLE" and body["details"]["reason"] == reason
        assert hint in body["nextStep"] and "larger timeoutMs" not in body["nextStep"]
        steps.add(body["nextStep"])
    assert len(steps) == len(hints)
    generic = error_payload(BrowserMeshError(ErrorCode.ELEMENT_NOT_ACTIONABLE))["error"]
    assert "details" not in generic and "details.reason" in generic["nextStep"]


def test_locator_detail_keeps_within() -> None:
    scoped = parse_locator(
        {
            "strategy": "role",
            "value": "button",
            "name": "Delete",
            "within": {"strategy": "role", "value": "row", "name": "Blue teapot"},
        }
    )
    details = clean_details(ErrorCode.ELEMENT_NOT_ACTIONABLE, {"locator": scoped.detail()})
    assert details["locator"]["within"] == {
        "strategy": "role",
        "value": "row",
        "name": "Blue teapot",
        "exact": True,
    }


def test_nearest_text_is_cleaned_bounded_and_names_its_next_step() -> None:
    error = BrowserMeshError(
        ErrorCode.OPERATION_TIMEOUT, details={"timeoutMs": 800, "nearest": "x\x07" + "y" * 500}
    )
    body = error_payload(error)["error"]
    assert body["details"]["nearest"] == "x" + "y" * (MAX_NEAREST_CHARS - 2) + "…"
    assert "details.nearest" in body["nextStep"]
    assert "nearest" not in clean_details(ErrorCode.OPERATION_TIMEOUT, {"nearest": 7})
