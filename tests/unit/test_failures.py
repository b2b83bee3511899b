"""engine/failures.py, the one place Playwright failures become the reference's codes (§5.4)."""

from __future__ import annotations

import ast
import asyncio
import inspect
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Error
from playwright.async_api import TimeoutError as PlaywrightTimeout

from browsermesh.engine import failures
from browsermesh.engine.failures import (
    browser_error,
    classify_reason,
    navigation_error,
    not_actionable,
    operation_timeout,
    raw_cause,
    timed,
    within,
)
from browsermesh.errors import BrowserMeshError, ErrorCode, error_payload
from browsermesh.model.deadline import Deadline

pytestmark = pytest.mark.anyio

ENGINE = Path(__file__).resolve().parents[2] / "src" / "browsermesh" / "engine"


def shape(err: BrowserMeshError) -> tuple[Any, ...]:
    return (err.code, list(err.details.items()), err.cause, err.variant, err.bound)


# ------------------------------------------------------------------------- reasons


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("Timeout 500ms exceeded.", "timeout"),
        ("net::ERR_NAME_NOT_RESOLVED at http://nowhere.invalid/", "dns"),
        ("net::ERR_CONNECTION_REFUSED at http://127.0.0.1:9/", "connection"),
        ("net::ERR_CERT_AUTHORITY_INVALID at https://self-signed/", "tls"),
        ("Cannot navigate to invalid URL", "invalid_url"),
        ("strict mode violation: locator resolved to 2 elements", "locator_ambiguous"),
        ("Target page, context or browser has been closed", "other"),
    ],
)
def test_reasons_come_from_the_failure_text(text: str, reason: str) -> None:
    assert classify_reason(Error(text)) == reason


def test_a_timeout_is_known_by_its_type_and_an_unknown_element_failure_is_a_miss() -> None:
    assert classify_reason(PlaywrightTimeout("no text")) == "timeout"
    assert classify_reason(TimeoutError()) == "timeout"  # asyncio's (builtin)
    assert classify_reason(Error("waiting for locator"), element=True) == "element_not_found"


def test_the_raw_cause_names_the_type_and_is_bounded() -> None:
    assert raw_cause(Error("boom")) == "Error: boom"
    assert len(raw_cause(Error("x" * 10_000))) <= 2000


# ----------------------------------------------------------------- OPERATION_TIMEOUT


def test_operation_timeout_has_one_shape_the_same_as_the_deadlines() -> None:
    ours = operation_timeout(1500)
    model = Deadline(1500).timeout_error()
    assert shape(ours) == shape(model)
    assert ours.details == {"timeoutMs": 1500, "reason": "timeout"}
    assert error_payload(ours) == error_payload(model)


def test_operation_timeout_keeps_a_cause_and_takes_extra_details() -> None:
    err = operation_timeout(300, "TimeoutError: Timeout 300ms exceeded.", operation="click")
    assert err.code is ErrorCode.OPERATION_TIMEOUT
    assert err.details == {"timeoutMs": 300, "reason": "timeout", "operation": "click"}
    assert err.cause == "TimeoutError: Timeout 300ms exceeded."


def test_not_actionable_names_the_reason_and_no_budget() -> None:
    err = not_actionable("disabled", operation="click")
    assert err.code is ErrorCode.ELEMENT_NOT_ACTIONABLE
    assert err.details == {"reason": "disabled", "operation": "click"}
    assert "timeoutMs" not in error_payload(err)["error"]["details"]


# ------------------------------------------------------------------ timed and within


async def test_timed_answers_what_the_call_answers() -> None:
    async def value() -> int:
        return 7

    assert await timed(value(), Deadline(1000)) == 7
    assert await within(value(), Deadline(1000)) == 7


@pytest.mark.parametrize("bound", [timed, within])
async def test_a_call_past_its_deadline_is_operation_timeout(bound: Any) -> None:
    with pytest.raises(BrowserMeshError) as info:
        await bound(asyncio.sleep(5), Deadline(50))
    assert shape(info.value) == shape(operation_timeout(50))


@pytest.mark.parametrize("bound", [timed, within])
async def test_no_budget_left_never_starts_the_call(bound: Any) -> None:
    deadline = Deadline(1, expires_at=1.0)  # long gone

    async def call() -> None:
        raise AssertionError("started")

    coroutine = call()
    with pytest.raises(BrowserMeshError) as info:
        await bound(coroutine, deadline)
    assert shape(info.value) == shape(operation_timeout(1))
    # closed, not left to be reported as "never awaited"
    assert inspect.getcoroutinestate(coroutine) == inspect.CORO_CLOSED


