"""A session video from the screencast's JPEG pictures, with captions and chapter cards, made
by Debian's ffmpeg (Playwright's own recorder needs an ffmpeg build it cannot download here).

Two ffmpeg processes per recording, never more than one at a time doing real work:

- While recording, a *recorder* copies JPEGs from its stdin into ``frames.mkv`` in the workdir
  (``-f mjpeg -framerate FPS -i pipe:0 -c:v copy``): no decode, no encode, next to no CPU. A
  ticker task writes the latest picture at `VideoBounds.fps`, so a page that does not change
  (the screencast sends nothing then) still fills the timeline; a ticker that fell behind
  (a loaded machine) catches up with copies of the latest picture, so the video's length stays
  the wall time recorded. Until the first picture the timeline shows black.
- `finish` runs one *encode* to MP4 (H.264, yuv420p, +faststart): every picture is scaled into
  the output box and letterboxed (pictures may change size: a resized viewport, another page),
  and the captions and chapter cards are burned in from an ASS file written at the end.

The timeline is counted in frames: at wall time ``t`` after `start` the frames due are those of
the elapsed time plus the frames inserted for chapter cards; `position` is the time of the next
frame. A chapter inserts `VideoBounds.card_seconds` of frames at once (covered by a dark
full-frame card with the title), so the page frames continue after it. Times come from the
`now` clock given to the encoder, so tests can drive the timeline with a fake one.

A recording with no picture at all is not an error: it yields a black video of the time
recorded (with its captions and cards), like any recording that started before its page
showed. ffmpeg's stderr is read into a bounded buffer and never surfaced raw (it names paths):
a failure is `BrowserMeshError(BROWSER_ERROR, cause="video encoding failed")` whose `internal`
holds the exit status and the last lines with the paths replaced.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import math
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from browsermesh.engine.bounded import bounded, first_done
from browsermesh.engine.video_overlay import (
    CAPTION_MAX_S,
    TEXT_MAX_CHARS,
    Caption,
    Card,
    Mark,
    ass_text,
    overlay_ass,
)
from browsermesh.errors import BrowserMeshError, ErrorCode
from browsermesh.model.tasks import TaskOwner
from browsermesh.redact import SecretValues

__all__ = [
    "CAPTION_MAX_S",
    "ENCODING_FAILED",
    "FFMPEG_MISSING",
    "TEXT_MAX_CHARS",
    "VideoBounds",
    "VideoEncoder",
    "ass_text",
    "encode_command",
    "ffmpeg_binary",
    "recorder_command",
]

FFMPEG_MISSING: Final = "ffmpeg is not installed (apt-get install ffmpeg)"
ENCODING_FAILED: Final = "video encoding failed"
FRAMES_FILE: Final = "frames.mkv"
CAPTIONS_FILE: Final = "captions.ass"
_STDERR_KEEP: Final = 2048
_WRITE_BUDGET_MS: Final = 10_000  # one picture into the recorder's pipe
_CLOSE_BUDGET_MS: Final = 30_000  # the ticker's last frames and the recorder's exit
_KILL_BUDGET_MS: Final = 5_000
_ENCODE_BASE_MS: Final = 60_000
_ENCODE_PER_FRAME_MS: Final = 100  # the encode may run as slowly as 10 frames a second
_MAX_PICTURE_BYTES: Final = 16 * 1024 * 1024
_QUIET: Final = ("-hide_banner", "-nostats", "-loglevel", "error", "-y")

# A 16x16 black JPEG (ffmpeg -f lavfi -i color=black:s=16x16 -frames:v 1 -q:v 31 -f mjpeg -):
# the picture of the timeline until the first one arrives; the encode scales it to the box.
_BLACK_JPEG: Final = base64.b64decode(
    "/9j/4AAQSkZJRgABAgAAAQABAAD//gAQTGF2YzU5LjM3LjEwMAD/2wBDAAg+Pkk+SVVVVVVVVWRdZGhoaGRkZGRoaGhw"
    "cHCDg4NwcHBoaHBwfHyDg4+Tj4eHg4eTk5ubm7q6srLZ2eD/////xABLAAEBAAAAAAAAAAAAAAAAAAAACAEBAAAAAAAA"
    "AAAAAAAAAAAAABABAAAAAAAAAAAAAAAAAAAAABEBAAAAAAAAAAAAAAAAAAAAAP/AABEIABAAEAMBIgACEQADEQD/2gAMAw"
    "EAAhEDEQA/AJ/AB//Z"
)


@dataclass(frozen=True, slots=True)
class VideoBounds:
    """The bounds of one session video."""

    fps: int = 5  # output frames per second
    width: int = 1280  # the output box: pictures are scaled to fit and letterboxed
    height: int = 720
    max_seconds: int = 600  # past this the recording takes no more frames (`VideoEncoder.full`)
    card_seconds: float = 1.5  # how long a chapter card shows

    def __post_init__(self) -> None:
        if not (1 <= self.fps <= 10):
            raise ValueError("fps must be in 1..10")
        if not (16 <= self.width <= 3840 and 16 <= self.height <= 2160):
            raise ValueError("the box must be 16..3840 wide and 16..2160 high")
        if self.width % 2 or self.height % 2:
            raise ValueError("H.264 in yuv420p needs an even width and height")
        if not (1 <= self.max_seconds <= 24 * 3600):
            raise ValueError("max_seconds must be in 1..86400")
        if not (0 < self.card_seconds <= 10):
            raise ValueError("card_seconds must be in (0, 10]")

    @property
    def max_frames(self) -> int:
        """The most frames a video holds."""
        return self.fps * self.max_seconds

    @property
    def card_frames(self) -> int:
        """The frames one chapter card takes."""
        return max(1, round(self.card_seconds * self.fps))


def ffmpeg_binary() -> str | None:
    """The ffmpeg on PATH, or None."""
    return shutil.which("ffmpeg")


def recorder_command(binary: str, bounds: VideoBounds) -> list[str]:
    """The recorder: JPEGs on stdin copied, not re-encoded, into `FRAMES_FILE` (run in the
    workdir), one frame per 1/fps s of timeline."""
    source = ("-f", "mjpeg", "-framerate", str(bounds.fps), "-i", "pipe:0")
    return [binary, *_QUIET, *source, "-c:v", "copy", "-f", "matroska", FRAMES_FILE]


def encode_command(binary: str, bounds: VideoBounds, output: Path) -> list[str]:
    """The encode (run in the workdir): `FRAMES_FILE` scaled into the box, letterboxed, with
    `CAPTIONS_FILE` burned in, to an H.264 MP4 at `output` (an absolute path)."""
    w, h = bounds.width, bounds.height
    # Relative file names in the filter: a workdir path would need filtergraph escaping.
    fit = f"scale={w}:{h}:force_original_aspect_ratio=decrease:force_divisible_by=2"
    video_filter = f"{fit},pad={w}:{h}:(ow-iw)/2:(oh-ih)/2:black,setsar=1,format=yuv420p"
    return [
        binary,
        *_QUIET,
        *("-i", FRAMES_FILE, "-vf", f"{video_filter},ass={CAPTIONS_FILE}", "-r", str(bounds.fps)),
        # veryfast, measured on 20 s of a scrolling page: superfast saves a quarter of the CPU
        # for twice the size, faster costs more CPU for the same size. Two threads at most: the
        # two cores are shared with Chromium.
        *("-c:v", "libx264", "-preset", "veryfast", "-crf", "26", "-threads", "2"),
        *("-pix_fmt", "yuv420p", "-movflags", "+faststart", "-an", "-f", "mp4"),
        f"file:{output}",  # "file:" so that no part of the path is read as a protocol
    ]


_State = Literal["new", "recording", "finishing", "ended"]


class VideoEncoder:
    """One session video (see the module doc): `start`, then `frame` / `caption` / `chapter`
    while recording, then `finish` (the MP4) or `abort` (nothing left). The workdir holds the
    encoder's own files and is created when missing (and then removed at the end)."""

    def __init__(
        self,
        workdir: Path,
        bounds: VideoBounds,
        *,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        self._workdir = workdir
        self._bounds = bounds
        self._now = now
        self._state: _State = "new"
        self._binary = ""
        self._made_workdir = False
        self._t0 = 0.0
        self._latest = _BLACK_JPEG
        self._written = 0
        self._inserted = 0  # frames inserted for chapter cards
        self._cards: list[Card] = []
        self._captions: list[Caption] = []
        self._marks: list[Mark] = []
        self._failed = False
        self._wake = asyncio.Event()
        self._recorder: asyncio.subprocess.Process | None = None
        self._encoder: asyncio.subprocess.Process | None = None
        self._ticker: asyncio.Task[None] | None = None
        self._stderr = bytearray()  # the last bytes the running ffmpeg wrote on stderr
        self._part: Path | None = None  # the MP4 being written, renamed to the target at the end
        self._tasks = TaskOwner()  # the ticker and the stderr readers

    # ------------------------------------------------------------------------ recording

    @property
    def frames_written(self) -> int:
        """How many frames went to the recorder so far (tests wait on it)."""
        return self._written

    @property
    def position(self) -> float:
        """Seconds into the video where what happens now shows (0 before `start`)."""
        if self._state == "new":
            return 0.0
        return self._due() / self._bounds.fps

    @property
    def full(self) -> bool:
        """Whether the video reached `VideoBounds.max_seconds`: it takes no more frames,
        captions or chapters."""
        return self._state != "new" and self._due() >= self._bounds.max_frames

    async def start(self) -> None:
        """Start the recorder and the ticker; the timeline starts now. Raises BROWSER_ERROR
        when ffmpeg is not installed or cannot start."""
        if self._state != "new":
            raise RuntimeError("a VideoEncoder records once")
        binary = ffmpeg_binary()
        if binary is None:
            raise BrowserMeshError(
                ErrorCode.BROWSER_ERROR,
                variant="no_video_encoder",
                details={"reason": "no_video_encoder"},
                cause=FFMPEG_MISSING,
            )
        self._binary = binary
        if not self._workdir.exists():
            self._workdir.mkdir(parents=True, mode=0o700)
            self._made_workdir = True
        command = recorder_command(binary, self._bounds)
        try:
            self._recorder = await self._spawn(command, stdin=asyncio.subprocess.PIPE)
        except OSError as exc:
            await self._clean_up()
            raise self._failure(exit_status=None, error=type(exc).__name__) from None
        self._t0 = self._now()
        self._state = "recording"
        self._ticker = self._tasks.spawn(self._tick(), name="video-ticker")

    def frame(self, jpeg: bytes) -> None:
        """The page's latest picture (a JPEG); written at every tick until the next one.
        Anything that is not a whole JPEG is ignored (it would break the recorder's stream)."""
        if self._state != "recording" or not _is_jpeg(jpeg):
            return
        self._latest = jpeg

    def caption(self, text: str) -> None:
        """Show `text` at the bottom from now until the next caption or chapter, at most
        `CAPTION_MAX_S`; an empty text ends the caption shown."""
        if self._state == "recording" and not self.full:
            self._captions.append(Caption(self.position, text))

    def mark(
        self, box: tuple[float, float, float, float], viewport: tuple[float, float], label: str
    ) -> None:
        """Box an element from now (`MARK_MAX_S`): its border box `(x, y, width, height)` in
        the `viewport` `(width, height)`, both CSS pixels, and a label above it."""
        if self._state != "recording" or self.full:
            return
        self._marks.append(Mark(self.position, *box, *viewport, label))

    def chapter(self, title: str) -> None:
        """Insert a chapter card here: `VideoBounds.card_seconds` of a dark full-frame card
        with `title` centred; the page's frames continue after it."""
        if self._state != "recording" or self.full:
            return
        start = self.position
        frames = min(self._bounds.card_frames, self._bounds.max_frames - self._due())
        self._inserted += frames
        self._cards.append(Card(start, start + frames / self._bounds.fps, title))
        self._wake.set()  # the card's frames go out at once: the timeline moves on now

    def _page_frames(self) -> int:
        elapsed = max(0.0, self._now() - self._t0)
        return math.floor(elapsed * self._bounds.fps + 1e-9) + 1  # frame 0 at the start

    def _due(self) -> int:
        return min(self._bounds.max_frames, self._page_frames() + self._inserted)

    async def _tick(self) -> None:
        """Write the latest picture for every frame due, until stopped, full or failed; the
        frames due when stopped are written too, so the video lasts until `finish`."""
        interval = 1.0 / self._bounds.fps
        while True:
            self._wake.clear()  # before reading the state: a later wake-up is not lost
            stopping = self._state != "recording"
            due = self._due()
            while self._written < due and not self._failed:
                await self._write(self._latest)
            if stopping or self._failed or self._written >= self._bounds.max_frames:
                return
            next_at = self._t0 + self._page_frames() / self._bounds.fps
            wait_s = min(interval, max(0.001, next_at - self._now()))
            with contextlib.suppress(TimeoutError):
                await bounded(self._wake.wait(), wait_s * 1000)

    async def _write(self, jpeg: bytes) -> None:
        recorder = self._recorder
        stdin = recorder.stdin if recorder is not None else None
        if stdin is None or stdin.is_closing():
            self._failed = True
            return
        try:
            stdin.write(jpeg)
            await bounded(stdin.drain(), _WRITE_BUDGET_MS)
        except (OSError, TimeoutError):  # the recorder died or hangs
            self._failed = True
            return
        self._written += 1

    # ------------------------------------------------------------------------ the end

    async def finish(self, target: Path, secrets: SecretValues | None = None) -> int:
        """Stop recording and encode the MP4 to `target` (mode 0600, replaced atomically);
        its size in bytes. Every caption, card title and box label shows with each of `secrets`
        replaced by ``[REDACTED]`` (the values known now, at the end: a secret learned after
        its caption was made is covered too). The workdir's files are removed whatever happens.
        Raises BROWSER_ERROR ("video encoding failed") when ffmpeg fails or the target cannot
        be written."""
        if self._state != "recording":
            raise RuntimeError("finish needs a recording started and not ended")
        self._state = "finishing"
        self._wake.set()
        try:
            await self._stop_recorder()
            self._write_captions(secrets)
            part = target.parent.resolve() / f".{target.name}.{os.getpid()}.part"
            self._part = part
            # Made anew 0600 before ffmpeg opens it: the video is never readable by others.
            with contextlib.suppress(FileNotFoundError):
                os.unlink(part)  # a crashed run's leftover keeps its own mode
            os.close(os.open(part, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))
            budget = _ENCODE_BASE_MS + _ENCODE_PER_FRAME_MS * self._written
            status = await self._run(encode_command(self._binary, self._bounds, part), budget)
            if status != 0:
                raise self._failure(exit_status=status)
            os.replace(part, target)
            self._part = None
            return os.stat(target).st_size
        except OSError as exc:
            raise self._failure(exit_status=None, error=type(exc).__name__) from None
        finally:
            self._state = "ended"
            await self._clean_up()

    async def abort(self) -> None:
        """Stop everything and leave nothing: ffmpeg killed, tasks awaited, the workdir's
        files removed. Safe to call again, and after `finish`."""
        self._state = "ended"
        self._wake.set()
        await self._clean_up()

    async def _stop_recorder(self) -> None:
        """The ticker's last frames, then the recorder's end of input and exit."""
        ticker, recorder = self._ticker, self._recorder
        if ticker is not None and not await first_done([ticker], _CLOSE_BUDGET_MS):
            self._failed = True  # hung: a video missing its last frames is not the recording
        elif ticker is not None and (ticker.cancelled() or ticker.exception() is not None):
            self._failed = True
        if self._failed or recorder is None or recorder.stdin is None:
            raise self._failure(exit_status=recorder.returncode if recorder else None)
        recorder.stdin.close()
        try:
            status = await bounded(recorder.wait(), _CLOSE_BUDGET_MS)
        except TimeoutError:
            raise self._failure(exit_status=None, error="TimeoutError") from None
        if status != 0:
            raise self._failure(exit_status=status)

    def _write_captions(self, secrets: SecretValues | None) -> None:
        end = self._written / self._bounds.fps
        text = overlay_ass(self._bounds, end, self._cards, self._captions, self._marks, secrets)
        (self._workdir / CAPTIONS_FILE).write_text(text, encoding="utf-8", errors="replace")

    # ------------------------------------------------------------------------ processes

    async def _spawn(self, command: list[str], *, stdin: int) -> asyncio.subprocess.Process:
        process = await asyncio.create_subprocess_exec(
            *command,
            stdin=stdin,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
            cwd=self._workdir,
        )
        self._stderr.clear()
        if process.stderr is not None:
            self._tasks.spawn(self._read_stderr(process.stderr), name="video-ffmpeg-stderr")
        return process

    async def _read_stderr(self, stream: asyncio.StreamReader) -> None:
        # Read to the end, or a chatty ffmpeg blocks on a full pipe; keep only the tail.
        while chunk := await stream.read(4096):
            self._stderr += chunk
            del self._stderr[:-_STDERR_KEEP]

    async def _run(self, command: list[str], budget_ms: float) -> int:
        """Run one ffmpeg to its end (killed past `budget_ms`); its exit status."""
        self._encoder = await self._spawn(command, stdin=asyncio.subprocess.DEVNULL)
        try:
            return await bounded(self._encoder.wait(), budget_ms)
        except TimeoutError:
            raise self._failure(exit_status=None, error="TimeoutError") from None

    def _failure(self, *, exit_status: int | None, error: str | None = None) -> BrowserMeshError:
        tail = self._stderr.decode("utf-8", "replace")
        for path in (str(self._workdir.resolve()), str(self._workdir)):
            tail = tail.replace(path, "<workdir>")
        if self._part is not None:
            tail = tail.replace(str(self._part.parent), "<target>")
        internal: dict[str, object] = {"exitStatus": exit_status, "stderr": tail[-512:]}
        if error is not None:
            internal["error"] = error
        return BrowserMeshError(
            ErrorCode.BROWSER_ERROR,
            variant="video_encoding",
            details={"reason": "video_encoding"},
            cause=ENCODING_FAILED,
            internal=internal,
        )

    async def _clean_up(self) -> None:
        """Kill what runs, await every task, remove the files (idempotent)."""
        for process in (self._recorder, self._encoder):
            if process is None:
                continue
            if process.stdin is not None and not process.stdin.is_closing():
                process.stdin.close()
            if process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                with contextlib.suppress(TimeoutError):
                    await bounded(process.wait(), _KILL_BUDGET_MS)
        await self._tasks.aclose()
        files = [self._workdir / FRAMES_FILE, self._workdir / CAPTIONS_FILE]
        for path in [*files, *([self._part] if self._part else [])]:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        self._part = None
        if self._made_workdir:
            with contextlib.suppress(OSError):
                self._workdir.rmdir()


def _is_jpeg(data: bytes) -> bool:
    """A whole JPEG (start and end markers), within a sane size."""
    return (
        4 <= len(data) <= _MAX_PICTURE_BYTES
        and data[:2] == b"\xff\xd8"
        and data[-2:] == b"\xff\xd9"
    )
