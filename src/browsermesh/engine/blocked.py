"""The errors of an element that exists but cannot act, and of an element call that ran out.

`blocked` builds ELEMENT_NOT_ACTIONABLE (issue 31) with the reason, the operation, the locator
as given (`within` included) and a covering element; `timeout` builds OPERATION_TIMEOUT, kept
for a budget that really ran out; `late` chooses between them after Playwright gave up;
`first_try` gives a pointer action on a covered match a short first try.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any

from browsermesh.engine import actionability
from browsermesh.engine.failures import (
    classify_reason,
    not_actionable,
    operation_timeout,
    raw_cause,
)
from browsermesh.errors import BrowserMeshError
from browsermesh.model.deadline import OperationContext
from browsermesh.model.element_ops import operation_detail
from browsermesh.model.locators import Locator

PROBE_RESERVE_MS = 250

ElementCall = Callable[[Any, float], Awaitable[Any]]
"""An element call: `call(playwright_locator_or_handle, timeout_ms)`."""


def timeout(ctx: OperationContext, op: str, cause: str | None = None) -> BrowserMeshError:
    """OPERATION_TIMEOUT for an element operation whose budget ran out."""
    return operation_timeout(ctx.deadline.timeout_ms, cause, operation=operation_detail(op))


def blocked(
    op: str,
    reason: str,
    cause: str | None = None,
    locator: Locator | None = None,
    reading: actionability.Reading | None = None,
) -> BrowserMeshError:
    """ELEMENT_NOT_ACTIONABLE: the element exists but cannot take `op` for `reason` (issue 31),
    with the locator as given and, for `covered`, the covering element."""
    extra: dict[str, Any] = {"operation": operation_detail(op)}
    if locator is not None:
        extra["locator"] = locator.detail()
    if reason == "covered" and reading is not None and reading.state is not None:
        extra["coveredBy"] = reading.state.get("coveredBy")
    return not_actionable(reason, cause, **extra)


def late(
    op: str,
    cause: str,
    ctx: OperationContext,
    reading: actionability.Reading | None,
    locator: Locator | None = None,
) -> BrowserMeshError:
    """After Playwright gave up: the reason the late reading names, else OPERATION_TIMEOUT."""
    reason = None if reading is None else reading.blocker(op, late=True)
    if reason is None and "detached" in cause.lower():
        reason = "detached"
    if reason is None:
        return timeout(ctx, op, cause)
    return blocked(op, reason, cause, locator, reading)


async def first_try(
    el: Any,
    op: str,
    call: ElementCall,
    reading: actionability.Reading,
    budget_ms: float,
    settle_ms: float,
    locator: Locator | None = None,
) -> tuple[bool, Any]:
    """A pointer action on a match seen covered gets the settle time for a first try (Playwright
    may scroll it clear); `(True, result)` when it acted, `(False, None)` when that try timed
    out and the element is no longer covered, so the caller tries again with the whole budget.
    Still covered: ELEMENT_NOT_ACTIONABLE `covered`."""
    if not reading.covered(op) or budget_ms <= settle_ms:
        return False, None
    try:
        return True, await call(el, max(settle_ms, 1))
    except BrowserMeshError:
        raise
    except Exception as exc:
        if classify_reason(exc, element=True) != "timeout":
            raise
        again = await actionability.read(el, PROBE_RESERVE_MS, hit_test=True)
        if again is not None and again.covered(op):
            raise blocked(op, "covered", raw_cause(exc), locator, again) from None
        return False, None


# Playwright failures that are not timeouts but say why an element that exists cannot act.
_ACTION_FAILURES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("file_input", re.compile(r'input of type "file" cannot be filled')),
    (
        "not_editable",
        re.compile(
            r"is not an <input>, <textarea>|cannot be filled|cannot type text into|"
            r"not a <select> element|not a checkbox or radio button|element is not editable"
        ),
    ),
    ("detached", re.compile(r"not attached to the dom|element is not connected")),
)


def action_failure(exc: BaseException) -> str | None:
    """The actionability reason a non-timeout Playwright failure names, if any."""
    text = str(exc).lower()
    for reason, pattern in _ACTION_FAILURES:
        if pattern.search(text):
            return reason
    return None
