"""browser_find's pure part (issue 31 item 1): the query, the page's lines, matching, excerpts,
cursors and the bounded result.

The engine reads a page's text in one evaluation as lines of segments (each segment's shown text,
its DOM text when CSS `text-transform` changed it, and the index of the nearest addressable
element it lies in); `build_line` normalises a line's whitespace and keeps each segment's offset,
`search` matches the lines (a literal: case-insensitive substring; a pattern: the `regex`
module with a time bound), and the anchors of the matches chosen are what the engine turns into
refs. A match is a line: a line with several occurrences counts once, shown around its first.
"""

from __future__ import annotations

import functools
import hashlib
import json
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from browsermesh.errors import BrowserMeshError, invalid_argument
from browsermesh.model.arguments import bounded_int, bounded_string
from browsermesh.model.locators import Locator, parse_locator

if TYPE_CHECKING:
    from regex import Pattern

MAX_TEXT_CHARS = 1_000
DEFAULT_LIMIT = 20
MAX_LIMIT = 100
LINE_CHARS = 160
"""The longest `text` of one match (the matched part kept visible, `…` where cut)."""
MAX_RESULT_CHARS = 8_000
"""The sum of the match texts of one answer; past it the rest is behind `nextCursor`."""
MATCH_BUDGET_S = 2.0
"""How long a pattern may take over the whole page, at most (a hostile pattern's bound)."""
MAX_LINES = 20_000
"""How many lines one page evaluation hands back at most (with the page's node and character
bounds, `engine.find`); past any of them the answer says `truncated`."""
SLOW_RULE = "a pattern that matches within {s:g} s (this one backtracks too much: simplify it)"
ELLIPSIS = "…"


# `regex` is imported on browser_find's first call, not at start-up (issue 33): these compile
# then, once.
@functools.cache
def _whitespace() -> Pattern[str]:
    import regex

    return regex.compile(r"\s+")


@functools.cache
def _cursor() -> Pattern[str]:
    import regex

    return regex.compile(r"^f([0-9a-f]{10})\.([0-9]{1,6})$")


@dataclass(frozen=True, slots=True)
class FindQuery:
    """A parsed browser_find request. `scope` is the container (`within`, else `body`) with
    the frame chain, None for the whole main document; `offset` the matches already served."""

    text: str
    regex: bool
    limit: int
    offset: int
    scope: Locator | None
    pattern: Pattern[str]

    def fingerprint(self) -> str:
        """What a cursor is bound to: the same search (text, mode, scope)."""
        scope = None if self.scope is None else self.scope.wire()
        raw = json.dumps([self.text, self.regex, scope], sort_keys=True)
        return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:10]

    def cursor(self, offset: int) -> str:
        return f"f{self.fingerprint()}.{offset}"


def normalize(text: str) -> str:
    """Whitespace runs collapsed to one space, trimmed (how a literal and a line compare)."""
    return _whitespace().sub(" ", text).strip()


def _compile(text: str, is_regex: bool) -> Pattern[str]:
    import regex

    if not is_regex:
        return regex.compile(regex.escape(normalize(text)), regex.IGNORECASE | regex.V0)
    try:
        return regex.compile(text, regex.V0)
    except regex.error as exc:
        message = str(exc).split(" at position")[0][:120]
        raise invalid_argument("text", f"a valid regular expression ({message})") from None
    except (OverflowError, RecursionError, ValueError):
        raise invalid_argument("text", "a valid regular expression (too complex)") from None


def parse_find(args: dict[str, Any]) -> FindQuery:
    """Validate browser_find's arguments (INVALID_ARGUMENT naming field and rule)."""
    text = bounded_string(args.get("text"), "text", MAX_TEXT_CHARS, min_chars=1)
    is_regex = args.get("regex", False)
    if not isinstance(is_regex, bool):
        raise invalid_argument("regex", "boolean")
    if not is_regex and not normalize(text):
        raise invalid_argument("text", "some text other than whitespace")
    limit = bounded_int(args.get("limit", DEFAULT_LIMIT), "limit", 1, MAX_LIMIT)
    scope = _scope(args.get("within"), args.get("frame"))
    query = FindQuery(text, is_regex, limit, 0, scope, _compile(text, is_regex))
    raw_cursor = args.get("cursor")
    if raw_cursor is None:
        return query
    cursor = bounded_string(raw_cursor, "cursor", 64, min_chars=1)
    found = _cursor().match(cursor)
    if found is None or found.group(1) != query.fingerprint():
        raise invalid_argument("cursor", "a nextCursor of the same search (text, regex, scope)")
    return FindQuery(text, is_regex, limit, int(found.group(2)), scope, query.pattern)


