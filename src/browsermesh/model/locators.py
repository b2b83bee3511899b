"""The locator model (reference §5.1–5.2): selectors, frame chains and element targets.

Runtime checks repeat the schema so direct library callers get the same protection. Nothing here
knows about Playwright; the engine turns a `Locator` into a Playwright locator.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from browsermesh.errors import (
    SELECTOR_ENGINES,
    Bound,
    BrowserMeshError,
    invalid_argument,
)
from browsermesh.model.arguments import MAX_SELECTOR_CHARS, bounded_string
from browsermesh.model.strategies import STRATEGIES, Strategy, entry

# Every role Playwright's get_by_role accepts (its `AriaRole`; a unit test keeps them equal), so
# every role browser_snapshot prints can be written back as a locator.
ROLES = (
    "alert", "alertdialog", "application", "article", "banner", "blockquote", "button",
    "caption", "cell", "checkbox", "code", "columnheader", "combobox", "complementary",
    "contentinfo", "definition", "deletion", "dialog", "directory", "document", "emphasis",
    "feed", "figure", "form", "generic", "grid", "gridcell", "group", "heading", "img",
    "insertion", "link", "list", "listbox", "listitem", "log", "main", "marquee", "math", "menu",
    "menubar", "menuitem", "menuitemcheckbox", "menuitemradio", "meter", "navigation", "none",
    "note", "option", "paragraph", "presentation", "progressbar", "radio", "radiogroup",
    "region", "row", "rowgroup", "rowheader", "scrollbar", "search", "searchbox", "separator",
    "slider", "spinbutton", "status", "strong", "subscript", "superscript", "switch", "tab",
    "table", "tablist", "tabpanel", "term", "textbox", "time", "timer", "toolbar", "tooltip",
    "tree", "treegrid", "treeitem",
)  # fmt: skip
# The roles of controls a <label> (or aria-labelledby / aria-label) names, in the order the
# engine tries them: `label` also finds them by accessible name, and candidates for a label or
# placeholder are drawn from them.
LABELLED_ROLES = (
    "textbox",
    "searchbox",
    "combobox",
    "listbox",
    "spinbutton",
    "checkbox",
    "radio",
    "switch",
    "slider",
)
MAX_FRAME_DEPTH = 5
REF_PATTERN = re.compile(r"^@?[a-z0-9.]{2,12}$")

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
_FIELD_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,31}$")


def _invalid(field: str, requirement: str) -> BrowserMeshError:
    return invalid_argument(field, requirement)


# How a person reads a name on a form (issue 13): whitespace collapsed and trimmed, and a
# trailing `:` or `*` decoration ("Username:", "Price *") is not part of the name.
_DECORATION = re.compile(r"[\s:*]+$")
_WHITESPACE = re.compile(r"\s+")
_REGEX_SPECIAL = re.compile(r"([\\^$.|?*+()\[\]{}/-])")


def normalize_name(text: str) -> str:
    """`text` as it is compared for an exact match: `"  Username:\n"` → `"Username"`."""
    collapsed = _WHITESPACE.sub(" ", text).strip()
    stripped = _DECORATION.sub("", collapsed)
    return stripped or collapsed


def exact_name_pattern(value: str) -> str:
    """A regular expression source (JavaScript and Python compatible) that matches a name equal
    to `value` after `normalize_name` on both sides (case-sensitive)."""
    words = normalize_name(value).split(" ")
    body = "\\s+".join(_REGEX_SPECIAL.sub(r"\\\1", word) for word in words)
    return "^\\s*" + body + "[\\s:*]*$"


@dataclass(frozen=True, slots=True)
class Selector:
    """One LocatorSelector. For `role`, `value` is the role and `name`/`exact` apply; for the
    other strategies whose catalogue entry takes `exact` (`model.strategies`), it applies to
    `value`."""

    strategy: Strategy
    value: str
    name: str | None = None
    exact: bool = True

    def wire(self) -> dict[str, Any]:
        """The normalized echo (`exact: true` filled in where it applies)."""
        out: dict[str, Any] = {"strategy": self.strategy, "value": self.value}
        if self.strategy == "role":
            if self.name is not None:
                out["name"] = self.name
            out["exact"] = self.exact
        elif entry(self.strategy).takes_exact:
            out["exact"] = self.exact
        return out

    def describe(self) -> str:
        """Internal description for logs and tests, e.g. `role=link, name=X, exact=false`."""
        if self.strategy == "role":
            parts = [f"role={self.value}"]
            if self.name is not None:
                parts += [f"name={self.name}", f"exact={str(self.exact).lower()}"]
            return ", ".join(parts)
        if entry(self.strategy).takes_exact and not self.exact:
            return f"{self.strategy}={self.value}, exact=false"
        return f"{self.strategy}={self.value}"


@dataclass(frozen=True, slots=True)
class Locator:
    """A selector plus an optional iframe chain (outer → inner) and an optional container
    (`within`, resolved strictly inside the frame before the selector)."""

    selector: Selector
    frames: tuple[Selector, ...] = ()
    within: Selector | None = None

    def wire(self) -> dict[str, Any]:
        out = self.selector.wire()
        if self.within is not None:
            out["within"] = self.within.wire()
        if self.frames:
            out["frame"] = {"kind": "iframe", "chain": [f.wire() for f in self.frames]}
        return out

    def detail(self) -> dict[str, Any]:
        """The `locator` error detail as given: strategy, value, name, exact and the `within`
        container (no frame chain)."""
        out = self.selector.wire()
        if self.within is not None:
            out["within"] = self.within.wire()
        return out

    def describe(self) -> str:
        text = self.selector.describe()
        if self.within is not None:
            text += f", within=({self.within.describe()})"
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
    error = invalid_argument(
        field,
        "CSS only (no Playwright selector engines or chains); use the role, text, label, "
        "placeholder or testId strategy instead",
        locator={"strategy": "css"},
        selectorEngine=public_engine(engine),
    )
    error.internal["engine"] = engine
    return error


def parse_selector(raw: object, field: str, *, outer: bool = False) -> Selector:
    """One selector; `outer` allows the Locator-level keys `frame` and `within`."""
    if not isinstance(raw, dict):
        raise _invalid(field, "object")
    strategy = raw.get("strategy")
    value = raw.get("value")
    if strategy not in STRATEGIES:
        raise _invalid(f"{field}.strategy", "one of: " + ", ".join(STRATEGIES))
    allowed = {"strategy", "value"} | ({"frame", "within"} if outer else set())
    allowed |= {"name"} if entry(strategy).takes_name else set()
    allowed |= {"exact"} if entry(strategy).takes_exact else set()
    unknown = sorted(set(raw) - allowed)
    if unknown:
        where = f"{field}.{unknown[0]}" if _FIELD_KEY.match(unknown[0]) else field
        raise _invalid(
            where, f"unknown field; {strategy} locators take: {', '.join(sorted(allowed))}"
        )
    if not isinstance(value, str) or not value:
        raise _invalid(f"{field}.value", "non-empty string")
    bounded_string(value, f"{field}.value", MAX_SELECTOR_CHARS)
    if strategy == "css":
        engine = non_css_engine(value)
        if engine is not None:
            raise _reject_engine(f"{field}.value", engine)
    exact = raw.get("exact", True)
    if not isinstance(exact, bool):
        raise _invalid(f"{field}.exact", "boolean")
    if strategy == "role":
        if value not in ROLES:
            raise _invalid(f"{field}.value", "an ARIA role, as browser_snapshot prints it")
        name = raw.get("name")
        if name is not None:
            bounded_string(name, f"{field}.name", MAX_SELECTOR_CHARS)
        return Selector("role", value, name, exact)
    return Selector(strategy, value, exact=exact)


def parse_locator(raw: object, field: str = "locator") -> Locator:
    """Validate and normalize a Locator (selector + optional frame and container)."""
    selector = parse_selector(raw, field, outer=True)
    assert isinstance(raw, dict)  # parse_selector refused anything else
    within = None if raw.get("within") is None else parse_selector(raw["within"], f"{field}.within")
    return Locator(selector, parse_frames(raw.get("frame"), field), within)


def parse_frames(frame: object, field: str) -> tuple[Selector, ...]:
    if frame is None:
        return ()
    if not isinstance(frame, dict):
        raise _invalid(f"{field}.frame", "object")
    kind = frame.get("kind")
    if kind == "main" and set(frame) == {"kind"}:
        return ()
    chain = frame.get("chain")
    if kind != "iframe" or not isinstance(chain, list) or set(frame) != {"kind", "chain"}:
        raise _invalid(f"{field}.frame", "{kind: main} or {kind: iframe, chain: [...]}")
    if not 1 <= len(chain) <= MAX_FRAME_DEPTH:
        raise invalid_argument(
            f"{field}.frame.chain",
            f"1 to {MAX_FRAME_DEPTH} iframe steps",
            bound=Bound("frame.chain", "<=", MAX_FRAME_DEPTH),
        )
    steps = []
    for i, step in enumerate(chain):
        if isinstance(step, dict) and "frame" in step:
            raise _invalid(f"{field}.frame.chain.{i}", "no nested frame")
        steps.append(parse_selector(step, f"{field}.frame.chain.{i}"))
    return tuple(steps)


def parse_ref(raw: object, field: str = "ref") -> RefTarget:
    if not isinstance(raw, str) or not REF_PATTERN.match(raw):
        raise _invalid(field, "a ref token from browser_snapshot")
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
        return parse_ref(raw["ref"], f"{field}.ref")
    return parse_locator(raw, field)
