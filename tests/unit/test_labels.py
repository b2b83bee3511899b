"""Session label bounds (reference §4.2, §13.8): every bound at its exact boundary and +1."""

from __future__ import annotations

from collections.abc import Callable
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from browsermesh.errors import BrowserMeshError, ErrorCode, error_payload
from browsermesh.model.labels import LABEL_LIMITS, validate_labels

TWO = "é"  # 1 code point, 2 UTF-8 bytes
FOUR = "😀"  # 1 code point, 4 UTF-8 bytes


def _error(call: Callable[[], Any]) -> BrowserMeshError:
    with pytest.raises(BrowserMeshError) as info:
        call()
    return info.value


def _limit(call: Callable[[], Any], name: str, number: int) -> None:
    error = _error(call)
    assert error.code is ErrorCode.LIMIT_EXCEEDED
    assert error.bound is not None
    assert (error.bound.name, error.bound.op, error.bound.number) == (name, "<=", number)
    assert error.bound.variable is None
    assert error.message == f"Configured resource limit exceeded. Bound: {name} <= {number}."


def _invalid(call: Callable[[], Any]) -> BrowserMeshError:
    error = _error(call)
    assert error.code is ErrorCode.INVALID_ARGUMENT
    assert error.bound is None
    assert {"field", "requirement"} <= set(error.internal)
    return error


def test_limits_constant_uses_wire_names() -> None:
    assert LABEL_LIMITS == {
        "maxNameChars": 128,
        "maxNameBytes": 512,
        "maxMetadataEntries": 32,
        "maxMetadataKeyChars": 64,
        "maxMetadataKeyBytes": 256,
        "maxMetadataValueChars": 512,
        "maxMetadataValueBytes": 2048,
        "maxMetadataBytes": 8192,
    }
    assert type(LABEL_LIMITS) is dict


def test_absent_labels() -> None:
    name, metadata = validate_labels(None, None)
    assert name is None
    assert dict(metadata) == {}
    assert isinstance(metadata, MappingProxyType)


def test_valid_labels_return_an_immutable_copy() -> None:
    source = {"role": "buyer", "account": "a-1", "empty": ""}
    name, metadata = validate_labels("Buyer", source)
    assert name == "Buyer"
    assert dict(metadata) == source
    assert isinstance(metadata, MappingProxyType)
    source["role"] = "changed"
    assert metadata["role"] == "buyer"
    with pytest.raises(TypeError):
        metadata["x"] = "y"  # type: ignore[index]


# --- name ---------------------------------------------------------------------------------------


def test_name_chars_boundary() -> None:
    assert validate_labels("a" * 128, None)[0] == "a" * 128
    _limit(lambda: validate_labels("a" * 129, None), "nameChars", 128)


def test_name_bytes_boundary() -> None:
    assert validate_labels(FOUR * 128, None)[0] == FOUR * 128  # 512 bytes
    _limit(lambda: validate_labels(FOUR * 127 + TWO * 2, None), "nameChars", 128)  # 129 cp, 512 B
    _limit(lambda: validate_labels(FOUR * 128 + "a", None), "nameBytes", 512)  # 513 bytes


def test_name_of_one_char_and_empty_name() -> None:
    assert validate_labels("a", None)[0] == "a"
    error = _invalid(lambda: validate_labels("", None))
    assert error.internal["field"] == "name"


@pytest.mark.parametrize("bad", [1, 1.5, True, b"x", ["x"], {"x": "y"}])
def test_name_wrong_type(bad: object) -> None:
    _invalid(lambda: validate_labels(bad, None))


@pytest.mark.parametrize("char", ["\x00", "\x1f", "\x7f", "\x80", "\x9f", "\n", "\t"])
def test_name_control_characters(char: str) -> None:
    _invalid(lambda: validate_labels(f"a{char}b", None))


@pytest.mark.parametrize("char", [" ", "\xa0", "\u200b", "~"])
def test_name_non_control_characters_are_fine(char: str) -> None:
    assert validate_labels(f"a{char}b", None)[0] == f"a{char}b"


def test_name_lone_surrogate_rejected() -> None:
    _invalid(lambda: validate_labels("a\ud800", None))


# --- metadata entries -----------------------------------------------------------------------------


def test_metadata_entries_boundary() -> None:
    exact = {f"k{i}": "v" for i in range(32)}
    assert len(validate_labels(None, exact)[1]) == 32
    over = {f"k{i}": "v" for i in range(33)}
    _limit(lambda: validate_labels(None, over), "metadataEntries", 32)


def test_empty_metadata_object() -> None:
    assert dict(validate_labels(None, {})[1]) == {}


@pytest.mark.parametrize("bad", ["x", 1, ["a"], [("a", "b")], True])
def test_metadata_wrong_type(bad: object) -> None:
    _invalid(lambda: validate_labels(None, bad))


