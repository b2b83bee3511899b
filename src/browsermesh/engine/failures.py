"""The one place where Playwright failures become the reference's codes and reasons (§5.4).

Only the engine sees Playwright exceptions; the raw text is kept as `cause` (internal only).
Every engine call that can fail goes through `timed` (a call under the operation's deadline),
`within` (the same bound, for callers that classify other failures themselves), `translated`
(a context manager applying one classification rule, `as_browser_error`, `as_navigation_error`,
`LAUNCH` or `CONNECT`, around Playwright calls) or, for element operations, `engine.elements`
(which adds the match-count classification of §5.3 on top of `classify_reason`). Nowhere else
does an `except Exception` build a BrowserMeshError from a Playwright failure
(tests/unit/test_engine_convention.py). Every OPERATION_TIMEOUT is built by
`operation_timeout`, in one shape: `{timeoutMs, reason}` (plus `operation` for element
operations), the same as the model's `Deadline.timeout_error()`, and only for a budget that
really ran out; an element that exists but cannot act is `not_actionable` (issue 31).
"""

from __future__ import annotations

import contextlib
import inspect
import re
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import Any, TypeAlias, TypeVar

from browsermesh.engine.bounded import bounded
from browsermesh.errors import BrowserMeshError, ErrorCode
from browsermesh.model.deadline import Deadline
from browsermesh.redact import cut_chars

T = TypeVar("T")

_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("timeout", re.compile(r"timed out|timeout")),
    ("invalid_url", re.compile(r"err_invalid_url|err_invalid_argument|invalid url")),
    ("dns", re.compile(r"err_name_not_resolved|err_name_resolution_failed|enotfound|eai_again")),
    # The session's proxy (issue 19): refused, unreachable, or it refused the tunnel.
    (
        "proxy",
        re.compile(r"err_proxy_|err_tunnel_connection_failed|err_socks_|err_mandatory_proxy_"),
    ),
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


def operation_timeout(
    timeout_ms: float, cause: str | None = None, **details: object
) -> BrowserMeshError:
    """OPERATION_TIMEOUT in its one shape: `{timeoutMs, reason: "timeout", ...details}` (a
    `reason` in `details`, such as an actionability reason, takes the place of "timeout")."""
    return BrowserMeshError(
        ErrorCode.OPERATION_TIMEOUT,
        details={"timeoutMs": timeout_ms, "reason": "timeout", **details},
        cause=cause or f"exceeded {timeout_ms} ms",
    )


def is_operation_timeout(error: BaseException) -> bool:
    """Whether `error` is the OPERATION_TIMEOUT of a budget that ran out (a caller may add to
    its details, as a text wait adds the nearest text)."""
    return isinstance(error, BrowserMeshError) and error.code is ErrorCode.OPERATION_TIMEOUT


def not_actionable(reason: str, cause: str | None = None, **details: object) -> BrowserMeshError:
    """ELEMENT_NOT_ACTIONABLE in its one shape: `{reason, ...details}` (an actionability reason
    of `errors.ACTIONABILITY_REASONS`; `operation`, `locator`, `coveredBy` as known)."""
    return BrowserMeshError(
        ErrorCode.ELEMENT_NOT_ACTIONABLE,
        details={"reason": reason, **details},
        cause=cause or reason,
    )


def _budget_ms(awaitable: Awaitable[object], deadline: Deadline) -> float:
    """The remaining budget; when none is left, the call is never started (a coroutine is
    closed, so it is not reported as never awaited) and the deadline's timeout is raised."""
    try:
        return deadline.budget_ms()
    except BrowserMeshError:
        if inspect.iscoroutine(awaitable):
            awaitable.close()
        raise


async def within(awaitable: Awaitable[T], deadline: Deadline) -> T:
    """Await one engine call within the deadline's remaining budget; past it,
    `operation_timeout`. Any other failure propagates, for callers whose failures mean
    something else (a page script's own exception, an element miss, a close that may fail)."""
    budget_ms = _budget_ms(awaitable, deadline)
    try:
        return await bounded(awaitable, budget_ms)
    except TimeoutError:
        raise operation_timeout(deadline.timeout_ms) from None


