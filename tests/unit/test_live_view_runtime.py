"""The live view's pictures and grid without a browser: the frame pacing (model/frame_pacing.py),
the screencast over a fake CDP session (engine/screencast.py), and `LiveView` on the fake engine
(runtime/live.py): nothing runs while nobody watches, a principal sees only its sessions."""

from __future__ import annotations

import asyncio
import itertools
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
from browsermesh.runtime.calls import PageCall
from browsermesh.runtime.live import LiveView, ViewerFeed, shown_url
from browsermesh.runtime.runtime import Runtime
from browsermesh.runtime.session import RECENT_OPERATIONS
from tests.fakes import FakeEngine
from tests.support.eventually import eventually

pytestmark = pytest.mark.anyio


# ------------------------------------------------------------------ pacing rules


def test_pacer_and_bounds() -> None:
    pacer = FramePacer(0.5, 4.0)
    assert pacer.wait_s(10.0) == 0 and pacer.interval_s == 0.5
    pacer.taken(10.0, changed=True)
    assert pacer.wait_s(10.2) == pytest.approx(0.3) and pacer.wait_s(11.0) == 0
    for expected in (1.0, 2.0, 4.0, 4.0):  # unchanged pictures: looked at less and less often
        pacer.taken(20.0, changed=False)
        assert pacer.interval_s == expected
    pacer.hurry()
    assert pacer.interval_s == 0.5
    pacer.taken(30.0, changed=False)
    pacer.taken(30.0, changed=True)
    assert pacer.interval_s == 0.5
    assert FramePacer(1.0).interval_s == 1.0
    bounds = PictureBounds()
    assert bounds.max_fps <= 2 and bounds.max_width <= 640 and bounds.interval_s == 0.5
    for bad in ({"max_fps": 0}, {"max_width": 8}, {"jpeg_quality": 0}, {"frame_wait_s": 0}):
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
    """A CDP session: records what is sent, answers like Chromium; a started screencast sends
    the next of `frames` (repeating the last), unless `cast` is off."""

    def __init__(self, frames: list[str] | None = None, *, cast: bool = True) -> None:
        self.cast = cast
        self.frames = list(frames or ["F"])
        self.sent: list[tuple[str, Any]] = []
        self.handlers: dict[str, Callable[[Mapping[str, Any]], None]] = {}
        self.detached = False
        self.frame_id = 0

    def on(self, event: str, handler: Callable[[Mapping[str, Any]], None]) -> None:
        self.handlers[event] = handler

    def remove_listener(self, event: str, handler: Any) -> None:
        self.handlers.pop(event, None)

    async def send(self, method: str, params: Any = None) -> dict[str, Any]:
        self.sent.append((method, params))
        if method == "Page.startScreencast":
            if not self.cast:
                raise RuntimeError("no screencast here")
            data = self.frames.pop(0) if len(self.frames) > 1 else self.frames[0]
            asyncio.get_running_loop().call_soon(self.frame, data)
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

    def frame(self, data: str) -> None:
        self.frame_id += 1
        handler = self.handlers.get("Page.screencastFrame")
        if handler is not None:
            handler({"sessionId": self.frame_id, "data": data})

    def methods(self, name: str) -> list[Any]:
        return [params for method, params in self.sent if method == name]


class FakeCdpPage:
    def __init__(self, session: FakeSession) -> None:
        self.context = self
        self.session = session

    async def new_cdp_session(self, page: Any) -> FakeSession:
        return self.session


async def test_one_frame_per_screencast_paced_and_acknowledged() -> None:
    session = FakeSession(["A", "B", "B", "C"])
    got: list[tuple[Frame, float]] = []
    third = asyncio.Event()

    def shown(frame: Frame) -> None:
        got.append((frame, time.monotonic()))
        if len(got) == 3:
            third.set()

    bounds = PictureBounds(max_fps=20, idle_max_s=0.2)
    cast = PageScreencast(FakeCdpPage(session), shown, bounds)
    await cast.start()
    # At once, on the third frame: the close below must land before the paced loop asks for
    # more (a poll would let it run on by up to a poll interval).
    await asyncio.wait_for(third.wait(), 10)
    cast.hurry()  # wakes a waiting loop at once
    assert cast.casting and [f.data for f, _ in got] == ["A", "B", "C"]  # the repeat is not sent
    assert {f.source for f, _ in got} == {"screencast"}
    assert all(b[1] - a[1] >= 0.045 for a, b in itertools.pairwise(got))
    start = session.methods("Page.startScreencast")[0]
    assert start == {"format": "jpeg", "quality": 50, "maxWidth": 640, "maxHeight": 640}
    assert await cast.title() == "Raw title"
    await cast.close()
    await cast.close()  # idempotent
    # Each start is stopped after its frame, and every frame is acknowledged.
    starts = len(session.methods("Page.startScreencast"))
    assert len(session.methods("Page.stopScreencast")) == starts + 1  # + the close
    acks = [p["sessionId"] for p in session.methods("Page.screencastFrameAck")]
    assert acks == list(range(1, session.frame_id + 1))
    assert session.detached and await cast.title() is None


