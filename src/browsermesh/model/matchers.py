"""URL matchers and wait conditions (contract §7): exact or safe glob, no regexes from callers."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from browsermesh.errors import Bound, BrowserMeshError, ErrorCode
from browsermesh.model.locators import Locator, parse_locator

MAX_GLOB_STARS = 32
MAX_MATCHER_CHARS = 2048
MAX_TEXT_CHARS = 2000
_CONTROL = re.compile(r"[\x00-\x1f]")


def _invalid(field: str, requirement: str) -> BrowserMeshError:
    return BrowserMeshError(
        ErrorCode.INVALID_ARGUMENT, internal={"field": field, "requirement": requirement}
    )


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
    if not isinstance(raw, dict) or set(raw) != {"kind", "value"}:
        raise _invalid(field, "{kind: exact|glob, value}")
    kind, value = raw.get("kind"), raw.get("value")
    if kind not in ("exact", "glob") or not isinstance(value, str) or not value:
        raise _invalid(field, "{kind: exact|glob, value}")
    if len(value) > MAX_MATCHER_CHARS:
        raise BrowserMeshError(
            ErrorCode.INVALID_ARGUMENT, bound=Bound(f"{field}.value", "<=", MAX_MATCHER_CHARS)
        )
    if _CONTROL.search(value):
        raise _invalid(f"{field}.value", "no control characters")
    if kind == "exact":
        return UrlMatcher("exact", value)
    if value.count("*") > MAX_GLOB_STARS:
        raise BrowserMeshError(
            ErrorCode.INVALID_ARGUMENT, bound=Bound("wildcards", "<=", MAX_GLOB_STARS)
        )
    return UrlMatcher("glob", value, Glob.compile(value))


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
    text: str
    present: bool


Condition = UrlCondition | LoadCondition | LocatorCondition | TextCondition
_LOCATOR_STATES = ("visible", "hidden", "attached", "detached", "enabled", "disabled")


def parse_condition(raw: object) -> Condition:
    """A `browser_wait` condition (§7.1), validated at runtime."""
    if not isinstance(raw, dict):
        raise _invalid("condition", "object")
    kind = raw.get("kind")
    keys = set(raw)
    if kind == "url" and keys == {"kind", "matcher"}:
        return UrlCondition(parse_matcher(raw["matcher"], "condition.matcher"))
    if (
        kind == "load"
        and keys == {"kind", "state"}
        and raw["state"] in ("domcontentloaded", "load")
    ):
        return LoadCondition(raw["state"])
    if kind == "locator" and keys == {"kind", "locator", "state"}:
        if raw["state"] not in _LOCATOR_STATES:
            raise _invalid("condition.state", "a locator state")
        return LocatorCondition(parse_locator(raw["locator"], "condition.locator"), raw["state"])
    if kind == "text" and keys == {"kind", "text", "state"}:
        text, state = raw["text"], raw["state"]
        if not isinstance(text, str) or not text or state not in ("present", "absent"):
            raise _invalid("condition", "text 1..2000 chars and state present|absent")
        if len(text) > MAX_TEXT_CHARS:
            raise BrowserMeshError(
                ErrorCode.INVALID_ARGUMENT, bound=Bound("condition.text", "<=", MAX_TEXT_CHARS)
            )
        return TextCondition(text, state == "present")
    raise _invalid("condition", "one of url, load, locator, text")


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


WaitSpec = NavigationWait | ResponseWait | PopupWait | DialogWait
_DIALOG_TYPES = ("alert", "beforeunload", "confirm", "prompt")
_METHOD = re.compile(r"^[A-Z]{1,16}$")


def parse_wait(raw: object) -> WaitSpec:
    """The `wait` half of browser_action_and_wait (§7.2)."""
    if not isinstance(raw, dict):
        raise _invalid("wait", "object")
    kind = raw.get("kind")
    keys = set(raw) - {"kind"}
    if kind == "navigation" and keys <= {"matcher", "loadState"}:
        matcher = parse_matcher(raw["matcher"], "wait.matcher") if "matcher" in raw else None
        state = raw.get("loadState", "load")
        if state not in ("domcontentloaded", "load"):
            raise _invalid("wait.loadState", "domcontentloaded|load")
        return NavigationWait(matcher, state)
    if kind == "response" and "matcher" in keys and keys <= {"matcher", "method", "status"}:
        method = raw.get("method")
        status = raw.get("status")
        if method is not None and (not isinstance(method, str) or not _METHOD.match(method)):
            raise _invalid("wait.method", "^[A-Z]{1,16}$")
        if status is not None and (
            isinstance(status, bool) or not isinstance(status, int) or not 100 <= status <= 599
        ):
            raise _invalid("wait.status", "integer 100..599")
        return ResponseWait(parse_matcher(raw["matcher"], "wait.matcher"), method, status)
    if kind == "popup" and not keys:
        return PopupWait()
    if kind == "dialog" and {"dialogType", "action"} <= keys <= {
        "dialogType",
        "action",
        "promptText",
    }:
        dialog_type, action = raw["dialogType"], raw["action"]
        if dialog_type not in _DIALOG_TYPES or action not in ("accept", "dismiss"):
            raise _invalid("wait", "dialogType and action")
        prompt = raw.get("promptText")
        if prompt is not None:
            if not isinstance(prompt, str) or len(prompt) > 2000 or _CONTROL.search(prompt):
                raise _invalid("wait.promptText", "<= 2000 chars, no control characters")
            if action != "accept" or dialog_type != "prompt":
                raise _invalid("wait.promptText", "only with prompt + accept")
        return DialogWait(dialog_type, action == "accept", prompt)
    raise _invalid("wait", "one of navigation, response, popup, dialog")


@dataclass(frozen=True, slots=True)
class ActionSpec:
    kind: Literal["click", "press"]
    target: Any  # model.locators.Target
    key: str | None = None


def parse_action(raw: object) -> ActionSpec:
    from browsermesh.model.locators import parse_element_target

    if not isinstance(raw, dict):
        raise _invalid("action", "object")
    kind = raw.get("kind")
    if kind == "click" and set(raw) == {"kind", "target"}:
        return ActionSpec("click", parse_element_target(raw["target"], "action.target"))
    if kind == "press" and set(raw) == {"kind", "target", "key"}:
        key = raw["key"]
        if not isinstance(key, str) or not 1 <= len(key) <= 64:
            raise _invalid("action.key", "1..64 chars")
        return ActionSpec("press", parse_element_target(raw["target"], "action.target"), key)
    raise _invalid("action", '{kind: "click"|"press", target, key?}')