def _scope(within: object, frame: object) -> Locator | None:
    """`within` and `frame` as one Locator: the container (or `body`) in the frame chain."""
    if within is None and frame is None:
        return None
    if within is not None and not isinstance(within, dict):
        raise invalid_argument("within", "object")
    raw: dict[str, Any] = dict(within) if isinstance(within, dict) else {}
    for key in ("within", "frame"):
        if key in raw:
            raise invalid_argument(f"within.{key}", "not here (frame: the top-level field)")
    if within is None:
        raw = {"strategy": "css", "value": "body"}
    if frame is not None:
        raw["frame"] = frame
    try:
        located = parse_locator(raw, "within")
    except BrowserMeshError as error:
        field = str(error.details.get("field", ""))
        if field.startswith("within.frame"):  # the client's field is the top-level `frame`
            raise invalid_argument(
                field.removeprefix("within."), str(error.details.get("rule"))
            ) from None
        raise
    return located


@dataclass(frozen=True, slots=True)
class Anchor:
    """An element a match may name: its ARIA role and the next addressable element around it
    (`up`, an index into the same list, -1 for none)."""

    role: str
    up: int = -1


@dataclass(frozen=True, slots=True)
class Line:
    """One line as a person reads it: `text` (shown, whitespace normalised) and `dom` (the DOM
    text where CSS changed the case, else None), with each segment's start offset in both and
    its anchor index (-1: none)."""

    text: str
    starts: tuple[int, ...]
    anchors: tuple[int, ...]
    dom: str | None = None
    dom_starts: tuple[int, ...] = ()


def _joined(parts: list[str]) -> tuple[str, tuple[int, ...]]:
    """The parts' normalised concatenation and where each part starts in it."""
    out = ""
    starts = []
    for part in parts:
        piece = _whitespace().sub(" ", part)
        if (not out or out.endswith(" ")) and piece.startswith(" "):
            piece = piece[1:]
        starts.append(len(out))
        out += piece
    trimmed = out.rstrip()
    return trimmed, tuple(min(s, len(trimmed)) for s in starts)


def build_line(segments: list[tuple[str, str | None, int]]) -> Line | None:
    """A line from `(shown, dom or None, anchor)` segments; None when it holds no text."""
    shown, starts = _joined([s[0] for s in segments])
    if not shown:
        return None
    anchors = tuple(s[2] for s in segments)
    if all(s[1] is None for s in segments):
        return Line(shown, starts, anchors)
    dom, dom_starts = _joined([s[0] if s[1] is None else s[1] for s in segments])
    if dom == shown:
        return Line(shown, starts, anchors)
    return Line(shown, starts, anchors, dom, dom_starts)


@dataclass(frozen=True, slots=True)
class Hit:
    """One matching line: its text and the span of its first occurrence, and the anchor."""

    text: str
    start: int
    end: int
    anchor: int


@dataclass(frozen=True, slots=True)
class Hits:
    """What `search` found: every matching line's count and the page of them asked for."""

    count: int
    page: list[Hit]
    next_offset: int | None


def common_anchor(anchors: list[Anchor], spanned: list[int]) -> int:
    """The nearest anchor that is (or holds) every one of `spanned` (-1 when one is -1)."""
    if not spanned or -1 in spanned:
        return -1
    chains = []
    for index in dict.fromkeys(spanned):
        chain = []
        seen = set()
        while index != -1 and index not in seen and 0 <= index < len(anchors):
            seen.add(index)
            chain.append(index)
            index = anchors[index].up
        chains.append(chain)
    shared = set(chains[0]).intersection(*chains[1:])
    return next((i for i in chains[0] if i in shared), -1)


