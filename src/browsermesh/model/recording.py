"""What a session records for a regression-test export (issue 20): replayable steps and a bounded
per-session log. Pure data, no I/O.

A step is one successful operation, with the locator that replays it (a ref is recorded as the
semantic locator the engine's describer found for its element before the action, in
BrowserMesh's own wire form, `model.locators`) and `seq`, the order in which BrowserMesh
accepted it across every session (assigned by the caller, one counter per runtime), so the
export can interleave sessions. A value typed into a password field, or marked secret by the
client, is recorded as a `Value` naming an environment variable, never as its text.

The log (`Recording`) is bounded in steps and bytes (upload bytes included); when a step would
not fit, recording stops for good and `truncated` is set, so an export says it is incomplete
instead of silently replaying half a scenario.
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from browsermesh.model.action_kinds import ActionKind
from browsermesh.model.element_ops import ElementOp
from browsermesh.model.matchers import Condition, UrlMatcher
from browsermesh.model.mouse import MouseGesture
from browsermesh.model.navigation import HistoryStep
from browsermesh.model.options import OptionChoice

__all__ = [
    "MAX_RECORDED_STEPS",
    "MAX_RECORDING_BYTES",
    "SECRET_PREFIX",
    "ActAndWait",
    "Action",
    "Drag",
    "ExpectDialog",
    "ExpectDownload",
    "ExpectFileChooser",
    "ExpectNavigation",
    "ExpectPopup",
    "ExpectResponse",
    "Expectation",
    "FormField",
    "FormFill",
    "History",
    "Mouse",
    "Navigate",
    "PageClosed",
    "PageOpened",
    "Recording",
    "Scroll",
    "Step",
    "Upload",
    "UploadFile",
    "Value",
    "Wait",
    "field_label",
    "secret_name",
    "secrets_of",
    "step_size",
]

MAX_RECORDED_STEPS: Final = 2_000
"""Steps one session's log holds; the next step stops the recording (`truncated`)."""
MAX_RECORDING_BYTES: Final = 1_000_000
"""Bytes one session's log holds (strings as UTF-8, upload bytes, a small overhead per step)."""
SECRET_PREFIX: Final = "BM_SECRET_"
_STEP_OVERHEAD_BYTES: Final = 64
_NAME_PART_CHARS: Final = 40
_NOT_NAME: Final = re.compile(r"[^A-Z0-9]+")


# ------------------------------------------------------------------------------ values


@dataclass(frozen=True, slots=True, kw_only=True)
class Value:
    """A value the scenario typed or chose: literal `text`, or a secret read at replay from the
    environment variable `env` (its text is never stored). Exactly one of the two is set."""

    text: str | None = None
    env: str | None = None

    def __post_init__(self) -> None:
        if (self.text is None) == (self.env is None):
            raise ValueError("a Value is literal text or a secret reference, exactly one")

    @classmethod
    def literal(cls, text: str) -> Value:
        return cls(text=text)

    @classmethod
    def secret(cls, env: str) -> Value:
        return cls(env=env)

    @property
    def is_secret(self) -> bool:
        return self.env is not None


def _name_part(text: str, fallback: str) -> str:
    """`text` as an environment-variable name part: ASCII letters and digits, upper case, runs
    of anything else as one `_`, at most 40 characters."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    part = _NOT_NAME.sub("_", ascii_text.upper()).strip("_")[:_NAME_PART_CHARS].strip("_")
    return part or fallback


def secret_name(owner: str, field_name: str) -> str:
    """The environment variable a secret is read from at replay, deterministic and readable:
    `BM_SECRET_<OWNER>_<FIELD>` from the session's label (name or role; its id when it has
    none) and the field's label, e.g. ("buyer", "Password") → `BM_SECRET_BUYER_PASSWORD`.

    Only [A-Z0-9_]; the same session and field always name the same variable."""
    return f"{SECRET_PREFIX}{_name_part(owner, 'SESSION')}_{_name_part(field_name, 'VALUE')}"


def field_label(locator: Mapping[str, Any]) -> str:
    """What a person calls the field a locator (wire form) names, for `secret_name`: a role's
    name, else the selector's value (a label, placeholder, test id, text or CSS selector)."""
    if locator.get("strategy") == "role" and locator.get("name"):
        return str(locator["name"])
    return str(locator.get("value") or "")


# ------------------------------------------------------------------------------- steps


@dataclass(frozen=True, slots=True, kw_only=True)
class Step:
    """One recorded operation: accepted `seq`-th in the runtime, in a session, on a page."""

    seq: int
    session_id: str
    page_id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Navigate(Step):
    url: str


@dataclass(frozen=True, slots=True, kw_only=True)
class History(Step):
    step: HistoryStep


