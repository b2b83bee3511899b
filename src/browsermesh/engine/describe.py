"""The element describer (issue 20): the replayable locator of an action's target, read before
the action, for the session's recording.

A ref stands for one element handle that no exported test can hold, so it is recorded as the
first semantic locator that resolves to exactly that element now, in this order (issue 20):
role and exact accessible name (as the capture that made the ref printed them), label,
placeholder, test id (`data-testid`, Playwright's default and the engine's), exact text, and
last a CSS path (`#id` when unique, else `tag:nth-of-type(n)` steps from the nearest ancestor
with a unique id). Each candidate is checked in the element's own frame with one
`evaluate_all` (exactly one match, and it is the element); an element inside iframes keeps its
frame chain (each `<iframe>` by its CSS path in its parent frame). A locator target is kept as
given, unless it contains one of the page's password values: then its element is described as
a ref's is. Either way the element's kind (`model.forms.field_kind`) and whether it is a
password input are read, so the recording can turn a password's value into a secret reference,
and the page's password values are returned (`secrets`) so that the recording knows them (issue
30: a page may copy a password into a label; no candidate that contains one is recorded).

Best effort within a small budget that never passes the call's deadline: describing never
raises (a stale ref, a busy page: `locator` None or the CSS path), so the action itself decides
the operation's outcome and error.
"""

from __future__ import annotations

import contextlib
import json
import re
from typing import TYPE_CHECKING, Any, Final, assert_never

from browsermesh.engine import actionability
from browsermesh.engine.bounded import bounded
from browsermesh.engine.locators import build, build_locator
from browsermesh.engine.page_source import page_secrets
from browsermesh.engine.refs import RefRegistry
from browsermesh.errors import BrowserMeshError
from browsermesh.model.deadline import Deadline, OperationContext
from browsermesh.model.forms import field_kind
from browsermesh.model.locators import (
    MAX_FRAME_DEPTH,
    ROLES,
    Locator,
    Selector,
    Target,
    exact_name_pattern,
    normalize_name,
)
from browsermesh.model.strategies import DESCRIBED
from browsermesh.redact import SecretValues

if TYPE_CHECKING:
    from playwright.async_api import ElementHandle, Frame, Page

__all__ = ["DESCRIBE_MS", "describe_target"]

DESCRIBE_MS: Final = 1_000
"""At most this long (and at most a quarter of what is left of the call's budget)."""
MAX_TEXT_CHARS: Final = 80
"""Longer texts make poor locators: the CSS path is used instead."""

# What the element offers as names: its labels' texts, aria-label, placeholder, data-testid,
# its short text, and a CSS path unique in its document.
_FACTS = """e => {
  const doc = e.ownerDocument;
  const norm = s => (s || '').replace(/\\s+/g, ' ').trim();
  const unique = sel => { try { return doc.querySelectorAll(sel).length === 1; }
                          catch (_) { return false; } };
  const byId = el => el.id ? '#' + CSS.escape(el.id) : null;
  let css = null;
  if (byId(e) && unique(byId(e))) css = byId(e);
  if (css === null) {
    const parts = [];
    let el = e;
    while (el && el.nodeType === 1 && el !== doc.documentElement) {
      if (el !== e && byId(el) && unique(byId(el))) { parts.unshift(byId(el)); break; }
      let n = 1;
      for (let s = el.previousElementSibling; s; s = s.previousElementSibling)
        if (s.tagName === el.tagName) n++;
      parts.unshift(el.tagName.toLowerCase() + ':nth-of-type(' + n + ')');
      el = el.parentElement;
    }
    if (!parts.length || !parts[0].startsWith('#')) parts.unshift('html');
    css = parts.join(' > ');
  }
  const labels = [];
  for (const label of Array.from(e.labels || [])) labels.push(norm(label.innerText));
  if (e.getAttribute('aria-label')) labels.push(norm(e.getAttribute('aria-label')));
  for (const id of (e.getAttribute('aria-labelledby') || '').split(/\\s+/)) {
    const ref = id && doc.getElementById(id);
    if (ref) labels.push(norm(ref.innerText));
  }
  return {
    css, labels: labels.filter(Boolean),
    placeholder: norm(e.getAttribute('placeholder')),
    testId: e.getAttribute('data-testid') || '',
    text: norm(e.innerText),
  };
}"""
_SAME = "(els, h) => els.length === 1 && els[0] === h"


def _budget(ctx: OperationContext) -> float:
    return max(0.0, min(DESCRIBE_MS, ctx.deadline.remaining_ms() / 4))


async def describe_target(
    page: Page, registry: RefRegistry, target: Target, ctx: OperationContext
) -> dict[str, Any]:
    """`{locator, isPassword, kind, resolved, secrets}` for `target` (see the module
    docstring): `locator` the wire-form locator to record (None when a ref's element cannot be
    described in time or is gone), `kind` the field kind (`text`, `select`, `checkbox`,
    `radio`; None when unread), `resolved` whether exactly one element was found and read,
    `secrets` the page's password values (empty when unread)."""
    budget_ms = _budget(ctx)
    out: dict[str, Any] = {
        "locator": target.wire() if isinstance(target, Locator) else None,
        "isPassword": False,
        "kind": None,
        "resolved": False,
        "secrets": [],
    }
    if budget_ms < 20:
        return out
    # Best effort: the action decides the operation's outcome and error.
    with contextlib.suppress(Exception, TimeoutError):
        await bounded(_describe(page, registry, target, out), budget_ms)
    return out


