"""JSON Schema building blocks for published tool schemas (canonical, expanded form §23.1).

Every object input has `additionalProperties: false`; optional fields are simply not required
(never `null` alternatives); tagged unions are `oneOf` members pinning the tag with `const`.
"""

from __future__ import annotations

from typing import Any

Schema = dict[str, Any]
DIALECT = "https://json-schema.org/draft/2020-12/schema"
MAX_TIMEOUT_MS = 300_000
NO_CONTROL = "^[^\\u0000-\\u001f\\u007f-\\u009f]*$"


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
    return {"type": "string", "enum": list(values)}


def const(value: str) -> Schema:
    return {"const": value}


def array(items: Schema, **extra: Any) -> Schema:
    out: Schema = {"type": "array", "items": items}
    out.update(extra)
    return out


BOOL: Schema = {"type": "boolean"}
SESSION_ID = string(1, description="Session id from browser_session_create.")
PAGE_ID = string(1, description="Page id of that session.")
TIMEOUT_MS = integer(
    1, MAX_TIMEOUT_MS, description="Budget for the whole call incl. queue wait (ms)."
)
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

SESSION_VIEW: Schema = obj(
    {
        "sessionId": string(),
        "name": string(),
        "status": enum("creating", "ready", "closing", "closed", "failed"),
        "createdAt": ISO,
        "lastActivityAt": ISO,
        "metadata": {"type": "object", "additionalProperties": string()},
        "restoredFromStateId": string(),
        "contextSettings": {"type": "object"},
        "failureCode": string(),
    },
    ["sessionId", "status", "createdAt", "lastActivityAt", "metadata", "contextSettings"],
    closed=False,
)
PAGE_VIEW: Schema = obj(
    {
        "pageId": string(),
        "sessionId": string(),
        "createdAt": ISO,
        "url": string(),
        "isDefault": BOOL,
    },
    ["pageId", "sessionId", "createdAt", "url", "isDefault"],
    closed=False,
)


def output(properties: dict[str, Schema], required: list[str] | None = None) -> Schema:
    """An output schema: `operationId` always, then the tool's fields (all required)."""
    props: dict[str, Schema] = {"operationId": OPERATION_ID}
    props.update(properties)
    return obj(props, required if required is not None else list(props), closed=False)


def page_output(properties: dict[str, Schema]) -> Schema:
    return output({"sessionId": string(), "pageId": string(), **properties})


def with_dialect(schema: Schema) -> Schema:
    """The published root: the 2020-12 dialect first, then the schema."""
    return {"$schema": DIALECT, **schema}


def _finite(minimum: float, maximum: float) -> Schema:
    return {"type": "number", "minimum": minimum, "maximum": maximum}


CONTEXT_SETTINGS: Schema = obj(
    {
        "viewport": obj(
            {"width": integer(1, 10_000), "height": integer(1, 10_000)}, ["width", "height"]
        ),
        "deviceScaleFactor": _finite(0.1, 10),
        "locale": string(1, 64, pattern=NO_CONTROL),
        "timezoneId": string(1, 128, pattern=NO_CONTROL),
        "colorScheme": enum("light", "dark", "no-preference"),
        "reducedMotion": enum("reduce", "no-preference"),
        "userAgent": string(1, 512, pattern=NO_CONTROL),
        "geolocation": obj(
            {
                "latitude": _finite(-90, 90),
                "longitude": _finite(-180, 180),
                "accuracy": _finite(0, 100_000),
            },
            ["latitude", "longitude"],
        ),
        "permissions": array(
            obj(
                {"permission": {"const": "geolocation"}, "origin": string(1, 2000)},
                ["permission", "origin"],
            ),
            maxItems=100,
        ),
    },
    description="Per-session browser settings; permissions grant geolocation to exact origins.",
)


# ---------------------------------------------------------------------- locators

_ROLES = [
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
]
_SELECTOR_PROPS: dict[str, Schema] = {
    "strategy": enum("role", "text", "label", "placeholder", "testId", "css"),
    "value": string(1),
    "name": string(),
    "exact": BOOL,
}
_ROLE_RULE: Schema = {
    "if": {"properties": {"strategy": {"const": "role"}}},
    "then": {"properties": {"value": {"enum": _ROLES}}},
}
SELECTOR: Schema = {**obj(_SELECTOR_PROPS, ["strategy", "value"]), **_ROLE_RULE}
LOCATOR: Schema = {
    **obj(
        {
            **_SELECTOR_PROPS,
            "frame": obj(
                {
                    "kind": enum("main", "iframe"),
                    "chain": array(SELECTOR, minItems=1, maxItems=5),
                },
                ["kind"],
                description='{"kind":"main"} or {"kind":"iframe","chain":[selector,...]} '
                "(1-5 iframe selectors, outer to inner).",
            ),
        },
        ["strategy", "value"],
        description='{"strategy":"role|text|label|placeholder|testId|css","value":...,'
        '"name"?,"exact"?(role only, default true),"frame"?}. Strict: one match only.',
    ),
    **_ROLE_RULE,
}
REF: Schema = string(
    pattern="^@?[a-z0-9.]{2,12}$", description="Element ref from browser_snapshot, e.g. s3e12."
)
ELEMENT_TARGET: Schema = {
    "oneOf": [LOCATOR, obj({"ref": REF}, ["ref"])],
    "description": 'A locator object, or {"ref":"s3e12"} from browser_snapshot.',
}
