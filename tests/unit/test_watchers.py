"""The runtime's change hook (runtime.watchers, issue 17) on the fake engine: which change is
told when, only to the owner's principal, at no cost while nobody watches pages."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from browsermesh.config import default_config
from browsermesh.errors import BrowserMeshError, ErrorCode
from browsermesh.log import EventLog
from browsermesh.model.deadline import OperationContext
from browsermesh.model.navigation import Landing
from browsermesh.runtime.calls import PageCall
from browsermesh.runtime.runtime import Runtime
from browsermesh.runtime.watchers import SessionChange, fingerprint
from tests.fakes import FakeEngine, FakePage

pytestmark = pytest.mark.anyio

PAGE = {
    "pageId": "p1",
    "sessionId": "s1",
    "createdAt": "2026-01-01T00:00:00.000Z",
    "url": "http://a.test/",
    "isDefault": True,
    "title": "A",
}


def test_fingerprint_ignores_timestamps_only() -> None:
    later = {**PAGE, "createdAt": "2026-01-02T00:00:00.000Z", "lastActivityAt": "x"}
    assert fingerprint([PAGE]) == fingerprint([later])
    for key, value in [("url", "http://b.test/"), ("title", "B"), ("isDefault", False)]:
        assert fingerprint([PAGE]) != fingerprint([{**PAGE, key: value}]), key
    assert fingerprint([PAGE]) != fingerprint([{**PAGE, "crashed": True}])
    assert fingerprint([PAGE]) != fingerprint([PAGE, {**PAGE, "pageId": "p2"}])
    assert fingerprint([]) != fingerprint([PAGE])
    # key order is no change either
    assert fingerprint([dict(reversed(list(PAGE.items())))]) == fingerprint([PAGE])


class Recorder:
    """A watcher that records every change and watches pages when told to."""

    def __init__(self, watching: bool = True) -> None:
        self.changes: list[SessionChange] = []
        self.watching = watching

    def session_changed(self, change: SessionChange) -> None:
        self.changes.append(change)

    def watches_pages(self, principal: str) -> bool:
        return self.watching

    def kinds(self, session_id: str) -> list[str]:
        return [c.kind for c in self.changes if c.session_id == session_id]


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[tuple[Runtime, FakeEngine, Recorder]]:
    engine = FakeEngine(delay=0.001)
    runtime = Runtime(default_config(data_dir=tmp_path), engine, EventLog("silent"))
    recorder = Recorder()
    runtime.watchers.append(recorder)
    yield runtime, engine, recorder
    await runtime.shutdown()


async def test_lifecycle_and_pages_are_told(rig: tuple[Runtime, FakeEngine, Recorder]) -> None:
    runtime, _, rec = rig
    _, view, page_id = await runtime.create_session("alice")
    sid = view["sessionId"]
    assert rec.kinds(sid) == ["created", "state", "pages"]
    assert {c.principal for c in rec.changes} == {"alice"}
    rec.changes.clear()
    await runtime.navigate(
        PageCall(principal="alice", session_id=sid, page_id=page_id), "http://a.test/"
    )
    assert rec.kinds(sid) == ["pages"]  # the URL (and the fake's title) changed
    rec.changes.clear()
    await runtime.get_title(PageCall(principal="alice", session_id=sid, page_id=page_id))
    assert rec.kinds(sid) == []  # nothing new to see
    _, page = await runtime.create_page("alice", sid)
    assert rec.kinds(sid) == ["pages"]
    rec.changes.clear()
    await runtime.close_page("alice", sid, page["pageId"])
    assert rec.kinds(sid) == ["pages"]
    rec.changes.clear()
    await runtime.close_session("alice", sid)
    assert rec.kinds(sid) == ["state", "closed"]  # closing, then closed


class CommitThenTimeout(FakeEngine):
    """A navigation that commits the new URL, then times out waiting for the load."""

    async def navigate(self, page: FakePage, url: str, ctx: OperationContext) -> Landing:
        page.url = url
        raise BrowserMeshError(ErrorCode.OPERATION_TIMEOUT)


async def test_a_failed_operation_still_reports_what_it_changed(tmp_path: Path) -> None:
    runtime = Runtime(default_config(data_dir=tmp_path), CommitThenTimeout(0.001))
    rec = Recorder()
    runtime.watchers.append(rec)
    try:
        _, view, page_id = await runtime.create_session()
        sid = view["sessionId"]
        rec.changes.clear()
        with pytest.raises(BrowserMeshError):
            await runtime.navigate(
                PageCall(principal="local", session_id=sid, page_id=page_id), "http://a.test/"
            )
        assert rec.kinds(sid) == ["pages"]
    finally:
        await runtime.shutdown()


async def test_failure_and_disconnect_end_the_session(
    rig: tuple[Runtime, FakeEngine, Recorder],
) -> None:
    runtime, engine, rec = rig
    _, view, _ = await runtime.create_session()
    sid = view["sessionId"]
    rec.changes.clear()
    engine.disconnect()
    assert rec.kinds(sid) == ["closed"]
    rec.changes.clear()
    await runtime.close_session("local", sid)  # a failed record closed: not live before either
    assert rec.kinds(sid) == ["state"]


async def test_nobody_watching_pages_costs_nothing(
    rig: tuple[Runtime, FakeEngine, Recorder],
) -> None:
    runtime, engine, rec = rig
    rec.watching = False
    _, view, page_id = await runtime.create_session()
    sid = view["sessionId"]
    engine.calls.clear()
    await runtime.navigate(
        PageCall(principal="local", session_id=sid, page_id=page_id), "http://a.test/"
    )
    assert "title" not in engine.calls  # no fingerprint was taken
    assert "pages" not in rec.kinds(sid)
    # Watching again: the first operation reports the pages (the kept fingerprint was dropped,
    # so a change made while nobody watched is not mistaken for no change).
    rec.watching = True
    await runtime.get_title(PageCall(principal="local", session_id=sid, page_id=page_id))
    assert rec.kinds(sid)[-1] == "pages"


async def test_no_watcher_no_work(tmp_path: Path) -> None:
    engine = FakeEngine(delay=0.001)
    runtime = Runtime(default_config(data_dir=tmp_path), engine, EventLog("silent"))
    try:
        _, view, page_id = await runtime.create_session()
        engine.calls.clear()
        await runtime.navigate(
            PageCall(principal="local", session_id=view["sessionId"], page_id=page_id),
            "http://a.test/",
        )
        assert engine.calls == ["navigate"]
    finally:
        await runtime.shutdown()


async def test_a_raising_watcher_never_breaks_the_runtime(tmp_path: Path) -> None:
    records: list[dict[str, object]] = []
    log = EventLog("silent")
    log.sinks.append(records.append)
    runtime = Runtime(default_config(data_dir=tmp_path), FakeEngine(delay=0.001), log)

    class Broken(Recorder):
        def session_changed(self, change: SessionChange) -> None:
            raise RuntimeError("boom")

    after = Recorder()
    runtime.watchers.extend([Broken(), after])
    try:
        _, view, _ = await runtime.create_session()
        assert view["status"] == "ready"
        assert after.kinds(view["sessionId"]) == ["created", "state", "pages"]
        assert any(r["type"] == "watcher.failed" for r in records)
    finally:
        await runtime.shutdown()


async def test_session_pages_carry_titles(rig: tuple[Runtime, FakeEngine, Recorder]) -> None:
    runtime, _, _ = rig
    _, view, page_id = await runtime.create_session("alice")
    sid = view["sessionId"]
    await runtime.navigate(
        PageCall(principal="alice", session_id=sid, page_id=page_id), "http://a.test/"
    )
    _, pages = await runtime.session_pages("alice", sid)
    assert [(p["pageId"], p["url"], p["title"]) for p in pages] == [
        (page_id, "http://a.test/", "Title of http://a.test/")
    ]
    _, listed = await runtime.list_pages("alice", sid)
    assert [{k: v for k, v in p.items() if k != "title"} for p in pages] == listed
    assert runtime.page_urls("alice") == {sid: ["http://a.test/"]}
    assert runtime.page_urls("bob") == {}
