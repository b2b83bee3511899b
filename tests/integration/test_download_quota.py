"""Artifact byte quotas bound the disk while a download streams (issue 30 item 3): a download
over the quota is cancelled as soon as it crosses it, the browser's own copy is deleted once a
download is refused or saved, and a saved one is not written twice."""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from browsermesh.engine.files import DOWNLOAD_CHUNK_BYTES
from browsermesh.log import EventLog
from tests.fixtures.files_site import FilesSite, large_file_sha256
from tests.support.clients import ToolClient, open_page, tool_client
from tests.support.eventually import eventually
from tests.support.locators import css
from tests.support.runtimes import real_runtime

pytestmark = pytest.mark.anyio

QUOTA = 1_048_576
TMP = "browser-tmp"


def bytes_under(*roots: Path) -> int:
    """The bytes of the files below `roots` (vanishing files count as gone); a temp directory
    stands for Playwright's download folders in it (its profile directory is beside them)."""
    total = 0
    expanded = [
        p for r in roots for p in (r.glob("playwright-artifacts-*") if r.name == TMP else [r])
    ]
    seen: set[tuple[int, int]] = set()  # a hard-linked file is on disk once
    for root in expanded:
        for folder, _dirs, names in os.walk(root):
            for name in names:
                try:
                    info = os.lstat(os.path.join(folder, name))
                except OSError:
                    continue
                if (info.st_dev, info.st_ino) not in seen:
                    seen.add((info.st_dev, info.st_ino))
                    total += info.st_size
    return total


@contextmanager
def peak_disk(*roots: Path) -> Iterator[Callable[[], int]]:
    """Sample the bytes below `roots` from a thread (about every millisecond) while the block
    runs: a measurement beside the test, not an ordering of its events."""
    peak = [0]
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(0.001):
            peak[0] = max(peak[0], bytes_under(*roots))

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield lambda: peak[0]
    finally:
        stop.set()
        thread.join()


async def artifacts_when(
    c: ToolClient, sid: str, done: Callable[[list[dict[str, Any]]], bool]
) -> list[dict[str, Any]]:
    """The session's artifacts once `done` holds for them (downloads settle in the
    background: their state is polled)."""

    async def settled() -> list[dict[str, Any]]:
        listed: list[dict[str, Any]] = (await c.ok("browser_downloads", {"sessionId": sid}))[
            "artifacts"
        ]
        return listed if done(listed) else []

    return await eventually(settled, 60, "the downloads settled")


async def gone(roots: tuple[Path, ...]) -> None:
    """Wait until no file is left below `roots` (the browser's copy is deleted at once)."""
    await eventually(lambda: not bytes_under(*roots), 30, "files left behind")


@pytest.fixture
def browser_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Playwright's driver keeps its copy of each download in its temp directory: one per test,
    so the test can see what the browser holds on disk."""
    folder = tmp_path / TMP
    folder.mkdir()
    monkeypatch.setenv("TMPDIR", str(folder))
    return folder


async def add_link(c: ToolClient, addr: dict[str, str], href: str) -> None:
    await c.ok(
        "browser_evaluate",
        {**addr, "expression": "document.body.insertAdjacentHTML('beforeend', "
         f"'<a id=\"get\" href=\"{href}\">Get it</a>')"},
    )  # fmt: skip


async def test_a_paced_endless_download_stops_at_the_quota_plus_one_chunk(
    tmp_path: Path, files_site: FilesSite, browser_tmp: Path
) -> None:
    records: list[dict[str, Any]] = []
    log = EventLog("silent")
    log.sinks.append(records.append)
    roots = (browser_tmp, tmp_path / "data" / "artifacts")
    async with (
        real_runtime(tmp_path, log, max_artifact_session_bytes=QUOTA) as runtime,
        tool_client(runtime) as c,
    ):
        addr = await open_page(c, files_site.url("/exports"))
        # 1 MiB/s: the quota is crossed after about a second, and a chunk more would take
        # another second, far longer than the watch needs even on a loaded machine.
        await add_link(c, addr, "/files/endless?kibps=1024")
        with peak_disk(*roots) as peak:
            err = await c.err(
                "browser_action_and_wait",
                {**addr, "action": {"kind": "click", "target": css("#get")},
                 "wait": {"kind": "download"}, "timeoutMs": 30_000},
            )  # fmt: skip
            await gone(roots)
        assert err["code"] == "LIMIT_EXCEEDED", err
        assert "artifactSessionBytes <= 1048576" in err["message"], err
        assert peak() <= QUOTA + DOWNLOAD_CHUNK_BYTES, peak()
        (refused,) = await artifacts_when(c, addr["sessionId"], lambda a: bool(a))
        assert refused["state"] == "failed" and refused["size"] == 0
        logged = [r for r in records if r.get("message") == "download.refused"]
        assert logged and logged[0]["code"] == "LIMIT_EXCEEDED"
        assert str(tmp_path) not in str(logged)
        await c.ok("browser_get_url", addr)  # the session carries on


async def test_a_full_speed_endless_download_is_cancelled_and_deleted(
    tmp_path: Path, files_site: FilesSite, browser_tmp: Path
) -> None:
    """Before issue 30 this download grew until the disk was full."""
    roots = (browser_tmp, tmp_path / "data" / "artifacts")
    async with (
        real_runtime(tmp_path, EventLog("silent"), max_artifact_session_bytes=QUOTA) as runtime,
        tool_client(runtime) as c,
    ):
        addr = await open_page(c, files_site.url("/exports"))
        await add_link(c, addr, "/files/endless")
        with peak_disk(*roots) as peak:
            await c.ok("browser_click", {**addr, "locator": css("#get")})
            listed = await artifacts_when(
                c, addr["sessionId"], lambda a: bool(a) and a[0]["state"] != "in_progress"
            )
            await gone(roots)
        assert listed[0]["state"] == "failed"
        # What the browser wrote before the page's download event reached the server, plus
        # the watcher's latency at loopback speed (hundreds of MB/s): tens of megabytes alone,
        # a few hundred on a loaded machine (320 MB seen with the other core busy), never the
        # disk. The paced test holds the quota-plus-one-chunk bound.
        assert peak() < 1024 * 1_048_576, peak()


async def test_a_saved_download_is_on_disk_once_and_the_browser_copy_goes(
    tmp_path: Path, files_site: FilesSite, browser_tmp: Path
) -> None:
    mb = 8
    async with (
        real_runtime(
            tmp_path, EventLog("silent"), max_artifact_session_bytes=2 * mb * 1_048_576
        ) as runtime,
        tool_client(runtime) as c,
    ):
        addr = await open_page(c, files_site.url("/exports"))
        await add_link(c, addr, f"/files/large?mb={mb}")
        with peak_disk(browser_tmp, tmp_path / "data" / "artifacts") as peak:
            result = await c.ok(
                "browser_action_and_wait",
                {**addr, "action": {"kind": "click", "target": css("#get")},
                 "wait": {"kind": "download"}},
            )  # fmt: skip
            await gone((browser_tmp,))
        artifact = result["event"]["artifact"]
        assert artifact["state"] == "completed" and artifact["size"] == mb * 1_048_576
        # Hard-linked from the browser's copy, not copied: never twice on disk.
        assert peak() <= mb * 1_048_576 + DOWNLOAD_CHUNK_BYTES, peak()
        files = [p for p in (tmp_path / "data" / "artifacts").rglob("*") if p.is_file()]
        assert len(files) == 1 and os.stat(files[0]).st_nlink == 1
        assert hashlib.sha256(files[0].read_bytes()).hexdigest() == large_file_sha256(mb)
