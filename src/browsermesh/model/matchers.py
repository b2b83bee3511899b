"""URL matchers and wait conditions (reference §7): exact or safe glob, no regexes from callers."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from browsermesh.errors import Bound, invalid_argument
from browsermesh.model.action_kinds import ACTION_KIND_NAMES, ActionKind, action_kind
from browsermesh.model.arguments import bounded_string
from browsermesh.model.locators import Locator, parse_locator

MAX_GLOB_STARS = 32
MAX_MATCHER_CHARS = 2048
MAX_TEXT_CHARS = 2000
MAX_PROMPT_CHARS = 2000
_CONTROL = re.compile(r"[\x00-\x1f]")
_METHOD = re.compile(r"[A-Z]{1,16}")


def one_of(values: tuple[str, ...]) -> str:
    """The rule of an enumerated field, e.g. `one of: exact, glob`."""
    return "one of: " + ", ".join(values)


def _object(raw: object, field: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise invalid_argument(field, "object")
    return raw


def _keys(
    raw: dict[str, Any], field: str, required: tuple[str, ...], optional: tuple[str, ...] = ()
) -> None:
    """`raw` (a tagged object with `kind`) holds every key of `required` and no key beyond
    `required + optional`. The unknown key itself is never named: it is caller text."""
    allowed = ("kind", *required, *optional)
    if any(key not in allowed for key in raw):
        raise invalid_argument(field, "only the keys " + ", ".join(allowed))
    for key in required:
        if key not in raw:
            raise invalid_argument(f"{field}.{key}", "required")


def _text(raw: object, field: str, max_chars: int) -> str:
    """A string of 1..max_chars code points without control characters."""
    text = bounded_string(raw, field, max_chars, min_chars=1)
    if _CONTROL.search(text):
        raise invalid_argument(field, "no control characters")
    return text


@dataclass(frozen=True, slots=True)
class Glob:
    """A compiled safe glob: `**` any run of characters, `*` a run of non-`/` characters.

    Matched by a bit-parallel NFA walk, linear in the URL's length for any pattern. (The
    regular expression this replaced backtracked exponentially in the number of stars:
    ``"**" * 16 + "Z"`` froze the whole server, since matching runs on the event loop.)
    Bit ``i`` of a state set means "tokens before ``i`` are matched".
    """

    size: int
    literals: dict[str, int]
    any_stars: int
    segment_stars: int

    @classmethod
    def compile(cls, glob: str) -> Glob:
        literals: dict[str, int] = {}
        any_stars = segment_stars = 0
        size = i = 0
        while i < len(glob):
            bit = 1 << size
            if glob.startswith("**", i):
                any_stars |= bit
                i += 2
            elif glob[i] == "*":
                segment_stars |= bit
                i += 1
            else:
                literals[glob[i]] = literals.get(glob[i], 0) | bit
                i += 1
            size += 1
        return cls(size, literals, any_stars, segment_stars)

    def _closure(self, states: int) -> int:
        """Add the states reachable by letting stars match nothing."""
        stars = self.any_stars | self.segment_stars
        while True:
            grown = states | ((states & stars) << 1)
            if grown == states:
                return states
            states = grown

    def fullmatch(self, text: str) -> bool:
        states = self._closure(1)
        for char in text:
            stay = states & (self.any_stars | (self.segment_stars if char != "/" else 0))
            states = self._closure(((states & self.literals.get(char, 0)) << 1) | stay)
            if not states:
                return False
        return bool(states >> self.size & 1)


@dataclass(frozen=True, slots=True)
class UrlMatcher:
    """`exact`: the URL equals `value`; `glob`: `**` any chars, `*` a run of non-`/`."""

    kind: Literal["exact", "glob"]
    value: str
    glob: Glob | None = None

    def matches(self, url: str) -> bool:
        if self.glob is None:
            return url == self.value
        return self.glob.fullmatch(url)


def parse_matcher(raw: object, field: str = "matcher") -> UrlMatcher:
    """A UrlMatcher at `field` (the full JSON path, e.g. `wait.matcher`)."""
    matcher = _object(raw, field)
    if any(key not in ("kind", "value") for key in matcher):
        raise invalid_argument(field, "only the keys kind, value")
    kind = matcher.get("kind")
    if kind not in _MATCHER_KINDS:
        raise invalid_argument(f"{field}.kind", one_of(_MATCHER_KINDS))
    if "value" not in matcher:
        raise invalid_argument(f"{field}.value", "required")
    if kind == "exact":
        return UrlMatcher("exact", _text(matcher["value"], f"{field}.value", MAX_MATCHER_CHARS))
    value, glob = parse_glob(matcher["value"], f"{field}.value")
    return UrlMatcher("glob", value, glob)


def parse_glob(raw: object, field: str) -> tuple[str, Glob]:
    """A safe glob at `field`: 1..2048 characters, no control characters, at most 32 `*`."""
    value = _text(raw, field, MAX_MATCHER_CHARS)
    if value.count("*") > MAX_GLOB_STARS:
        raise invalid_argument(
            field,
            f"at most {MAX_GLOB_STARS} wildcards (*)",
            bound=Bound("wildcards", "<=", MAX_GLOB_STARS),
        )
    return value, Glob.compile(value)


def parse_method(raw: object, field: str) -> str:
    """An uppercase HTTP method (1..16 letters A-Z) at `field`."""
    if not isinstance(raw, str) or _METHOD.fullmatch(raw) is None:
        raise invalid_argument(field, "an uppercase HTTP method (1..16 letters A-Z)")
    return raw


def parse_status(raw: object, field: str) -> int:
    """An HTTP status (integer 100..599) at `field`."""
    if isinstance(raw, bool) or not isinstance(raw, int) or not 100 <= raw <= 599:
        raise invalid_argument(field, "integer in 100..599")
    return raw


@dataclass(frozen=True, slots=True)
class UrlCondition:
    matcher: UrlMatcher


@dataclass(frozen=True, slots=True)
class LoadCondition:
    state: Literal["domcontentloaded", "load"]


@dataclass(frozen=True, slots=True)
class LocatorCondition:
    locator: Locator
    state: Literal["visible", "hidden", "attached", "detached", "enabled", "disabled"]


@dataclass(frozen=True, slots=True)
class TextCondition:
    """Text the page shows (issue 31 item 11): `exact` false (the default) matches a
    case-insensitive substring of the page's text, true an element's whole text, as a text
    locator does; both whitespace-normalized, against the rendered text (CSS `text-transform`
    applied) and the DOM text alike."""

    text: str
    present: bool
    exact: bool = False


@dataclass(frozen=True, slots=True)
class HandbackCondition:
    """Until no person holds the session in the live view (issue 34): the runtime waits for it,
    never the page, so it is not a page `Condition`."""


Condition = UrlCondition | LoadCondition | LocatorCondition | TextCondition
_MATCHER_KINDS = ("exact", "glob")
_CONDITION_KINDS = ("url", "load", "locator", "text", "handback")
_LOAD_STATES = ("domcontentloaded", "load")
_LOCATOR_STATES = ("visible", "hidden", "attached", "detached", "enabled", "disabled")
_TEXT_STATES = ("present", "absent")


def _kind(raw: dict[str, Any], field: str, kinds: tuple[str, ...]) -> str:
    kind = raw.get("kind")
    if not isinstance(kind, str) or kind not in kinds:
        raise invalid_argument(f"{field}.kind", one_of(kinds))
    return kind


def _enum(raw: dict[str, Any], key: str, field: str, values: tuple[str, ...]) -> Any:
    value = raw.get(key)
    if not isinstance(value, str) or value not in values:
        raise invalid_argument(f"{field}.{key}", one_of(values))
    return value


def parse_condition(raw: object) -> Condition | HandbackCondition:
    """A `browser_wait` condition (§7.1), validated at runtime."""
    condition = _object(raw, "condition")
    kind = _kind(condition, "condition", _CONDITION_KINDS)
    if kind == "handback":
        _keys(condition, "condition", ())
        return HandbackCondition()
    if kind == "url":
        _keys(condition, "condition", ("matcher",))
        return UrlCondition(parse_matcher(condition["matcher"], "condition.matcher"))
    optional = ("exact",) if kind == "text" else ()
    _keys(condition, "condition", ("state",) if kind == "load" else (kind, "state"), optional)
    if kind == "load":
        return LoadCondition(_enum(condition, "state", "condition", _LOAD_STATES))
    if kind == "locator":
        state = _enum(condition, "state", "condition", _LOCATOR_STATES)
        return LocatorCondition(parse_locator(condition["locator"], "condition.locator"), state)
    text = bounded_string(condition["text"], "condition.text", MAX_TEXT_CHARS, min_chars=1)
    if not text.strip():
        raise invalid_argument("condition.text", "text other than whitespace")
    state = _enum(condition, "state", "condition", _TEXT_STATES)
    exact = condition.get("exact", False)
    if not isinstance(exact, bool):
        raise invalid_argument("condition.exact", "boolean")
    return TextCondition(text, state == "present", exact)


# ------------------------------------------------------------------ action-and-wait


@dataclass(frozen=True, slots=True)
class NavigationWait:
    matcher: UrlMatcher | None
    load_state: Literal["domcontentloaded", "load"]


@dataclass(frozen=True, slots=True)
class ResponseWait:
    matcher: UrlMatcher
    method: str | None
    status: int | None


@dataclass(frozen=True, slots=True)
class PopupWait:
    pass


@dataclass(frozen=True, slots=True)
class DialogWait:
    dialog_type: str
    accept: bool
    prompt_text: str | None


@dataclass(frozen=True, slots=True)
class DownloadWait:
    """Wait for the download the action starts; the result names its artifact (issue 14)."""


@dataclass(frozen=True, slots=True)
class FileChooserWait:
    """Answer the file chooser the action opens with `files` (raw here; the runtime turns them
    into payloads before the job runs)."""

    files: tuple[Any, ...]


WaitSpec = NavigationWait | ResponseWait | PopupWait | DialogWait | DownloadWait | FileChooserWait
_WAIT_KINDS = ("navigation", "response", "popup", "dialog", "download", "fileChooser")
_DIALOG_TYPES = ("alert", "beforeunload", "confirm", "prompt")
_DIALOG_ACTIONS = ("accept", "dismiss")


def parse_wait(raw: object) -> WaitSpec:
    """The `wait` half of browser_action_and_wait (§7.2)."""
    wait = _object(raw, "wait")
    kind = _kind(wait, "wait", _WAIT_KINDS)
    if kind == "navigation":
        _keys(wait, "wait", (), ("matcher", "loadState"))
        matcher = parse_matcher(wait["matcher"], "wait.matcher") if "matcher" in wait else None
        if "loadState" not in wait:
            return NavigationWait(matcher, "load")
        return NavigationWait(matcher, _enum(wait, "loadState", "wait", _LOAD_STATES))
    if kind == "response":
        _keys(wait, "wait", ("matcher",), ("method", "status"))
        method = wait.get("method")
        status = wait.get("status")
        if method is not None:
            method = parse_method(method, "wait.method")
        if status is not None:
            status = parse_status(status, "wait.status")
        return ResponseWait(parse_matcher(wait["matcher"], "wait.matcher"), method, status)
    if kind == "popup":
        _keys(wait, "wait", ())
        return PopupWait()
    if kind == "download":
        _keys(wait, "wait", ())
        return DownloadWait()
    if kind == "fileChooser":
        _keys(wait, "wait", ("files",))
        if not isinstance(wait["files"], list):
            raise invalid_argument("wait.files", "array of files")
        return FileChooserWait(tuple(wait["files"]))
    _keys(wait, "wait", ("dialogType", "action"), ("promptText",))
    dialog_type = _enum(wait, "dialogType", "wait", _DIALOG_TYPES)
    action = _enum(wait, "action", "wait", _DIALOG_ACTIONS)
    prompt = wait.get("promptText")
    if prompt is not None:
        prompt = bounded_string(prompt, "wait.promptText", MAX_PROMPT_CHARS)
        if _CONTROL.search(prompt):
            raise invalid_argument("wait.promptText", "no control characters")
        if action != "accept" or dialog_type != "prompt":
            raise invalid_argument(
                "wait.promptText", 'only with dialogType "prompt" and action "accept"'
            )
    return DialogWait(dialog_type, action == "accept", prompt)


@dataclass(frozen=True, slots=True)
class ActionSpec:
    """The `action` half of browser_action_and_wait (§7.2): its kind (`model.action_kinds`),
    its target and the kind's extra argument (press's `key`; None for the others)."""

    kind: ActionKind
    target: Any  # model.locators.Target
    key: str | None = None


def parse_action(raw: object) -> ActionSpec:
    """The `action` half of browser_action_and_wait; its target is a locator or a ref at
    `action.target`, its extra argument (if the kind's entry has one) is bounded as the entry
    says."""
    from browsermesh.model.locators import parse_element_target

    action = _object(raw, "action")
    entry = action_kind(action.get("kind"))
    if entry is None:
        raise invalid_argument("action.kind", one_of(ACTION_KIND_NAMES))
    arg = entry.argument
    if arg is None:
        _keys(action, "action", ("target",))
        return ActionSpec(entry.kind, parse_element_target(action["target"], "action.target"))
    _keys(action, "action", ("target", arg.field))
    field = f"action.{arg.field}"
    key = bounded_string(action[arg.field], field, arg.max_chars, min_chars=arg.min_chars)
    return ActionSpec(entry.kind, parse_element_target(action["target"], "action.target"), key)
