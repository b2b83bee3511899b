"""A person's input to a managed page while they hold it from the live view (issue 34), and
what they did, described without the text they typed.

`HumanInputs.open(handle, on_step)` gives a `PageInput` for one held page. Its `send(events)`
plays a batch of the view's input (`model.handover`) on the page in order, through Playwright's
mouse and keyboard (Chromium's CDP ``Input.dispatchMouseEvent`` / ``dispatchKeyEvent`` /
``insertText`` underneath; Playwright maps a key name to its key code and text). Coordinates
are fractions of the picture, mapped onto the page's viewport.

What the person did is told to `on_step` as `HumanStep`s:

- a click (left button down, then up): the element under the pointer, described when the
  button went down (a click may navigate away): its accessible role and name as the browser
  computes them (CDP ``DOM.getNodeForLocation`` and ``Accessibility.getPartialAXTree``, no page
  script), the nearest interactive ancestor of what was hit;
- typing: one step per run of characters into one element (the focused element, described
  once per run), told when the run ends (a click, a named key, the end of the hold): how many
  characters, and none for a password field; the text rides along only for a recording;
- a named key (Enter, Tab, Escape, ...) pressed in an element;
- a navigation of the top frame (sanitized URL).

Failures of a single input (a key Playwright does not know, a page that went away) are skipped:
a person's input must never fail the hold.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, Final

from browsermesh.engine.bounded import bounded
from browsermesh.model.aria import INTERACTIVE_ROLES
from browsermesh.model.handover import (
    MAX_STEP_NAME_CHARS,
    HumanInput,
    HumanStep,
    Key,
    Ping,
    Pointer,
    Text,
    Wheel,
)
from browsermesh.redact import cut_chars, sanitize_url
from browsermesh.text_redact import redact_text

__all__ = ["HumanInputs", "PageInput", "StepSink"]

StepSink = Callable[[HumanStep], None]
_CDP_BUDGET_MS: Final = 2_000
_INPUT_BUDGET_MS: Final = 5_000
# Keys that end a typing run and are worth a step of their own.
_NAMED_KEYS: Final = frozenset({"Enter", "Tab", "Escape"})
# Keys that edit within a typing run (not counted as characters, no step of their own).
_EDIT_KEYS: Final = frozenset({"Backspace", "Delete"})
_MODIFIERS: Final = frozenset({"Shift", "Control", "Alt", "Meta", "AltGraph", "CapsLock"})
_URL_CHARS: Final = 256
_FOCUSED: Final = "document.activeElement"


class PageInput:
    """The person's input to one held page (see the module doc)."""

    def __init__(self, page: Any, on_step: StepSink) -> None:
        self._page = page  # a Playwright Page
        self._on_step = on_step
        self._cdp: Any = None
        self._closed = False
        self._pressed: dict[str, HumanStep | None] = {}  # button -> what it went down on
        self._modifiers: set[str] = set()
        # The typing run: the element described, the characters typed, their text.
        self._run: HumanStep | None = None
        self._chars = 0
        self._typed: list[str] = []
        self._size: tuple[float, float] | None = None

    async def start(self) -> None:
        """Open the CDP session the descriptions use and follow the top frame's navigations."""
        with contextlib.suppress(Exception):
            self._cdp = await bounded(
                self._page.context.new_cdp_session(self._page), _CDP_BUDGET_MS
            )
        self._page.on("framenavigated", self._navigated)

    async def send(self, events: Sequence[HumanInput]) -> None:
        """Play `events` on the page, in order."""
        self._size = None  # the viewport may have changed since the last batch
        for event in events:
            if self._closed:
                return
            with contextlib.suppress(Exception):
                await bounded(self._one(event), _INPUT_BUDGET_MS)

    async def close(self) -> None:
        """End the typing run (its step is told) and let the page go. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._end_run()
        with contextlib.suppress(Exception):
            self._page.remove_listener("framenavigated", self._navigated)
        cdp, self._cdp = self._cdp, None
        if cdp is not None:
            with contextlib.suppress(Exception):
                await bounded(cdp.detach(), _CDP_BUDGET_MS)

    # ------------------------------------------------------------------ input

    async def _one(self, event: HumanInput) -> None:
        mouse, keyboard = self._page.mouse, self._page.keyboard
        match event:
            case Pointer(kind="move", x=x, y=y):
                await mouse.move(*await self._point(x, y))
            case Pointer(kind="down", x=x, y=y, button=button, clicks=clicks):
                px, py = await self._point(x, y)
                self._end_run()
                self._pressed[button] = await self._at(px, py) if button == "left" else None
                await mouse.move(px, py)
                await mouse.down(button=button, click_count=clicks)
            case Pointer(kind="up", x=x, y=y, button=button, clicks=clicks):
                px, py = await self._point(x, y)
                await mouse.move(px, py)
                await mouse.up(button=button, click_count=clicks)
                target = self._pressed.pop(button, None)
                if target is not None:
                    self._tell(
                        replace(target, action="click", clicks=clicks if clicks > 1 else None)
                    )
            case Pointer():
                pass
            case Wheel(x=x, y=y, dx=dx, dy=dy):
                await mouse.move(*await self._point(x, y))
                await mouse.wheel(dx, dy)
            case Key(kind="keydown", key=key):
                await self._key_down(keyboard, key)
            case Key(kind="keyup", key=key):
                self._modifiers.discard(key)
                with contextlib.suppress(Exception):  # a key Playwright does not know
                    await keyboard.up(key)
            case Text(text=text):
                await self._typing(len(text), text)
                await keyboard.insert_text(text)
            case Ping():
                pass

    async def _key_down(self, keyboard: Any, key: str) -> None:
        if key in _MODIFIERS:
            self._modifiers.add(key)
            with contextlib.suppress(Exception):
                await keyboard.down(key)
            return
        shortcut = bool(self._modifiers - {"Shift", "CapsLock", "AltGraph"})
        if len(key) == 1 and not shortcut:
            await self._typing(1, key)
            try:
                await keyboard.down(key)
            except Exception:  # not on Playwright's keyboard (é, ß): the character itself
                await keyboard.insert_text(key)
            return
        if key in _NAMED_KEYS and not shortcut:
            self._end_run()
            target = await self._focused()
            self._tell(replace(target, action="press", key=key))
        elif key not in _EDIT_KEYS and not key.startswith("Arrow"):
            self._end_run()
        with contextlib.suppress(Exception):
            await keyboard.down(key)

    async def _point(self, x: float, y: float) -> tuple[float, float]:
        """A fraction of the picture as CSS pixels of the page's viewport."""
        if self._size is None:
            size = self._page.viewport_size
            if size is None:
                inner = await self._page.evaluate("[innerWidth, innerHeight]")
                size = {"width": inner[0], "height": inner[1]}
            self._size = (float(size["width"]), float(size["height"]))
        width, height = self._size
        # The last pixel, not one past it: a fraction of 1 is the picture's edge.
        return min(x * width, width - 1), min(y * height, height - 1)

    # ------------------------------------------------------------------ steps

    async def _typing(self, chars: int, text: str) -> None:
        if self._run is None:
            self._run = replace(await self._focused(), action="type")
            self._chars, self._typed = 0, []
        self._chars += chars
        self._typed.append(text)

    def _end_run(self) -> None:
        run, self._run = self._run, None
        if run is None:
            return
        typed, self._typed = "".join(self._typed), []
        chars = None if run.password else self._chars
        self._tell(replace(run, chars=chars, typed=typed))

    def _tell(self, step: HumanStep) -> None:
        with contextlib.suppress(Exception):  # a sink must not stop the input
            self._on_step(step)

    def _navigated(self, frame: Any) -> None:
        with contextlib.suppress(Exception):
            if frame.parent_frame is not None:
                return
            url = str(frame.url)
            shown = url if url == "about:blank" else sanitize_url(url, max_chars=_URL_CHARS)
            self._tell(HumanStep(action="navigate", url=shown))

    async def _at(self, x: float, y: float) -> HumanStep:
        """The element at (`x`, `y`): the nearest interactive one around what was hit."""
        cdp = self._cdp
        if cdp is None:
            return HumanStep(action="click")
        try:
            hit = await bounded(
                cdp.send(
                    "DOM.getNodeForLocation",
                    {"x": round(x), "y": round(y), "ignorePointerEventsNone": True},
                ),
                _CDP_BUDGET_MS,
            )
            return await self._describe(int(hit["backendNodeId"]), password=False)
        except Exception:
            return HumanStep(action="click")

    async def _focused(self) -> HumanStep:
        """The focused element of the top document (where keys go)."""
        cdp = self._cdp
        if cdp is None:
            return HumanStep(action="type")
        try:
            found = await bounded(
                cdp.send("Runtime.evaluate", {"expression": _FOCUSED, "silent": True}),
                _CDP_BUDGET_MS,
            )
            object_id = (found.get("result") or {}).get("objectId")
            if not isinstance(object_id, str):
                return HumanStep(action="type")
            node = await bounded(
                cdp.send("DOM.describeNode", {"objectId": object_id}), _CDP_BUDGET_MS
            )
            with contextlib.suppress(Exception):
                await cdp.send("Runtime.releaseObject", {"objectId": object_id})
            described = node.get("node") or {}
            attrs = described.get("attributes") or []
            pairs = dict(zip(attrs[::2], attrs[1::2], strict=False))
            password = (
                str(described.get("localName")) == "input"
                and str(pairs.get("type", "")).lower() == "password"
            )
            return await self._describe(int(described["backendNodeId"]), password=password)
        except Exception:
            return HumanStep(action="type")

    async def _describe(self, backend_node_id: int, *, password: bool) -> HumanStep:
        tree = await bounded(
            self._cdp.send(
                "Accessibility.getPartialAXTree",
                {"backendNodeId": backend_node_id, "fetchRelatives": True},
            ),
            _CDP_BUDGET_MS,
        )
        nodes = {n.get("nodeId"): n for n in tree.get("nodes") or []}
        start = next(
            (n for n in nodes.values() if n.get("backendDOMNodeId") == backend_node_id), None
        )
        node, chosen = start, None
        while node is not None:
            if _value(node, "role") in INTERACTIVE_ROLES:
                chosen = node
                break
            node = nodes.get(node.get("parentId"))
        if chosen is None:
            chosen = start
        if chosen is None:
            return HumanStep(action="click", password=password)
        role = _value(chosen, "role") or None
        name = _value(chosen, "name")
        shown = redact_text(cut_chars(name, MAX_STEP_NAME_CHARS), max_chars=MAX_STEP_NAME_CHARS)
        return HumanStep(action="click", role=role, name=shown or None, password=password)


def _value(node: dict[str, Any], key: str) -> str:
    value = (node.get(key) or {}).get("value")
    return value if isinstance(value, str) else ""


class HumanInputs:
    """Opens the input of a managed page (`PlaywrightEngine`'s page handles)."""

    async def open(self, handle: Any, on_step: StepSink) -> PageInput:
        port = PageInput(handle.page, on_step)
        await port.start()
        return port