async def test_a_held_page_follows_one_running_screencast() -> None:
    """Issue 34: while held, one screencast keeps running and each new frame is passed on (at
    most max_fps a second); back to one picture per started screencast afterwards."""
    session = FakeSession(["A"])
    got: list[str] = []
    cast = PageScreencast(
        FakeCdpPage(session),
        lambda f: got.append(f.data),
        PictureBounds(max_fps=30, continuous=True),
    )
    await cast.start()
    await eventually(lambda: got == ["A"], within=10)
    for data in ("B", "C", "C", "D"):
        session.frame(data)
        await eventually(lambda d=data: got[-1] == d, within=10)
    assert got == ["A", "B", "C", "D"]  # the repeat is not sent
    assert len(session.methods("Page.startScreencast")) == 1
    assert session.methods("Page.stopScreencast") == []
    cast.pace(PictureBounds(max_fps=30))  # handed back: the usual pacing
    await eventually(lambda: len(session.methods("Page.startScreencast")) >= 2, within=10)
    assert session.methods("Page.stopScreencast")  # the running one stopped first
    await cast.close()


async def test_without_a_screencast_screenshots_come_within_the_bounds() -> None:
    session = FakeSession(cast=False)
    got: list[Frame] = []
    cast = PageScreencast(FakeCdpPage(session), got.append, PictureBounds(max_fps=20))
    await cast.start()
    await eventually(lambda: len(session.methods("Page.captureScreenshot")) >= 2, within=10)
    await cast.close()
    assert not cast.casting
    assert [f.source for f in got] == ["screenshot"] and got[0].data == "SHOT"  # sent once
    shot = session.methods("Page.captureScreenshot")[0]
    assert shot["clip"] == {"x": 0.0, "y": 10.0, "width": 1280.0, "height": 720.0, "scale": 0.5}
    assert shot["format"] == "jpeg" and shot["captureBeyondViewport"] is False
    assert len(session.methods("Page.startScreencast")) == 1  # tried once


async def test_a_screencast_that_sends_nothing_falls_back_to_a_screenshot() -> None:
    session = FakeSession()
    session.frame = lambda data: None  # type: ignore[method-assign]  # Chromium stays silent
    got: list[Frame] = []
    bounds = PictureBounds(max_fps=20, frame_wait_s=0.05)
    cast = PageScreencast(FakeCdpPage(session), got.append, bounds)
    await cast.start()
    await eventually(lambda: len(got) == 1, within=10)
    await cast.close()
    assert got[0].source == "screenshot" and cast.casting


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
        self.hurried = 0

    def open(self, handle: Any, sink: Callable[[Frame], None], bounds: PictureBounds) -> Any:
        self.opened += 1
        return FakeStream(self, sink, bounds)


class FakeStream:
    def __init__(
        self, parent: Streams, sink: Callable[[Frame], None], bounds: PictureBounds
    ) -> None:
        self.parent = parent
        self.sink = sink
        self.bounds = bounds

    def pace(self, bounds: PictureBounds) -> None:
        self.bounds = bounds

    async def start(self) -> None:
        self.parent.live.add(self)
        self.sink(Frame("JPEG", "screencast"))

    async def title(self) -> str:
        return "raw"

    def hurry(self) -> None:
        self.parent.hurried += 1

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
        await runtime.navigate(
            PageCall(principal="alice", session_id=a["sessionId"], page_id=pa),
            "http://a.test/x?q=form-value",
        )
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
            # An operation that ends hurries the session's pictures.
            await runtime.get_title(
                PageCall(principal="alice", session_id=a["sessionId"], page_id=pa)
            )
            await eventually(lambda: streams.hurried >= 1, within=10)
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
            await runtime.get_title(PageCall(principal="local", session_id=sid, page_id=page))
        with pytest.raises(BrowserMeshError):
            await runtime.navigate(
                PageCall(principal="local", session_id=sid, page_id=page, timeout_ms=1),
                "http://a.test/",
            )  # 1 ms: times out
        rec = runtime.sessions_snapshot()[sid]
        assert len(rec.recent_ops) == RECENT_OPERATIONS
        last = rec.recent_ops[-1]
        assert (last.tool, last.code) == ("browser_navigate", "OPERATION_TIMEOUT")
        assert rec.recent_ops[-2].code == "OK" and rec.recent_ops[-2].duration_ms >= 0
    finally:
        await runtime.shutdown()
