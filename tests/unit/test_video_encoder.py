"""The session video encoder (engine/video.py) with Debian's real ffmpeg: pictures switching
colour and size, a caption and a chapter card end up in an H.264 MP4 of the recorded length;
abort leaves nothing behind; a missing ffmpeg names its install.

Frames are made by ffmpeg itself and read back by ffmpeg/ffprobe. The timeline is driven by a
fake clock where the content is checked (exact times), and by the real clock where the length
must follow the wall time; either way a test waits on `frames_written`, never on a sleep."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from browsermesh.engine.video import (
    CAPTION_MAX_S,
    ENCODING_FAILED,
    FFMPEG_MISSING,
    TEXT_MAX_CHARS,
    VideoBounds,
    VideoEncoder,
    ass_text,
)
from browsermesh.errors import BrowserMeshError, ErrorCode, error_payload
from tests.support.eventually import eventually

pytestmark = pytest.mark.anyio

needs_ffmpeg = pytest.mark.skipif(
    shutil.which("ffmpeg") is None or shutil.which("ffprobe") is None,
    reason="ffmpeg is not installed (BROWSERMESH_VIDEO=1 scripts/setup.sh installs it)",
)
WITHIN_S = 60.0  # bounds a failure only: 4 copies of this file run at once on 2 cores

RGB = tuple[int, int, int]


class FakeClock:
    """A monotonic clock that moves only when told."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def _jpeg(colour: str, size: str) -> bytes:
    command = ["ffmpeg", "-v", "error", "-f", "lavfi", "-i", f"color=c={colour}:s={size}"]
    command += ["-frames:v", "1", "-f", "mjpeg", "-"]
    return subprocess.run(command, capture_output=True, check=True, timeout=60).stdout


@pytest.fixture(scope="module")
def pictures() -> Iterator[dict[str, bytes]]:
    if shutil.which("ffmpeg") is None:
        yield {}
        return
    yield {
        "red": _jpeg("red", "320x240"),
        "blue": _jpeg("blue", "1280x800"),
        "green": _jpeg("green", "1280x800"),
    }


def probe(path: Path) -> dict[str, object]:
    command = ["ffprobe", "-v", "error", "-show_streams", "-show_format", "-of", "json", str(path)]
    result = subprocess.run(command, capture_output=True, check=True, timeout=60, text=True)
    info: dict[str, object] = json.loads(result.stdout)
    return info


def mean_rgb(video: Path, at_s: float, region: tuple[float, float, float, float]) -> RGB:
    """The average colour of `region` (x, y, width, height as fractions of the frame) in the
    first frame at or after `at_s` (an input seek drops the frames starting before it)."""
    x, y, w, h = region
    crop = f"crop=iw*{w}:ih*{h}:iw*{x}:ih*{y},scale=1:1:flags=area"
    command = ["ffmpeg", "-v", "error", "-ss", f"{at_s:.2f}", "-i", str(video)]
    command += ["-frames:v", "1", "-vf", crop, "-f", "rawvideo", "-pix_fmt", "rgb24", "-"]
    pixel = subprocess.run(command, capture_output=True, check=True, timeout=60).stdout
    assert len(pixel) == 3, f"no frame at {at_s} s"
    return pixel[0], pixel[1], pixel[2]


TOP = (0.3, 0.15, 0.12, 0.12)  # inside every picture's letterbox, away from text
BOTTOM = (0.3, 0.93, 0.4, 0.05)  # where a caption shows
CENTRE = (0.3, 0.4, 0.4, 0.2)  # where a card's title shows


def is_red(rgb: RGB) -> bool:
    return rgb[0] > 180 and rgb[1] < 70 and rgb[2] < 70


def is_blue(rgb: RGB) -> bool:
    return rgb[2] > 180 and rgb[0] < 70 and rgb[1] < 70


def is_dark(rgb: RGB) -> bool:
    return max(rgb) < 70


