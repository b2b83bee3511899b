"""Session videos (issue 35; reference §33.2): `browser_video start|chapter|stop`.

A video follows the page the session's calls use: the frames of that page's screencast
(engine/screencast.py, `VIDEO_BOUNDS`: a running screencast, at most 5 pictures a second) go to
an encoder (engine/video.py: Debian's ffmpeg) that keeps the timeline at its frame rate, so a
still page still fills it. Each call on the session is a caption (tool and target as given, then
its outcome: model.call_label), and a call that targets an element gets a box around it
(found beside the call by the engine's `element_mark`, never delaying it); `chapter` inserts a
title card. When a call addresses another page, the video follows it from then on.

`stop` encodes the recording into an MP4 artifact of the session under the store's quotas; a
session that closes while recording saves its video the same way (a kept kind: it outlives the
session). Nothing here waits in the session's queue longer than attaching to a page: the
encoding of `stop` runs after the call's queue slot.

A caption carries the target as the client wrote it, which may hold a secret value the session
knows (a locator naming a password); an outcome or a chapter title could too. Every text of the
video is shown with the session's known secrets (`SessionRecord.step_secrets`, in each form a
label may write them) replaced by ``[REDACTED]``, at the encoding: the secrets known then
include those learned during a call whose caption was already made (the recording reads the
page's password values inside the call).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Protocol

from browsermesh.engine.screencast import FrameSink, Screencaster
from browsermesh.engine.video import VideoBounds, VideoEncoder
from browsermesh.errors import BrowserMeshError, invalid_argument
from browsermesh.model import call_label
from browsermesh.model.arguments import bounded_string, one_of
from browsermesh.model.deadline import Deadline, OperationContext
from browsermesh.model.frame_pacing import VIDEO_BOUNDS, Frame, PictureBounds
from browsermesh.model.ids import short_id
from browsermesh.model.locators import Target, parse_element_target, parse_target
from browsermesh.model.tasks import cancel_and_await
from browsermesh.persistence.artifacts import Artifact
from browsermesh.persistence.fileio import DIR_MODE
from browsermesh.persistence.trace_scrub import secret_forms
from browsermesh.redact import SecretValues
from browsermesh.runtime.core import RuntimeCore
from browsermesh.runtime.session import PageRecord, SessionRecord

__all__ = ["CHAPTER_MAX_CHARS", "VIDEO_ACTIONS", "SessionVideos", "VideoRun", "known_secrets"]

VIDEO_ACTIONS: Final = ("start", "chapter", "stop")
CHAPTER_MAX_CHARS: Final = 120
MARK_BUDGET_MS: Final = 2_000
"""Finding a call's element for its box in the video may take this long."""


class PictureStream(Protocol):
    """One page's pictures (engine/screencast.py's `PageScreencast`)."""

    async def start(self) -> None: ...
    async def close(self) -> None: ...


class PictureSource(Protocol):
    """Opens a page's pictures (engine/screencast.py's `Screencaster`)."""

    def open(self, handle: Any, sink: FrameSink, bounds: PictureBounds) -> PictureStream: ...


@dataclass(eq=False)
class VideoRun:
    """The video a session is recording: its encoder, its work directory and the page it
    follows (with that page's picture stream)."""

    encoder: VideoEncoder
    workdir: Path
    page_id: str | None = None
    stream: PictureStream | None = None
    label: str = field(default="")
    # Locating the element of the latest call, for its box (ended by the next call or stop).
    marking: asyncio.Task[None] | None = None


