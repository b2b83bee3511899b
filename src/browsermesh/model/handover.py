"""A person in the loop (issue 34, reference §30.1): the input a person sends from the live view,
what the person did, and a session's hold. Rules only: no browser, no transport.

- `parse_inputs` checks one batch of input events from the view (`INPUT_TYPES`, the catalogue
  of the kinds a view may send; coordinates are fractions of the picture, so they map to the
  page's viewport at any zoom or window size).
- `HumanStep` is one thing the person did, as observe (`kind: "human"`), the request for help's
  answer and the recording see it: never the text typed, and no length into a password field.
- `HoldSlot` is a session's hold: who holds which page, the help the agent asked
  for, and one signal every change pulses (the agent's calls and `browser_request_help` wait
  on it).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from browsermesh.errors import Bound, invalid_argument
from browsermesh.model.arguments import bounded_string
from browsermesh.model.limits import MAX_KEY_CHARS
from browsermesh.model.mouse import MOUSE_BUTTONS, MouseButton

__all__ = [
    "DEFAULT_HELP_TIMEOUT_MS",
    "HELP_REASON_CHARS",
    "INPUT_TYPES",
    "MAX_HELP_TIMEOUT_MS",
    "MAX_INPUT_EVENTS",
    "MAX_PASTE_CHARS",
    "MAX_WHEEL_DELTA",
    "Hold",
    "HoldSlot",
    "HumanInput",
    "HumanStep",
    "Key",
    "Ping",
    "Pointer",
    "Text",
    "Wheel",
    "parse_inputs",
]

MAX_INPUT_EVENTS: Final = 200
"""Input events one request of the view carries at most."""
MAX_PASTE_CHARS: Final = 10_000
"""Characters one pasted text carries at most."""
MAX_WHEEL_DELTA: Final = 10_000
"""CSS pixels one wheel event scrolls at most, either way."""
MAX_CLICKS: Final = 3
HELP_REASON_CHARS: Final = 200
"""Characters of a request for help's reason that the card and the notification show."""
DEFAULT_HELP_TIMEOUT_MS: Final = 300_000
MAX_HELP_TIMEOUT_MS: Final = 1_800_000
"""browser_request_help's own bound (30 minutes): a person may take a while to come."""
MAX_STEP_NAME_CHARS: Final = 100
"""Characters of an element's accessible name a human step shows."""
MAX_STEPS_KEPT: Final = 50
"""Steps one hold keeps for the request for help's answer (the oldest fall out)."""


@dataclass(frozen=True, slots=True)
class Pointer:
    """The mouse moved, or a button went down or up, at (`x`, `y`): fractions of the picture."""

    kind: Literal["move", "down", "up"]
    x: float
    y: float
    button: MouseButton = "left"
    clicks: int = 1


@dataclass(frozen=True, slots=True)
class Wheel:
    """The wheel turned over (`x`, `y`) by `dx`, `dy` CSS pixels."""

    x: float
    y: float
    dx: float
    dy: float


@dataclass(frozen=True, slots=True)
class Key:
    """A key went down or up; `key` is the view's KeyboardEvent.key ("a", "Enter", "Shift")."""

    kind: Literal["keydown", "keyup"]
    key: str


@dataclass(frozen=True, slots=True)
class Text:
    """Text inserted at once (a clipboard paste)."""

    text: str


@dataclass(frozen=True, slots=True)
class Ping:
    """Nothing to do: the holder's view is still there (it keeps a hold from dropping)."""


HumanInput = Pointer | Wheel | Key | Text | Ping


def _fraction(event: dict[str, Any], name: str, where: str) -> float:
    value = event.get(name)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise invalid_argument(f"{where}.{name}", "a number from 0 to 1")
    if not 0 <= value <= 1:
        raise invalid_argument(
            f"{where}.{name}", "a number from 0 to 1", bound=Bound(name, "<=", 1)
        )
    return float(value)


def _delta(event: dict[str, Any], name: str, where: str) -> float:
    value = event.get(name, 0)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise invalid_argument(f"{where}.{name}", "a number")
    if abs(value) > MAX_WHEEL_DELTA:
        raise invalid_argument(
            f"{where}.{name}",
            f"at most {MAX_WHEEL_DELTA} either way",
            bound=Bound(name, "<=", MAX_WHEEL_DELTA),
        )
    return float(value)


def _pointer(kind: Literal["move", "down", "up"]) -> Callable[[dict[str, Any], str], HumanInput]:
    def parse(event: dict[str, Any], where: str) -> HumanInput:
        x, y = _fraction(event, "x", where), _fraction(event, "y", where)
        if kind == "move":
            return Pointer("move", x, y)
        button = event.get("button", "left")
        if button not in MOUSE_BUTTONS:
            raise invalid_argument(f"{where}.button", "one of " + ", ".join(MOUSE_BUTTONS))
        clicks = event.get("clicks", 1)
        if isinstance(clicks, bool) or not isinstance(clicks, int) or not 1 <= clicks <= MAX_CLICKS:
            raise invalid_argument(f"{where}.clicks", f"an integer from 1 to {MAX_CLICKS}")
        return Pointer(kind, x, y, button, clicks)

    return parse


def _wheel(event: dict[str, Any], where: str) -> HumanInput:
    return Wheel(
        _fraction(event, "x", where),
        _fraction(event, "y", where),
        _delta(event, "dx", where),
        _delta(event, "dy", where),
    )


def _key(kind: Literal["keydown", "keyup"]) -> Callable[[dict[str, Any], str], HumanInput]:
    def parse(event: dict[str, Any], where: str) -> HumanInput:
        return Key(
            kind, bounded_string(event.get("key"), f"{where}.key", MAX_KEY_CHARS, min_chars=1)
        )

    return parse


