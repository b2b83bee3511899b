"""The locator model (contract §5.1–5.2): selectors, frame chains and element targets.

Runtime checks repeat the schema so direct library callers get the same protection. Nothing here
knows about Playwright; the engine turns a `Locator` into a Playwright locator.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from browsermesh.errors import SELECTOR_ENGINES, Bound, BrowserMeshError, ErrorCode
from browsermesh.model.arguments import MAX_SELECTOR_CHARS, bounded_string

STRATEGIES = ("role", "text", "label", "placeholder", "testId", "css")
ROLES = (
    "button",
    "link",
    "textbox",
    "checkbox",
    "radio",
    "combobox",
    "heading",
    "listitem",
    "option",
    "tab",
)
MAX_FRAME_DEPTH = 5
REF_PATTERN = re.compile(r"^@?[a-z0-9.]{2,12}$")

Strategy = Literal["role", "text", "label", "placeholder", "testId", "css"]

# Playwright's selector syntax, mirrored so the `css` strategy stays CSS (issue 12 #12): a part
# `name=body` whose name matches this picks the engine `name` (xpath, text, id, internal:..., nth,
# visible, ...); a quoted part is a text selector; a part starting with `//` (after any `(`) or
# `..` is XPath; `>>` outside quotes chains parts (`>> nth=1` silently picks one of several
# matches and defeats strictness).
_ENGINE_PREFIX = re.compile(r"^[a-zA-Z_0-9+:*-]+$")
_XPATH_START = re.compile(r"^\(*//")
# Pseudo-classes Playwright adds to its CSS engine; none is CSS, and `:nth-match()` picks one
# element of several. (`:not`, `:is`, `:where`, `:has` and `:scope` are CSS and stay allowed.)
_PLAYWRIGHT_PSEUDO = frozenset(
    {
        "above",
        "below",
        "has-text",
        "left-of",
        "light",
        "near",
        "nth-match",
        "right-of",
        "text",
        "text-is",
        "text-matches",
        "visible",
    }
)
_IDENT_CHAR = re.compile(r"[a-zA-Z0-9_-]")


def _invalid(field: str, requirement: str) -> BrowserMeshError:
    return BrowserMeshError(
        ErrorCode.INVALID_ARGUMENT, internal={"field": field, "requirement": requirement}
    )


@dataclass(frozen=True, slots=True)
class Selector:
    """One LocatorSelector. For `role`, `value` is the role and `name`/`exact` apply."""

    strategy: Strategy
    value: str
    name: str | None = None
    exact: bool = True

    def wire(self) -> dict[str, Any]:
        """The normalized echo (role selectors get `exact: true` filled in)."""
        out: dict[str, Any] = {"strategy": self.strategy, "value": self.value}
        if self.strategy == "role":
            if self.name is not None:
                out["name"] = self.name
            out["exact"] = self.exact
        return out

    def describe(self) -> str:
        """Internal description for logs and tests, e.g. `role=link, name=X, exact=false`."""
        if self.strategy == "role":
            parts = [f"role={self.value}"]
            if self.name is not None:
                parts += [f"name={self.name}", f"exact={str(self.exact).lower()}"]
            return ", ".join(parts)
        return f"{self.strategy}={self.value}"


@dataclass(frozen=True, slots=True)
class Locator:
    """A selector plus an optional iframe chain (outer → inner)."""

    selector: Selector
    frames: tuple[Selector, ...] = ()

    def wire(self) -> dict[str, Any]:
        out = self.selector.wire()
        if self.frames:
            out["frame"] = {"kind": "iframe", "chain": [f.wire() for f in self.frames]}
        return out

    def detail(self) -> dict[str, Any]:
        """The `locator` error detail: strategy, value, name, exact (no frame chain)."""
        return self.selector.wire()

    def describe(self) -> str:
        text = self.selector.describe()
        return f"{text}, frameDepth={len(self.frames)}" if self.frames else text


@dataclass(frozen=True, slots=True)
class RefTarget:
    """A ref token from a snapshot (one leading `@` already removed)."""

    token: str


Target = Locator | RefTarget


def _unquoted(value: str, quotes: str) -> list[int]:
    """Indexes of the characters outside `quotes`-delimited strings, skipping backslash escapes."""
    out: list[int] = []
    quote: str | None = None
    index = 0
    while index < len(value):
        char = value[index]
        if char == "\\" and index + 1 < len(value):
            index += 2
            continue
        if char == quote:
            quote = None
        elif quote is None and char in quotes:
            quote = char
        elif quote is None:
            out.append(index)
        index += 1
    return out


def _chains(value: str) -> bool:
    """Whether Playwright would split `value` at a `>>` (it skips `"`, `'` and backtick strings)."""
    return any(value.startswith(">>", i) for i in _unquoted(value, "\"'`"))


def _playwright_pseudo(value: str) -> str | None:
    """The first Playwright-only pseudo-class in `value` (outside CSS strings), e.g. `visible`."""
    for index in _unquoted(value, "\"'"):
        if value[index] != ":" or ":" in (value[index + 1 : index + 2], value[index - 1 : index]):
            continue  # not a colon, or part of a `::` pseudo-element
        end = index + 1
        while end < len(value) and _IDENT_CHAR.match(value[end]):
            end += 1
        name = value[index + 1 : end].lower()
        if name in _PLAYWRIGHT_PSEUDO:
            return name
    return None


def non_css_engine(value: str) -> str | None:
    """The Playwright selector engine `value` would select if it is not plain CSS, else None.

    Legitimate CSS keeps working: `=` inside attribute selectors (`a[href="x=y"]`), pseudo-classes
    such as `:has()` and `:nth-child(2)`, and `>>` inside quoted attribute values."""
    part = value.strip()
    equals = part.find("=")
    if equals != -1 and _ENGINE_PREFIX.match(part[:equals].strip()):
        return part[:equals].strip().lstrip("*") or "*"
    if len(part) > 1 and part[0] == part[-1] and part[0] in "\"'":
        return "text"
    if _XPATH_START.match(part) or part.startswith(".."):
        return "xpath"
    if _chains(value):
        return ">>"
    pseudo = _playwright_pseudo(value)
    return None if pseudo is None else ":" + pseudo


def public_engine(engine: str) -> str:
    """`engine` in the fixed `selectorEngine` vocabulary (a `name=` prefix is caller text)."""
    if engine == ">>":
        return "chain"
    if engine.startswith(":"):
        return "pseudo"
    name = engine.lower().lstrip("_")
    if name.startswith("internal:"):
        return "internal"
    return name if name in SELECTOR_ENGINES else "other"


def _reject_engine(field: str, engine: str) -> BrowserMeshError:
    # The client learns the strategy and which kind of selector it wrote (from a fixed
    # vocabulary), never its own value back.
    return BrowserMeshError(
        ErrorCode.INVALID_ARGUMENT,
        details={"locator": {"strategy": "css"}, "selectorEngine": public_engine(engine)},
        internal={
            "field": field,
            "requirement": "CSS only (no Playwright selector engines or chains)",
            "engine": engine,
        },
    )


def parse_selector(raw: object, field: str) -> Selector:
    if not isinstance(raw, dict):
        raise _invalid(field, "object")
    strategy = raw.get("strategy")
    value = raw.get("value")
    if strategy not in STRATEGIES:
        raise _invalid(f"{field}.strategy", "one of " + ", ".join(STRATEGIES))
    allowed = {"strategy", "value", "frame"} | ({"name", "exact"} if strategy == "role" else set())
    if set(raw) - allowed:
        raise _invalid(field, "no unknown fields")
    if not isinstance(value, str) or not value:
        raise _invalid(f"{field}.value", "non-empty string")
    bounded_string(value, f"{field}.value", MAX_SELECTOR_CHARS)
    if strategy == "css":
        engine = non_css_engine(value)
        if engine is not None:
            raise _reject_engine(f"{field}.value", engine)
    if strategy == "role":
        if value not in ROLES:
            raise _invalid(f"{field}.value", "a supported role")
        name = raw.get("name")
        exact = raw.get("exact", True)
        if name is not None:
            bounded_string(name, f"{field}.name", MAX_SELECTOR_CHARS)
        if not isinstance(exact, bool):
            raise _invalid(f"{field}.exact", "boolean")
        return Selector("role", value, name, exact)
    return Selector(strategy, value)


def parse_locator(raw: object, field: str = "locator") -> Locator:
    """Validate and normalize a Locator (selector + optional frame)."""
    selector = parse_selector(raw, field)
    frame = raw.get("frame") if isinstance(raw, dict) else None
    if frame is None:
        return Locator(selector)
    if not isinstance(frame, dict):
        raise _invalid(f"{field}.frame", "object")
    kind = frame.get("kind")
    if kind == "main" and set(frame) == {"kind"}:
        return Locator(selector)
    chain = frame.get("chain")
    if kind != "iframe" or not isinstance(chain, list) or set(frame) != {"kind", "chain"}:
        raise _invalid(f"{field}.frame", "{kind: main} or {kind: iframe, chain: [...]}")
    if not 1 <= len(chain) <= MAX_FRAME_DEPTH:
        raise BrowserMeshError(
            ErrorCode.INVALID_ARGUMENT,
            bound=Bound("frame.chain", "<=", MAX_FRAME_DEPTH),
            internal={"frameDepth": len(chain), "maximumFrameDepth": MAX_FRAME_DEPTH},
        )
    steps = []
    for i, step in enumerate(chain):
        if isinstance(step, dict) and "frame" in step:
            raise _invalid(f"{field}.frame.chain.{i}", "no nested frame")
        steps.append(parse_selector(step, f"{field}.frame.chain.{i}"))
    return Locator(selector, tuple(steps))


def parse_ref(raw: object) -> RefTarget:
    if not isinstance(raw, str) or not REF_PATTERN.match(raw):
        raise _invalid("ref", "a ref token from browser_snapshot")
    return RefTarget(raw[1:] if raw.startswith("@") else raw)


def parse_target(args: dict[str, Any]) -> Target:
    """Exactly one of `locator` or `ref` (both or neither → INVALID_ARGUMENT)."""
    has_locator, has_ref = "locator" in args, "ref" in args
    if has_locator == has_ref:
        raise _invalid("locator|ref", "exactly one of locator or ref")
    return parse_locator(args["locator"]) if has_locator else parse_ref(args["ref"])


def parse_element_target(raw: object, field: str = "target") -> Target:
    """An ElementTarget: a Locator or `{"ref": token}`."""
    if isinstance(raw, dict) and set(raw) == {"ref"}:
        return parse_ref(raw["ref"])
    return parse_locator(raw, field)
