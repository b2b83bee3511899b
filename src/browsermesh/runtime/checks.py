"""Argument checks the runtime repeats after the schema (bounds a schema cannot state, and a
second line of defence for clients that skip validation). Raise INVALID_ARGUMENT naming the
field and the rule; never echo the value."""

from __future__ import annotations

from typing import Literal
from urllib.parse import urlsplit

from browsermesh.errors import Bound, invalid_argument
from browsermesh.model.limits import MAX_TIMEOUT_MS
from browsermesh.model.locators import (
    Locator,
    parse_locator,
)
from browsermesh.persistence.states import LOCAL_PRINCIPAL as LOCAL_PRINCIPAL  # mcp imports it

MAX_SCROLL_DELTA = 1_000_000
MAX_EXPRESSION_CHARS = 10_000


def validate_timeout(timeout_ms: object, default: int) -> int:
    """`timeoutMs`: integer 1..300,000 (runtime re-check of the schema)."""
    if timeout_ms is None:
        return default
    if isinstance(timeout_ms, bool) or not isinstance(timeout_ms, int):
        raise invalid_argument("timeoutMs", "integer")
    if timeout_ms < 1:
        raise invalid_argument("timeoutMs", "at least 1", bound=Bound("timeoutMs", ">=", 1))
    if timeout_ms > MAX_TIMEOUT_MS:
        raise invalid_argument(
            "timeoutMs",
            f"at most {MAX_TIMEOUT_MS}",
            bound=Bound("timeoutMs", "<=", MAX_TIMEOUT_MS),
        )
    return timeout_ms


def scroll_delta(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise invalid_argument(name, "integer")
    if abs(value) > MAX_SCROLL_DELTA:
        op: Literal["<=", ">="] = "<=" if value > 0 else ">="
        limit = MAX_SCROLL_DELTA if value > 0 else -MAX_SCROLL_DELTA
        rule = f"at most {limit}" if value > 0 else f"at least {limit}"
        raise invalid_argument(name, rule, bound=Bound(name, op, limit))
    return value


_CAPTURE_KINDS = ("viewport", "fullPage", "element")


def parse_capture(capture: object) -> tuple[str, Locator | None]:
    if capture is None:
        return "viewport", None
    if not isinstance(capture, dict):
        raise invalid_argument("capture", "object")
    kind = capture.get("kind")
    if not isinstance(kind, str) or kind not in _CAPTURE_KINDS:
        raise invalid_argument("capture.kind", "one of: " + ", ".join(_CAPTURE_KINDS))
    if kind != "element":
        if set(capture) != {"kind"}:
            raise invalid_argument("capture", f'only the key kind with kind "{kind}"')
        return kind, None
    if set(capture) - {"kind", "locator"}:
        raise invalid_argument("capture", "only the keys kind, locator")
    if "locator" not in capture:
        raise invalid_argument("capture.locator", 'required with kind "element"')
    return "element", parse_locator(capture["locator"], "capture.locator")


MAX_URL_CHARS = 8192
_URL_RULE = "an absolute http or https URL with a host"


def validate_http_url(url: object) -> str:
    """Navigation accepts absolute http(s) URLs only (loopback allowed), of 1..8192 characters.

    Every refusal keeps `reason: invalid_url` (the earlier payload); field and rule say more."""
    if not isinstance(url, str):
        raise invalid_argument("url", "string", reason="invalid_url")
    if not 1 <= len(url) <= MAX_URL_CHARS:
        over = len(url) > MAX_URL_CHARS
        raise invalid_argument(
            "url",
            f"at most {MAX_URL_CHARS} characters" if over else "at least 1 character",
            bound=Bound("url", "<=", MAX_URL_CHARS) if over else Bound("url", ">=", 1),
            reason="invalid_url",
        )
    try:
        parts = urlsplit(url)
        _ = parts.port  # a port that is not a number of 0..65535 raises ValueError
        if parts.scheme.lower() in ("http", "https") and parts.hostname:
            return url
    except ValueError:
        pass
    raise invalid_argument("url", _URL_RULE, reason="invalid_url")