async def _describe(page: Page, registry: RefRegistry, target: Target, out: dict[str, Any]) -> None:
    secrets = await _page_secrets(page)
    out["secrets"] = list(secrets.values())
    role = name = None
    if isinstance(target, Locator):
        root: Any = page
        for step in target.frames:
            root = build(root, step).content_frame
        el: Any = build_locator(root, target)
        handle = None
    else:
        try:
            entry = registry.lookup(target.token)
        except BrowserMeshError:
            return  # stale or expired: the action will say so
        el = handle = entry.handle
        role, name = entry.role, entry.name
    reading = await actionability.read(el, DESCRIBE_MS)
    if reading is None or reading.count != 1 or reading.state is None:
        return
    kind = reading.state.get("kind") or {}
    out["kind"] = field_kind(kind)
    out["isPassword"] = kind.get("tag") == "input" and kind.get("type") == "password"
    out["resolved"] = True
    if handle is None and _mentions(secrets, out["locator"]):
        # The client's locator names a password value (copied into a label, say): record
        # another way to find the same element instead.
        out["locator"] = None
        handle = await el.element_handle(timeout=DESCRIBE_MS)
    if handle is not None:
        out["locator"] = await _ref_locator(handle, role, name, out, secrets)


async def _page_secrets(page: Page) -> SecretValues:
    """The password values of `page`'s frames (empty when the page has too many to read)."""
    try:
        return await page_secrets(page, Deadline(DESCRIBE_MS))
    except BrowserMeshError:
        return SecretValues()


def _mentions(secrets: SecretValues, locator: dict[str, Any] | None) -> bool:
    """Whether a wire-form locator carries one of `secrets` in any of its strings."""
    if locator is None or not secrets:
        return False
    return secrets.appears_in(json.dumps(locator, ensure_ascii=False))


async def _ref_locator(
    handle: ElementHandle,
    role: str | None,
    name: str | None,
    out: dict[str, Any],
    secrets: SecretValues,
) -> dict[str, Any] | None:
    frame = await handle.owner_frame()
    if frame is None:
        return None
    chain = await frame_chain(frame)
    facts = await handle.evaluate(_FACTS)
    css = _wire(Selector("css", str(facts["css"])), chain)
    if _mentions(secrets, css):
        return None  # even the element's ids carry a password: nothing safe to record
    # Recorded now, so a budget that ends during the checks still leaves a replayable locator.
    out["locator"] = css
    for selector in _candidates(role, name, facts):
        wire = _wire(selector, chain)
        if not _mentions(secrets, wire) and await _unique(frame, selector, handle):
            return wire
    return css


def _candidates(role: str | None, name: str | None, facts: dict[str, Any]) -> list[Selector]:
    """The semantic locators to try for a ref's element, in the catalogue's describer order
    (`model.strategies.DESCRIBED`)."""
    out: list[Selector] = []
    for strategy in DESCRIBED:
        match strategy:
            case "role":
                if role in ROLES and name:
                    out.append(Selector("role", role, name, True))
            case "label":
                out += [Selector("label", label) for label in facts.get("labels") or () if label]
            case "placeholder":
                if facts.get("placeholder"):
                    out.append(Selector("placeholder", str(facts["placeholder"])))
            case "testId":
                if facts.get("testId"):
                    out.append(Selector("testId", str(facts["testId"])))
            case "text":
                text = normalize_name(str(facts.get("text") or ""))
                if text and len(text) <= MAX_TEXT_CHARS:
                    out.append(Selector("text", text))
            case "alt" | "title" | "css":  # never described (css: the path is the fallback)
                pass
            case _:
                assert_never(strategy)
    return out


async def _unique(frame: Frame, selector: Selector, handle: ElementHandle) -> bool:
    """Whether `selector` matches exactly `handle`'s element in `frame`, as BrowserMesh
    resolves it and, for a label, as Playwright's own get_by_label (the export's call) does."""
    if not await build(frame, selector).evaluate_all(_SAME, handle):
        return False
    if selector.strategy == "label":
        plain = frame.get_by_label(re.compile(exact_name_pattern(selector.value)))
        return bool(await plain.evaluate_all(_SAME, handle))
    return True


async def frame_chain(frame: Frame) -> list[Selector]:
    """The `<iframe>` steps from the main frame down to `frame` (CSS paths, outer first)."""
    chain: list[Selector] = []
    while frame.parent_frame is not None and len(chain) <= MAX_FRAME_DEPTH:
        element = await frame.frame_element()
        facts = await element.evaluate(_FACTS)
        chain.insert(0, Selector("css", str(facts["css"])))
        frame = frame.parent_frame
    return chain


def _wire(selector: Selector, chain: list[Selector]) -> dict[str, Any]:
    return Locator(selector, tuple(chain[-MAX_FRAME_DEPTH:])).wire()