@dataclass(frozen=True, slots=True, kw_only=True)
class Action(Step):
    """An element action (`model.element_ops`) on `locator` (wire form); `value` is fill's text
    or press's key; `option` is what select_option chose (by value, label or index): what the
    operation's entry `records`."""

    op: ElementOp
    locator: dict[str, Any]
    value: Value | None = None
    option: OptionChoice | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class FormField:
    """One field of a browser_fill_form: the operation its element took
    (`model.element_ops.FORM_OPS`)."""

    locator: dict[str, Any]
    op: ElementOp
    value: Value | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class FormFill(Step):
    fields: tuple[FormField, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Wait(Step):
    """A browser_wait the client made: replayed as an assertion."""

    condition: Condition


@dataclass(frozen=True, slots=True, kw_only=True)
class UploadFile:
    name: str
    mime_type: str
    data: bytes


@dataclass(frozen=True, slots=True, kw_only=True)
class Upload(Step):
    """browser_set_files on `locator`: set on a file input (`via="input"`), or the file
    chooser a click on it opened answered (`via="chooser"`; the engine's set_files says which)."""

    locator: dict[str, Any]
    files: tuple[UploadFile, ...]
    via: Literal["input", "chooser"] = "input"


@dataclass(frozen=True, slots=True, kw_only=True)
class Scroll(Step):
    dx: int
    dy: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Drag(Step):
    source: dict[str, Any]
    target: dict[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class Mouse(Step):
    """browser_mouse (profile `vision`): one gesture at CSS pixels of the viewport."""

    gesture: MouseGesture


@dataclass(frozen=True, slots=True, kw_only=True)
class PageOpened(Step):
    """browser_page_new: `page_id` is the new page."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PageClosed(Step):
    """browser_page_close of `page_id`."""


# What an action-and-wait waited for, as the replay expects it.


@dataclass(frozen=True, slots=True, kw_only=True)
class ExpectNavigation:
    matcher: UrlMatcher | None = None
    load_state: Literal["domcontentloaded", "load"] = "load"


@dataclass(frozen=True, slots=True, kw_only=True)
class ExpectResponse:
    matcher: UrlMatcher
    method: str | None = None
    status: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ExpectPopup:
    """The popup became the managed page `page_id`."""

    page_id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ExpectDialog:
    dialog_type: str
    accept: bool
    prompt_text: Value | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ExpectDownload:
    suggested_filename: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ExpectFileChooser:
    files: tuple[UploadFile, ...]


Expectation = (
    ExpectNavigation
    | ExpectResponse
    | ExpectPopup
    | ExpectDialog
    | ExpectDownload
    | ExpectFileChooser
)


@dataclass(frozen=True, slots=True, kw_only=True)
class ActAndWait(Step):
    """browser_action_and_wait: `op`, the action's kind (`model.action_kinds`), on `locator`,
    with `key` when the kind takes an argument (press), and what it was expected to cause."""

    op: ActionKind
    locator: dict[str, Any]
    expect: Expectation
    key: str | None = None


# --------------------------------------------------------------------------------- log


def _size(value: object) -> int:
    if isinstance(value, str):
        return len(value.encode("utf-8", "surrogatepass"))
    if isinstance(value, bytes):
        return len(value)
    if isinstance(value, Mapping):
        return sum(_size(k) + _size(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return sum(_size(item) for item in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return sum(_size(getattr(value, f.name)) for f in dataclasses.fields(value))
    return 8  # a number, a bool, None


def _values(value: object) -> list[Value]:
    if isinstance(value, Value):
        return [value]
    if isinstance(value, list | tuple):
        return [v for item in value for v in _values(item)]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [v for f in dataclasses.fields(value) for v in _values(getattr(value, f.name))]
    return []


def secrets_of(step: Step) -> set[str]:
    """The environment variables `step` reads its secret values from."""
    return {value.env for value in _values(step) if value.env is not None}


def step_size(step: Step) -> int:
    """What `step` counts against `MAX_RECORDING_BYTES`: its strings as UTF-8, its upload bytes,
    8 per scalar and a fixed overhead."""
    return _STEP_OVERHEAD_BYTES + _size(step)


@dataclass(eq=False, kw_only=True)
class Recording:
    """One session's log. `append` keeps a step while the log has room and recording is on;
    the first step that does not fit stops the recording and sets `truncated`."""

    enabled: bool = True
    max_steps: int = MAX_RECORDED_STEPS
    max_bytes: int = MAX_RECORDING_BYTES
    steps: list[Step] = field(default_factory=list)
    size: int = 0
    truncated: bool = False

    def append(self, step: Step) -> bool:
        """Record `step`; whether it was kept (False when off, stopped, or it does not fit)."""
        if not self.enabled or self.truncated:
            return False
        size = step_size(step)
        if len(self.steps) >= self.max_steps or self.size + size > self.max_bytes:
            self.truncated = True
            return False
        self.steps.append(step)
        self.size += size
        return True

    def clear(self) -> None:
        """Forget every step (and the truncation): a fresh log, recording as `enabled` says."""
        self.steps.clear()
        self.size = 0
        self.truncated = False