def ffmpeg_children() -> list[int]:
    """The ffmpeg processes this test process started that are still alive (or unreaped)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat_line = (entry / "stat").read_text()
        except OSError:
            continue
        name = stat_line[stat_line.index("(") + 1 : stat_line.rindex(")")]
        ppid = int(stat_line[stat_line.rindex(")") + 2 :].split()[1])
        if ppid == os.getpid() and name == "ffmpeg":
            found.append(int(entry.name))
    return found


def entries(folder: Path) -> list[Path]:
    """What `folder` holds (a sync helper: a quick look, not I/O worth a thread)."""
    return sorted(folder.iterdir())


def video_stream(info: dict[str, object]) -> dict[str, object]:
    streams = info["streams"]
    assert isinstance(streams, list) and len(streams) == 1
    stream = streams[0]
    assert isinstance(stream, dict)
    return stream


def duration(info: dict[str, object]) -> float:
    fmt = info["format"]
    assert isinstance(fmt, dict)
    return float(fmt["duration"])


# ------------------------------------------------------------------------------ recordings


@needs_ffmpeg
async def test_a_recording_shows_its_pictures_caption_and_chapter_card(
    tmp_path: Path, pictures: dict[str, bytes]
) -> None:
    clock = FakeClock()
    bounds = VideoBounds(fps=5, width=640, height=360, card_seconds=1.5)
    encoder = VideoEncoder(tmp_path / "work", bounds, now=clock)
    await encoder.start()
    encoder.frame(pictures["red"])  # 320x240: pillarboxed into 640x360
    clock.advance(1.0)  # frames 0-5
    await eventually(lambda: encoder.frames_written >= 6, WITHIN_S, "a red second")
    caption_at = encoder.position
    encoder.caption("browser_click role=button name=Buy → ok")
    clock.advance(1.0)  # frames 6-10
    await eventually(lambda: encoder.frames_written >= 11, WITHIN_S, "a captioned second")
    card_at = encoder.position
    encoder.chapter("Checkout")  # 8 frames (1.6 s at 5 fps) inserted now
    encoder.frame(pictures["blue"])  # 1280x800: another size, letterboxed
    clock.advance(1.0)  # frames 19-23 after the card's 11-18
    await eventually(lambda: encoder.frames_written >= 24, WITHIN_S, "a blue second")
    target = tmp_path / "session.mp4"

    size = await encoder.finish(target)

    assert (caption_at, card_at) == (1.2, 2.2)
    assert size == target.stat().st_size > 0
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    info = probe(target)
    stream = video_stream(info)
    assert stream["codec_name"] == "h264"
    assert stream["pix_fmt"] == "yuv420p"
    assert (stream["width"], stream["height"]) == (640, 360)
    recorded, card = 3.0, 1.6
    assert recorded <= duration(info) <= recorded + card + 1
    assert abs(duration(info) - 24 / 5) < 0.05  # 24 frames: the timeline is exact
    assert is_red(mean_rgb(target, 0.6, TOP))
    assert is_red(mean_rgb(target, 0.6, BOTTOM))
    assert not is_red(mean_rgb(target, caption_at + 0.5, BOTTOM)), "the caption shows"
    assert is_red(mean_rgb(target, caption_at + 0.5, TOP))
    in_card = mean_rgb(target, card_at + 0.8, TOP)
    assert is_dark(in_card), in_card
    assert sum(mean_rgb(target, card_at + 0.8, CENTRE)) > sum(in_card) + 30, "the title shows"
    assert is_blue(mean_rgb(target, 4.5, TOP))
    assert is_blue(mean_rgb(target, 4.5, BOTTOM)), "the caption ended at the card"
    await encoder.abort()  # after finish: harmless, the video stays
    assert target.exists()
    assert not (tmp_path / "work").exists()
    assert ffmpeg_children() == []


@needs_ffmpeg
async def test_the_video_lasts_the_wall_time_recorded(
    tmp_path: Path, pictures: dict[str, bytes]
) -> None:
    encoder = VideoEncoder(tmp_path / "work", VideoBounds(fps=5, width=320, height=180))
    await encoder.start()
    started = time.monotonic()
    encoder.frame(pictures["red"])
    await eventually(lambda: encoder.frames_written >= 6, WITHIN_S, "a red second")
    encoder.frame(pictures["green"])
    await eventually(lambda: encoder.frames_written >= 11, WITHIN_S, "a green second")
    recorded = time.monotonic() - started
    target = tmp_path / "wall.mp4"

    await encoder.finish(target)

    info = probe(target)
    stream = video_stream(info)
    assert stream["codec_name"] == "h264"
    width, height = stream["width"], stream["height"]
    assert isinstance(width, int) and isinstance(height, int)
    assert width <= 320 and height <= 180 and width % 2 == 0 and height % 2 == 0
    assert recorded <= duration(info) <= recorded + 1
    first, last = mean_rgb(target, 0.5, TOP), mean_rgb(target, duration(info) - 0.25, TOP)
    assert is_red(first)
    assert last[1] > 100 and last[0] < 70, f"green at the end: {last}"


@needs_ffmpeg
async def test_a_recording_without_pictures_is_a_black_video(tmp_path: Path) -> None:
    clock = FakeClock()
    encoder = VideoEncoder(tmp_path / "work", VideoBounds(width=320, height=180), now=clock)
    await encoder.start()
    clock.advance(0.5)

    await encoder.finish(tmp_path / "blank.mp4")

    info = probe(tmp_path / "blank.mp4")
    assert abs(duration(info) - 0.6) < 0.05  # frames 0, 1 and 2 of 5 a second
    assert is_dark(mean_rgb(tmp_path / "blank.mp4", 0.3, CENTRE))


@needs_ffmpeg
async def test_a_full_recording_takes_no_more_frames(
    tmp_path: Path, pictures: dict[str, bytes]
) -> None:
    clock = FakeClock()
    bounds = VideoBounds(fps=5, width=320, height=180, max_seconds=1)
    encoder = VideoEncoder(tmp_path / "work", bounds, now=clock)
    await encoder.start()
    encoder.frame(pictures["red"])
    assert not encoder.full
    clock.advance(3.0)
    await eventually(lambda: encoder.frames_written >= 5, WITHIN_S, "a full second")
    assert encoder.full
    encoder.chapter("too late")
    encoder.caption("too late")

    await encoder.finish(tmp_path / "full.mp4")

    assert encoder.frames_written == 5
    assert abs(duration(probe(tmp_path / "full.mp4")) - 1.0) < 0.05


# ------------------------------------------------------------------------------ failures


@needs_ffmpeg
async def test_abort_kills_ffmpeg_and_leaves_no_file(
    tmp_path: Path, pictures: dict[str, bytes]
) -> None:
    workdir = tmp_path / "work"
    encoder = VideoEncoder(workdir, VideoBounds(width=320, height=180))
    await encoder.start()
    encoder.frame(pictures["red"])
    await eventually(lambda: encoder.frames_written >= 2, WITHIN_S, "frames recorded")
    assert ffmpeg_children()

    await encoder.abort()
    await encoder.abort()

    assert not workdir.exists()
    assert ffmpeg_children() == []
    with pytest.raises(RuntimeError):
        await encoder.finish(tmp_path / "never.mp4")
    assert entries(tmp_path) == []


@needs_ffmpeg
async def test_abort_keeps_a_workdir_it_did_not_make(tmp_path: Path) -> None:
    encoder = VideoEncoder(tmp_path, VideoBounds(width=320, height=180))
    await encoder.start()
    await eventually(lambda: encoder.frames_written >= 1, WITHIN_S, "a frame recorded")

    await encoder.abort()

    assert entries(tmp_path) == []


@needs_ffmpeg
async def test_a_recorder_that_dies_fails_the_video(
    tmp_path: Path, pictures: dict[str, bytes]
) -> None:
    encoder = VideoEncoder(tmp_path / "work", VideoBounds(width=320, height=180))
    await encoder.start()
    encoder.frame(pictures["red"])
    await eventually(lambda: encoder.frames_written >= 2, WITHIN_S, "frames recorded")
    for pid in ffmpeg_children():
        os.kill(pid, 9)

    with pytest.raises(BrowserMeshError) as caught:
        await encoder.finish(tmp_path / "broken.mp4")

    assert caught.value.code is ErrorCode.BROWSER_ERROR
    assert caught.value.cause == ENCODING_FAILED
    assert str(tmp_path) not in caught.value.message + str(caught.value.internal)
    assert entries(tmp_path) == []
    assert ffmpeg_children() == []


@needs_ffmpeg
async def test_an_unwritable_target_fails_the_video_and_leaves_no_file(tmp_path: Path) -> None:
    encoder = VideoEncoder(tmp_path / "work", VideoBounds(width=320, height=180))
    await encoder.start()

    with pytest.raises(BrowserMeshError) as caught:
        await encoder.finish(tmp_path / "missing" / "video.mp4")

    assert caught.value.cause == ENCODING_FAILED
    assert entries(tmp_path) == []


async def test_a_missing_ffmpeg_names_its_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "")
    encoder = VideoEncoder(tmp_path / "work", VideoBounds())

    with pytest.raises(BrowserMeshError) as caught:
        await encoder.start()

    assert caught.value.code is ErrorCode.BROWSER_ERROR
    assert caught.value.cause == FFMPEG_MISSING
    # What the client reads: the reason, and a next step that says how to get videos.
    payload = error_payload(caught.value)["error"]
    assert payload["details"]["reason"] == "no_video_encoder"
    assert "apt-get install ffmpeg" in payload["nextStep"]
    assert not (tmp_path / "work").exists()
    await encoder.abort()


# ------------------------------------------------------------------------------ pure parts


def test_caption_text_is_one_bounded_line_without_markup() -> None:
    assert ass_text("browser_click → ok") == "browser_click → ok"
    assert ass_text("a\nb\r\n\tc\x00d") == "a b c d"
    assert ass_text("{\\b1}x") == "\\{\\\u2060b1\\}x"
    assert ass_text("C:\\New") == "C:\\\u2060New"  # never ASS's line break \N
    long = ass_text("x" * 500)
    assert len(long) == TEXT_MAX_CHARS and long.endswith("…")
    assert CAPTION_MAX_S <= 4


@pytest.mark.parametrize(
    "bad",
    [
        {"fps": 0},
        {"fps": 11},
        {"width": 641},
        {"height": 8},
        {"max_seconds": 0},
        {"card_seconds": 0},
    ],
)
def test_bounds_refuse_what_cannot_be_encoded(bad: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        VideoBounds(**bad)  # type: ignore[arg-type]