class SessionVideos:
    """Videos of every session of one runtime (see the module)."""

    def __init__(
        self,
        core: RuntimeCore,
        source: PictureSource | None = None,
        bounds: VideoBounds | None = None,
    ) -> None:
        self.core = core
        self.source: PictureSource = source if source is not None else Screencaster()
        self.bounds = bounds if bounds is not None else VideoBounds()
        core.step_watches.append(self)

    # --------------------------------------------------------------------- the tool

    async def video(
        self, principal: str, session_id: object, args: dict[str, Any]
    ) -> tuple[str, dict[str, Any]]:
        """`browser_video`: start (optionally with a first chapter), chapter, stop."""
        action = one_of(args.get("action"), "action", VIDEO_ACTIONS)
        raw_chapter = args.get("chapter")
        chapter = (
            None
            if raw_chapter is None
            else bounded_string(raw_chapter, "chapter", CHAPTER_MAX_CHARS, min_chars=1)
        )
        if action == "chapter" and chapter is None:
            raise invalid_argument("chapter", "the chapter's title (with action chapter)")

        async def job(rec: SessionRecord, ctx: OperationContext) -> VideoRun | None:
            if action == "start":
                if rec.video is not None:
                    raise invalid_argument(
                        "action", "start when no video records (stop the running one)"
                    )
                await self._start(rec)
                assert rec.video is not None
                if chapter is not None:
                    rec.video.encoder.chapter(chapter)
                return None
            run = rec.video
            if run is None:
                raise invalid_argument("action", f"{action} while a video records (start one)")
            if action == "chapter":
                assert chapter is not None
                run.encoder.chapter(chapter)
                return None
            rec.video = None
            await self._detach(run)
            return run

        op_id, stopped = await self.core.run_session_op(principal, session_id, "browser_video", job)
        if action == "start":
            return op_id, {"recording": True}
        if action == "chapter":
            return op_id, {"recording": True, "chapter": chapter}
        assert stopped is not None
        rec = self.core.lookup(principal, session_id)
        artifact = await self._encode(rec, stopped, self._begin(rec, stopped))
        return op_id, {"artifact": artifact.view(), **self.core.files.where(artifact)}

    # ------------------------------------------------------------ steps and lifecycle

    def watching(self, rec: SessionRecord) -> bool:
        return rec.video is not None

    async def step_began(
        self, rec: SessionRecord, page_id: str | None, tool: str, ctx: OperationContext
    ) -> None:
        run = rec.video
        if run is None or tool == "browser_video":
            return
        note = call_label.current()
        run.label = note.label() if note is not None and note.tool == tool else tool
        run.encoder.caption(run.label)
        await _stop_marking(run)  # the previous call's box, if it is still being looked for
        if page_id is not None and page_id != run.page_id and page_id in rec.pages:
            await self._follow(rec, run, rec.pages[page_id])
        target = _target_of(note.args) if note is not None and note.tool == tool else None
        if target is not None and page_id in rec.pages:
            # Beside the call, not before it, and not awaited by it: the box costs the call
            # nothing (it shows once found, within MARK_BUDGET_MS).
            run.marking = self.core.tasks.spawn(self._mark(run, rec.pages[page_id], target))

    async def step_ended(
        self, rec: SessionRecord, page_id: str | None, code: str | None, ctx: OperationContext
    ) -> None:
        run = rec.video
        if run is None or not run.label:
            return
        run.encoder.caption(f"{run.label} → {code or 'ok'}")
        run.label = ""

    async def session_started(self, rec: SessionRecord, ctx: OperationContext) -> None:
        return None  # videos start only when asked

    async def session_ending(self, rec: SessionRecord, *, keep: bool) -> None:
        """The session closes: a running video is saved (its encoding owned by the runtime),
        or dropped when not `keep`."""
        run, rec.video = rec.video, None
        if run is None:
            return
        await self._detach(run)
        if not keep:
            await _drop(run)
            return
        try:
            artifact = self._begin(rec, run)
        except BrowserMeshError as err:
            self.core.log.warn("video.failed", sessionId=rec.session_id, code=err.code.value)
            return
        # Encoding may take seconds: the close goes on; the runtime owns and awaits it.
        self.core.tasks.spawn(self._encode_quietly(rec, run, artifact))

    # -------------------------------------------------------------------- internals

    async def _start(self, rec: SessionRecord) -> None:
        root = self.core.files.store.root
        root.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
        workdir = Path(tempfile.mkdtemp(prefix="video-", dir=root))  # 0700, cleared at start-up
        encoder = VideoEncoder(workdir, self.bounds)
        try:
            await encoder.start()
        except BaseException:
            shutil.rmtree(workdir, ignore_errors=True)
            raise
        run = VideoRun(encoder, workdir)
        rec.video = run
        page_id = rec.default_page_id
        if page_id is not None and page_id in rec.pages:
            await self._follow(rec, run, rec.pages[page_id])
        self.core.log.info("video.started", sessionId=rec.session_id, principal=rec.principal)

    async def _follow(self, rec: SessionRecord, run: VideoRun, page: PageRecord) -> None:
        """Record `page` from now on (the previous page's pictures stop)."""
        old, run.stream = run.stream, None
        if old is not None:
            await old.close()
        run.page_id = page.page_id
        stream = self.source.open(page.handle, _sink(run.encoder), VIDEO_BOUNDS)
        run.stream = stream
        await stream.start()

    async def _mark(self, run: VideoRun, page: PageRecord, target: Target) -> None:
        """Box the call's element in the video, if it can be found within `MARK_BUDGET_MS`."""
        ctx = OperationContext(short_id("o"), Deadline(MARK_BUDGET_MS))
        try:
            mark, viewport = await self.core.engine.element_mark(page.handle, target, ctx)
        except BrowserMeshError:
            return  # not there (yet, or any more): the caption still says what was meant
        run.encoder.mark((mark.x, mark.y, mark.width, mark.height), viewport, mark.label)

    async def _detach(self, run: VideoRun) -> None:
        await _stop_marking(run)
        stream, run.stream = run.stream, None
        if stream is not None:
            await stream.close()

    def _begin(self, rec: SessionRecord, run: VideoRun) -> Artifact:
        """The video's artifact, in progress (over the count quota: the recording is dropped)."""
        try:
            return self.core.files.store.begin(
                rec.session_id, rec.principal, run.page_id, "video",
                f"video-{rec.name or rec.session_id}.mp4", "video/mp4", None,
            )  # fmt: skip
        except BaseException:
            self.core.tasks.spawn(_drop(run))
            raise

    async def _encode(self, rec: SessionRecord, run: VideoRun, artifact: Artifact) -> Artifact:
        """Encode the recording into `artifact` and complete it (quota-checked)."""
        store = self.core.files.store
        try:
            await run.encoder.finish(artifact.part_path, known_secrets(rec))
            await asyncio.to_thread(store.complete, artifact)
        except BrowserMeshError as err:
            store.fail(artifact)
            # What ffmpeg said stays internal (it may name paths): its exit status is enough
            # to tell a crash from a refusal in the server's log.
            status, error = err.internal.get("exitStatus"), err.internal.get("error")
            reason = f"exit_{status}" if status is not None else str(error or "unknown")
            self.core.log.warn(
                "video.failed", sessionId=rec.session_id, code=err.code.value, reason=reason
            )
            raise
        except BaseException:
            store.fail(artifact)
            raise
        finally:
            await _drop(run)
        self.core.log.info("video.saved", sessionId=rec.session_id, principal=rec.principal)
        self.core.changed(rec, "artifacts")
        return artifact

    async def _encode_quietly(self, rec: SessionRecord, run: VideoRun, artifact: Artifact) -> None:
        with contextlib.suppress(BrowserMeshError):  # logged by `_encode`
            await self._encode(rec, run, artifact)