def _anchor_of(line: Line, start: int, end: int, dom: bool, anchors: list[Anchor]) -> int:
    """The anchor every segment the match `start..end` touches lies in."""
    starts = line.dom_starts if dom else line.starts
    text = line.dom if dom and line.dom is not None else line.text
    bounds = [*starts, len(text)]
    stop = max(end, start + 1)
    spanned = [
        line.anchors[i] for i in range(len(starts)) if bounds[i] < stop and bounds[i + 1] > start
    ]
    return common_anchor(anchors, spanned or [line.anchors[-1]])


def search(
    lines: list[Line], anchors: list[Anchor], query: FindQuery, budget_s: float = MATCH_BUDGET_S
) -> Hits:
    """Match every line (the shown text first, then the DOM text); the matches from
    `query.offset`, at most `query.limit` and `MAX_RESULT_CHARS` of text. A pattern that
    runs past `budget_s` in all: INVALID_ARGUMENT on `text` (`SLOW_RULE`)."""
    ends_at = time.monotonic() + budget_s
    count = 0
    page: list[Hit] = []
    chars = 0
    next_offset: int | None = None
    for line in lines:
        found = _first(query.pattern, line.text, ends_at, budget_s)
        dom = False
        if found is None and line.dom is not None:
            found = _first(query.pattern, line.dom, ends_at, budget_s)
            dom = found is not None
        if found is None:
            continue
        count += 1
        if count <= query.offset or next_offset is not None:
            continue
        text = line.dom if dom and line.dom is not None else line.text
        start, end = found
        shown, s, e = excerpt(text, start, end)
        if len(page) >= query.limit or (page and chars + len(shown) > MAX_RESULT_CHARS):
            next_offset = count - 1
            continue
        chars += len(shown)
        page.append(Hit(shown, s, e, _anchor_of(line, start, end, dom, anchors)))
    return Hits(count, page, next_offset)


def slow_pattern(budget_s: float) -> BrowserMeshError:
    """INVALID_ARGUMENT on `text`: the pattern did not finish within `budget_s`."""
    return invalid_argument("text", SLOW_RULE.format(s=budget_s))


def _first(
    pattern: Pattern[str], text: str, ends_at: float, budget_s: float
) -> tuple[int, int] | None:
    left = ends_at - time.monotonic()
    if left <= 0:
        raise slow_pattern(budget_s)
    try:
        # `regex` counts its timeout in the matching thread's own time, which a busy machine
        # stretches: the engine also bounds the whole search by the wall clock.
        found = pattern.search(text, timeout=left, concurrent=True)
    except TimeoutError:
        raise slow_pattern(budget_s) from None
    return None if found is None else found.span()


def excerpt(text: str, start: int, end: int, width: int = LINE_CHARS) -> tuple[str, int, int]:
    """`text` cut to `width` characters around `start..end` (the match kept visible, `…`
    where cut); the match's span in the result."""
    if len(text) <= width:
        return text, start, end
    room = width - 2  # an ellipsis on each side at most
    if end - start >= room:
        left = start
        right = start + room
    else:
        left = max(0, start - (room - (end - start)) // 2)
        right = min(len(text), left + room)
        left = max(0, right - room)
    head = ELLIPSIS if left > 0 else ""
    tail = ELLIPSIS if right < len(text) else ""
    cut = head + text[left:right] + tail
    offset = len(head) - left
    return cut, max(start + offset, len(head)), min(end + offset, len(cut) - len(tail))


def result(hits: Hits, refs: list[str | None], roles: list[str | None], query: FindQuery,
           truncated: bool) -> dict[str, Any]:  # fmt: skip
    """The lean answer: `count`, `matches` ({text, ref?, role?}), `nextCursor`, `truncated`."""
    matches = []
    for hit, ref, role in zip(hits.page, refs, roles, strict=True):
        item: dict[str, Any] = {"text": hit.text}
        if ref is not None:
            item["ref"] = ref
            if role:
                item["role"] = role
        matches.append(item)
    out: dict[str, Any] = {"count": hits.count}
    if matches:
        out["matches"] = matches
    if hits.next_offset is not None:
        out["nextCursor"] = query.cursor(hits.next_offset)
    if truncated:
        out["truncated"] = True
    return out
