"""The file-system saved-state repository (reference §11)."""
# ruff: noqa: ASYNC240  (blocking file checks inside async tests are fine)

from __future__ import annotations

import asyncio
import json
import os
import re
import stat
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from browsermesh.errors import BrowserMeshError, ErrorCode, error_payload
from browsermesh.model.clock import iso_from_epoch
from browsermesh.persistence import states
from browsermesh.persistence.states import (
    STATE_ID_RE,
    StateRepository,
    StorageAudit,
    audit_data_dir,
    count_state_origins,
    validate_state_id,
    validate_storage_state,
)
from tests.support.loop import all_tasks_blocked

pytestmark = pytest.mark.anyio

POSIX = os.name == "posix"
ISO_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
SECRET = "super-secret-cookie-value"


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def repo(data_dir: Path) -> StateRepository:
    return make_repo(data_dir)


@pytest.fixture
def open_umask() -> Iterator[None]:
    """Run with umask 0 so only explicit chmods can produce 0700/0600."""
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def make_repo(
    data_dir: Path,
    *,
    max_states: int = 100,
    max_state_bytes: int = 1_048_576,
    max_total_bytes: int = 16_777_216,
    max_state_origins: int = 1_000,
) -> StateRepository:
    return StateRepository(
        data_dir,
        max_states=max_states,
        max_state_bytes=max_state_bytes,
        max_total_bytes=max_total_bytes,
        max_state_origins=max_state_origins,
    )


def cookie(value: str = SECRET, **overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "name": "identity",
        "value": value,
        "domain": "127.0.0.1",
        "path": "/",
        "expires": -1,
        "httpOnly": False,
        "secure": False,
        "sameSite": "Lax",
    }
    base.update(overrides)
    return base


def sample_state(value: str = SECRET) -> dict[str, Any]:
    return {
        "cookies": [cookie(value)],
        "origins": [
            {
                "origin": "http://127.0.0.1:8000",
                "localStorage": [{"name": "identity", "value": value}],
            }
        ],
    }