async def timed(awaitable: Awaitable[T], deadline: Deadline) -> T:
    """Await one engine call within `deadline`: past it, or when Playwright reports its own
    timeout, OPERATION_TIMEOUT; any other Playwright failure BROWSER_ERROR (`browser_error`)."""
    with translated(as_browser_error(deadline.timeout_ms)):
        return await within(awaitable, deadline)


Rule: TypeAlias = Callable[[Exception], BrowserMeshError]
"""How one kind of call's Playwright failure becomes the reference's error (§5.4)."""


@contextlib.contextmanager
def translated(rule: Rule) -> Iterator[None]:
    """Apply `rule` to any failure of the Playwright calls in the block: it is raised as the
    classified error `rule` builds (the raw exception kept only as its `cause`). A failure
    already classified (a BrowserMeshError: a budget that ran out in `within`, a cancellation)
    passes through unchanged, and so do `asyncio.CancelledError` and the other non-`Exception`s.
    """
    try:
        yield
    except BrowserMeshError:
        raise
    except Exception as exc:
        raise rule(exc) from None


def as_browser_error(timeout_ms: float | None = None) -> Rule:
    """The rule of an ordinary engine call: `browser_error` against the budget `timeout_ms`."""
    return lambda exc: browser_error(exc, timeout_ms=timeout_ms)


def as_navigation_error(url: str | Callable[[], str], timeout_ms: float) -> Rule:
    """The rule of goto/back/forward/reload: `navigation_error` for `url` (a callable is read
    when the failure happens: a history step names the page's URL at that moment)."""
    return lambda exc: navigation_error(exc, url if isinstance(url, str) else url(), timeout_ms)


def _launch(exc: Exception) -> BrowserMeshError:
    return browser_error(exc, "launch")


def _connect(exc: Exception) -> BrowserMeshError:
    return browser_error(exc, "connect")


LAUNCH: Rule = _launch
"""The rule of starting a local browser: BROWSER_ERROR variant `launch`."""
CONNECT: Rule = _connect
"""The rule of connecting to a CDP endpoint or a browser server: variant `connect`."""


_BLOCKED_BY_CLIENT = re.compile(r"err_blocked_by_client", re.IGNORECASE)


def navigation_error(exc: BaseException, url: str, timeout_ms: float) -> BrowserMeshError:
    """goto/back/forward/reload failures: OPERATION_TIMEOUT or NAVIGATION_FAILED.

    A document blocked by the client is the session's network policy (issue 19): its route
    and its redirect guard are the only ones that block documents (`blockResources` can never
    name `document`), so `net::ERR_BLOCKED_BY_CLIENT` reads `blocked_by_policy`."""
    reason = classify_reason(exc)
    if reason == "timeout":
        return operation_timeout(timeout_ms, raw_cause(exc))
    if _BLOCKED_BY_CLIENT.search(str(exc)):
        reason = "blocked_by_policy"
    elif reason not in ("dns", "connection", "tls", "invalid_url", "proxy"):
        reason = "other"
    return BrowserMeshError(
        ErrorCode.NAVIGATION_FAILED,
        details={"reason": reason, "url": url},
        cause=raw_cause(exc),
    )


def browser_error(
    exc: BaseException, variant: str = "operation", timeout_ms: float | None = None
) -> BrowserMeshError:
    """Any other engine failure. A timeout is OPERATION_TIMEOUT against the call's budget
    `timeout_ms`; without a known budget it stays BROWSER_ERROR (an OPERATION_TIMEOUT always
    says which `timeoutMs` it exceeded)."""
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
    if timeout_ms is not None and classify_reason(exc) == "timeout":
        return operation_timeout(timeout_ms, raw_cause(exc))
    return BrowserMeshError(ErrorCode.BROWSER_ERROR, cause=raw_cause(exc))


def name_failed_response(exc: BaseException, failed: Sequence[Any]) -> None:
    """A timed-out wait names the failed response behind the action (issue 31 item 14): the
    main document's when there is one, else the last fetch or XHR (status; the URL is
    sanitized by the details allowlist). `failed` holds Playwright responses of 400 or more."""
    if not failed or not isinstance(exc, BrowserMeshError):
        return
    if exc.code is not ErrorCode.OPERATION_TIMEOUT or "status" in exc.details:
        return
    documents = [r for r in failed if r.request.resource_type == "document"]
    response = (documents or failed)[-1]
    exc.details = {**exc.details, "status": response.status, "url": response.url}
