"""The live view's pictures and grid without a browser: the frame pacing (model/frame_pacing.py),
the screencast over a fake CDP session (engine/screencast.py), and `LiveView` on the fake engine
(runtime/live.py): nothing runs while nobody watches, a principal sees only its sessions."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from browsermesh.config import default_config
from browsermesh.engine.screencast import PageScreencast, Screencaster
from browsermesh.errors import BrowserMeshError
from browsermesh.log import EventLog
from browsermesh.model.frame_pacing import Frame, FramePacer, PictureBounds, fit_scale
from browsermesh.runtime.live import LiveView, ViewerFeed, shown_url
from browsermesh.runtime.runtime import Runtime
from browsermesh.runtime.session import RECENT_OPERATIONS
from tests.fakes import FakeEngine

pytestmark = pytest.mark.anyio


async def until(check: Callable[[], bool]) -> None:
    async with asyncio.timeout(5):
        while not check():
            await asyncio.sleep(0.01)


# ------------------------------------------------------------------ pacing rules


def test_pacer_and_bounds() -> None:
    pacer = FramePacer(0.5)
    assert pacer.wait_s(10.0) == 0 and pacer.stale(10.0, 3.0) and pacer.last is None
    pacer.sent(10.0)
    assert pacer.wait_s(10.2) == pytest.approx(0.3) and pacer.wait_s(11.0) == 0
    assert not pacer.stale(12.0, 3.0) and pacer.stale(13.0, 3.0)
    bounds = PictureBounds()
    assert bounds.max_fps <= 2 and bounds.max_width <= 640 and bounds.interval_s == 0.5
    for bad in ({"max_fps": 0}, {"max_width": 8}, {"jpeg_quality": 0}, {"stale_s": 0}):
        with pytest.raises(ValueError):
            PictureBounds(**bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        FramePacer(0)
    assert fit_scale(1280, 720, 640, 640) == 0.5 and fit_scale(320, 200, 640, 640) == 1.0
    assert fit_scale(400, 1280, 640, 640) == 0.5 and fit_scale(0, 0, 640, 640) == 1.0


def test_shown_urls_lose_query_credentials_and_fragment() -> None:
    assert shown_url("http://u:pw@a.test/p/q?q=form-value#x") == "http://a.test/p/q"
    assert shown_url("about:blank") == "about:blank"
    assert shown_url("data:text/html,hi") == "<redacted-url>"


def test_a_feed_keeps_only_the_newest() -> None:
    feed = ViewerFeed("alice")
    feed.put_state({"n": 1})
    feed.put_state({"n": 2})
    feed.put_frame("s1", "p1", Frame("old", "screencast"))
    feed.put_frame("s1", "p1", Frame("new", "screenshot"))
    news = asyncio.run(feed.next())
    assert news == [
        ("state", {"n": 2}),
        ("frame", {"sessionId": "s1", "pageId": "p1", "source": "screenshot", "data": "new"}),
    ]


# ------------------------------------------------------------------ the screencast


class FakeSession:
    """A CDP session: records what is sent, answers like Chromium."""

    def __init__(self, *, cast: bool = True) -> None:
        self.cast = cast
        self.sent: list[tuple[str, Any]] = []
        self.handlers: dict[str, Callable[[Mapping[str, Any]], None]] = {}
        self.detached = False

    def on(self, event: str, handler: Callable[[Mapping[str, Any]], None]) -> None:
        self.handlers[event] = handler

    def remove_listener(self, event: str, handler: Any) -> None:
        self.handlers.pop(event, None)

    async def send(self, method: str, params: Any = None) -> dict[str, Any]:
        self.sent.append((method, params))
        if method == "Page.startScreencast" and not self.cast:
            raise RuntimeError("no screencast here")
        if method == "Page.getLayoutMetrics":
            viewport = {"clientWidth": 1280, "clientHeight": 720, "pageX": 0, "pageY": 10}
            return {"cssVisualViewport": viewport}
        if method == "Page.captureScreenshot":
            return {"data": "SHOT"}
        if method == "Target.getTargetInfo":
            return {"targetInfo": {"title": "Raw title"}}
        return {}

    async def detach(self) -> None:
        self.detached = True

    def frame(self, number: int) -> None:
        self.handlers["Page.screencastFrame"]({"sessionId": number, "data": f"F{number}"})

    def methods(self, name: str) -> list[Any]:
        return [params for method, params in self.sent if method == name]


class FakeCdpPage:
    def __init__(self, session: FakeSession) -> None:
        self.context = self
        self.session = session

    async def new_cdp_session(self, page: Any) -> FakeSession:
        return self.session


async def test_frames_are_paced_coalesced_and_all_acknowledged() -> None:
    session = FakeSession()
    got: list[tuple[Frame, float]] = []
    bounds = PictureBounds(max_fps=10, stale_s=60)
    cast = PageScreencast(FakeCdpPage(session), lambda f: got.append((f, time.monotonic())), bounds)
    await cast.start()
    assert cast.casting
    start = session.methods("Page.startScreencast")[0]
    assert start == {"format": "jpeg", "quality": 50, "maxWidth": 640, "maxHeight": 640}
    session.frame(1)  # the first goes at once
    await until(lambda: len(got) == 1)
    for n in range(2, 6):  # a burst: only the newest goes, one slot later
        session.frame(n)
    await until(lambda: len(got) == 2)
    assert [f.data for f, _ in got] == ["F1", "F5"]
    assert got[1][1] - got[0][1] >= 0.09
    await until(lambda: len(session.methods("Page.screencastFrameAck")) == 5)
    assert [p["sessionId"] for p in session.methods("Page.screencastFrameAck")] == [1, 2, 3, 4, 5]
    assert await cast.title() == "Raw title"
    session.frame(6)  # unacknowledged when the stream closes: acknowledged on close
    await cast.close()
    await cast.close()  # idempotent
    assert session.methods("Page.screencastFrameAck")[-1] == {"sessionId": 6}
    assert session.methods("Page.stopScreencast") and session.detached
    assert await cast.title() is None


async def test_without_a_screencast_screenshots_come_within_the_bounds() -> None:
    session = FakeSession(cast=False)
    got: list[Frame] = []
    cast = PageScreencast(FakeCdpPage(session), got.append, PictureBounds(stale_s=0.05))
    await cast.start()
    assert not cast.casting
    await until(lambda: len(got) >= 2)
    await cast.close()
    assert {f.source for f in got} == {"screenshot"} and got[0].data == "SHOT"
    shot = session.methods("Page.captureScreenshot")[0]
    assert shot["clip"] == {"x": 0.0, "y": 10.0, "width": 1280.0, "height": 720.0, "scale": 0.5}
    assert shot["format"] == "jpeg" and shot["captureBeyondViewport"] is False
    assert not session.methods("Page.stopScreencast")


async def test_a_page_without_a_cdp_session_just_has_no_pictures() -> None:
    class Gone:
        context = None

    cast = Screencaster().open(type("H", (), {"page": Gone()})(), lambda f: None, PictureBounds())
    await cast.start()
    assert await cast.title() is None
    await cast.close()


# ------------------------------------------------------------------ LiveView on the fake engine


class Streams:
    """A FrameSource that records which pages have a stream."""

    def __init__(self) -> None:
        self.live: set[FakeStream] = set()
        self.opened = 0

    def open(self, handle: Any, sink: Callable[[Frame], None], bounds: PictureBounds) -> Any:
        self.opened += 1
        return FakeStream(self, sink)


class FakeStream:
    def __init__(self, parent: Streams, sink: Callable[[Frame], None]) -> None:
        self.parent = parent
        self.sink = sink

    async def start(self) -> None:
        self.parent.live.add(self)
        self.sink(Frame("JPEG", "screencast"))

    async def title(self) -> str:
        return "raw"

    async def close(self) -> None:
        self.parent.live.discard(self)


async def next_state(feed: ViewerFeed, check: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    async with asyncio.timeout(5):
        while True:
            for kind, data in await feed.next():
                if kind == "state" and check(data):
                    return data


async def test_pictures_run_only_while_someone_watches(tmp_path: Path) -> None:
    runtime = Runtime(default_config(data_dir=tmp_path), FakeEngine(0.001), EventLog("silent"))
    streams = Streams()
    live = LiveView(runtime, streams, refresh_s=0.05)
    try:
        _, a, pa = await runtime.create_session("alice", name="one", metadata={"k": "v"})
        _, b, _ = await runtime.create_session("alice", name="two")
        _, bob, _ = await runtime.create_session("bob", name="bobs")
        await runtime.navigate("alice", a["sessionId"], pa, "http://a.test/x?q=form-value", None)
        await asyncio.sleep(0.1)
        assert streams.opened == 0 and live.watched == frozenset()  # nobody watches
        async with live.watch("alice") as feed:
            state = await next_state(feed, lambda s: len(s["sessions"]) == 2)
            assert live.watched == {"alice"} and live.streams_of("alice") == 2
            assert live.streams_of("bob") == 0
            one = next(s for s in state["sessions"] if s["sessionId"] == a["sessionId"])
            assert one["name"] == "one" and one["metadata"] == {"k": "v"}
            assert one["status"] == "ready"
            assert one["pages"][0]["url"] == "http://a.test/x"
            assert one["pages"][0]["title"] == "Title of http://a.test/x?q=form-value"
            assert [(o["tool"], o["code"]) for o in one["operations"]] == [
                ("browser_session_create", "OK"),
                ("browser_navigate", "OK"),
            ]
            assert bob["sessionId"] not in str(state) and "form-value" not in one["pages"][0]["url"]
            # A second viewer gets the grid at once and shares the streams.
            async with live.watch("alice") as second:
                await next_state(second, lambda s: True)
                assert streams.opened == 2
            # A closed session leaves the grid and its stream closes.
            await runtime.close_session("alice", b["sessionId"])
            await next_state(feed, lambda s: len(s["sessions"]) == 1)
            assert live.streams_of("alice") == 1
        await live.tasks.drain()
        assert not streams.live and live.watched == frozenset()
    finally:
        await live.aclose()
        await runtime.shutdown()
    assert live not in runtime.watchers
    with pytest.raises(RuntimeError):
        live.join("alice")


async def test_the_operation_ring_is_bounded(tmp_path: Path) -> None:
    runtime = Runtime(default_config(data_dir=tmp_path), FakeEngine(0.001), EventLog("silent"))
    try:
        _, view, page = await runtime.create_session()
        sid = view["sessionId"]
        for _ in range(RECENT_OPERATIONS + 3):
            await runtime.get_title("local", sid, page, None)
        with pytest.raises(BrowserMeshError):
            await runtime.navigate("local", sid, page, "http://a.test/", 1)  # 1 ms: times out
        rec = runtime.sessions_snapshot()[sid]
        assert len(rec.recent_ops) == RECENT_OPERATIONS
        last = rec.recent_ops[-1]
        assert (last.tool, last.code) == ("browser_navigate", "OPERATION_TIMEOUT")
        assert rec.recent_ops[-2].code == "OK" and rec.recent_ops[-2].duration_ms >= 0
    finally:
        await runtime.shutdown()