def _text(event: dict[str, Any], where: str) -> HumanInput:
    return Text(bounded_string(event.get("text"), f"{where}.text", MAX_PASTE_CHARS, min_chars=1))


def _ping(_event: dict[str, Any], _where: str) -> HumanInput:
    return Ping()


INPUT_TYPES: Final[dict[str, Callable[[dict[str, Any], str], HumanInput]]] = {
    "move": _pointer("move"),
    "down": _pointer("down"),
    "up": _pointer("up"),
    "wheel": _wheel,
    "keydown": _key("keydown"),
    "keyup": _key("keyup"),
    "text": _text,
    "ping": _ping,
}
"""The input a view may send, by its ``type``: each kind's parser (reference §30.1)."""


def parse_inputs(raw: object) -> list[HumanInput]:
    """One batch of input events from the view, checked: `INVALID_ARGUMENT` naming the field
    (``events[3].x``) and the rule for anything else."""
    if not isinstance(raw, list):
        raise invalid_argument("events", "array")
    if len(raw) > MAX_INPUT_EVENTS:
        raise invalid_argument(
            "events",
            f"at most {MAX_INPUT_EVENTS} events",
            bound=Bound("events", "<=", MAX_INPUT_EVENTS),
        )
    out: list[HumanInput] = []
    for i, event in enumerate(raw):
        where = f"events[{i}]"
        if not isinstance(event, dict):
            raise invalid_argument(where, "object")
        parse = INPUT_TYPES.get(event.get("type"))  # type: ignore[arg-type]
        if parse is None:
            raise invalid_argument(f"{where}.type", "one of " + ", ".join(INPUT_TYPES))
        out.append(parse(event, where))
    return out


# ------------------------------------------------------------------------------ what was done


StepAction = Literal["took_over", "click", "type", "press", "navigate", "handed_back"]


@dataclass(frozen=True, slots=True, kw_only=True)
class HumanStep:
    """One thing the person did. `role` and `name` describe the element (its accessible role
    and name, as the browser computes them); `chars` is how many characters were typed (never
    for a password field); `key` a named key pressed; `url` a sanitized URL; `reason` why a
    hold ended (``person``, ``dropped``, ``session_closed``).

    `typed` is the text typed, kept only for a recording (which turns it into an environment
    variable reference) and never shown: it is not in `view()` and not in repr."""

    action: StepAction
    role: str | None = None
    name: str | None = None
    chars: int | None = None
    key: str | None = None
    url: str | None = None
    reason: str | None = None
    clicks: int | None = None
    password: bool = False
    typed: str | None = field(default=None, repr=False)

    def view(self) -> dict[str, Any]:
        """The step as observe and the request for help's answer show it."""
        out: dict[str, Any] = {"action": self.action}
        for name in ("role", "name", "chars", "key", "url", "reason", "clicks"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        if self.password:
            out["password"] = True
        return out

    def summary(self) -> str:
        """One line for a person or a model: ``clicked button "Send code"``."""
        target = ""
        if self.role is not None:
            target = f" {self.role}" + (f' "{self.name}"' if self.name else "")
        match self.action:
            case "took_over":
                return "took over"
            case "click":
                return ("double-clicked" if (self.clicks or 1) > 1 else "clicked") + target
            case "type":
                count = "" if self.chars is None else f" {self.chars} characters"
                return f"typed{count} into{target or ' the page'}"
            case "press":
                return f"pressed {self.key}" + (f" in{target}" if target else "")
            case "navigate":
                return f"navigated to {self.url}"
            case "handed_back":
                return f"handed back ({self.reason})"


# ------------------------------------------------------------------------------ the hold


@dataclass(eq=False)
class Hold:
    """A person holds a session's page: `principal` from the view tab `viewer`; `last_input` is
    the monotonic time of its latest input (a ping too)."""

    principal: str
    viewer: str
    page_id: str
    last_input: float
    steps: list[HumanStep] = field(default_factory=list)

    def add(self, step: HumanStep) -> None:
        self.steps.append(step)
        del self.steps[:-MAX_STEPS_KEPT]


class HoldSlot:
    """A session's hold and its request for help; every change pulses `changed`."""

    def __init__(self) -> None:
        self.hold: Hold | None = None
        self.help_reason: str | None = None
        # Holds that ended since the session began: a request for help waits for the next one.
        self.handbacks = 0
        self.last: Hold | None = None  # the hold that ended last
        self._news = asyncio.Event()

    def pulse(self) -> None:
        news, self._news = self._news, asyncio.Event()
        news.set()

    def take(self, hold: Hold) -> None:
        self.hold = hold
        self.pulse()

    def withdraw(self, hold: Hold) -> None:
        """`hold` never began (its page's input could not open): no hand-back is counted."""
        if self.hold is hold:
            self.hold = None
            self.pulse()

    def release(self) -> Hold | None:
        hold, self.hold = self.hold, None
        if hold is not None:
            self.handbacks += 1
            self.last = hold
            self.help_reason = None
        self.pulse()
        return hold

    async def until(self, done: Callable[[], bool], timeout_s: float) -> bool:
        """Wait until `done()` holds or `timeout_s` passed; whether it holds."""
        loop = asyncio.get_running_loop()
        end = loop.time() + max(timeout_s, 0.0)
        while not done():
            left = end - loop.time()
            if left <= 0:
                return False
            news = self._news
            try:
                async with asyncio.timeout(left):
                    await news.wait()
            except TimeoutError:
                return done()
        return True
