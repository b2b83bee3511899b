"""Short opaque ids (model.ids, issue 15): format, uniqueness, kinds, base 36."""

from __future__ import annotations

import re

import pytest

from browsermesh.model.ids import base36, short_id

KINDS = ("s", "p", "o", "c", "a")
FORMAT = re.compile(r"([a-z])([1-9a-z][0-9a-z]*)([0-9a-z]{3})")
"""A kind letter, the base-36 counter (no leading zero) and three random characters."""


def parts(value: str) -> tuple[str, str, str]:
    match = FORMAT.fullmatch(value)
    assert match is not None, value
    return match.group(1), match.group(2), match.group(3)


def test_an_id_is_its_kind_a_counter_and_three_random_characters() -> None:
    for kind in KINDS:
        value = short_id(kind)
        assert parts(value)[0] == kind
        # URL-, path-, JSON- and cursor-safe: no separator a client or a file name would trip on
        assert value.isascii() and value.isalnum() and value.islower() and "." not in value


def test_ids_are_short() -> None:
    # The first 46,655 ids of a server have a counter of at most 3 characters: 5..7 in all
    # (a uuid4 id was 41..46). A long-running server grows one character per 36x more ids.
    assert all(len(short_id("o")) <= 8 for _ in range(1000))


def test_ids_never_repeat_within_one_server_whatever_their_kind() -> None:
    ids = [short_id(KINDS[i % len(KINDS)]) for i in range(50_000)]
    assert len(set(ids)) == len(ids)
    # the counter alone is unique: without the kind letter and the random tail no two are equal
    counters = [parts(i)[1] for i in ids]
    assert len(set(counters)) == len(counters)


def test_the_counter_increases_and_the_tail_is_random() -> None:
    counters = [int(parts(short_id("p"))[1], 36) for _ in range(200)]
    assert counters == sorted(counters) and len(set(counters)) == len(counters)
    tails = {parts(short_id("p"))[2] for _ in range(200)}
    assert len(tails) > 150  # 46,656 possible tails: repeats among 200 are rare


def test_base36() -> None:
    assert [base36(n) for n in (0, 1, 9, 10, 35, 36, 46_655, 46_656)] == [
        "0",
        "1",
        "9",
        "a",
        "z",
        "10",
        "zzz",
        "1000",
    ]
    assert all(int(base36(n), 36) == n for n in range(0, 200_000, 997))
    with pytest.raises(ValueError):
        base36(-1)
