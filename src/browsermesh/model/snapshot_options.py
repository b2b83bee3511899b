"""The ``browser_snapshot`` options (reference §6.2, §6.3): checked, defaulted, echoed.

`normalize_snapshot_options` validates a call's options (or its continuation cursor) into
`SnapshotOptions`, every violation an `INVALID_ARGUMENT` naming the option; `applied_bounds` is
the ``appliedBounds`` object a response echoes. Used before every capture (a ``browser_snapshot``
call, the action table an action follows up with); `browsermesh.model.paging` pages what it
captured.

Pure model: no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from browsermesh.errors import Bound, BrowserMeshError, invalid_argument

__all__ = [
    "ARIA_ONLY_KEYS",
    "CURSOR_MAX_CHARS",
    "SNAPSHOT_OPTION_KEYS",
    "TABLES_MODES",
    "SnapshotFormat",
    "SnapshotOptions",
    "TablesMode",
    "normalize_snapshot_options",
    "tables_option",
]

SnapshotFormat = Literal["aria", "actions"]
TablesMode = Literal["summary", "rows"]
TABLES_MODES: tuple[TablesMode, ...] = ("summary", "rows")
"""``tables`` (issue 31 item 3): ``summary`` (default) folds a table to ``table · 42 rows``;
``rows`` gives its ``columns:`` line and one ``[ref] row: cell | cell`` line per data row in the
action table (``browser_visible_text``: cells joined with `` | ``)."""

CURSOR_MAX_CHARS = 160

SNAPSHOT_OPTION_KEYS: tuple[str, ...] = (
    "format",
    "scope",
    "maxDepth",
    "includeBoundingBoxes",
    "maxChars",
    "maxBytes",
    "includeRefs",
    "maxRefs",
    "interactiveOnly",
    "maxChildren",
    "tables",
)
ARIA_ONLY_KEYS: tuple[str, ...] = (
    "maxDepth",
    "includeBoundingBoxes",
    "interactiveOnly",
    "maxChildren",
)

# name -> (minimum, maximum, default)
_INT_OPTIONS: dict[str, tuple[int, int, int | None]] = {
    "maxDepth": (0, 100, None),
    "maxChars": (1, 100_000, 50_000),
    "maxBytes": (1, 131_072, 65_536),
    "maxRefs": (1, 100, 50),
    "maxChildren": (1, 1_000, None),
}
_BOOL_OPTIONS = ("includeBoundingBoxes", "includeRefs", "interactiveOnly")


@dataclass(frozen=True)
class SnapshotOptions:
    """Normalized ``browser_snapshot`` options (defaults filled in)."""

    format: SnapshotFormat = "aria"
    scope: Mapping[str, Any] | None = None
    max_depth: int | None = None
    include_bounding_boxes: bool = False
    max_chars: int = 50_000
    max_bytes: int = 65_536
    include_refs: bool = False
    max_refs: int = 50
    interactive_only: bool = False
    max_children: int | None = None
    tables: TablesMode = "summary"

    def applied_bounds(self, normalized_scope: dict[str, Any] | None) -> dict[str, Any]:
        """The §6.3 ``appliedBounds`` object; ``normalized_scope`` is the echoed scope."""
        actions = self.format == "actions"
        rows = {"tables": self.tables} if self.tables != "summary" else {}
        return {
            "format": self.format,
            "scope": normalized_scope,
            "maxDepth": None if actions else self.max_depth,
            "includeBoundingBoxes": False if actions else self.include_bounding_boxes,
            "maxChars": self.max_chars,
            "maxBytes": self.max_bytes,
            "includeRefs": True if actions else self.include_refs,
            "maxRefs": self.max_refs,
            "interactiveOnly": False if actions else self.interactive_only,
            "maxChildren": None if actions else self.max_children,
            **rows,
        }


def _invalid(field: str, requirement: str, bound: Bound | None = None) -> BrowserMeshError:
    return invalid_argument(field, requirement, bound=bound)


def _int_option(args: Mapping[str, Any], name: str) -> int | None:
    low, high, default = _INT_OPTIONS[name]
    if name not in args:
        return default
    raw = args[name]
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        raise _invalid(name, "integer")
    if isinstance(raw, float):
        if not math.isfinite(raw) or not raw.is_integer():
            raise _invalid(name, "integer")
        raw = int(raw)
    if raw < low:
        raise _invalid(name, f"at least {low}", Bound(name, ">=", low))
    if raw > high:
        raise _invalid(name, f"at most {high}", Bound(name, "<=", high))
    return raw


def _bool_option(args: Mapping[str, Any], name: str, default: bool) -> bool:
    if name not in args:
        return default
    raw = args[name]
    if not isinstance(raw, bool):
        raise _invalid(name, "boolean")
    return raw


def tables_option(args: Mapping[str, Any]) -> TablesMode:
    """The ``tables`` option of ``browser_snapshot`` and ``browser_visible_text``."""
    raw = args.get("tables", "summary")
    if raw not in TABLES_MODES:
        raise _invalid("tables", "one of: " + ", ".join(TABLES_MODES))
    return raw  # type: ignore[no-any-return]


def normalize_snapshot_options(args: Mapping[str, Any]) -> SnapshotOptions | str:
    """Validate and normalize §6.2 options; returns the cursor string for a continuation.

    An option counts as given exactly when its key is present. Every violation raises
    `INVALID_ARGUMENT` (numeric ranges with a bound clause): a cursor together with any snapshot
    option, a malformed cursor value, an unknown format, a non-object scope, wrong types,
    out-of-range numbers, ``includeRefs: false`` or an aria-only option with
    ``format: "actions"``, ``maxRefs`` with ``format: "aria"`` unless ``includeRefs: true``, and
    ``tables`` with ``format: "aria"``.
    """
    if "cursor" in args:
        given = [key for key in SNAPSHOT_OPTION_KEYS if key in args]
        if given:
            raise _invalid("cursor", "alone: a cursor excludes the options " + ", ".join(given))
        cursor = args["cursor"]
        if not isinstance(cursor, str) or not 1 <= len(cursor) <= CURSOR_MAX_CHARS:
            raise _invalid("cursor", f"string of 1..{CURSOR_MAX_CHARS} characters")
        return cursor
    fmt = args.get("format", "aria")
    if fmt not in ("aria", "actions"):
        raise _invalid("format", "one of: aria, actions")
    scope = args.get("scope")
    if "scope" in args and not isinstance(scope, Mapping):
        raise _invalid("scope", "object")
    max_depth = _int_option(args, "maxDepth")
    max_chars = _int_option(args, "maxChars")
    max_bytes = _int_option(args, "maxBytes")
    max_refs = _int_option(args, "maxRefs")
    max_children = _int_option(args, "maxChildren")
    include_boxes = _bool_option(args, "includeBoundingBoxes", False)
    interactive_only = _bool_option(args, "interactiveOnly", False)
    include_refs = _bool_option(args, "includeRefs", fmt == "actions")
    assert max_chars is not None and max_bytes is not None and max_refs is not None
    if fmt == "actions":
        given = [key for key in ARIA_ONLY_KEYS if key in args]
        if given:
            raise _invalid(given[0], 'not allowed with format "actions"')
        if not include_refs:
            raise _invalid("includeRefs", 'true with format "actions"')
    elif "maxRefs" in args and not include_refs:
        raise _invalid("maxRefs", 'only with includeRefs: true or format "actions"')
    tables = tables_option(args)
    if "tables" in args and fmt != "actions":
        raise _invalid("tables", 'only with format "actions" (ARIA YAML lists every row)')
    return SnapshotOptions(
        format=fmt,
        scope=scope,
        max_depth=max_depth,
        include_bounding_boxes=include_boxes,
        max_chars=max_chars,
        max_bytes=max_bytes,
        include_refs=include_refs,
        max_refs=max_refs,
        interactive_only=interactive_only,
        max_children=max_children,
        tables=tables,
    )
