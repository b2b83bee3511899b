"""Secrets by name (issue 36 item 2, reference §36) without a browser: the secrets file's
format and trust, the setting, `{"secret": NAME}` parsing, the secret book's answers, and what
a named value becomes in a recording and in observe events."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from browsermesh.config import ConfigError, load_config
from browsermesh.errors import BrowserMeshError, ErrorCode
from browsermesh.log import EventLog
from browsermesh.model.clock import Clock
from browsermesh.model.forms import parse_fields
from browsermesh.model.observe import ObserveLimits, PageObservations
from browsermesh.model.recording import Value
from browsermesh.model.secret_refs import SecretRef, parse_secret_ref
from browsermesh.model.step_secrets import StepSecrets
from browsermesh.persistence.secret_files import (
    MAX_SECRET_VALUE_CHARS,
    MAX_SECRETS,
    SecretFiles,
    read_secrets_file,
)
from browsermesh.redact import SecretValues
from browsermesh.runtime.secrets import SecretBook


def _write(path: Path, text: str, mode: int = 0o600) -> Path:
    path.write_text(text)
    path.chmod(mode)
    return path


# ------------------------------------------------------------------------------ the file


def test_the_dotenv_forms_are_read_and_nothing_is_expanded(tmp_path: Path) -> None:
    text = (
        "# comment\n\nA=plain\nexport B='single quoted'\nC=\"two\\nlines\"\n"
        "D=${A}x\n_E9=with = sign\n"
    )
    read = read_secrets_file(_write(tmp_path / "s.env", text))
    assert read.problem is None
    assert dict(read.values) == {
        "A": "plain",
        "B": "single quoted",
        "C": "two\nlines",
        "D": "${A}x",
        "_E9": "with = sign",
    }
    assert "plain" not in repr(read)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("A=1\nnot a binding\n", "line 2 is not NAME=value"),
        ("9A=1\n", "line 1: a name is letters, digits and _, not starting with a digit"),
        ("A=\n", "line 1 has no value"),
        ("A\n", "line 1 has no value"),
        ("A=1\nA=2\n", "line 2 repeats a name"),
        ("A=" + "x" * (MAX_SECRET_VALUE_CHARS + 1), "line 1: a value has at most 4096 characters"),
        ("".join(f"N{k}=v\n" for k in range(MAX_SECRETS + 1)), "holds more than 256 secrets"),
    ],
)
def test_a_malformed_file_is_refused_whole_without_quoting_it(
    tmp_path: Path, text: str, problem: str
) -> None:
    read = read_secrets_file(_write(tmp_path / "s.env", text))
    assert read.problem == problem and not read.values


def test_only_a_private_regular_file_is_trusted(tmp_path: Path) -> None:
    shared = read_secrets_file(_write(tmp_path / "a.env", "A=1\n", 0o640))
    assert shared.problem == "is readable or writable by group or others (chmod 600 it)"
    assert read_secrets_file(_write(tmp_path / "b.env", "A=1\n", 0o400)).problem is None
    link = tmp_path / "link.env"
    link.symlink_to(tmp_path / "b.env")  # mounted secrets are links: the target counts
    assert dict(read_secrets_file(link).values) == {"A": "1"}
    assert read_secrets_file(tmp_path).problem == "is not a regular file"
    assert read_secrets_file(tmp_path / "none.env").missing
    _write(tmp_path / "big.env", "A=" + "x" * 70_000)
    assert read_secrets_file(tmp_path / "big.env").problem == "is larger than 65536 bytes"
    (tmp_path / "bad.env").write_bytes(b"A=\xff\n")
    os.chmod(tmp_path / "bad.env", 0o600)
    assert read_secrets_file(tmp_path / "bad.env").problem == "is not valid UTF-8"


def test_the_cache_follows_edits_and_mode_changes(tmp_path: Path) -> None:
    files = SecretFiles()
    path = _write(tmp_path / "s.env", "A=1\n", 0o644)
    assert files.read(path).problem is not None
    path.chmod(0o600)  # only the mode changed: the refusal must not stick
    assert dict(files.read(path).values) == {"A": "1"}
    assert files.read(path) is files.read(path)  # unchanged: served from the cache
    _write(path, "A=1\nB=22\n")
    assert dict(files.read(path).values) == {"A": "1", "B": "22"}
    path.unlink()
    assert files.read(path).missing


# ------------------------------------------------------------------------------ the setting


def _problems(**environ: str) -> list[tuple[str, str]]:
    with pytest.raises(ConfigError) as info:
        load_config({"HOME": "/home/tester", **environ})
    return info.value.problems


def test_the_setting(tmp_path: Path) -> None:
    good = _write(tmp_path / "s.env", "A=1\n")
    config = load_config({"HOME": "/h", "BROWSERMESH_SECRETS_FILE": str(good)})
    assert config.secrets_file == str(good)
    template = str(tmp_path / "{principal}.env")  # read at use: it may not exist yet
    assert (
        load_config({"HOME": "/h", "BROWSERMESH_SECRETS_FILE": template}).secrets_file == template
    )
    var = "BROWSERMESH_SECRETS_FILE"
    assert _problems(**{var: str(tmp_path / "none.env")}) == [(var, "must name an existing file")]
    shared = _write(tmp_path / "shared.env", "A=1\n", 0o644)
    [(_, message)] = _problems(**{var: str(shared)})
    assert message.startswith("the file is readable or writable by group or others")
    tokens = _write(tmp_path / "tokens", "alice:" + "a" * 16 + "\nbob:" + "b" * 16 + "\n")
    [(_, message)] = _problems(
        **{var: str(good), "BROWSERMESH_AUTH_TOKEN_FILE": str(tokens)},
        BROWSERMESH_TRANSPORT="http",
    )
    assert "{principal}" in message


# ------------------------------------------------------------------------------ references


def test_secret_references() -> None:
    assert parse_secret_ref("text", "value") is None
    assert parse_secret_ref({"secret": "API_KEY"}, "value") == SecretRef("API_KEY", "value")
    for raw, field in (
        ({"secret": "API_KEY", "x": 1}, "value"),
        ({}, "value"),
        ({"secret": "1X"}, "value.secret"),
        ({"secret": "A" * 129}, "value.secret"),
        ({"secret": 7}, "value.secret"),
    ):
        with pytest.raises(BrowserMeshError) as info:
            parse_secret_ref(raw, "value")
        assert info.value.details["field"] == field
    [field] = parse_fields([{"target": {"ref": "e1"}, "value": {"secret": "PW"}}])
    assert field.named == SecretRef("PW", "fields[0].value") and field.secret
    assert "PW" not in repr(field.with_value("hunter2")) and "hunter2" not in repr(field)


def test_the_book_answers_per_principal_and_never_lists_names(tmp_path: Path) -> None:
    _write(tmp_path / "alice.env", "PW=alice-pw\n")
    _write(tmp_path / "carol.env", "PW=carol-pw\n", 0o644)
    records: list[dict[str, Any]] = []
    log = EventLog("silent")
    log.sinks.append(records.append)
    book = SecretBook(str(tmp_path / "{principal}.env"), log)
    assert book.names("alice") == ["PW"] and book.names("bob") == []
    assert book.value("alice", SecretRef("PW", "value")) == "alice-pw"
    errors = []
    for principal in ("bob", "carol", "alice"):
        name = "NOPE" if principal == "alice" else "PW"
        with pytest.raises(BrowserMeshError) as info:
            book.value(principal, SecretRef(name, "fields[1].value"))
        assert info.value.code == ErrorCode.INVALID_ARGUMENT
        errors.append(info.value.details)
    assert errors[0] == errors[1] == errors[2]
    assert errors[0]["field"] == "fields[1].value.secret" and "PW" not in json.dumps(errors)
    assert book.names("carol") == []
    assert [(r["message"], r["principal"]) for r in records] == [("secrets.refused", "carol")]
    assert "carol-pw" not in json.dumps(records)
    assert SecretBook(None, log).names("alice") == []


# ------------------------------------------------------------------------------ what it becomes


def test_a_named_value_replays_from_its_own_variable() -> None:
    known = StepSecrets()
    known.name("s3cret-value", "SITE_PASSWORD")
    assert known.value(
        "buyer", {"strategy": "label", "value": "Token"}, "s3cret-value", secret=False
    ) == (Value.secret("SITE_PASSWORD"))
    # A value that contains it elsewhere is hidden too.
    assert known.scrub("the s3cret-value here") == "the [REDACTED] here"


def test_observe_events_hide_the_session_secrets_before_cutting() -> None:
    secrets = SecretValues()
    events = PageObservations("s", "p", ObserveLimits(10, 128, 10, 100_000), Clock(), secrets)
    secrets.add(["tok-123456"])  # learnt after the page was registered: shared, not copied
    events.console("log", "hello tok-123456")
    events.console("log", "x" * 120 + " tok-123456")  # past the 128-character cut
    events.request(1, "GET", "http://h.test/p/tok-123456", "fetch")
    out = json.dumps(events.read("console", None, None, True))
    assert "hello [REDACTED]" in out and "tok-1" not in out  # no prefix left by the cut
    assert "tok-123456" not in json.dumps(events.read("network", None, None, False))
