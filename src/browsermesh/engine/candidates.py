"""Candidates and renewed refs for element errors (issue 13): the next call can succeed
without a snapshot.

Best effort within a small budget: a page that cannot answer in time gets an error without
candidates, never a later or different error. Names pass the page's password values (issue 12)
like every capture.
"""

from __future__ import annotations

import asyncio
import re
from typing import TYPE_CHECKING, Any

from browsermesh.engine.page_source import page_secrets
from browsermesh.errors import BrowserMeshError
from browsermesh.model.aria import parse_aria, redact_tree, strip_iframe_children
from browsermesh.model.candidates import rank
from browsermesh.model.deadline import Deadline
from browsermesh.model.locators import Selector, exact_name_pattern
from browsermesh.model.text import well_formed

if TYPE_CHECKING:
    from playwright.async_api import Page

    from browsermesh.engine.refs import RefEntry, RefRegistry

CANDIDATES_MS = 1_000
"""At most this long (and never past the call's deadline) to find candidates."""


async def near(
    page: Page,
    root: Any,
    selector: Selector,
    registry: RefRegistry | None,
    budget_ms: float,
    *,
    matches_only: bool = False,
) -> list[dict[str, Any]]:
    """Up to five `details.candidates` entries for `selector` under `root` (page or frame)."""
    budget_ms = min(budget_ms, CANDIDATES_MS)
    if budget_ms < 20:
        return []
    try:
        return await asyncio.wait_for(
            _near(page, root, selector, registry, budget_ms, matches_only),
            timeout=budget_ms / 1000,
        )
    except (Exception, TimeoutError):  # best effort: the error itself is already decided
        return []


async def _near(
    page: Page,
    root: Any,
    selector: Selector,
    registry: RefRegistry | None,
    budget_ms: float,
    matches_only: bool,
) -> list[dict[str, Any]]:
    raw = await root.locator("body").aria_snapshot(mode="ai", timeout=budget_ms)
    nodes = await asyncio.to_thread(parse_aria, well_formed(raw))
    redact_tree(nodes, await page_secrets(page, Deadline(int(budget_ms))))
    strip_iframe_children(nodes)
    out = []
    for pick in rank(nodes, selector, matches_only=matches_only):
        ref = None
        if registry is not None and pick.node.pw_ref:
            handle = await root.locator(f"aria-ref={pick.node.pw_ref}").element_handle(
                timeout=budget_ms
            )
            ref = registry.add(handle, pick.node.role, pick.node.name)
        out.append(pick.detail(ref))
    return out


async def renew(registry: RefRegistry, entry: RefEntry, budget_ms: float) -> str | None:
    """A fresh ref for an expired `entry` whose element is still in its document, when the same
    role and name still resolve to exactly one element in its frame; None otherwise (or when
    the page cannot answer in time)."""
    if entry.role is None or not entry.name:
        return None
    budget_ms = min(budget_ms, CANDIDATES_MS)
    try:
        return await asyncio.wait_for(_renew(registry, entry, budget_ms), timeout=budget_ms / 1000)
    except (Exception, TimeoutError):
        return None


async def _renew(registry: RefRegistry, entry: RefEntry, budget_ms: float) -> str | None:
    if not await entry.handle.evaluate("e => e.isConnected"):
        return None  # replaced or removed: stale for that reason, not only expired
    frame = await entry.handle.owner_frame()
    if frame is None or entry.role is None or entry.name is None:
        return None
    loc = frame.get_by_role(entry.role, name=re.compile(exact_name_pattern(entry.name)))  # type: ignore[arg-type]
    if await loc.count() != 1:
        return None
    handle = await loc.element_handle(timeout=budget_ms)
    if handle is None:
        return None
    return registry.add(handle, entry.role, entry.name)


def with_details(error: BrowserMeshError, **details: Any) -> BrowserMeshError:
    """`error` with more details (only the non-empty ones)."""
    error.details.update({k: v for k, v in details.items() if v})
    return error
