"""Engine failure classification (contract §5.4): Playwright errors become BrowserMeshErrors.

Only the engine sees Playwright exceptions; the raw text is kept as `cause` (internal only).
"""

from __future__ import annotations

import re

from browsermesh.errors import BrowserMeshError, ErrorCode
from browsermesh.redact import cut_chars

_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("timeout", re.compile(r"timed out|timeout")),
    ("invalid_url", re.compile(r"err_invalid_url|err_invalid_argument|invalid url")),
    ("dns", re.compile(r"err_name_not_resolved|err_name_resolution_failed|enotfound|eai_again")),
    (
        "connection",
        re.compile(
            r"err_connection_(refused|reset|closed|aborted)|err_address_unreachable|"
            r"err_internet_disconnected|econnrefused|econnreset|econnaborted|enetunreach|"
            r"ehostunreach"
        ),
    ),
    (
        "tls",
        re.compile(
            r"err_cert_|err_ssl_|err_tls_|certificate (error|expired|invalid)|"
            r"self-signed certificate|(ssl|tls) handshake"
        ),
    ),
    ("locator_ambiguous", re.compile(r"strict mode violation")),
)


def classify_reason(exc: BaseException, *, element: bool = False) -> str:
    """The §5.4 reason of an engine failure."""
    if type(exc).__name__ == "TimeoutError":
        return "timeout"
    text = str(exc).lower()
    for reason, pattern in _RULES:
        if pattern.search(text):
            return reason
    return "element_not_found" if element else "other"


def raw_cause(exc: BaseException) -> str:
    return cut_chars(f"{type(exc).__name__}: {exc}", 2000)


def navigation_error(exc: BaseException, url: str, timeout_ms: float) -> BrowserMeshError:
    """goto/back/forward/reload failures: OPERATION_TIMEOUT or NAVIGATION_FAILED."""
    reason = classify_reason(exc)
    if reason == "timeout":
        return BrowserMeshError(
            ErrorCode.OPERATION_TIMEOUT,
            details={"timeoutMs": timeout_ms, "reason": "timeout"},
            cause=raw_cause(exc),
        )
    if reason not in ("dns", "connection", "tls", "invalid_url"):
        reason = "other"
    return BrowserMeshError(
        ErrorCode.NAVIGATION_FAILED,
        details={"reason": reason, "url": url},
        cause=raw_cause(exc),
    )


def browser_error(exc: BaseException, variant: str = "operation") -> BrowserMeshError:
    """Any other engine failure."""
    if variant == "launch":
        return BrowserMeshError(
            ErrorCode.BROWSER_ERROR,
            variant="launch",
            details={"remediation": "Run: browsermesh --install-browser", "reason": "other"},
            cause=raw_cause(exc),
        )
    if variant == "connect":
        return BrowserMeshError(
            ErrorCode.BROWSER_ERROR,
            variant="connect",
            details={"reason": "connection"},
            cause=raw_cause(exc),
        )
    reason = classify_reason(exc)
    if reason == "timeout":
        return BrowserMeshError(
            ErrorCode.OPERATION_TIMEOUT, details={"reason": "timeout"}, cause=raw_cause(exc)
        )
    return BrowserMeshError(ErrorCode.BROWSER_ERROR, cause=raw_cause(exc))