def known_secrets(rec: SessionRecord) -> SecretValues:
    """The secret values `rec` knows, each in every form a text may write it (a label writes a
    locator's value JSON-escaped: a password with a quote is not there as typed)."""
    return SecretValues(form for value in rec.step_secrets.values() for form in secret_forms(value))


async def _stop_marking(run: VideoRun) -> None:
    marking, run.marking = run.marking, None
    if marking is not None:
        await cancel_and_await(marking)


async def _drop(run: VideoRun) -> None:
    """The recording's encoder and files go (after a save, or instead of one)."""
    await run.encoder.abort()
    shutil.rmtree(run.workdir, ignore_errors=True)


def _target_of(args: Mapping[str, Any]) -> Target | None:
    """The element a call targets (`ref`/`locator`, or an action's `target`), if any."""
    try:
        if "ref" in args or "locator" in args:
            return parse_target(dict(args))
        action = args.get("action")
        if isinstance(action, Mapping) and "target" in action:
            return parse_element_target(action["target"])
    except BrowserMeshError:
        return None
    return None


def _sink(encoder: VideoEncoder) -> FrameSink:
    def deliver(frame: Frame) -> None:
        with contextlib.suppress(binascii.Error, ValueError):
            encoder.frame(base64.b64decode(frame.data))

    return deliver
