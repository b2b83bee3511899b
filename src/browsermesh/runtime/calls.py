"""The address of a page operation: who calls, which session and page, with which budget."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class PageCall:
    """What every page-addressed runtime operation takes first, built by the tool layer from a
    call (``ToolCall.page()``) or by a library caller. The ids and the budget are the caller's
    raw values: the runtime checks them (``SESSION_NOT_FOUND``, ``PAGE_NOT_FOUND``,
    ``INVALID_ARGUMENT`` for ``timeoutMs``) when the operation is accepted."""

    principal: str
    session_id: object
    page_id: object
    timeout_ms: object = None