@pytest.mark.parametrize("bad", [1, None, True, ["v"], {"a": "b"}])
def test_metadata_value_wrong_type(bad: object) -> None:
    _invalid(lambda: validate_labels(None, {"k": bad}))


def test_metadata_key_wrong_type() -> None:
    _invalid(lambda: validate_labels(None, {1: "v"}))


# --- metadata keys ------------------------------------------------------------------------------


def test_metadata_key_chars_boundary() -> None:
    assert "k" * 64 in validate_labels(None, {"k" * 64: "v"})[1]
    _limit(lambda: validate_labels(None, {"k" * 65: "v"}), "metadataKeyChars", 64)


def test_metadata_key_bytes_boundary() -> None:
    assert FOUR * 64 in validate_labels(None, {FOUR * 64: "v"})[1]  # 256 bytes
    _limit(lambda: validate_labels(None, {FOUR * 64 + "a": "v"}), "metadataKeyBytes", 256)
    _limit(lambda: validate_labels(None, {FOUR * 63 + TWO * 3: "v"}), "metadataKeyBytes", 256)


def test_metadata_key_empty() -> None:
    _invalid(lambda: validate_labels(None, {"": "v"}))


@pytest.mark.parametrize("key", ["__proto__", "constructor", "prototype"])
def test_metadata_forbidden_keys(key: str) -> None:
    _invalid(lambda: validate_labels(None, {key: "v"}))


@pytest.mark.parametrize("key", ["__proto", "Constructor", "prototypes", "proto"])
def test_metadata_similar_keys_are_fine(key: str) -> None:
    assert key in validate_labels(None, {key: "v"})[1]


@pytest.mark.parametrize("char", ["\x00", "\x1b", "\x7f", "\x85", "\x9f"])
def test_metadata_key_control_characters(char: str) -> None:
    _invalid(lambda: validate_labels(None, {f"k{char}": "v"}))


# --- metadata values ----------------------------------------------------------------------------


def test_metadata_value_chars_boundary() -> None:
    assert validate_labels(None, {"k": "v" * 512})[1]["k"] == "v" * 512
    _limit(lambda: validate_labels(None, {"k": "v" * 513}), "metadataValueChars", 512)


def test_metadata_value_bytes_boundary() -> None:
    assert validate_labels(None, {"k": FOUR * 512})[1]["k"] == FOUR * 512  # 2048 bytes
    _limit(lambda: validate_labels(None, {"k": FOUR * 512 + "a"}), "metadataValueBytes", 2048)


def test_metadata_value_may_be_empty() -> None:
    assert validate_labels(None, {"k": ""})[1]["k"] == ""


@pytest.mark.parametrize("char", ["\x00", "\r", "\x7f", "\x90"])
def test_metadata_value_control_characters(char: str) -> None:
    _invalid(lambda: validate_labels(None, {"k": f"v{char}"}))


# --- aggregate ----------------------------------------------------------------------------------


def _aggregate(extra: int) -> dict[str, str]:
    """Four entries `k0..k3` (2-byte keys) summing to 8192 key + value bytes, plus `extra`."""
    values = [FOUR * 512, FOUR * 512, FOUR * 512, FOUR * 510 + "a" * extra]
    return {f"k{i}": value for i, value in enumerate(values)}


def test_metadata_aggregate_boundary() -> None:
    exact = _aggregate(0)
    assert sum(len(k.encode()) + len(v.encode()) for k, v in exact.items()) == 8192
    assert len(validate_labels(None, exact)[1]) == 4
    over = _aggregate(1)
    _limit(lambda: validate_labels(None, over), "metadataBytes", 8192)


def test_metadata_aggregate_counts_bytes_not_chars() -> None:
    # 4 values of 512 two-byte chars: 4 x (2 + 1024) = 4104 bytes, fine; 8 such: 8208 > 8192.
    ok = {f"k{i}": TWO * 512 for i in range(4)}
    assert len(validate_labels(None, ok)[1]) == 4
    over = {f"k{i}": TWO * 512 for i in range(8)}
    _limit(lambda: validate_labels(None, over), "metadataBytes", 8192)


def test_errors_do_not_leak_labels() -> None:
    secret = "secret-value"
    error = _error(lambda: validate_labels(None, {"k": secret + "\x00"}))
    assert secret not in str(error_payload(error))
    assert secret not in str(error.internal)


@given(
    st.dictionaries(
        st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs")), min_size=1, max_size=64),
        st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs")), max_size=64),
        max_size=8,
    )
)
def test_property_small_clean_metadata_is_accepted(metadata: dict[str, str]) -> None:
    metadata = {
        k: v for k, v in metadata.items() if k not in {"__proto__", "constructor", "prototype"}
    }
    assert dict(validate_labels(None, metadata)[1]) == metadata