async def test_timed_classifies_playwrights_own_timeout_with_the_budget() -> None:
    async def call() -> None:
        raise PlaywrightTimeout("Timeout 900ms exceeded.")

    with pytest.raises(BrowserMeshError) as info:
        await timed(call(), Deadline(900))
    assert info.value.code is ErrorCode.OPERATION_TIMEOUT
    assert info.value.details == {"timeoutMs": 900, "reason": "timeout"}
    assert info.value.cause == "TimeoutError: Timeout 900ms exceeded."


async def test_timed_makes_any_other_failure_browser_error() -> None:
    async def call() -> None:
        raise Error("Target page, context or browser has been closed")

    with pytest.raises(BrowserMeshError) as info:
        await timed(call(), Deadline(900))
    assert info.value.code is ErrorCode.BROWSER_ERROR
    assert info.value.details == {}
    assert info.value.cause == "Error: Target page, context or browser has been closed"


async def test_timed_passes_an_already_classified_failure_unchanged() -> None:
    classified = BrowserMeshError(ErrorCode.STALE_ELEMENT_REFERENCE)

    async def call() -> None:
        raise classified

    with pytest.raises(BrowserMeshError) as info:
        await timed(call(), Deadline(900))
    assert info.value is classified


async def test_within_leaves_other_failures_to_the_caller() -> None:
    async def call() -> None:
        raise Error("the page threw: timeout")

    with pytest.raises(Error):
        await within(call(), Deadline(900))


# --------------------------------------------------------- navigation and the browser


def test_a_navigation_failure_keeps_its_network_reason_and_url() -> None:
    err = navigation_error(Error("net::ERR_NAME_NOT_RESOLVED"), "http://x.invalid/", 1000)
    assert err.code is ErrorCode.NAVIGATION_FAILED
    assert err.details == {"reason": "dns", "url": "http://x.invalid/"}
    other = navigation_error(Error("strict mode violation"), "http://x.test/", 1000)
    assert other.details == {"reason": "other", "url": "http://x.test/"}


def test_a_navigation_timeout_is_operation_timeout_with_its_budget() -> None:
    err = navigation_error(PlaywrightTimeout("Timeout 1000ms exceeded."), "http://x.test/", 1000)
    assert err.code is ErrorCode.OPERATION_TIMEOUT
    assert err.details == {"timeoutMs": 1000, "reason": "timeout"}


def test_browser_error_variants() -> None:
    launch = browser_error(Error("Executable doesn't exist"), "launch")
    assert (launch.code, launch.variant, launch.details["reason"]) == (
        ErrorCode.BROWSER_ERROR,
        "launch",
        "other",
    )
    assert "remediation" in launch.details
    connect = browser_error(Error("ECONNREFUSED"), "connect")
    assert (connect.variant, connect.details) == ("connect", {"reason": "connection"})
    plain = browser_error(Error("boom"))
    assert (plain.code, plain.variant, plain.details) == (ErrorCode.BROWSER_ERROR, "operation", {})


def test_a_timeout_is_operation_timeout_only_against_a_known_budget() -> None:
    timeout = PlaywrightTimeout("Timeout 500ms exceeded.")
    assert browser_error(timeout, timeout_ms=500).details == {"timeoutMs": 500, "reason": "timeout"}
    # Without its budget there is no OPERATION_TIMEOUT to report (it would lack timeoutMs).
    unknown = browser_error(timeout)
    assert unknown.code is ErrorCode.BROWSER_ERROR
    assert unknown.cause == "TimeoutError: Timeout 500ms exceeded."


# ------------------------------------------------------------------ the single place


def _timeout_constructions(path: Path) -> list[str]:
    """`ErrorCode.OPERATION_TIMEOUT` and `<deadline>.timeout_error` uses in one module."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Attribute):
            continue
        code = (
            node.attr == "OPERATION_TIMEOUT"
            and isinstance(node.value, ast.Name)
            and node.value.id == "ErrorCode"
        )
        if code or node.attr == "timeout_error":
            found.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_only_failures_builds_operation_timeout_in_the_engine() -> None:
    allowed = {"failures.py"}
    found = [
        hit
        for path in sorted(ENGINE.glob("*.py"))
        if path.name not in allowed
        for hit in _timeout_constructions(path)
    ]
    assert found == [], "build OPERATION_TIMEOUT with engine.failures:\n" + "\n".join(found)


def test_the_scan_sees_a_construction() -> None:
    assert _timeout_constructions(Path(failures.__file__))  # operation_timeout itself
