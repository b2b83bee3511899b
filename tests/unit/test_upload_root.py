"""Uploads from `--upload-root` read only files inside it (issue 30 items 5 and 7): one open,
no symlink followed, no hard link, no `..`, and any OS error of the walk a field refusal."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest

from browsermesh.errors import BrowserMeshError, ErrorCode, error_payload
from browsermesh.log import EventLog
from browsermesh.persistence.artifacts import ArtifactStore
from browsermesh.runtime.files import MAX_UPLOAD_FILE_BYTES, SessionFiles

INSIDE = b"inside content"
OUTSIDE = b"OUTSIDE SECRET"


def files_of(tmp_path: Path, root: Path) -> SessionFiles:
    return SessionFiles(ArtifactStore(tmp_path / "artifacts"), EventLog("silent"), root)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "uploads"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "inside.txt").write_bytes(INSIDE)
    (tmp_path / "outside.txt").write_bytes(OUTSIDE)
    return root


def upload(files: SessionFiles, path: str) -> bytes:
    (payload,) = files.payloads("session_a", [{"path": path}])
    return payload.data


def refused(files: SessionFiles, path: str) -> dict[str, Any]:
    with pytest.raises(BrowserMeshError) as caught:
        files.payloads("session_a", [{"name": "x", "contentBase64": ""}, {"path": path}])
    assert caught.value.code is ErrorCode.INVALID_ARGUMENT
    payload = error_payload(caught.value)["error"]
    assert str(files.upload_root) not in str(payload)  # the server's paths stay its own
    details: dict[str, Any] = payload["details"]
    assert details["field"] == "files[1].path", details
    return details


def test_files_inside_the_root_are_read(tmp_path: Path, root: Path) -> None:
    files = files_of(tmp_path, root)
    assert upload(files, "sub/inside.txt") == INSIDE
    assert upload(files, "./sub//inside.txt") == INSIDE
    assert upload(files, str(root / "sub" / "inside.txt")) == INSIDE  # absolute, inside
    (payload,) = files.payloads("session_a", [{"path": "sub/inside.txt"}])
    assert payload.name == "inside.txt"


def test_a_hard_link_to_a_file_outside_is_refused(tmp_path: Path, root: Path) -> None:
    os.link(tmp_path / "outside.txt", root / "hard.txt")
    details = refused(files_of(tmp_path, root), "hard.txt")
    assert "single link" in details["rule"]


def test_symlinks_are_never_followed(tmp_path: Path, root: Path) -> None:
    (root / "link.txt").symlink_to(tmp_path / "outside.txt")
    (root / "inner.txt").symlink_to(root / "sub" / "inside.txt")  # even one staying inside
    (root / "dirlink").symlink_to(tmp_path)
    (root / "subdirlink").symlink_to(root / "sub")
    files = files_of(tmp_path, root)
    for path in ("link.txt", "inner.txt", "dirlink/outside.txt", "subdirlink/inside.txt"):
        assert "symbolic link" in refused(files, path)["rule"], path


@pytest.mark.parametrize(
    "path",
    [
        "../outside.txt",
        "sub/../../outside.txt",
        "sub/../sub/inside.txt",  # inside after all, but `..` is never walked
    ],
)
def test_parent_components_are_refused(tmp_path: Path, root: Path, path: str) -> None:
    assert "'..'" in refused(files_of(tmp_path, root), path)["rule"]


@pytest.mark.parametrize(
    "path",
    ["missing.txt", "sub", "sub/inside.txt/more", "/etc/passwd", "", ".", "a\x00b"],
)
def test_what_is_not_a_file_inside_is_refused(tmp_path: Path, root: Path, path: str) -> None:
    refused(files_of(tmp_path, root), path)


def test_a_fifo_is_refused_without_blocking(tmp_path: Path, root: Path) -> None:
    os.mkfifo(root / "pipe")
    refused(files_of(tmp_path, root), "pipe")


@pytest.mark.parametrize("length", [256, 1000, 4096])
def test_a_component_too_long_for_the_os_is_a_field_refusal(
    tmp_path: Path, root: Path, length: int
) -> None:
    refused(files_of(tmp_path, root), "a" * length)
    refused(files_of(tmp_path, root), "sub/" + "b" * (length - 4))


def test_a_file_over_the_bound_is_refused_with_it(tmp_path: Path, root: Path) -> None:
    with open(root / "big.bin", "wb") as out:
        out.truncate(MAX_UPLOAD_FILE_BYTES + 1)
    with pytest.raises(BrowserMeshError) as caught:
        files_of(tmp_path, root).payloads("session_a", [{"path": "big.bin"}])
    details = error_payload(caught.value)["error"]["details"]
    assert details["field"] == "files[0]" and str(MAX_UPLOAD_FILE_BYTES) in details["rule"]


def test_a_file_swapped_for_a_symlink_is_never_read_from_outside(
    tmp_path: Path, root: Path
) -> None:
    """A thread keeps replacing `race.txt` (atomically) by a regular file and by a symlink to a
    file outside the root while uploads of it run: no upload ever carries the outside bytes."""
    target = root / "race.txt"
    target.write_bytes(INSIDE)
    stop = threading.Event()
    swaps = [0]

    def swapper() -> None:
        while not stop.is_set():
            link = root / ".race-link"
            link.unlink(missing_ok=True)
            link.symlink_to(tmp_path / "outside.txt")
            os.replace(link, target)
            regular = root / ".race-file"
            regular.write_bytes(INSIDE)
            os.replace(regular, target)
            swaps[0] += 1

    files = files_of(tmp_path, root)
    thread = threading.Thread(target=swapper, daemon=True)
    thread.start()
    outcomes = {"inside": 0, "refused": 0, "outside": 0}
    try:
        for _ in range(3000):
            try:
                data = upload(files, "race.txt")
            except BrowserMeshError as err:
                assert err.code is ErrorCode.INVALID_ARGUMENT
                outcomes["refused"] += 1
            else:
                outcomes["outside" if data == OUTSIDE else "inside"] += 1
    finally:
        stop.set()
        thread.join()
    assert swaps[0] > 0
    assert outcomes["outside"] == 0, outcomes
