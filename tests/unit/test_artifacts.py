"""The artifact store (issue 14): quotas, permissions, atomic completion, reads, names."""

from __future__ import annotations

import base64
import os
import re
import stat
from pathlib import Path

import pytest

from browsermesh.config import default_config
from browsermesh.errors import Bound, BrowserMeshError, ErrorCode
from browsermesh.persistence.artifacts import (
    GET_RULE,
    Artifact,
    ArtifactLimits,
    ArtifactStore,
    sanitize_name,
    session_dir_name,
)

posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX modes")


def store(tmp_path: Path, **limits: int) -> ArtifactStore:
    return ArtifactStore(tmp_path / "data" / "artifacts", ArtifactLimits(**limits))


def put(s: ArtifactStore, data: bytes, session: str = "s1", principal: str = "local") -> Artifact:
    return s.put(session, principal, "page_1", "pdf", "file.pdf", "application/pdf", data)


def limit_bound(info: pytest.ExceptionInfo[BrowserMeshError]) -> Bound | None:
    assert info.value.code is ErrorCode.LIMIT_EXCEEDED
    return info.value.bound


# --- records and views --------------------------------------------------------------------------


def test_put_completes_and_view_hides_path_and_principal(tmp_path: Path) -> None:
    s = store(tmp_path)
    a = s.put(
        "s1",
        "alice",
        "page_1",
        "pdf",
        "../report.pdf",
        "application/pdf",
        b"%PDF-1.7",
        "https://user:pw@example.com/r.pdf?token=abc",
    )
    assert re.fullmatch(r"a[0-9a-z]{4,}", a.artifact_id)  # model.ids: kind a
    assert a.path.name == a.artifact_id
    assert a.path.read_bytes() == b"%PDF-1.7"
    assert not a.part_path.exists()
    view = a.view()
    assert list(view) == [
        "artifactId",
        "kind",
        "name",
        "mimeType",
        "size",
        "sourceUrl",
        "state",
        "pageId",
        "createdAt",
    ]
    assert view["name"] == "report.pdf"
    assert (view["size"], view["state"], view["pageId"]) == (8, "completed", "page_1")
    assert "user" not in view["sourceUrl"] and "abc" not in view["sourceUrl"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", view["createdAt"])
    assert str(tmp_path) not in repr(view) and "alice" not in repr(view)


def test_view_omits_absent_optionals(tmp_path: Path) -> None:
    a = store(tmp_path).begin("s1", "local", None, "download", None, None, None)
    assert set(a.view()) == {"artifactId", "kind", "name", "size", "state", "createdAt"}
    assert a.view()["name"] == "download"
    assert a.view()["state"] == "in_progress"


def test_list_is_newest_first_and_per_session(tmp_path: Path) -> None:
    s = store(tmp_path)
    first, second = put(s, b"1"), put(s, b"2")
    other = put(s, b"3", session="s2")
    assert s.list("s1") == [second, first]
    assert s.list("s2") == [other]
    assert s.list("nobody") == []
    assert s.usage("s1") == (2, 2)


def test_layout_hashes_the_session_id(tmp_path: Path) -> None:
    s = store(tmp_path)
    a = put(s, b"x", session="../../evil/session")
    assert a.path.parent == s.root / session_dir_name("../../evil/session")
    assert re.fullmatch(r"[0-9a-f]{32}", a.path.parent.name)
    assert a.path.parent.parent == s.root


@posix_only
def test_modes_are_0700_and_0600_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        s = store(tmp_path)
        a = put(s, b"data")
        b = s.begin("s1", "local", None, "download", "d.bin", None, None)
        b.part_path.write_bytes(b"abc")
        os.chmod(b.part_path, 0o666)
        s.complete(b)
    finally:
        os.umask(old)
    for directory in (s.root, a.path.parent):
        assert stat.S_IMODE(os.stat(directory).st_mode) == 0o700
    for artifact in (a, b):
        assert stat.S_IMODE(os.stat(artifact.path).st_mode) == 0o600


@posix_only
def test_a_symlinked_session_dir_is_refused(tmp_path: Path) -> None:
    s = store(tmp_path)
    put(s, b"x")  # creates the root
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (s.root / session_dir_name("s9")).symlink_to(elsewhere)
    with pytest.raises(BrowserMeshError) as info:
        put(s, b"x", session="s9")
    assert info.value.code is ErrorCode.INTERNAL_ERROR
    assert list(elsewhere.iterdir()) == []
    assert s.list("s9") == []


# --- quotas -------------------------------------------------------------------------------------


def test_count_quota_counts_active_artifacts_only(tmp_path: Path) -> None:
    s = store(tmp_path, max_count=2)
    a = put(s, b"1")
    s.begin("s1", "local", None, "download", "x", None, None)
    with pytest.raises(BrowserMeshError) as info:
        s.begin("s1", "local", None, "download", "y", None, None)
    assert limit_bound(info) == Bound("artifacts", "<=", 2, "BROWSERMESH_MAX_ARTIFACTS")
    assert put(s, b"other", session="s2").state == "completed"  # per session
    s.fail(a, "canceled")  # a failed/canceled record frees its slot
    assert s.begin("s1", "local", None, "download", "y", None, None).state == "in_progress"


def test_ended_records_are_bounded(tmp_path: Path) -> None:
    s = store(tmp_path, max_count=3)
    for _ in range(10):
        s.fail(s.begin("s1", "local", None, "download", "x", None, None))
    assert len(s.list("s1")) <= 4


@pytest.mark.parametrize(
    ("limits", "sessions", "name", "variable", "number"),
    [
        (
            {"max_session_bytes": 2_048},
            [("s1", "p"), ("s1", "p")],
            "artifactSessionBytes",
            "BROWSERMESH_MAX_ARTIFACT_SESSION_BYTES",
            2_048,
        ),
        (
            {"max_principal_bytes": 2_048},
            [("s1", "p"), ("s2", "p")],
            "artifactPrincipalBytes",
            "BROWSERMESH_MAX_ARTIFACT_PRINCIPAL_BYTES",
            2_048,
        ),
        (
            {"max_total_bytes": 2_048},
            [("s1", "p"), ("s2", "q")],
            "artifactTotalBytes",
            "BROWSERMESH_MAX_ARTIFACT_TOTAL_BYTES",
            2_048,
        ),
    ],
    ids=["session", "principal", "total"],
)
def test_byte_quotas_refuse_and_keep_earlier_artifacts(
    tmp_path: Path,
    limits: dict[str, int],
    sessions: list[tuple[str, str]],
    name: str,
    variable: str,
    number: int,
) -> None:
    s = store(tmp_path, **limits)
    (first_session, first_principal), (second_session, second_principal) = sessions
    first = put(s, b"a" * 1_500, first_session, first_principal)
    with pytest.raises(BrowserMeshError) as info:
        put(s, b"b" * 1_000, second_session, second_principal)
    assert limit_bound(info) == Bound(name, "<=", number, variable)
    refused = s.list(second_session)[0]
    assert refused is not first
    assert (refused.state, refused.size) == ("failed", 0)
    assert not refused.path.exists() and not refused.part_path.exists()
    assert first.state == "completed" and first.path.read_bytes() == b"a" * 1_500
    assert s.usage(second_session) == ((1, 1_500) if second_session == first_session else (0, 0))
    # what still fits is accepted
    assert put(s, b"c" * 500, second_session, second_principal).state == "completed"


def test_quota_is_exact_at_the_limit(tmp_path: Path) -> None:
    s = store(tmp_path, max_session_bytes=1_024)
    put(s, b"x" * 1_000)
    assert put(s, b"y" * 24).state == "completed"
    with pytest.raises(BrowserMeshError):
        put(s, b"z")


def test_in_progress_artifacts_do_not_count_until_completed(tmp_path: Path) -> None:
    s = store(tmp_path, max_session_bytes=2_048)
    big = s.begin("s1", "local", None, "download", "big", None, None)
    big.part_path.write_bytes(b"x" * 2_000)
    assert put(s, b"y" * 100).state == "completed"  # the .part is not counted
    with pytest.raises(BrowserMeshError) as info:
        s.complete(big)
    assert limit_bound(info) == Bound(
        "artifactSessionBytes", "<=", 2_048, "BROWSERMESH_MAX_ARTIFACT_SESSION_BYTES"
    )
    assert big.state == "failed" and not big.part_path.exists()


def test_limits_from_config() -> None:
    config = default_config(max_artifacts=7, max_artifact_total_bytes=4_096)
    limits = ArtifactLimits.from_config(config)
    assert (limits.max_count, limits.max_total_bytes) == (7, 4_096)
    assert limits.max_session_bytes == ArtifactLimits().max_session_bytes


# --- the download life cycle --------------------------------------------------------------------


def test_part_is_never_listed_as_completed(tmp_path: Path) -> None:
    s = store(tmp_path)
    a = s.begin("s1", "local", "page_1", "download", "a.csv", "text/csv", "https://e.com/a.csv")
    a.part_path.write_bytes(b"1,2\n")
    assert [x.state for x in s.list("s1")] == ["in_progress"]
    assert s.usage("s1") == (0, 0)
    assert not a.path.exists()
    with pytest.raises(BrowserMeshError) as info:
        s.read(a, "text")
    assert info.value.code is ErrorCode.INVALID_ARGUMENT
    assert s.complete(a) is a
    assert (a.state, a.size) == ("completed", 4)
    assert a.path.read_bytes() == b"1,2\n" and not a.part_path.exists()
    assert s.usage("s1") == (1, 4)


def test_complete_without_content_fails(tmp_path: Path) -> None:
    s = store(tmp_path)
    a = s.begin("s1", "local", None, "download", "a", None, None)
    with pytest.raises(BrowserMeshError) as info:
        s.complete(a)
    assert info.value.code is ErrorCode.BROWSER_ERROR
    assert a.state == "failed"


@pytest.mark.parametrize("state", ["failed", "canceled"])
def test_fail_deletes_content_and_keeps_the_record(tmp_path: Path, state: str) -> None:
    s = store(tmp_path)
    a = s.begin("s1", "local", None, "download", "a", None, None)
    a.part_path.write_bytes(b"partial")
    s.fail(a, state)  # type: ignore[arg-type]
    assert (a.state, a.size) == (state, 0)
    assert not a.part_path.exists() and not a.path.exists()
    assert s.list("s1") == [a]
    done = put(s, b"x")
    s.fail(done)
    assert not done.path.exists() and done.size == 0
    assert s.complete(a) is a and a.state == state  # a late completion changes nothing


def test_get_refuses_other_sessions_and_unknown_ids_alike(tmp_path: Path) -> None:
    s = store(tmp_path)
    mine = put(s, b"x")
    theirs = put(s, b"y", session="s2")
    assert s.get("s1", mine.artifact_id) is mine
    errors = []
    for value in (theirs.artifact_id, "a0zzz", "artifact_0000000000000000", 42, None):
        with pytest.raises(BrowserMeshError) as info:
            s.get("s1", value, field="arguments.artifactId")
        errors.append(info.value)
    for error in errors:
        assert error.code is ErrorCode.INVALID_ARGUMENT
        assert error.details == {"field": "arguments.artifactId", "rule": GET_RULE}
    assert errors[0].details == errors[1].details  # nothing says the first exists elsewhere
    with pytest.raises(BrowserMeshError) as info:
        s.get("s1", "nope")
    assert info.value.details["field"] == "artifactId"


def test_drop_session_deletes_its_directory_and_records(tmp_path: Path) -> None:
    s = store(tmp_path)
    a = put(s, b"x")
    pending = s.begin("s1", "local", None, "download", "p", None, None)
    keep = put(s, b"y", session="s2")
    s.drop_session("s1")
    assert s.list("s1") == [] and s.usage("s1") == (0, 0)
    assert not a.path.parent.exists()
    assert pending.state == "canceled"
    with pytest.raises(BrowserMeshError):
        s.get("s1", a.artifact_id)
    with pytest.raises(BrowserMeshError):
        s.read(a, "text")
    assert keep.path.exists() and s.list("s2") == [keep]
    # a writer that finishes after the drop leaves nothing behind
    pending.part_path.parent.mkdir(mode=0o700)
    pending.part_path.write_bytes(b"late")
    assert s.complete(pending).state == "canceled"
    assert not pending.part_path.parent.exists()
    s.drop_session("never-existed")


def test_clear_all_removes_everything(tmp_path: Path) -> None:
    s = store(tmp_path)
    put(s, b"x")
    half = s.begin("s2", "local", None, "download", "h", None, None)
    half.part_path.write_bytes(b"half")
    (s.root / "stray").write_text("junk")
    fresh = ArtifactStore(s.root)  # after a restart
    fresh.clear_all()
    assert not s.root.exists()
    s.clear_all()
    assert s.list("s1") == [] and s.list("s2") == []
    assert put(s, b"again").state == "completed"  # the root comes back on demand
    ArtifactStore(tmp_path / "missing").clear_all()


@posix_only
def test_clear_all_does_not_follow_a_symlinked_root(tmp_path: Path) -> None:
    target = tmp_path / "precious"
    target.mkdir()
    (target / "keep.txt").write_text("keep")
    root = tmp_path / "artifacts"
    root.symlink_to(target)
    ArtifactStore(root).clear_all()
    assert not root.exists() and (target / "keep.txt").read_text() == "keep"


# --- reads --------------------------------------------------------------------------------------


def test_read_text_and_base64_with_offsets(tmp_path: Path) -> None:
    s = store(tmp_path)
    a = put(s, b"hello world")
    out = s.read(a, "text")
    assert out == {
        "artifactId": a.artifact_id,
        "encoding": "text",
        "content": "hello world",
        "offset": 0,
        "length": 11,
        "size": 11,
        "truncated": False,
    }
    out = s.read(a, "text", offset=0, max_bytes=5)
    assert (out["content"], out["truncated"], out["nextOffset"]) == ("hello", True, 5)
    out = s.read(a, "base64", offset=6, max_bytes=100)
    assert base64.b64decode(out["content"]) == b"world"
    assert (out["offset"], out["length"], out["truncated"]) == (6, 5, False)
    assert "nextOffset" not in out
    end = s.read(a, "text", offset=11)
    assert (end["content"], end["length"], end["truncated"]) == ("", 0, False)


def test_read_text_never_cuts_a_multibyte_sequence(tmp_path: Path) -> None:
    text = "a€b😀c"  # 1 + 3 + 1 + 4 + 1 bytes
    raw = text.encode()
    s = store(tmp_path)
    a = put(s, raw)
    pieces: list[str] = []
    offset = 0
    while True:
        out = s.read(a, "text", offset=offset, max_bytes=4)
        assert "\ufffd" not in out["content"]
        pieces.append(out["content"])
        if not out["truncated"]:
            break
        offset = out["nextOffset"]
    assert "".join(pieces) == text
    out = s.read(a, "text", max_bytes=2)
    assert (out["content"], out["length"], out["nextOffset"]) == ("a", 1, 1)
    # a sequence longer than maxBytes still makes progress (decoded with U+FFFD)
    out = s.read(a, "text", offset=1, max_bytes=2)
    assert out["length"] == 2 and out["nextOffset"] == 3
    # base64 cuts exactly
    assert s.read(a, "base64", max_bytes=2)["length"] == 2


def test_read_text_replaces_invalid_bytes(tmp_path: Path) -> None:
    s = store(tmp_path)
    a = put(s, b"ok\xff\xfe")
    assert s.read(a, "text")["content"] == "ok\ufffd\ufffd"


@pytest.mark.parametrize(
    ("offset", "max_bytes", "field", "bound"),
    [
        (-1, 10, "offset", Bound("offset", ">=", 0)),
        (6, 10, "offset", Bound("offset", "<=", 5)),
        (0, 0, "maxBytes", Bound("maxBytes", ">=", 1)),
        (0, 1_048_577, "maxBytes", Bound("maxBytes", "<=", 1_048_576)),
        (True, 10, "offset", None),
        (0, 1.5, "maxBytes", None),
    ],
)
def test_read_bounds(
    tmp_path: Path, offset: object, max_bytes: object, field: str, bound: Bound | None
) -> None:
    s = store(tmp_path)
    a = put(s, b"12345")
    with pytest.raises(BrowserMeshError) as info:
        s.read(a, "text", offset=offset, max_bytes=max_bytes)  # type: ignore[arg-type]
    assert info.value.code is ErrorCode.INVALID_ARGUMENT
    assert info.value.details["field"] == field
    assert info.value.bound == bound
    assert s.read(a, "text", offset=5, max_bytes=1_048_576)["length"] == 0


def test_read_refuses_failed_artifacts(tmp_path: Path) -> None:
    s = store(tmp_path)
    a = put(s, b"x")
    s.fail(a)
    with pytest.raises(BrowserMeshError) as info:
        s.read(a, "base64")
    assert info.value.details == {"field": "artifactId", "rule": "a completed artifact"}


# --- names --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("report.pdf", "report.pdf"),
        ("..", "download"),
        (".", "download"),
        ("...", "download"),
        ("../../etc/passwd", "passwd"),
        ("..\\..\\windows\\system32\\cmd.exe", "cmd.exe"),
        ("C:\\x\\y.txt", "y.txt"),
        ("/abs/path/", "download"),
        ("dir/", "download"),
        ("\x00evil", "evil"),
        ("a\x00b\x1fc\x7fd.txt", "abcd.txt"),
        ("evil\u202etxt.exe", "eviltxt.exe"),
        ("line\nbreak.txt", "linebreak.txt"),
        ("\ud800lone.txt", "lone.txt"),
        ("  .hidden  ", "hidden"),
        (". . .x", "x"),
        ("..foo..", "foo.."),
        ("", "download"),
        ("   ", "download"),
        (None, "download"),
        (42, "download"),
        ("résumé.pdf", "résumé.pdf"),
    ],
)
def test_sanitize_name(raw: object, expected: str) -> None:
    assert sanitize_name(raw) == expected


def test_sanitize_name_cuts_long_names_keeping_the_extension() -> None:
    long = sanitize_name("a" * 10_000 + ".tar.gz")
    assert len(long) == 128 and long.endswith(".gz") and long.startswith("aaa")
    no_ext = sanitize_name("b" * 10_000)
    assert no_ext == "b" * 128
    odd = sanitize_name("c" * 200 + "." + "d" * 50)  # too long to be an extension
    assert odd == "c" * 128
    emoji = sanitize_name("😀" * 300 + ".txt")
    assert len(emoji) == 128 and emoji.endswith(".txt")


def test_begin_sanitizes_name_mime_and_url(tmp_path: Path) -> None:
    s = store(tmp_path)
    a = s.begin(
        "s1",
        "local",
        None,
        "download",
        "../../x\x00.sh",
        " text/plain\r\nX-Evil: 1 ",
        "javascript:alert(1)",
    )
    assert a.name == "x.sh"
    assert a.mime_type == "text/plainX-Evil: 1"
    assert a.source_url == "<redacted-url>"
    long_url = "https://example.com/" + "p" * 5_000
    b = s.begin("s1", "local", None, "download", "y", "", long_url)
    assert b.mime_type is None
    assert b.source_url is not None and len(b.source_url) <= 2_048
