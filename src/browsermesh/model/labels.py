"""Session label validation: the optional `name` and the `metadata` map (reference §4.2, §13.8).

The bounds are fixed (not configurable). Emptiness, control characters, forbidden keys and wrong
types are `INVALID_ARGUMENT`; character, byte, entry and aggregate overflow is `LIMIT_EXCEEDED`
with a bound clause (e.g. ``Bound: metadataBytes <= 8192.``).

Pure rules: no Playwright, no MCP, no file system.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from browsermesh.errors import Bound, BrowserMeshError, ErrorCode, invalid_argument
from browsermesh.model.text import CONTROL_RE, SURROGATE_RE

MAX_NAME_CHARS: Final = 128
MAX_NAME_BYTES: Final = 512
MAX_METADATA_ENTRIES: Final = 32
MAX_METADATA_KEY_CHARS: Final = 64
MAX_METADATA_KEY_BYTES: Final = 256
MAX_METADATA_VALUE_CHARS: Final = 512
MAX_METADATA_VALUE_BYTES: Final = 2048
MAX_METADATA_BYTES: Final = 8192

LABEL_LIMITS: Final[dict[str, int]] = {
    "maxNameChars": MAX_NAME_CHARS,
    "maxNameBytes": MAX_NAME_BYTES,
    "maxMetadataEntries": MAX_METADATA_ENTRIES,
    "maxMetadataKeyChars": MAX_METADATA_KEY_CHARS,
    "maxMetadataKeyBytes": MAX_METADATA_KEY_BYTES,
    "maxMetadataValueChars": MAX_METADATA_VALUE_CHARS,
    "maxMetadataValueBytes": MAX_METADATA_VALUE_BYTES,
    "maxMetadataBytes": MAX_METADATA_BYTES,
}
"""Wire names → values, as reported in `browser_runtime_info.resourceLimits.session`.
A plain dict so it serializes directly; copy it (`dict(LABEL_LIMITS)`) before handing it out."""

FORBIDDEN_METADATA_KEYS: Final = frozenset({"__proto__", "constructor", "prototype"})


EMPTY_METADATA: Final[Mapping[str, str]] = MappingProxyType({})


def _invalid(field: str, rule: str) -> BrowserMeshError:
    """`INVALID_ARGUMENT` at `name` or `metadata`. A metadata key is caller text, so the path
    never names it: the rule says whether a key or a value broke it."""
    return invalid_argument(field, rule)


def _too_large(field: str, requirement: str, bound_name: str, number: int) -> BrowserMeshError:
    return BrowserMeshError(
        ErrorCode.LIMIT_EXCEEDED,
        bound=Bound(bound_name, "<=", number),
        internal={"field": field, "requirement": requirement},
    )


def _check_text(
    text: str,
    *,
    field: str,
    what: str,
    max_chars: int,
    max_bytes: int,
    chars_bound: str,
    bytes_bound: str,
) -> int:
    """Control characters / lone surrogates → INVALID_ARGUMENT; overflow → LIMIT_EXCEEDED.

    Returns the UTF-8 byte length of `text`.
    """
    if CONTROL_RE.search(text):
        raise _invalid(field, f"{what} without control characters")
    if SURROGATE_RE.search(text):
        raise _invalid(field, f"{what} in valid Unicode (no lone surrogates)")
    # Bytes first: with at most 4 bytes per code point a code-point check first would make the
    # byte bound unreachable (128 cp x 4 = 512 bytes), yet both bounds are part of the reference.
    size = len(text.encode("utf-8"))
    if size > max_bytes:
        raise _too_large(field, f"{what} <= {max_bytes} UTF-8 bytes", bytes_bound, max_bytes)
    if len(text) > max_chars:
        raise _too_large(field, f"{what} <= {max_chars} code points", chars_bound, max_chars)
    return size


def validate_name(name: object) -> str | None:
    """Validate the optional session `name`; `None` means "not supplied"."""
    if name is None:
        return None
    if not isinstance(name, str):
        raise _invalid("name", "string")
    if name == "":
        raise _invalid("name", "at least 1 character")
    _check_text(
        name,
        field="name",
        what="a name",
        max_chars=MAX_NAME_CHARS,
        max_bytes=MAX_NAME_BYTES,
        chars_bound="nameChars",
        bytes_bound="nameBytes",
    )
    return name


def validate_metadata(metadata: object) -> Mapping[str, str]:
    """Validate the optional `metadata` map; returns an immutable copy (`{}` when absent)."""
    if metadata is None:
        return EMPTY_METADATA
    if not isinstance(metadata, Mapping):
        raise _invalid("metadata", "object of string values")
    if len(metadata) > MAX_METADATA_ENTRIES:
        raise _too_large(
            "metadata",
            f"metadata <= {MAX_METADATA_ENTRIES} entries",
            "metadataEntries",
            MAX_METADATA_ENTRIES,
        )
    copy: dict[str, str] = {}
    total = 0
    for key, value in metadata.items():
        if not isinstance(key, str):
            raise _invalid("metadata", "string keys")
        if key == "":
            raise _invalid("metadata", "non-empty keys")
        if key in FORBIDDEN_METADATA_KEYS:
            raise _invalid("metadata", "no key __proto__, constructor or prototype")
        total += _check_text(
            key,
            field="metadata",
            what="keys",
            max_chars=MAX_METADATA_KEY_CHARS,
            max_bytes=MAX_METADATA_KEY_BYTES,
            chars_bound="metadataKeyChars",
            bytes_bound="metadataKeyBytes",
        )
        if not isinstance(value, str):
            raise _invalid("metadata", "string values")
        total += _check_text(
            value,
            field="metadata",
            what="values",
            max_chars=MAX_METADATA_VALUE_CHARS,
            max_bytes=MAX_METADATA_VALUE_BYTES,
            chars_bound="metadataValueChars",
            bytes_bound="metadataValueBytes",
        )
        copy[key] = value
    if total > MAX_METADATA_BYTES:
        raise _too_large(
            "metadata",
            f"sum of metadata key and value bytes <= {MAX_METADATA_BYTES}",
            "metadataBytes",
            MAX_METADATA_BYTES,
        )
    return MappingProxyType(copy)


def validate_labels(name: object, metadata: object) -> tuple[str | None, Mapping[str, str]]:
    """Validate session labels (§13.8): the name first, then the metadata.

    Returns `(name or None, immutable metadata mapping)`. Raises `BrowserMeshError` with
    `INVALID_ARGUMENT` (type, emptiness, control characters, forbidden keys) or `LIMIT_EXCEEDED`
    (character, byte, entry or aggregate overflow; carries the bound).
    """
    return validate_name(name), validate_metadata(metadata)