def encoded(state: dict[str, Any]) -> bytes:
    return json.dumps(state, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def state_of_size(size: int) -> dict[str, Any]:
    """A valid state whose compact JSON is exactly `size` bytes."""
    state = sample_state("")
    base = len(encoded(state))
    assert size >= base
    state["cookies"][0]["value"] = "x" * (size - base)
    assert len(encoded(state)) == size
    return state


def states_dir(data_dir: Path, principal: str = "local") -> Path:
    if principal == "local":
        return data_dir / "states"
    return data_dir / "principals" / principal / "states"


async def expect(code: ErrorCode, awaitable: Any) -> BrowserMeshError:
    with pytest.raises(BrowserMeshError) as info:
        await awaitable
    assert info.value.code is code
    return info.value


def assert_bound(error: BrowserMeshError, name: str, number: int, variable: str) -> None:
    assert error.code is ErrorCode.LIMIT_EXCEEDED
    assert error.bound is not None
    assert (error.bound.name, error.bound.op, error.bound.number) == (name, "<=", number)
    assert error.bound.variable == variable
    assert error.message.endswith(f"Bound: {name} <= {number} ({variable}).")


def no_temp_files(directory: Path) -> bool:
    return not [p for p in directory.iterdir() if p.name.endswith(".tmp")]


# --- state ids ----------------------------------------------------------------------------------


@pytest.mark.parametrize("good", ["a", "A", "0", "a" * 128, "A.b-c_9", "state.json", "x..y"])
def test_valid_state_ids(good: str) -> None:
    assert validate_state_id(good) == good


@pytest.mark.parametrize(
    "bad",
    ["../x", "a/b", "a\\b", ".hidden", "-x", "_x", "a" * 129, "", "a\n", "a b", "é", "a:b",
     None, 5, b"abc", ["a"]],
)  # fmt: skip
def test_invalid_state_ids(bad: object) -> None:
    with pytest.raises(BrowserMeshError) as info:
        validate_state_id(bad)
    assert info.value.code is ErrorCode.INVALID_ARGUMENT
    assert info.value.internal["field"] == "stateId"


def test_regex_is_the_contract_regex() -> None:
    assert STATE_ID_RE.pattern == r"^[a-zA-Z0-9][a-zA-Z0-9._-]{0,127}$"


@pytest.mark.parametrize("bad", ["../x", "a/b", ".hidden", "a" * 129, ""])
async def test_every_operation_validates_the_id(repo: StateRepository, bad: str) -> None:
    await expect(ErrorCode.INVALID_ARGUMENT, repo.save("local", bad, sample_state()))
    await expect(ErrorCode.INVALID_ARGUMENT, repo.load("local", bad))
    await expect(ErrorCode.INVALID_ARGUMENT, repo.remove("local", bad))


# --- storage-state shape ------------------------------------------------------------------------


def test_valid_storage_state_shape() -> None:
    state = sample_state()
    assert validate_storage_state(state) is state
    assert validate_storage_state({"cookies": [], "origins": []}) == {"cookies": [], "origins": []}
    extra = sample_state()
    extra["cookies"][0]["partitionKey"] = "https://example.com"
    assert validate_storage_state(extra) is extra


def _bad_shapes() -> list[Any]:
    shapes: list[Any] = [None, [], "x", {"cookies": []}, {"origins": []}]
    shapes.append({"cookies": {}, "origins": []})
    shapes.append({"cookies": ["x"], "origins": []})
    for key in ("name", "value", "domain", "path", "expires", "httpOnly", "secure", "sameSite"):
        missing = cookie()
        del missing[key]
        shapes.append({"cookies": [missing], "origins": []})
    bad_fields: list[tuple[str, Any]] = [
        ("name", 1),
        ("value", None),
        ("expires", "1"),
        ("expires", True),
        ("expires", float("nan")),
        ("expires", float("inf")),
        ("httpOnly", 0),
        ("secure", "true"),
        ("sameSite", "lax"),
        ("sameSite", None),
    ]
    for key, value in bad_fields:
        shapes.append({"cookies": [cookie(**{key: value})], "origins": []})
    shapes.append({"cookies": [], "origins": [{"origin": 1, "localStorage": []}]})
    shapes.append({"cookies": [], "origins": [{"origin": "x"}]})
    shapes.append({"cookies": [], "origins": [{"origin": "x", "localStorage": [{"name": "a"}]}]})
    shapes.append({"cookies": [], "origins": [{"origin": "x", "localStorage": ["a"]}]})
    shapes.append({"cookies": [], "origins": ["x"]})
    return shapes


@pytest.mark.parametrize("shape", _bad_shapes())
def test_invalid_storage_state_shapes(shape: Any) -> None:
    with pytest.raises(BrowserMeshError) as info:
        validate_storage_state(shape)
    assert info.value.code is ErrorCode.BROWSER_ERROR
    assert info.value.message == "The browser operation failed."


# --- save / load roundtrip ----------------------------------------------------------------------


async def test_save_load_roundtrip(repo: StateRepository, data_dir: Path) -> None:
    state = sample_state()
    view = await repo.save("local", "auth", state)
    assert set(view) == {"stateId", "createdAt"}
    assert view["stateId"] == "auth"
    assert ISO_RE.match(view["createdAt"])
    target = data_dir / "states" / "auth.json"
    assert view["createdAt"] == iso_from_epoch(os.stat(target).st_mtime)
    assert target.read_bytes() == encoded(state)  # compact UTF-8 JSON
    assert await repo.load("local", "auth") == state
    assert await repo.list("local") == [view]
    assert no_temp_files(target.parent)


async def test_unicode_content_roundtrip(repo: StateRepository) -> None:
    state = sample_state("wert-äöü-😀")
    await repo.save("local", "u", state)
    assert await repo.load("local", "u") == state


async def test_save_replaces_existing(repo: StateRepository, data_dir: Path) -> None:
    await repo.save("local", "s", sample_state("one"))
    await repo.save("local", "s", sample_state("two"))
    assert (await repo.load("local", "s"))["cookies"][0]["value"] == "two"
    assert [v["stateId"] for v in await repo.list("local")] == ["s"]
    assert no_temp_files(states_dir(data_dir))


async def test_save_rejects_invalid_shape_and_writes_nothing(
    repo: StateRepository, data_dir: Path
) -> None:
    await expect(ErrorCode.BROWSER_ERROR, repo.save("local", "s", {"cookies": "nope"}))
    await expect(ErrorCode.BROWSER_ERROR, repo.save("local", "s", {**sample_state(), "x": {1, 2}}))
    assert not (states_dir(data_dir) / "s.json").exists()


@pytest.mark.skipif(not POSIX, reason="POSIX permission bits")
async def test_modes_are_0700_and_0600_regardless_of_umask(
    data_dir: Path, open_umask: None
) -> None:
    repo = make_repo(data_dir)
    await repo.save("local", "a", sample_state())
    await repo.save("alice", "b", sample_state())
    for directory in (
        data_dir,
        data_dir / "states",
        data_dir / "principals",
        data_dir / "principals" / "alice",
        data_dir / "principals" / "alice" / "states",
    ):
        assert stat.S_IMODE(os.stat(directory).st_mode) == 0o700, directory
    for file in (data_dir / "states" / "a.json", data_dir / "principals/alice/states/b.json"):
        assert stat.S_IMODE(os.stat(file).st_mode) == 0o600, file


@pytest.mark.skipif(not POSIX, reason="POSIX permission bits")
async def test_existing_data_dir_mode_is_left_alone(data_dir: Path) -> None:
    data_dir.mkdir(mode=0o755)
    os.chmod(data_dir, 0o755)
    await make_repo(data_dir).save("local", "a", sample_state())
    assert stat.S_IMODE(os.stat(data_dir).st_mode) == 0o755
    assert stat.S_IMODE(os.stat(data_dir / "states").st_mode) == 0o700


async def test_reads_never_create_directories(repo: StateRepository, data_dir: Path) -> None:
    assert await repo.list("local") == []
    assert await repo.list("alice") == []
    await expect(ErrorCode.SAVED_STATE_NOT_FOUND, repo.load("local", "x"))
    await expect(ErrorCode.SAVED_STATE_NOT_FOUND, repo.remove("alice", "x"))
    assert not data_dir.exists()


# --- quotas -------------------------------------------------------------------------------------


async def test_count_quota_boundary(data_dir: Path) -> None:
    repo = make_repo(data_dir, max_states=3)
    for state_id in ("a", "b", "c"):
        await repo.save("local", state_id, sample_state())
    error = await expect(ErrorCode.LIMIT_EXCEEDED, repo.save("local", "d", sample_state()))
    assert_bound(error, "states", 3, "BROWSERMESH_MAX_SAVED_STATES")
    # Replacing an existing id at the limit is fine.
    await repo.save("local", "b", sample_state("again"))
    assert [v["stateId"] for v in await repo.list("local")] == ["a", "b", "c"]
    # After a removal there is room again.
    await repo.remove("local", "a")
    await repo.save("local", "d", sample_state())


async def test_count_quota_existing_over_limit_blocks_even_replacement(data_dir: Path) -> None:
    await make_repo(data_dir).save("local", "a", sample_state())
    directory = states_dir(data_dir)
    for state_id in ("b", "c", "d"):
        (directory / f"{state_id}.json").write_bytes(encoded(sample_state()))
    repo = make_repo(data_dir, max_states=3)
    before = (directory / "a.json").read_bytes()
    error = await expect(ErrorCode.LIMIT_EXCEEDED, repo.save("local", "a", sample_state("new")))
    assert_bound(error, "states", 3, "BROWSERMESH_MAX_SAVED_STATES")
    assert (directory / "a.json").read_bytes() == before


async def test_count_quota_ignores_foreign_files(data_dir: Path) -> None:
    repo = make_repo(data_dir, max_states=1)
    directory = states_dir(data_dir)
    directory.mkdir(parents=True)
    for name in ("notes.txt", ".hidden.json", "bad name.json", "x.json.1.abc.tmp"):
        (directory / name).write_text("{}")
    await repo.save("local", "only", sample_state())
    assert [v["stateId"] for v in await repo.list("local")] == ["only"]


async def test_per_state_bytes_boundary(data_dir: Path) -> None:
    size = 2048
    repo = make_repo(data_dir, max_state_bytes=size)
    await repo.save("local", "exact", state_of_size(size))
    assert len((states_dir(data_dir) / "exact.json").read_bytes()) == size
    error = await expect(
        ErrorCode.LIMIT_EXCEEDED, repo.save("local", "over", state_of_size(size + 1))
    )
    assert_bound(error, "stateBytes", size, "BROWSERMESH_MAX_STATE_BYTES")
    assert not (states_dir(data_dir) / "over.json").exists()


async def test_total_bytes_boundary(data_dir: Path) -> None:
    size = 1500
    repo = make_repo(data_dir, max_state_bytes=4096, max_total_bytes=3 * size)
    await repo.save("local", "a", state_of_size(size))
    await repo.save("local", "b", state_of_size(size))
    error = await expect(ErrorCode.LIMIT_EXCEEDED, repo.save("local", "c", state_of_size(size + 1)))
    assert_bound(error, "stateTotalBytes", 3 * size, "BROWSERMESH_MAX_STATE_TOTAL_BYTES")
    await repo.save("local", "c", state_of_size(size))  # exactly the total
    # Replacement subtracts the replaced file: same size fits, one byte more does not.
    await repo.save("local", "b", state_of_size(size))
    before = (states_dir(data_dir) / "b.json").read_bytes()
    error = await expect(ErrorCode.LIMIT_EXCEEDED, repo.save("local", "b", state_of_size(size + 1)))
    assert_bound(error, "stateTotalBytes", 3 * size, "BROWSERMESH_MAX_STATE_TOTAL_BYTES")
    assert (states_dir(data_dir) / "b.json").read_bytes() == before
    # Shrinking one state makes room for a bigger replacement of another.
    await repo.save("local", "a", state_of_size(size - 10))
    await repo.save("local", "b", state_of_size(size + 10))


async def test_quotas_are_per_principal(data_dir: Path) -> None:
    repo = make_repo(data_dir, max_states=1)
    await repo.save("local", "a", sample_state())
    await repo.save("alice", "a", sample_state())
    await repo.save("bob", "b", sample_state())
    await expect(ErrorCode.LIMIT_EXCEEDED, repo.save("alice", "z", sample_state()))


# --- atomic replacement -------------------------------------------------------------------------


async def test_rejected_save_keeps_previous_file_byte_for_byte(data_dir: Path) -> None:
    repo = make_repo(data_dir, max_state_bytes=2048)
    await repo.save("local", "s", sample_state("original"))
    target = states_dir(data_dir) / "s.json"
    before = target.read_bytes()
    mtime = os.stat(target).st_mtime_ns
    await expect(ErrorCode.LIMIT_EXCEEDED, repo.save("local", "s", state_of_size(2049)))
    await expect(ErrorCode.BROWSER_ERROR, repo.save("local", "s", {"cookies": 1, "origins": []}))
    assert target.read_bytes() == before
    assert os.stat(target).st_mtime_ns == mtime
    assert no_temp_files(target.parent)


async def test_failing_replace_keeps_old_file_and_removes_temp(
    repo: StateRepository, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await repo.save("local", "s", sample_state("original"))
    target = states_dir(data_dir) / "s.json"
    before = target.read_bytes()
    seen: list[str] = []

    def failing_replace(src: Any, dst: Any, **_: Any) -> None:
        seen.append(os.fspath(src))
        assert Path(src).exists()  # the temp file was written
        raise OSError(28, "No space left on device", os.fspath(dst))

    monkeypatch.setattr(os, "replace", failing_replace)
    error = await expect(ErrorCode.INTERNAL_ERROR, repo.save("local", "s", sample_state("new")))
    monkeypatch.undo()
    assert target.read_bytes() == before
    assert no_temp_files(target.parent)
    # Temp name: <target>.<pid>.<uuid4>.tmp in the same directory.
    assert len(seen) == 1
    temp = Path(seen[0])
    assert temp.parent == target.parent
    assert re.fullmatch(
        rf"s\.json\.{os.getpid()}\.[0-9a-f]{{8}}-[0-9a-f]{{4}}-4[0-9a-f]{{3}}-[0-9a-f]{{4}}-"
        r"[0-9a-f]{12}\.tmp",
        temp.name,
    )
    # No path or contents in the cause.
    assert error.cause is not None
    assert str(data_dir) not in error.cause and "original" not in error.cause
    assert "ENOSPC" in error.cause


async def test_failing_write_removes_temp(
    repo: StateRepository, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await repo.save("local", "s", sample_state("original"))
    target = states_dir(data_dir) / "s.json"
    before = target.read_bytes()

    def failing_fsync(fd: int) -> None:
        raise OSError(5, "I/O error")

    monkeypatch.setattr(os, "fsync", failing_fsync)
    await expect(ErrorCode.INTERNAL_ERROR, repo.save("local", "s", sample_state("new")))
    monkeypatch.undo()
    assert target.read_bytes() == before
    assert no_temp_files(target.parent)


async def test_cancelled_save_finishes_the_write_before_releasing_the_lock(
    repo: StateRepository, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = states.write_exclusive
    started = threading.Event()
    release = threading.Event()

    def slow_write(path: Path, data: bytes, *, sync: bool) -> None:
        started.set()
        release.wait(10)  # a slow disk: the write is still running when the save is cancelled
        original(path, data, sync=sync)

    monkeypatch.setattr(states, "write_exclusive", slow_write)
    task = asyncio.ensure_future(repo.save("local", "s", sample_state()))
    assert await asyncio.to_thread(started.wait, 10)
    task.cancel()
    await all_tasks_blocked()
    assert not task.done()  # the cancelled save waits for its write
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    target = states_dir(data_dir) / "s.json"
    assert target.exists()  # the thread completed before the task ended
    assert no_temp_files(target.parent)
    assert not repo._lock("local").locked()


# --- load failures ------------------------------------------------------------------------------


async def test_load_missing(repo: StateRepository) -> None:
    await repo.save("local", "present", sample_state())
    await expect(ErrorCode.SAVED_STATE_NOT_FOUND, repo.load("local", "absent"))


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"{",
        b"not json",
        b"\xff\xfe{}",
        b'{"cookies": [], "origins": [], }',
        b'{"cookies": [{"expires": NaN}], "origins": []}',
        b"[" * 100_000,
    ],
)
async def test_corrupt_json_is_browser_error(
    repo: StateRepository, data_dir: Path, content: bytes
) -> None:
    await repo.save("local", "c", sample_state())
    (states_dir(data_dir) / "c.json").write_bytes(content)
    error = await expect(ErrorCode.BROWSER_ERROR, repo.load("local", "c"))
    assert error.message == "The browser operation failed."


@pytest.mark.parametrize(
    "shape",
    [
        {"cookies": [], "origins": {}},
        {"cookies": [{"name": "a", "value": SECRET}], "origins": []},
        {"cookies": [], "origins": None, "extra": 1},
        [],
        "state",
    ],
)
async def test_bad_shape_is_browser_error(
    repo: StateRepository, data_dir: Path, shape: Any
) -> None:
    await repo.save("local", "c", sample_state())
    (states_dir(data_dir) / "c.json").write_text(json.dumps(shape))
    error = await expect(ErrorCode.BROWSER_ERROR, repo.load("local", "c"))
    rendered = json.dumps(error_payload(error)) + str(error.cause) + str(error.internal)
    assert SECRET not in rendered


async def test_oversized_file_is_limit_exceeded(data_dir: Path) -> None:
    repo = make_repo(data_dir, max_state_bytes=2048)
    await repo.save("local", "big", state_of_size(2048))
    assert (await repo.load("local", "big"))["cookies"]
    (states_dir(data_dir) / "big.json").write_bytes(encoded(state_of_size(2049)))
    error = await expect(ErrorCode.LIMIT_EXCEEDED, repo.load("local", "big"))
    assert_bound(error, "stateBytes", 2048, "BROWSERMESH_MAX_STATE_BYTES")


async def test_oversized_file_is_never_read(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(data_dir, max_state_bytes=1024)
    directory = states_dir(data_dir)
    directory.mkdir(parents=True)
    (directory / "big.json").write_bytes(b" " * 5000)
    opened: list[Any] = []
    real_open = os.open

    def spy_open(path: Any, *args: Any, **kwargs: Any) -> int:
        opened.append(path)
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", spy_open)
    await expect(ErrorCode.LIMIT_EXCEEDED, repo.load("local", "big"))
    assert not [p for p in opened if os.fspath(p).endswith("big.json")]


async def test_directory_named_like_a_state(repo: StateRepository, data_dir: Path) -> None:
    (states_dir(data_dir) / "x.json").mkdir(parents=True)
    error = await expect(ErrorCode.LIMIT_EXCEEDED, repo.load("local", "x"))
    assert error.bound is not None and error.bound.name == "stateBytes"
    await expect(ErrorCode.LIMIT_EXCEEDED, repo.save("local", "x", sample_state()))
    await expect(ErrorCode.LIMIT_EXCEEDED, repo.remove("local", "x"))
    assert (states_dir(data_dir) / "x.json").is_dir()
    assert [v["stateId"] for v in await repo.list("local")] == ["x"]


@pytest.mark.skipif(not POSIX, reason="symlinks")
async def test_symlink_is_not_a_regular_file(
    repo: StateRepository, data_dir: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.json"
    outside.write_bytes(encoded(sample_state()))
    directory = states_dir(data_dir)
    directory.mkdir(parents=True)
    (directory / "link.json").symlink_to(outside)
    await expect(ErrorCode.LIMIT_EXCEEDED, repo.load("local", "link"))
    await expect(ErrorCode.LIMIT_EXCEEDED, repo.save("local", "link", sample_state("new")))
    assert outside.read_bytes() == encoded(sample_state())
    await repo.remove("local", "link")  # removes the link, not its target
    assert outside.exists()
    assert not (directory / "link.json").is_symlink()


@pytest.mark.skipif(not POSIX or sys.platform == "darwin", reason="FIFOs")
async def test_fifo_is_not_a_regular_file(repo: StateRepository, data_dir: Path) -> None:
    directory = states_dir(data_dir)
    directory.mkdir(parents=True)
    os.mkfifo(directory / "pipe.json")
    await expect(ErrorCode.LIMIT_EXCEEDED, repo.load("local", "pipe"))


# --- list ---------------------------------------------------------------------------------------


async def test_list_missing_directory(repo: StateRepository) -> None:
    assert await repo.list("local") == []


async def test_list_ignores_foreign_files(repo: StateRepository, data_dir: Path) -> None:
    await repo.save("local", "real", sample_state())
    directory = states_dir(data_dir)
    for name in (
        "notes.txt",
        ".hidden.json",
        "bad name.json",
        "UPPER.JSON",
        "x.json.123.0f0f.tmp",
        ".json",
        "-dash.json",
        ("a" * 129) + ".json",
    ):
        (directory / name).write_text("{}")
    assert [v["stateId"] for v in await repo.list("local")] == ["real"]


async def test_list_sorted_by_code_point(repo: StateRepository) -> None:
    ids = ["b", "B", "a", "A", "0", "a.b", "a-b", "a_b", "Z9", "z"]
    for state_id in ids:
        await repo.save("local", state_id, sample_state())
    views = await repo.list("local")
    assert [v["stateId"] for v in views] == sorted(ids)
    assert [v["stateId"] for v in views][:5] == ["0", "A", "B", "Z9", "a"]
    for view in views:
        assert set(view) == {"stateId", "createdAt"}
        assert ISO_RE.match(view["createdAt"])


async def test_list_more_candidates_than_quota(data_dir: Path) -> None:
    await make_repo(data_dir).save("local", "a", sample_state())
    directory = states_dir(data_dir)
    for state_id in ("b", "c"):
        (directory / f"{state_id}.json").write_bytes(encoded(sample_state()))
    assert len(await make_repo(data_dir, max_states=3).list("local")) == 3
    error = await expect(ErrorCode.LIMIT_EXCEEDED, make_repo(data_dir, max_states=2).list("local"))
    assert_bound(error, "states", 2, "BROWSERMESH_MAX_SAVED_STATES")


async def test_list_created_at_is_mtime(repo: StateRepository, data_dir: Path) -> None:
    await repo.save("local", "s", sample_state())
    target = states_dir(data_dir) / "s.json"
    os.utime(target, (1_740_830_400.5, 1_740_830_400.5))
    assert await repo.list("local") == [{"stateId": "s", "createdAt": "2025-03-01T12:00:00.500Z"}]


# --- remove -------------------------------------------------------------------------------------


async def test_remove(repo: StateRepository, data_dir: Path) -> None:
    await repo.save("local", "s", sample_state())
    await repo.save("local", "t", sample_state())
    await repo.remove("local", "s")
    assert not (states_dir(data_dir) / "s.json").exists()
    assert [v["stateId"] for v in await repo.list("local")] == ["t"]
    await expect(ErrorCode.SAVED_STATE_NOT_FOUND, repo.load("local", "s"))
    await expect(ErrorCode.SAVED_STATE_NOT_FOUND, repo.remove("local", "s"))


# --- principals ---------------------------------------------------------------------------------


async def test_layout_and_isolation(repo: StateRepository, data_dir: Path) -> None:
    await repo.save("local", "mine", sample_state("local-value"))
    await repo.save("alice", "hers", sample_state("alice-value"))
    assert (data_dir / "states" / "mine.json").is_file()
    assert (data_dir / "principals" / "alice" / "states" / "hers.json").is_file()

    assert [v["stateId"] for v in await repo.list("alice")] == ["hers"]
    assert [v["stateId"] for v in await repo.list("local")] == ["mine"]
    assert await repo.list("bob") == []
    await expect(ErrorCode.SAVED_STATE_NOT_FOUND, repo.load("alice", "mine"))
    await expect(ErrorCode.SAVED_STATE_NOT_FOUND, repo.remove("alice", "mine"))
    await expect(ErrorCode.SAVED_STATE_NOT_FOUND, repo.load("local", "hers"))
    await expect(ErrorCode.SAVED_STATE_NOT_FOUND, repo.load("bob", "hers"))
    assert (data_dir / "states" / "mine.json").is_file()

    # The same id under two principals are two independent states.
    await repo.save("alice", "mine", sample_state("alice-copy"))
    assert (await repo.load("local", "mine"))["cookies"][0]["value"] == "local-value"
    assert (await repo.load("alice", "mine"))["cookies"][0]["value"] == "alice-copy"


@pytest.mark.parametrize("principal", ["", ".", "..", "a/b", "../x", "a\\b", "a\x00b"])
async def test_unsafe_principal_names_are_refused(repo: StateRepository, principal: str) -> None:
    await expect(ErrorCode.INTERNAL_ERROR, repo.list(principal))
    await expect(ErrorCode.INTERNAL_ERROR, repo.save(principal, "s", sample_state()))


# --- concurrency --------------------------------------------------------------------------------


async def test_concurrent_saves_respect_count_quota_exactly(data_dir: Path) -> None:
    repo = make_repo(data_dir, max_states=5)
    results = await asyncio.gather(
        *(repo.save("local", f"s{i}", sample_state()) for i in range(10)),
        return_exceptions=True,
    )
    ok = [r for r in results if isinstance(r, dict)]
    failed = [r for r in results if isinstance(r, BrowserMeshError)]
    assert len(ok) == 5 and len(failed) == 5
    assert all(e.code is ErrorCode.LIMIT_EXCEEDED for e in failed)
    assert len(await repo.list("local")) == 5
    assert no_temp_files(states_dir(data_dir))


async def test_concurrent_saves_respect_total_quota_exactly(data_dir: Path) -> None:
    size = 1200
    repo = make_repo(data_dir, max_state_bytes=size, max_total_bytes=4 * size)
    results = await asyncio.gather(
        *(repo.save("local", f"s{i}", state_of_size(size)) for i in range(10)),
        return_exceptions=True,
    )
    assert sum(isinstance(r, dict) for r in results) == 4
    total = sum(p.stat().st_size for p in states_dir(data_dir).iterdir())
    assert total == 4 * size


async def test_concurrent_principals_do_not_share_a_lock(data_dir: Path) -> None:
    repo = make_repo(data_dir, max_states=3)
    results = await asyncio.gather(
        *(repo.save(p, f"s{i}", sample_state()) for p in ("local", "alice") for i in range(5)),
        return_exceptions=True,
    )
    assert sum(isinstance(r, dict) for r in results) == 6
    assert repo._lock("local") is not repo._lock("alice")


async def test_concurrent_save_and_remove_are_serialized(repo: StateRepository) -> None:
    await repo.save("local", "s", sample_state())
    results = await asyncio.gather(
        repo.remove("local", "s"),
        repo.save("local", "s", sample_state("later")),
        return_exceptions=True,
    )
    assert results[0] is None
    assert (await repo.load("local", "s"))["cookies"][0]["value"] == "later"


def test_constructor_rejects_non_positive_limits(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        StateRepository(
            tmp_path, max_states=0, max_state_bytes=1, max_total_bytes=1, max_state_origins=1
        )
    with pytest.raises(ValueError):
        StateRepository(
            tmp_path, max_states=1, max_state_bytes=True, max_total_bytes=1, max_state_origins=1
        )


# --- origins per state (issue 12 #5) ------------------------------------------------------------


def origins_state(origins: int, domains: int) -> dict[str, Any]:
    return {
        "cookies": [cookie(domain=f"host{i}.test") for i in range(domains)],
        "origins": [
            {
                "origin": f"http://127.0.0.1:{9000 + i}",
                "localStorage": [{"name": "k", "value": "v"}],
            }
            for i in range(origins)
        ],
    }


def test_state_origins_count_distinct_origins_and_cookie_domains() -> None:
    assert count_state_origins(sample_state()) == 2
    assert count_state_origins(origins_state(3, 4)) == 7
    assert count_state_origins({"cookies": [], "origins": []}) == 0
    same = {
        "cookies": [cookie(domain=".Example.test"), cookie(domain="example.test", name="b")],
        "origins": [
            {"origin": "http://a.test", "localStorage": []},
            {"origin": "http://a.test", "localStorage": [{"name": "k", "value": "v"}]},
        ],
    }
    assert count_state_origins(same) == 2


async def test_save_refuses_a_state_with_too_many_origins(data_dir: Path) -> None:
    repo = make_repo(data_dir, max_state_origins=5)
    error = await expect(ErrorCode.LIMIT_EXCEEDED, repo.save("local", "big", origins_state(3, 3)))
    assert_bound(error, "stateOrigins", 5, "BROWSERMESH_MAX_STATE_ORIGINS")
    assert not (states_dir(data_dir) / "big.json").exists()
    await repo.save("local", "edge", origins_state(3, 2))  # exactly at the bound
    assert count_state_origins(await repo.load("local", "edge")) == 5


async def test_load_refuses_a_file_with_too_many_origins(data_dir: Path) -> None:
    await make_repo(data_dir).save("local", "big", origins_state(40, 20))
    error = await expect(
        ErrorCode.LIMIT_EXCEEDED, make_repo(data_dir, max_state_origins=50).load("local", "big")
    )
    assert_bound(error, "stateOrigins", 50, "BROWSERMESH_MAX_STATE_ORIGINS")
    assert (
        len((await make_repo(data_dir, max_state_origins=60).load("local", "big"))["origins"]) == 40
    )


def test_constructor_rejects_a_non_positive_origin_limit(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        make_repo(tmp_path, max_state_origins=0)


def test_the_factory_wires_the_origin_limit(tmp_path: Path) -> None:
    from browsermesh.config import default_config
    from browsermesh.factory import create_runtime

    runtime = create_runtime(default_config(data_dir=tmp_path, max_state_origins=7))
    assert runtime.states.max_state_origins == 7


# --- states the server did not write (issue 12 #8) ---------------------------------------------

ALL_OPERATIONS = ("save", "list", "load", "remove")


async def attempt(repo: StateRepository, operation: str, principal: str = "local") -> Any:
    if operation == "save":
        return await repo.save(principal, "s", sample_state("ours"))
    if operation == "list":
        return await repo.list(principal)
    if operation == "load":
        return await repo.load(principal, "s")
    return await repo.remove(principal, "s")


def plant(directory: Path, state_id: str = "s", mode: int = 0o600) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{state_id}.json"
    path.write_bytes(encoded(sample_state("planted")))
    os.chmod(path, mode)
    return path


@pytest.mark.skipif(not POSIX, reason="symlinks")
@pytest.mark.parametrize("operation", ALL_OPERATIONS)
async def test_a_symlinked_states_directory_is_refused(
    repo: StateRepository, data_dir: Path, tmp_path: Path, operation: str
) -> None:
    elsewhere = tmp_path / "elsewhere"
    plant(elsewhere)
    data_dir.mkdir()
    (data_dir / "states").symlink_to(elsewhere, target_is_directory=True)
    error = await expect(ErrorCode.PERSISTENCE_DISABLED, attempt(repo, operation))
    assert "symbolic link" in (error.cause or "")
    assert str(tmp_path) not in (error.cause or "")  # never a path
    assert sorted(p.name for p in elsewhere.iterdir()) == ["s.json"]
    assert json.loads((elsewhere / "s.json").read_text())["cookies"][0]["value"] == "planted"


@pytest.mark.skipif(not POSIX, reason="symlinks")
@pytest.mark.parametrize("link", ["principals", "principals/alice", "principals/alice/states"])
async def test_a_symlinked_principal_directory_is_refused(
    repo: StateRepository, data_dir: Path, tmp_path: Path, link: str
) -> None:
    elsewhere = tmp_path / "elsewhere"
    target = elsewhere / "principals" / "alice" / "states"
    plant(target)
    parent = (data_dir / link).parent
    parent.mkdir(parents=True, exist_ok=True)
    source = elsewhere / link
    (data_dir / link).symlink_to(source, target_is_directory=True)
    for operation in ALL_OPERATIONS:
        await expect(ErrorCode.PERSISTENCE_DISABLED, attempt(repo, operation, "alice"))
    assert sorted(p.name for p in target.iterdir()) == ["s.json"]
    await repo.save("local", "s", sample_state())  # another principal is unaffected


@pytest.mark.skipif(not POSIX, reason="POSIX permission bits")
@pytest.mark.parametrize("mode", [0o770, 0o707, 0o777])
async def test_a_group_or_world_writable_states_directory_is_refused(
    repo: StateRepository, data_dir: Path, mode: int
) -> None:
    directory = states_dir(data_dir, "alice")
    plant(directory)
    os.chmod(directory, mode)
    for operation in ALL_OPERATIONS:
        error = await expect(ErrorCode.PERSISTENCE_DISABLED, attempt(repo, operation, "alice"))
        assert "writable by group or others" in (error.cause or "")


@pytest.mark.skipif(not POSIX or os.geteuid() != 0, reason="chown needs root")
async def test_a_states_directory_of_another_user_is_refused(
    repo: StateRepository, data_dir: Path
) -> None:
    directory = states_dir(data_dir)
    plant(directory)
    os.chown(directory, 4242, -1)
    error = await expect(ErrorCode.PERSISTENCE_DISABLED, repo.load("local", "s"))
    assert "owned by another user" in (error.cause or "")


@pytest.mark.skipif(not POSIX, reason="POSIX permission bits")
@pytest.mark.parametrize("mode", [0o620, 0o602, 0o666])
async def test_a_writable_state_file_is_never_trusted(
    repo: StateRepository, data_dir: Path, mode: int
) -> None:
    await repo.save("local", "mine", sample_state())
    plant(states_dir(data_dir), "s", mode)
    error = await expect(ErrorCode.SAVED_STATE_NOT_FOUND, repo.load("local", "s"))
    assert "not trusted" in (error.cause or "")
    assert [v["stateId"] for v in await repo.list("local")] == ["mine"]
    await expect(ErrorCode.SAVED_STATE_NOT_FOUND, repo.remove("local", "s"))
    # saving the id replaces the planted file with one of ours
    await repo.save("local", "s", sample_state("ours"))
    assert (await repo.load("local", "s"))["cookies"][0]["value"] == "ours"
    assert stat.S_IMODE(os.stat(states_dir(data_dir) / "s.json").st_mode) == 0o600


@pytest.mark.skipif(not POSIX or os.geteuid() != 0, reason="chown needs root")
async def test_a_state_file_of_another_user_is_never_trusted(
    repo: StateRepository, data_dir: Path
) -> None:
    path = plant(states_dir(data_dir), "s", 0o600)
    os.chown(path, 4242, -1)
    error = await expect(ErrorCode.SAVED_STATE_NOT_FOUND, repo.load("local", "s"))
    assert "not trusted" in (error.cause or "")
    assert await repo.list("local") == []


@pytest.mark.skipif(not POSIX, reason="POSIX permission bits")
@pytest.mark.parametrize("mode", [0o777, 0o770, 0o707, 0o1777])
async def test_a_writable_data_directory_is_refused_with_the_chmod_fix(
    repo: StateRepository, data_dir: Path, tmp_path: Path, mode: int
) -> None:
    """Issue 30 #11: a pre-existing data directory others can write keeps no saved states (they
    could swap what is below it between the check and the use), for every principal."""
    plant(states_dir(data_dir))
    os.chmod(data_dir, mode)
    for principal in ("local", "alice"):
        for operation in ALL_OPERATIONS:
            error = await expect(
                ErrorCode.PERSISTENCE_DISABLED, attempt(repo, operation, principal)
            )
            assert error.cause == "data directory is writable by group or others"
            payload = json.dumps(error_payload(error))
            assert "chmod 700" in error.next_step and "BROWSERMESH_DATA_DIR" in error.next_step
            assert str(tmp_path) not in payload and "planted" not in payload
    assert sorted(p.name for p in states_dir(data_dir).iterdir()) == ["s.json"]  # untouched
    audit = audit_data_dir(data_dir)
    assert audit.refused == ("The data directory is writable by group or others.",)
    assert audit.warnings == ()
    os.chmod(data_dir, 0o700)  # the fix the error names
    assert (await repo.load("local", "s"))["cookies"][0]["value"] == "planted"


@pytest.mark.skipif(not POSIX, reason="symlinks")
def test_audit_names_refused_directories_without_paths(data_dir: Path, tmp_path: Path) -> None:
    assert audit_data_dir(data_dir) == StorageAudit((), ())  # missing: nothing to say
    data_dir.mkdir(mode=0o700)
    (tmp_path / "elsewhere").mkdir()
    (data_dir / "states").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (data_dir / "principals" / "bob" / "states").mkdir(parents=True, mode=0o700)
    os.chmod(data_dir / "principals" / "bob", 0o777)
    audit = audit_data_dir(data_dir, ["alice", "bob"])
    assert audit.warnings == ()
    assert audit.refused == (
        "The saved-states directory is a symbolic link.",
        "A principal's saved-states directory is writable by group or others.",
    )
    assert not any(str(tmp_path) in line for line in audit.refused)
