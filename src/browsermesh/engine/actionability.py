"""Why an element that exists cannot take an action, and how long to wait before saying so.

Playwright waits for an element to become visible, enabled and editable until the action's
timeout, so a disabled button used to cost the whole budget (10 s by default) and then answer
"timed out, retry with a larger timeoutMs" (issue 13). Here, before the action, one cheap read of
the matches tells whether the single match is blocked for a reason that rarely clears by itself
(disabled, hidden, read-only, a file input asked for text); such a block gets a short settle
time (`BROWSERMESH_ACTIONABILITY_SETTLE_MS`, 1 s by default) to change, and then the answer names
the reason (`ELEMENT_NOT_ACTIONABLE`, issue 31). A pointer action on a match that the first read
sees covered (a hit test at its centre) gets only the settle time for its first try, since
Playwright may still scroll it clear; still covered after that, it answers `covered`. After a
full-budget timeout, the same read (plus the hit test) names the reason the action never happened.
Reading never acts: the action itself runs once (a covered first try never reached the element).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from browsermesh.engine.bounded import bounded
from browsermesh.model.deadline import OperationContext
from browsermesh.model.element_ops import Check, element_op

SETTLE_MS = 1_000
"""Default settle time for a blocked single match (configurable, see config)."""
SETTLE_POLL_MS = 50


def _checks(op: str) -> frozenset[Check]:
    """The checks of `op` (its `model.element_ops` entry: Playwright's actionability table);
    none for the operations that are not element actions (drag, set_files, reads...)."""
    entry = element_op(op)
    return frozenset() if entry is None else entry.checks


def pointer(op: str) -> bool:
    """Whether `op` is a pointer action, which a covering element blocks."""
    return "pointer" in _checks(op)


def checks(op: str) -> bool:
    """Whether `op` has actionability checks to read before it (reads, screenshots, focus,
    press and file setting have none: their call runs without the extra round trip)."""
    return bool(_checks(op))


# One read of up to two matches: enough to know "none", "one" or "several" and the one's state.
_STATE = """(els, withHit) => {
  const CONTROLS = 'a, input, textarea, button, select, [role=link], [role=button], ' +
    '[role=checkbox], [role=switch], [role=radio]';
  const out = {count: els.length, states: []};
  for (const el of els.slice(0, 2)) {
    const style = el.ownerDocument.defaultView.getComputedStyle(el);
    const box = el.getBoundingClientRect();
    const tag = el.tagName.toLowerCase();
    const type = tag === 'input' ? (el.getAttribute('type') || 'text').toLowerCase() : '';
    const formControl = ['input', 'textarea', 'select', 'button'].includes(tag);
    const state = {
      tag, type,
      visible: box.width > 0 && box.height > 0 && style.visibility !== 'hidden',
      disabled: (formControl && el.matches(':disabled')) ||
        el.getAttribute('aria-disabled') === 'true',
      readonly: (tag === 'input' || tag === 'textarea') && el.readOnly,
      connected: el.isConnected,
      coveredBy: null,
      kind: null,
    };
    // What browser_fill_form decides a field's kind from: the control itself, following a
    // <label> to its control as Playwright's fill/check/selectOption do.
    let control = el;
    if (!el.matches(CONTROLS) && !el.isContentEditable) {
      const label = el.closest('label');
      if (label && label.control) control = label.control;
    }
    const ctag = control.tagName.toLowerCase();
    state.kind = {
      tag: ctag,
      type: ctag === 'input' ? (control.getAttribute('type') || 'text').toLowerCase() : '',
      role: (control.getAttribute('role') || '').trim().split(/\\s+/)[0].toLowerCase(),
      editable: control.isContentEditable,
    };
    if (withHit && state.visible) {
      const x = box.left + box.width / 2, y = box.top + box.height / 2;
      const hit = el.ownerDocument.elementFromPoint(x, y);
      const label = hit && hit.closest('label');
      if (hit && hit !== el && !el.contains(hit) && !hit.contains(el) &&
          !(label && label.control === el)) {
        const role = hit.getAttribute('role') || hit.tagName.toLowerCase();
        const name = (hit.getAttribute('aria-label') || hit.textContent || '')
          .replace(/\\s+/g, ' ').trim().slice(0, 80);
        state.coveredBy = {role, name};
      }
    }
    out.states.push(state);
  }
  return out;
}"""


@dataclass(eq=False)
class Companion:
    """An in-page read of the top document that rides along with the action's first
    actionability read, so that the two cost one page evaluation (issue 33): the change watch's
    baseline. `script` is a function of one argument (`arg`); it runs only when the read runs in
    the top frame (a locator in an iframe, or a ref there, reads its own frame). `ensure` runs
    `alone` (the same read as an evaluation of its own) when it could not ride along; the action
    calls it before acting, so the baseline is always taken first."""

    script: str
    arg: Any
    alone: Callable[[], Awaitable[Any]]
    result: Any = None
    done: bool = False

    async def ensure(self) -> None:
        if not self.done:
            self.done = True
            self.result = await self.alone()


# The read with a companion: the companion's result under `extra`, `top` when it ran.
_WITH_COMPANION = """(els, [withHit, companionArg]) => {{
  const out = ({state})(els, withHit);
  out.top = window === window.top;
  if (out.top) out.extra = ({companion})(companionArg);
  return out;
}}"""
_COMPOSED: dict[str, str] = {}


def _composed(companion: str) -> str:
    """The read script with `companion` folded in (one string per companion script, so the
    page's compilation cache sees the same source each time)."""
    script = _COMPOSED.get(companion)
    if script is None:
        script = _WITH_COMPANION.format(state=_STATE, companion=companion)
        _COMPOSED[companion] = script
    return script


@dataclass(frozen=True, slots=True)
class Reading:
    """What one read of the matches saw."""

    count: int
    state: dict[str, Any] | None

    def blocker(self, op: str, *, late: bool = False) -> str | None:
        """The reason the single match cannot take `op`, or None. `late` (after a timeout)
        also names a covering element."""
        state = self.state
        if self.count != 1 or state is None:
            return None
        wanted = _checks(op)
        file_input = state["tag"] == "input" and state["type"] == "file"
        if "editable" in wanted and file_input:
            return "file_input"
        if "visible" in wanted and not state["visible"]:
            return "file_input" if file_input else "hidden"
        if "enabled" in wanted and state["disabled"]:
            return "disabled"
        if "editable" in wanted and state["readonly"]:
            return "not_editable"
        if late and self.covered(op):
            return "covered"
        return None

    def covered(self, op: str) -> bool:
        """Whether the single match's centre is under another element, for a pointer `op`
        (known only from a reading taken with the hit test)."""
        state = self.state
        return self.count == 1 and state is not None and pointer(op) and bool(state["coveredBy"])


_ON_HANDLE: dict[str, str] = {}
"""The read scripts wrapped for one ElementHandle, by script."""


async def read(
    el: Any, timeout_ms: float, *, hit_test: bool = False, companion: Companion | None = None
) -> Reading | None:
    """Read a Playwright Locator's matches (or one ElementHandle); None when the page cannot
    answer within `timeout_ms` or the element is gone. A `companion` not yet run rides along
    (`Companion`)."""
    riding = companion if companion is not None and not companion.done else None
    script = _STATE if riding is None else _composed(riding.script)
    arg: Any = hit_test if riding is None else [hit_test, riding.arg]
    try:
        if hasattr(el, "evaluate_all"):
            raw = await bounded(el.evaluate_all(script, arg), max(timeout_ms, 1))
        else:
            one = _ON_HANDLE.get(script)
            if one is None:
                one = _ON_HANDLE[script] = f"(e, arg) => ({script})([e], arg)"
            raw = await bounded(el.evaluate(one, arg), max(timeout_ms, 1))
    except Exception:  # a busy page or a detached handle: no reading, the action decides
        return None
    if riding is not None and raw.get("top"):
        riding.done = True
        riding.result = raw.get("extra")
    states = raw.get("states") or []
    return Reading(int(raw.get("count", 0)), states[0] if states else None)


async def settle(
    el: Any, op: str, first: Reading, ctx: OperationContext, settle_ms: float, reserve_ms: float
) -> Reading:
    """Re-read a blocked single match every 50 ms for up to `settle_ms` (within the deadline,
    keeping `reserve_ms`); returns the last reading, still blocked or not."""
    reading = first
    until = time.monotonic() + settle_ms / 1000
    while reading.blocker(op) is not None:
        left_ms = min((until - time.monotonic()) * 1000, ctx.deadline.remaining_ms() - reserve_ms)
        if left_ms < SETTLE_POLL_MS:
            return reading
        await ctx.sleep(SETTLE_POLL_MS)
        again = await read(el, reserve_ms)
        if again is None:
            return reading
        reading = again
    return reading
