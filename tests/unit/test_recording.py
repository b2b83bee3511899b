"""The recording model (model/recording.py, issue 20): values, secret names, the bounded log."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from browsermesh.model.recording import (
    MAX_RECORDED_STEPS,
    Action,
    FormField,
    FormFill,
    Navigate,
    Recording,
    Upload,
    UploadFile,
    Value,
    field_label,
    secret_name,
    secrets_of,
    step_size,
)

SECRET_NAME = re.compile(r"BM_SECRET_[A-Z0-9_]+")


def nav(seq: int, url: str = "http://127.0.0.1:1/") -> Navigate:
    return Navigate(seq=seq, session_id="s1", page_id="p1", url=url)


def test_a_value_is_literal_text_or_a_secret_reference_never_both() -> None:
    assert Value.literal("x").text == "x" and not Value.literal("x").is_secret
    secret = Value.secret("BM_SECRET_A_B")
    assert secret.is_secret and secret.text is None
    with pytest.raises(ValueError):
        Value(text="x", env="Y")
    with pytest.raises(ValueError):
        Value()


@pytest.mark.parametrize(
    ("owner", "field", "name"),
    [
        ("buyer", "Password", "BM_SECRET_BUYER_PASSWORD"),
        ("Admin user", "New password:", "BM_SECRET_ADMIN_USER_NEW_PASSWORD"),
        ("Käufer", "Passwort*", "BM_SECRET_KAUFER_PASSWORT"),
        ("", "", "BM_SECRET_SESSION_VALUE"),
        ("漢字", "#pw", "BM_SECRET_SESSION_PW"),
        ("a" * 100, "b" * 100, f"BM_SECRET_{'A' * 40}_{'B' * 40}"),
    ],
)
def test_secret_names_are_readable_and_sanitized(owner: str, field: str, name: str) -> None:
    assert secret_name(owner, field) == name


@given(st.text(), st.text())
def test_secret_names_are_always_environment_names_and_deterministic(
    owner: str, field: str
) -> None:
    name = secret_name(owner, field)
    assert SECRET_NAME.fullmatch(name) and "__" not in name.removeprefix("BM_SECRET_")
    assert name == secret_name(owner, field)


def test_field_labels_come_from_the_name_or_the_value() -> None:
    assert field_label({"strategy": "role", "value": "textbox", "name": "Password"}) == "Password"
    assert field_label({"strategy": "role", "value": "textbox"}) == "textbox"
    assert field_label({"strategy": "label", "value": "PIN"}) == "PIN"
    assert field_label({}) == ""


def test_secrets_of_a_step_are_the_variables_it_reads() -> None:
    form = FormFill(
        seq=1,
        session_id="s",
        page_id="p",
        fields=(
            FormField(locator={}, op="fill", value=Value.secret("BM_SECRET_A")),
            FormField(locator={}, op="fill", value=Value.literal("plain")),
            FormField(locator={}, op="check"),
        ),
    )
    assert secrets_of(form) == {"BM_SECRET_A"}
    assert secrets_of(nav(1)) == set()


def test_the_log_stops_at_its_step_bound_and_says_so() -> None:
    log = Recording(max_steps=3)
    assert all(log.append(nav(n)) for n in range(3))
    assert not log.append(nav(4)) and log.truncated
    assert [s.seq for s in log.steps] == [0, 1, 2]
    assert not log.append(nav(5))  # stopped for good, even if a small step would fit
    log.clear()
    assert log.steps == [] and not log.truncated and log.size == 0 and log.append(nav(6))


def test_the_log_counts_upload_bytes_against_its_byte_bound() -> None:
    upload = Upload(
        seq=1,
        session_id="s",
        page_id="p",
        locator={"strategy": "label", "value": "File"},
        files=(UploadFile(name="a.bin", mime_type="application/octet-stream", data=b"x" * 1000),),
    )
    assert step_size(upload) > 1000
    log = Recording(max_bytes=step_size(upload) + step_size(nav(2)))
    assert log.append(upload) and log.append(nav(2))
    assert log.size == log.max_bytes
    assert not log.append(nav(3)) and log.truncated


def test_a_disabled_log_records_nothing() -> None:
    log = Recording(enabled=False)
    assert not log.append(nav(1)) and log.steps == [] and not log.truncated


def test_the_default_bounds() -> None:
    log = Recording()
    assert log.max_steps == MAX_RECORDED_STEPS == 2_000 and log.max_bytes == 1_000_000
    action = Action(seq=1, session_id="s", page_id="p", op="fill", locator={"a": "é"})
    assert (
        step_size(action)
        == step_size(Action(seq=2, session_id="s", page_id="p", op="fill", locator={"a": "e"})) + 1
    )  # UTF-8 bytes, not characters
