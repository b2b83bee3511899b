"""Every runtime `INVALID_ARGUMENT` names its field and rule, never the value (issue 13).

A client hit nine opaque `INVALID_ARGUMENT`s in one task: the payload said only "Invalid
argument.". Now `details.field` is the JSON path of the offending argument from the tool's
argument root (`action.target.strategy`, `contextSettings.viewport.width`, `limit`) and
`details.rule` the rule it broke (`at most 100`, `one of: …`). Each case below feeds one parser a
bad input carrying a distinctive canary and checks the field, the rule, the next step and that the
canary appears nowhere in the payload a client would see.
"""

# ruff: noqa: E501  (one case a line: the table reads as a table)
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from browsermesh.errors import BrowserMeshError, ErrorCode, error_payload
from browsermesh.model.arguments import action_argument, bounded_string
from browsermesh.model.clock import Clock
from browsermesh.model.labels import validate_labels
from browsermesh.model.matchers import parse_action, parse_condition, parse_matcher, parse_wait
from browsermesh.model.observe import ObserveLimits, PageObservations
from browsermesh.model.observe_query import parse_query
from browsermesh.model.paging import normalize_snapshot_options, page_content
from browsermesh.model.settings import normalize_context_settings
from browsermesh.persistence.states import validate_state_id
from browsermesh.runtime.calls import PageCall
from browsermesh.runtime.checks import parse_capture, scroll_delta
from browsermesh.runtime.runtime import Runtime, validate_http_url, validate_timeout
from tests.fakes import FakeEngine

pytestmark = pytest.mark.anyio

C = "CANARYq7Zx"
"""A distinctive string no rule or path contains."""
N = 987_654_321
"""A distinctive number no bound equals."""
FIELD_NEXT_STEP = "Fix details.field so that it satisfies details.rule, then call again."
CSS_A = {"strategy": "css", "value": "a"}
EXACT = {"kind": "exact", "value": "https://a.test/"}
GEO = {"latitude": 1, "longitude": 2}


def observations(page_size: int = 100) -> PageObservations:
    limits = ObserveLimits(
        events_per_ring=50, string_chars=2048, page_size=page_size, response_bytes=65_536
    )
    return PageObservations("session_1", "page_1", limits, _Clock())


class _Clock(Clock):
    def wall(self) -> float:
        return 1_700_000_000.0

    def monotonic(self) -> float:
        return 100.0


def check(error: BrowserMeshError, field: str, rule: str, canaries: tuple[object, ...]) -> None:
    """`error` is INVALID_ARGUMENT with `field` and a rule starting with `rule`, and none of
    `canaries` (the caller's values) appears in its client payload."""
    assert error.code is ErrorCode.INVALID_ARGUMENT
    payload = error_payload(error)["error"]
    details = payload["details"]
    assert details["field"] == field
    assert details["rule"].startswith(rule), details["rule"]
    assert error.internal["requirement"] == details["rule"]  # never cut to fit
    assert payload["nextStep"] == FIELD_NEXT_STEP
    text = json.dumps(payload, ensure_ascii=False)
    for canary in canaries:
        assert str(canary) not in text
        assert str(canary) not in json.dumps(payload)


Case = tuple[str, Callable[[], object], str, str]

