"""JSON Schema building blocks for published tool schemas (canonical, expanded form §23.1).

Every object input has `additionalProperties: false`; optional fields are simply not required
(never `null` alternatives); tagged unions are `oneOf` members pinning the tag with `const`.
"""

from __future__ import annotations

from typing import Any

from browsermesh.model.strategies import STRATEGIES

Schema = dict[str, Any]
DIALECT = "https://json-schema.org/draft/2020-12/schema"
NO_CONTROL = "^[^\\x00-\\x1f\\x7f-\\x9f]*$"


def obj(
    properties: dict[str, Schema],
    required: list[str] | tuple[str, ...] = (),
    *,
    description: str | None = None,
    closed: bool = True,
) -> Schema:
    """An object schema; inputs are closed (`additionalProperties: false`)."""
    out: Schema = {"type": "object", "properties": properties}
    if required:
        out["required"] = list(required)
    if closed:
        out["additionalProperties"] = False
    if description:
        out["description"] = description
    return out


def string(min_length: int | None = None, max_length: int | None = None, **extra: Any) -> Schema:
    out: Schema = {"type": "string"}
    if min_length is not None:
        out["minLength"] = min_length
    if max_length is not None:
        out["maxLength"] = max_length
    out.update(extra)
    return out


def integer(minimum: int | None = None, maximum: int | None = None, **extra: Any) -> Schema:
    out: Schema = {"type": "integer"}
    if minimum is not None:
        out["minimum"] = minimum
    if maximum is not None:
        out["maximum"] = maximum
    out.update(extra)
    return out


def enum(*values: str) -> Schema:
    return {"enum": list(values)}


def const(value: str) -> Schema:
    return {"const": value}


def array(items: Schema, **extra: Any) -> Schema:
    out: Schema = {"type": "array", "items": items}
    out.update(extra)
    return out


BOOL: Schema = {"type": "boolean"}
# Discovery cost is part of the product (every byte here is paid by every client on every
# connection), so shared building blocks carry no descriptions; tool descriptions explain them.
SESSION_ID = string()
PAGE_ID = string()
# Bounds (1..300,000) are enforced by the runtime (INVALID_ARGUMENT with the bound clause).
TIMEOUT_MS = integer()
OPERATION_ID = string()
ISO = string()


def page_address(extra: dict[str, Schema] | None = None, required: tuple[str, ...] = ()) -> Schema:
    """`sessionId` + `pageId` + optional `timeoutMs`, plus tool-specific fields."""
    props: dict[str, Schema] = {"sessionId": SESSION_ID, "pageId": PAGE_ID}
    props.update(extra or {})
    props["timeoutMs"] = TIMEOUT_MS
    return obj(props, ["sessionId", "pageId", *required])


def session_address(extra: dict[str, Schema] | None = None) -> Schema:
    props: dict[str, Schema] = {"sessionId": SESSION_ID}
    props.update(extra or {})
    return obj(props, ["sessionId"])


EMPTY_INPUT: Schema = obj({})

# ---------------------------------------------------------------------- outputs

SESSION_VIEW: Schema = {"type": "object", "required": ["sessionId", "status"]}
PAGE_VIEW: Schema = {"type": "object", "required": ["pageId", "url"]}


def output(properties: dict[str, Schema], required: list[str] | None = None) -> Schema:
    """An output schema: an open object requiring the tool's own result fields.

    Every result also carries `operationId` (page results `sessionId`/`pageId` too). Field
    types are documented by the reference, not repeated here: discovery bytes are paid by every
    client on every connection (issue budget: <= 30,000 bytes for the default profiles)."""
    return {"type": "object", "required": required if required is not None else list(properties)}


def page_output(properties: dict[str, Schema]) -> Schema:
    """Page results also carry sessionId and pageId (not repeated in the schema)."""
    return output(properties)


# Results whose own field is only a constant flag (`completed`/`satisfied`/`closed: true`, 14
# tools): a success already says what the flag says, so their schemas name no field (issue 13
# spent those bytes on input descriptions).
FLAG_OUTPUT: Schema = {"type": "object"}

# `snapshot` on interactions (issue 15): the action table after the action, or its diff.
FOLLOW: Schema = {"enum": ["diff", "actions"]}
FOLLOW_HINT = (
    "changes: url, title, navigation, dialogs, popups, opened, downloads, alerts, controls; "
    'snapshot:"diff" (changes since last snapshot, new refs) or "actions" (table), '
    "once the page is quiet."
)


def with_dialect(schema: Schema) -> Schema:
    """The published root: the 2020-12 dialect first, then the schema."""
    return {"$schema": DIALECT, **schema}


def _finite(minimum: float, maximum: float) -> Schema:
    return {"type": "number", "minimum": minimum, "maximum": maximum}


# Validated field by field at runtime (§12); published as an open object to keep discovery small.
CONTEXT_SETTINGS: Schema = {"type": "object"}


# ---------------------------------------------------------------------- locators

FRAME_SHAPE = "{kind:main}|{kind:iframe,chain:[1-5 iframe locators,outer first]}"


def locator(*, documented: bool = False) -> Schema:
    """A Locator. Required keys, unknown keys, value types, strategies, role names, `within`
    and frame chains are checked by the runtime (INVALID_ARGUMENT naming the field and the
    rule), as they already were for `action.target`, `scope`, `capture.locator` and wait
    locators. The locator appears in 13 tools, so every byte here counts 13 times: only the
    `documented` copy (browser_click's, which the other tools' "Target as for browser_click"
    points to) lists `strategy` (an unknown one stays a schema error there), `value`, `name`,
    `exact`, `frame` and `within`; the others publish an open object (issue 15 spent those
    bytes on browser_fill_form)."""
    if not documented:
        return {"type": "object"}
    props: dict[str, Schema] = {
        "strategy": enum(*STRATEGIES),
        "value": string(),
        "name": string(),
        "exact": BOOL,
        "frame": {"type": "object", "description": FRAME_SHAPE},
        "within": {"type": "object", "description": "container locator"},
    }
    return {"type": "object", "properties": props}


LOCATOR: Schema = locator()
REF: Schema = string()