CASES: list[Case] = [
    # ---------------------------------------------------------------- model.arguments
    ("press key too long", lambda: action_argument("press", C * 10), "key", "at most 64 "),
    ("fill value not a string", lambda: action_argument("fill", N), "value", "string"),
    ("select value too long", lambda: action_argument("select_option", C * 500), "value", "at most 4096 characters"),
    ("empty where one is needed", lambda: bounded_string("", "expression", 10, min_chars=1), "expression", "at least 1 character"),
    # ---------------------------------------------------------------- model.matchers
    ("matcher not an object", lambda: parse_matcher(C, "wait.matcher"), "wait.matcher", "object"),
    ("matcher kind", lambda: parse_matcher({"kind": C, "value": "x"}, "wait.matcher"), "wait.matcher.kind", "one of: exact, glob"),
    ("matcher unknown key", lambda: parse_matcher({**EXACT, C: C}, "condition.matcher"), "condition.matcher", "only the keys kind, value"),
    ("matcher value missing", lambda: parse_matcher({"kind": "glob"}, "wait.matcher"), "wait.matcher.value", "required"),
    ("matcher value type", lambda: parse_matcher({"kind": "glob", "value": N}, "wait.matcher"), "wait.matcher.value", "string"),
    ("matcher value empty", lambda: parse_matcher({"kind": "glob", "value": ""}, "wait.matcher"), "wait.matcher.value", "at least 1 character"),
    ("matcher value too long", lambda: parse_matcher({"kind": "exact", "value": C * 300}, "condition.matcher"), "condition.matcher.value", "at most 2048 characters"),
    ("matcher control chars", lambda: parse_matcher({"kind": "exact", "value": C + "\n"}, "condition.matcher"), "condition.matcher.value", "no control characters"),
    ("glob wildcards", lambda: parse_matcher({"kind": "glob", "value": "*/" * 33 + C}, "wait.matcher"), "wait.matcher.value", "at most 32 wildcards"),
    ("condition not an object", lambda: parse_condition(C), "condition", "object"),
    ("condition kind", lambda: parse_condition({"kind": C}), "condition.kind", "one of: url, load, locator, text"),
    ("condition kind missing", lambda: parse_condition({"state": "load"}), "condition.kind", "one of: url, load, locator, text"),
    ("condition unknown key", lambda: parse_condition({"kind": "url", "matcher": EXACT, C: C}), "condition", "only the keys kind, matcher"),
    ("condition url matcher missing", lambda: parse_condition({"kind": "url"}), "condition.matcher", "required"),
    ("condition url matcher kind", lambda: parse_condition({"kind": "url", "matcher": {"kind": C, "value": C}}), "condition.matcher.kind", "one of: exact, glob"),
    ("condition load state", lambda: parse_condition({"kind": "load", "state": C}), "condition.state", "one of: domcontentloaded, load"),
    ("condition locator state", lambda: parse_condition({"kind": "locator", "locator": CSS_A, "state": C}), "condition.state", "one of: visible, hidden, attached, detached, enabled, disabled"),
    ("condition locator missing", lambda: parse_condition({"kind": "locator", "state": "visible"}), "condition.locator", "required"),
    ("condition locator strategy", lambda: parse_condition({"kind": "locator", "locator": {"strategy": C, "value": C}, "state": "visible"}), "condition.locator.strategy", "one of: "),
    ("condition locator value", lambda: parse_condition({"kind": "locator", "locator": {"strategy": "text", "value": ""}, "state": "visible"}), "condition.locator.value", ""),
    ("condition text too long", lambda: parse_condition({"kind": "text", "text": C * 300, "state": "present"}), "condition.text", "at most 2000 characters"),
    ("condition text type", lambda: parse_condition({"kind": "text", "text": N, "state": "present"}), "condition.text", "string"),
    ("condition text state", lambda: parse_condition({"kind": "text", "text": C, "state": C}), "condition.state", "one of: present, absent"),
    ("wait not an object", lambda: parse_wait([C]), "wait", "object"),
    ("wait kind", lambda: parse_wait({"kind": C}), "wait.kind", "one of: navigation, response, popup, dialog"),
    ("wait navigation loadState", lambda: parse_wait({"kind": "navigation", "loadState": C}), "wait.loadState", "one of: domcontentloaded, load"),
    ("wait navigation matcher", lambda: parse_wait({"kind": "navigation", "matcher": {"kind": "exact", "value": C + "\t"}}), "wait.matcher.value", "no control characters"),
    ("wait navigation unknown key", lambda: parse_wait({"kind": "navigation", C: C}), "wait", "only the keys kind, matcher, loadState"),
    ("wait response matcher missing", lambda: parse_wait({"kind": "response"}), "wait.matcher", "required"),
    ("wait response method", lambda: parse_wait({"kind": "response", "matcher": EXACT, "method": C}), "wait.method", "an uppercase HTTP method"),
    ("wait response status", lambda: parse_wait({"kind": "response", "matcher": EXACT, "status": N}), "wait.status", "integer in 100..599"),
    ("wait popup extra key", lambda: parse_wait({"kind": "popup", "matcher": C}), "wait", "only the keys kind"),
    ("wait dialog type", lambda: parse_wait({"kind": "dialog", "dialogType": C, "action": "accept"}), "wait.dialogType", "one of: alert, beforeunload, confirm, prompt"),
    ("wait dialog action", lambda: parse_wait({"kind": "dialog", "dialogType": "prompt", "action": C}), "wait.action", "one of: accept, dismiss"),
    ("wait dialog action missing", lambda: parse_wait({"kind": "dialog", "dialogType": "prompt"}), "wait.action", "required"),
    ("wait promptText type", lambda: parse_wait({"kind": "dialog", "dialogType": "prompt", "action": "accept", "promptText": N}), "wait.promptText", "string"),
    ("wait promptText long", lambda: parse_wait({"kind": "dialog", "dialogType": "prompt", "action": "accept", "promptText": C * 300}), "wait.promptText", "at most 2000 characters"),
    ("wait promptText control", lambda: parse_wait({"kind": "dialog", "dialogType": "prompt", "action": "accept", "promptText": C + "\x00"}), "wait.promptText", "no control characters"),
    ("wait promptText misplaced", lambda: parse_wait({"kind": "dialog", "dialogType": "alert", "action": "accept", "promptText": C}), "wait.promptText", 'only with dialogType "prompt"'),
    ("action not an object", lambda: parse_action(C), "action", "object"),
    ("action kind", lambda: parse_action({"kind": C, "target": CSS_A}), "action.kind", "one of: click, press, hover"),
    ("action target missing", lambda: parse_action({"kind": "click"}), "action.target", "required"),
    ("action unknown key", lambda: parse_action({"kind": "click", "target": CSS_A, "key": C}), "action", "only the keys kind, target"),
    ("action key missing", lambda: parse_action({"kind": "press", "target": CSS_A}), "action.key", "required"),
    ("action key too long", lambda: parse_action({"kind": "press", "target": CSS_A, "key": C * 10}), "action.key", "at most 64 characters"),
    ("action key empty", lambda: parse_action({"kind": "press", "target": CSS_A, "key": ""}), "action.key", "at least 1 character"),
    ("action target strategy", lambda: parse_action({"kind": "click", "target": {"strategy": "xpath", "value": "//" + C}}), "action.target.strategy", "one of: "),
    ("action target css engine", lambda: parse_action({"kind": "click", "target": {"strategy": "css", "value": "xpath=//" + C}}), "action.target.value", "CSS only"),
    ("action target value long", lambda: parse_action({"kind": "click", "target": {"strategy": "text", "value": C * 500}}), "action.target.value", "at most 4096 characters"),
    # ---------------------------------------------------------------- model.observe
    ("observe source", lambda: observations().read(C, None, None, False), "source", "one of: console, pageError, network, requestFailed"),  # type: ignore[arg-type]
    ("observe includeText type", lambda: observations().read("console", None, None, C), "includeText", "boolean"),  # type: ignore[arg-type]
    ("observe includeText source", lambda: observations().read("network", None, None, True), "includeText", "true only with source console or pageError"),
    ("observe limit above page size", lambda: observations(100).read("console", None, N, False), "limit", "at most 100 "),
    ("observe limit below 1", lambda: observations().read("console", None, -N, False), "limit", "at least 1"),
    ("observe limit type", lambda: observations().read("console", None, C, False), "limit", "integer"),  # type: ignore[arg-type]
    ("observe sinceEventId unknown", lambda: observations().read("console", C, None, False), "sinceEventId", "an eventId or nextCursor"),
    ("observe sinceEventId long", lambda: observations().read("console", C * 20, None, False), "sinceEventId", "string of 1..128 characters"),
    ("observe url control", lambda: parse_query({"source": "network", "url": C + "\x01"}), "url", "no control characters"),
    ("observe url wildcards", lambda: parse_query({"source": "network", "url": C + "*" * 33}), "url", "at most 32 wildcards (*)"),
    ("observe url long", lambda: parse_query({"source": "network", "url": C * 300}), "url", "at most 2048 characters"),
    ("observe method", lambda: parse_query({"source": "network", "method": C}), "method", "an uppercase HTTP method"),
    ("observe statusMin", lambda: parse_query({"source": "network", "statusMin": N}), "statusMin", "integer in 100..599"),
    ("observe statusMax type", lambda: parse_query({"source": "network", "statusMax": C}), "statusMax", "integer in 100..599"),
    ("observe status order", lambda: parse_query({"source": "network", "statusMin": 599, "statusMax": 100}), "statusMin", "at most statusMax"),
    ("observe resourceType", lambda: parse_query({"source": "network", "resourceType": C}), "resourceType", "one of: document, stylesheet"),
    ("observe newestFirst", lambda: parse_query({"source": "network", "newestFirst": C}), "newestFirst", "boolean"),
    ("observe filter source", lambda: parse_query({"source": "pageError", "url": C}), "url", "only with source network or requestFailed"),
    ("observe requestId source", lambda: parse_query({"source": "console", "requestId": C}), "requestId", "only with source network"),
    ("observe requestId alone", lambda: parse_query({"source": "network", "requestId": C, "limit": N}), "limit", "not with requestId"),
    ("observe requestId type", lambda: parse_query({"source": "network", "requestId": N}), "requestId", "string"),
    ("observe requestId unknown", lambda: observations().request_detail(C), "requestId", "a requestId of a retained network event"),
    # ---------------------------------------------------------------- model.paging
    ("snapshot format", lambda: normalize_snapshot_options({"format": C}), "format", "one of: aria, actions"),
    ("snapshot scope type", lambda: normalize_snapshot_options({"scope": C}), "scope", "object"),
    ("snapshot maxChars high", lambda: normalize_snapshot_options({"maxChars": N}), "maxChars", "at most 100000"),
    ("snapshot maxBytes low", lambda: normalize_snapshot_options({"maxBytes": -N}), "maxBytes", "at least 1"),
    ("snapshot maxDepth type", lambda: normalize_snapshot_options({"maxDepth": C}), "maxDepth", "integer"),
    ("snapshot includeRefs type", lambda: normalize_snapshot_options({"includeRefs": C}), "includeRefs", "boolean"),
    ("snapshot cursor with options", lambda: normalize_snapshot_options({"cursor": C, "maxChars": 5}), "cursor", "alone: a cursor excludes the options maxChars"),
    ("snapshot cursor long", lambda: normalize_snapshot_options({"cursor": C * 20}), "cursor", "string of 1..160 characters"),
    ("snapshot aria-only with actions", lambda: normalize_snapshot_options({"format": "actions", "maxDepth": 5}), "maxDepth", 'not allowed with format "actions"'),
    ("snapshot includeRefs false", lambda: normalize_snapshot_options({"format": "actions", "includeRefs": False}), "includeRefs", 'true with format "actions"'),
    ("snapshot maxRefs alone", lambda: normalize_snapshot_options({"maxRefs": 7}), "maxRefs", "only with includeRefs: true"),
    ("snapshot page too small", lambda: page_content(C + "😀", len(C), 10, 3, clipped=False), "maxBytes", "at least 4, the UTF-8 size"),
    # ---------------------------------------------------------------- model.settings
    ("settings not an object", lambda: normalize_context_settings(C), "contextSettings", "object"),
    ("settings unknown key", lambda: normalize_context_settings({C: C}), "contextSettings", "only the keys blockResources, colorScheme"),
    ("blockResources entry", lambda: normalize_context_settings({"blockResources": ["image", C]}), "contextSettings.blockResources[1]", "one of: stylesheet, image"),
    ("viewport width high", lambda: normalize_context_settings({"viewport": {"width": N, "height": 100}}), "contextSettings.viewport.width", "at most 10000"),
    ("viewport height low", lambda: normalize_context_settings({"viewport": {"width": 100, "height": -N}}), "contextSettings.viewport.height", "at least 1"),
    ("viewport height missing", lambda: normalize_context_settings({"viewport": {"width": 100}}), "contextSettings.viewport.height", "required"),
    ("viewport width fraction", lambda: normalize_context_settings({"viewport": {"width": 100.5, "height": 100}}), "contextSettings.viewport.width", "integer"),
    ("viewport type", lambda: normalize_context_settings({"viewport": C}), "contextSettings.viewport", "object"),
    ("viewport unknown key", lambda: normalize_context_settings({"viewport": {"width": 1, "height": 1, C: 1}}), "contextSettings.viewport", "only the keys height, width"),
    ("deviceScaleFactor high", lambda: normalize_context_settings({"deviceScaleFactor": 98_765.4}), "contextSettings.deviceScaleFactor", "at most 10"),
    ("deviceScaleFactor type", lambda: normalize_context_settings({"deviceScaleFactor": C}), "contextSettings.deviceScaleFactor", "number"),
    ("locale", lambda: normalize_context_settings({"locale": "en_" + C}), "contextSettings.locale", "exactly one valid BCP 47 language tag"),
    ("locale long", lambda: normalize_context_settings({"locale": C * 10}), "contextSettings.locale", "at most 64 characters"),
    ("timezoneId", lambda: normalize_context_settings({"timezoneId": "Mars/" + C}), "contextSettings.timezoneId", "a valid IANA time zone name"),
    ("colorScheme", lambda: normalize_context_settings({"colorScheme": C}), "contextSettings.colorScheme", "one of: light, dark, no-preference"),
    ("reducedMotion", lambda: normalize_context_settings({"reducedMotion": C}), "contextSettings.reducedMotion", "one of: reduce, no-preference"),
    ("userAgent control", lambda: normalize_context_settings({"userAgent": C + "\x01"}), "contextSettings.userAgent", "no control characters"),
    ("userAgent empty", lambda: normalize_context_settings({"userAgent": ""}), "contextSettings.userAgent", "at least 1 character"),
    ("geolocation latitude", lambda: normalize_context_settings({"geolocation": {"latitude": N, "longitude": 0}}), "contextSettings.geolocation.latitude", "at most 90"),
    ("geolocation longitude missing", lambda: normalize_context_settings({"geolocation": {"latitude": 1}}), "contextSettings.geolocation.longitude", "required"),
    ("geolocation accuracy", lambda: normalize_context_settings({"geolocation": {**GEO, "accuracy": -N}}), "contextSettings.geolocation.accuracy", "at least 0"),
    ("permissions type", lambda: normalize_context_settings({"permissions": C}), "contextSettings.permissions", "array"),
    ("permission name", lambda: normalize_context_settings({"geolocation": GEO, "permissions": [{"permission": C, "origin": "https://a.test"}]}), "contextSettings.permissions[0].permission", "one of: geolocation"),
    ("permission origin path", lambda: normalize_context_settings({"geolocation": GEO, "permissions": [{"permission": "geolocation", "origin": f"https://{C}.test/{C}"}]}), "contextSettings.permissions[0].origin", "an origin: no path beyond /"),
    ("permission origin scheme", lambda: normalize_context_settings({"geolocation": GEO, "permissions": [{"permission": "geolocation", "origin": f"ftp://{C}.test"}]}), "contextSettings.permissions[0].origin", "an absolute http(s) origin"),
    ("permission origin credentials", lambda: normalize_context_settings({"geolocation": GEO, "permissions": [{"permission": "geolocation", "origin": f"https://u:{C}@a.test"}]}), "contextSettings.permissions[0].origin", "no credentials"),
    ("permission origin port", lambda: normalize_context_settings({"geolocation": GEO, "permissions": [{"permission": "geolocation", "origin": f"https://a.test:{N}"}]}), "contextSettings.permissions[0].origin", "a decimal port"),
    ("permission origin duplicate", lambda: normalize_context_settings({"geolocation": GEO, "permissions": [{"permission": "geolocation", "origin": f"https://{C}.test"}] * 2}), "contextSettings.permissions[1].origin", "each origin once"),
    ("permission origin missing", lambda: normalize_context_settings({"geolocation": GEO, "permissions": [{"permission": "geolocation"}]}), "contextSettings.permissions[0].origin", "required"),
    ("permissions without geolocation", lambda: normalize_context_settings({"permissions": [{"permission": "geolocation", "origin": f"https://{C}.test"}]}), "contextSettings.permissions", "non-empty only together with contextSettings.geolocation"),
    # ---------------------------------------------------------------- model.labels
    ("name type", lambda: validate_labels(N, None), "name", "string"),
    ("name empty", lambda: validate_labels("", None), "name", "at least 1 character"),
    ("name control", lambda: validate_labels(C + "\x00", None), "name", "a name without control characters"),
    ("name surrogate", lambda: validate_labels(C + "\ud800", None), "name", "a name in valid Unicode"),
    ("metadata type", lambda: validate_labels(None, [C]), "metadata", "object of string values"),
    ("metadata value type", lambda: validate_labels(None, {C: N}), "metadata", "string values"),
    ("metadata value control", lambda: validate_labels(None, {C: C + "\x07"}), "metadata", "values without control characters"),
    ("metadata key control", lambda: validate_labels(None, {C + "\x07": "v"}), "metadata", "keys without control characters"),
    ("metadata key empty", lambda: validate_labels(None, {"": C}), "metadata", "non-empty keys"),
    ("metadata key forbidden", lambda: validate_labels(None, {"__proto__": C}), "metadata", "no key __proto__, constructor or prototype"),
    ("metadata key type", lambda: validate_labels(None, {N: C}), "metadata", "string keys"),
    # ---------------------------------------------------------------- persistence.states
    ("stateId pattern", lambda: validate_state_id(C + "/../x"), "stateId", "1..128 characters of A-Z"),
    ("stateId type", lambda: validate_state_id(N), "stateId", "1..128 characters of A-Z"),
    # ---------------------------------------------------------------- runtime argument checks
    ("timeoutMs high", lambda: validate_timeout(N, 1000), "timeoutMs", "at most 300000"),
    ("timeoutMs low", lambda: validate_timeout(-N, 1000), "timeoutMs", "at least 1"),
    ("timeoutMs zero", lambda: validate_timeout(0, 1000), "timeoutMs", "at least 1"),
    ("timeoutMs type", lambda: validate_timeout(C, 1000), "timeoutMs", "integer"),
    ("scroll deltaY high", lambda: scroll_delta(N, "deltaY"), "deltaY", "at most 1000000"),
    ("scroll deltaX low", lambda: scroll_delta(-N, "deltaX"), "deltaX", "at least -1000000"),
    ("scroll deltaX type", lambda: scroll_delta(C, "deltaX"), "deltaX", "integer"),
    ("capture type", lambda: parse_capture(C), "capture", "object"),
    ("capture kind", lambda: parse_capture({"kind": C}), "capture.kind", "one of: viewport, fullPage, element"),
    ("capture viewport extra", lambda: parse_capture({"kind": "viewport", "locator": C}), "capture", 'only the key kind with kind "viewport"'),
    ("capture element extra", lambda: parse_capture({"kind": "element", "locator": CSS_A, C: 1}), "capture", "only the keys kind, locator"),
    ("capture locator missing", lambda: parse_capture({"kind": "element"}), "capture.locator", 'required with kind "element"'),
    ("capture locator strategy", lambda: parse_capture({"kind": "element", "locator": {"strategy": C, "value": C}}), "capture.locator.strategy", "one of: "),
    ("url scheme", lambda: validate_http_url(f"ftp://{C}.test/"), "url", "an absolute http or https URL with a host"),
    ("url relative", lambda: validate_http_url(f"/{C}"), "url", "an absolute http or https URL with a host"),
    ("url no host", lambda: validate_http_url(f"http:///{C}"), "url", "an absolute http or https URL with a host"),
    ("url bad port", lambda: validate_http_url(f"http://a.test:{C}/"), "url", "an absolute http or https URL with a host"),
    ("url too long", lambda: validate_http_url("https://a.test/" + C * 1000), "url", "at most 8192 characters"),
    ("url empty", lambda: validate_http_url(""), "url", "at least 1 character"),
    ("url type", lambda: validate_http_url(N), "url", "string"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("call", "field", "rule"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_each_parser_names_field_and_rule_never_the_value(
    call: Callable[[], object], field: str, rule: str
) -> None:
    with pytest.raises(BrowserMeshError) as info:
        call()
    check(info.value, field, rule, (C, N))


def test_case_ids_are_unique() -> None:
    assert len({c[0] for c in CASES}) == len(CASES)


def test_a_url_keeps_its_reason() -> None:
    """Clients that read `reason: invalid_url` (the earlier payload) still find it."""
    with pytest.raises(BrowserMeshError) as info:
        validate_http_url(f"javascript:{C}")
    details = error_payload(info.value)["error"]["details"]
    assert details == {
        "reason": "invalid_url",
        "field": "url",
        "rule": "an absolute http or https URL with a host",
    }
    for bad in (N, "", "https://a.test/" + C * 1000, f"http://a.test:{N}/"):
        with pytest.raises(BrowserMeshError) as info:
            validate_http_url(bad)
        assert info.value.details["reason"] == "invalid_url"


def test_bound_clauses_stay_in_the_message() -> None:
    for call, clause in (
        (lambda: validate_timeout(N, 1000), " Bound: timeoutMs <= 300000."),
        (lambda: validate_timeout(0, 1000), " Bound: timeoutMs >= 1."),
        (lambda: observations(100).read("console", None, N, False), " Bound: limit <= 100 "),
        (lambda: normalize_snapshot_options({"maxChars": N}), " Bound: maxChars <= 100000."),
        (
            lambda: normalize_context_settings({"viewport": {"width": N, "height": 1}}),
            " Bound: viewport.width <= 10000.",
        ),
        (lambda: parse_action({"kind": "press", "target": CSS_A, "key": C * 10}), " Bound: "),
        (lambda: validate_http_url("https://a.test/" + C * 1000), " Bound: url <= 8192."),
    ):
        with pytest.raises(BrowserMeshError) as info:
            call()
        assert clause in info.value.message


async def test_the_runtime_reports_fields_of_evaluate_and_snapshot(tmp_path: Path) -> None:
    from browsermesh.config import default_config

    engine = FakeEngine()
    runtime = Runtime(default_config(timeout_ms=1000, data_dir=tmp_path), engine)
    try:
        _, view, page = await runtime.create_session()
        session = view["sessionId"]
        calls = list(engine.calls)
        cases: list[tuple[Any, str, str]] = [
            (
                runtime.evaluate(
                    PageCall(principal="local", session_id=session, page_id=page), "", None
                ),
                "expression",
                "at least 1",
            ),
            (
                runtime.evaluate(
                    PageCall(principal="local", session_id=session, page_id=page), C * 2000, None
                ),
                "expression",
                "at most 10000 characters",
            ),
            (
                runtime.evaluate(
                    PageCall(principal="local", session_id=session, page_id=page), N, None
                ),
                "expression",
                "string",
            ),
            (
                runtime.evaluate(
                    PageCall(principal="local", session_id=session, page_id=page),
                    "1",
                    [C, float("nan")],
                ),
                "arg",
                "a JSON value",
            ),
            (
                runtime.evaluate(
                    PageCall(principal="local", session_id=session, page_id=page, timeout_ms=N),
                    "1",
                    None,
                ),
                "timeoutMs",
                "at most 300000",
            ),
            (
                runtime.snapshot(
                    PageCall(principal="local", session_id=session, page_id=page),
                    {"scope": {"strategy": C, "value": C}},
                ),
                "scope.strategy",
                "one of: ",
            ),
            (
                runtime.snapshot(
                    PageCall(principal="local", session_id=session, page_id=page),
                    {"scope": {"strategy": "css"}},
                ),
                "scope.value",
                "",
            ),
            (
                runtime.navigate(
                    PageCall(principal="local", session_id=session, page_id=page), f"file:///{C}"
                ),
                "url",
                "an absolute",
            ),
            (
                runtime.scroll(PageCall(principal="local", session_id=session, page_id=page), 0, N),
                "deltaY",
                "at most 1000000",
            ),
            (
                runtime.screenshot(
                    PageCall(principal="local", session_id=session, page_id=page), {"kind": C}
                ),
                "capture.kind",
                "one of: viewport, fullPage, element",
            ),
            (
                runtime.wait(
                    PageCall(principal="local", session_id=session, page_id=page), {"kind": C}
                ),
                "condition.kind",
                "one of: url, load, locator, text",
            ),
            (
                runtime.action_and_wait(
                    PageCall(principal="local", session_id=session, page_id=page),
                    {"kind": "click", "target": CSS_A},
                    {"kind": C},
                ),
                "wait.kind",
                "one of: navigation, response, popup, dialog",
            ),
        ]
        for pending, field, rule in cases:
            with pytest.raises(BrowserMeshError) as info:
                await pending
            check(info.value, field, rule, (C, N))
        assert engine.calls == calls  # all refused before any engine call
        for kwargs, field in (
            ({"name": C + "\x00"}, "name"),
            ({"metadata": {"k": C + "\x00"}}, "metadata"),
            ({"context_settings": {"viewport": {"width": N, "height": 1}}}, "contextSettings"),
        ):
            with pytest.raises(BrowserMeshError) as info:
                await runtime.create_session(**kwargs)
            check(info.value, info.value.details["field"], "", (C, N))
            assert info.value.details["field"].startswith(field)
    finally:
        await runtime.shutdown()


def test_only_invalid_argument_builds_the_code() -> None:
    """Every INVALID_ARGUMENT is built by `errors.invalid_argument`, so none can lose its field
    and rule again (errors.py itself defines the code, its message and the builder)."""
    root = Path(__file__).resolve().parents[2] / "src" / "browsermesh"
    offenders = [
        str(path.relative_to(root))
        for path in sorted(root.rglob("*.py"))
        if path.name != "errors.py" and "ErrorCode.INVALID_ARGUMENT" in path.read_text("utf-8")
    ]
    assert offenders == []


def test_what_was_accepted_stays_accepted() -> None:
    """Naming fields changed what a refusal says, not what is refused."""
    assert parse_condition({"kind": "text", "text": "a\nb", "state": "present"})
    assert parse_condition({"kind": "load", "state": "domcontentloaded"})
    assert parse_wait({"kind": "navigation"}) == parse_wait(
        {"kind": "navigation", "loadState": "load"}
    )
    assert parse_wait({"kind": "response", "matcher": EXACT, "method": "POST", "status": 201})
    prompt = {"kind": "dialog", "dialogType": "prompt", "action": "accept", "promptText": ""}
    assert parse_wait(prompt)
    assert parse_wait({"kind": "popup"})
    assert parse_action({"kind": "press", "target": {"ref": "s1e2"}, "key": "Control+A"})
    assert parse_capture({"kind": "fullPage"}) == ("fullPage", None)
    assert validate_http_url("http://127.0.0.1:8080/x?y#z") == "http://127.0.0.1:8080/x?y#z"
    assert validate_http_url("https://[::1]/") == "https://[::1]/"
    assert validate_timeout(None, 1000) == 1000 and validate_timeout(300_000, 1) == 300_000
