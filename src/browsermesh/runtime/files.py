"""Files in and out of sessions (issue 14): uploads from the call, and downloads and PDFs kept as
session artifacts that the client reads through the protocol (no shared file system needed).

`SessionFiles` owns the task that saves each download (one per download, awaited or cancelled
when its session ends) and the artifact store; the runtime calls it from its tools and from its
session lifecycle.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import dataclasses
import mimetypes
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from browsermesh.engine.files import FilePayload
from browsermesh.errors import Bound, BrowserMeshError, ErrorCode, invalid_argument
from browsermesh.model import progress
from browsermesh.model.tasks import TaskOwner, cancel_and_await
from browsermesh.persistence.artifacts import KEPT_KINDS, Artifact, ArtifactStore, sanitize_name
from browsermesh.persistence.confined import read_in_root
from browsermesh.persistence.states import LOCAL_PRINCIPAL

if TYPE_CHECKING:
    from browsermesh.log import EventLog

MAX_UPLOAD_FILES = 20
MAX_UPLOAD_FILE_BYTES = 10_485_760
"""Per file (decoded), for content sent in the call."""
MAX_UPLOAD_CALL_BYTES = 26_214_400
"""All files of one call together."""
_B64_CHARS = (MAX_UPLOAD_FILE_BYTES + 2) // 3 * 4
_SOURCE_KEYS = ("contentBase64", "artifactId", "path")
WATCH_MIN_S = 0.002
WATCH_MAX_S = 0.05
"""How often a streaming download's bytes are looked at: every 50 ms when far from its quota,
down to every 2 ms as it nears it (at 250 MB/s, 2 ms is 0.5 MB)."""


def next_look(room: int, rate: float) -> float:
    """Seconds until the next look at a download with `room` bytes left under its quota that
    grows at `rate` bytes/s: half the time it needs to fill that room, within the bounds."""
    if rate <= 0:
        return WATCH_MAX_S
    return min(WATCH_MAX_S, max(WATCH_MIN_S, room / rate / 2))


def _mime(name: str, given: object, field: str) -> str:
    if given is None:
        return mimetypes.guess_type(name)[0] or "application/octet-stream"
    if not isinstance(given, str) or not 1 <= len(given) <= 128 or "/" not in given:
        raise invalid_argument(field, "a MIME type such as text/csv")
    return given


class SessionFiles:
    """Artifacts and download saving for every session of one runtime."""

    def __init__(self, store: ArtifactStore, log: EventLog, upload_root: Path | None) -> None:
        self.store = store
        self.log = log
        self.upload_root = upload_root
        self._tasks: dict[str, set[asyncio.Task[Any]]] = {}
        # Owns every download's save (or cancel); per session above, so one session's close
        # stops its own; `stop` awaits them all.
        self._owner = TaskOwner()
        # Playwright download object (by id) -> its artifact and saving task, for the
        # `download` wait kind; entries leave with their session (at most the count quota).
        self._saving: dict[int, tuple[Artifact, asyncio.Task[BrowserMeshError | None]]] = {}
        # Called with a session id when one of its downloads began or settled (the runtime
        # tells its watchers); on the event loop, never from a worker thread.
        self.on_change: Callable[[str], None] = lambda _session_id: None
        # The live view's download address of an artifact on this server, set by the HTTP
        # transport when the view is on (issue 35); None: no view serves artifacts.
        self.download_link: Callable[[str, str], str] | None = None

    def where(self, artifact: Artifact) -> dict[str, str]:
        """Where a person finds a saved trace or video: `download`, the live view's address
        (when there is a view), and `path`, the file itself, for the `local` principal only
        (the server's own user, on this machine; the file goes at the next start)."""
        out: dict[str, str] = {}
        if self.download_link is not None:
            out["download"] = self.download_link(artifact.session_id, artifact.artifact_id)
        if artifact.principal == LOCAL_PRINCIPAL:
            out["path"] = str(artifact.path)
        return out

    # ------------------------------------------------------------------ downloads

    def on_download(self, session_id: str, principal: str, page_id: str, download: Any) -> None:
        """Start saving a download of `page_id` (an `engine.files.EngineDownload`)."""
        name = sanitize_name(download.suggested_name)
        try:
            artifact = self.store.begin(
                session_id, principal, page_id, "download", name,
                mimetypes.guess_type(name)[0], download.url,
            )  # fmt: skip
        except BrowserMeshError as err:  # over the count quota: the download is not kept
            self.log.warn("download.refused", sessionId=session_id, code=err.code.value)
            task = self._owner.spawn(download.cancel())
        else:
            saving = self._owner.spawn(self._save(artifact, download))
            self._saving[id(download.download)] = (artifact, saving)
            self.on_change(session_id)
            task = saving
        tasks = self._tasks.setdefault(session_id, set())
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    async def _save(self, artifact: Artifact, download: Any) -> BrowserMeshError | None:
        """Watch the download against the byte quotas while it streams, then save it; the
        quota it broke (it was canceled, or not kept), or None."""
        try:
            refusal, failure = await self._watch(artifact, download)
            if refusal is None and failure is None:
                room = self.store.room(artifact)
                saved = await download.save(artifact.part_path, room)
                if saved.over:
                    refusal = self.store.progress(artifact, room + 1)
                failure = saved.failure
                if refusal is None and failure is None:
                    try:
                        await asyncio.to_thread(self.store.complete, artifact)
                    except BrowserMeshError as err:
                        refusal = err
        except asyncio.CancelledError:  # the session ends: its context deletes the browser's copy
            self.store.fail(artifact, "canceled")
            raise
        # Saved or not, the browser's copy goes now, not when the session closes.
        await download.discard()
        if refusal is not None:
            self.store.fail(artifact)
            self.log.warn(
                "download.refused", sessionId=artifact.session_id, code=refusal.code.value
            )
        elif failure is not None:
            self.store.fail(artifact, "canceled" if "cancel" in failure.lower() else "failed")
        self.on_change(artifact.session_id)
        return refusal

    async def _watch(
        self, artifact: Artifact, download: Any
    ) -> tuple[BrowserMeshError | None, str | None]:
        """Until the download ends, compare its bytes on disk with the quotas, looking more
        often as they near the bound; a breach cancels it at once. (the breach, the failure)."""
        waits = TaskOwner()  # this download's end, awaited or cancelled before returning
        done = waits.spawn(download.finished())
        loop = asyncio.get_running_loop()
        try:
            last, last_at, pause = 0, loop.time(), 0.0  # the first look at once
            while True:
                if pause:
                    await asyncio.wait({done}, timeout=pause)
                written = download.written()
                breach = self.store.progress(artifact, written)
                if breach is not None:
                    await download.cancel()
                    return breach, None
                if done.done():
                    failure: str | None = done.result()
                    return None, failure
                now = loop.time()
                rate = (written - last) / max(now - last_at, 1e-6)
                last, last_at = written, now
                pause = next_look(self.store.room(artifact) - written, rate)
        finally:
            await waits.aclose()

    async def finished(self, raw_download: Any, timeout_s: float) -> Artifact:
        """The artifact a download became, once it is saved within `timeout_s`; one refused by
        a quota is `LIMIT_EXCEEDED` with the bound it broke."""
        entry = self._saving.get(id(raw_download))
        if entry is None:  # refused before it began (over the count quota)
            raise BrowserMeshError(
                ErrorCode.LIMIT_EXCEEDED, cause="download refused by the artifact count quota"
            )
        artifact, task = entry
        # Playwright exposes no byte count to report: the phase is the wait.
        progress.report("waiting for the download to finish", total_ms=timeout_s * 1000)
        refusal = await asyncio.wait_for(asyncio.shield(task), timeout=max(timeout_s, 0.001))
        if refusal is not None:  # a fresh error per wait: the task's own stays as it is
            raise dataclasses.replace(refusal, cause="download refused by an artifact quota")
        return artifact

    async def close(self, session_id: str) -> None:
        """The session ends: stop its downloads, then delete its artifacts."""
        tasks = list(self._tasks.pop(session_id, ()))
        self._forget_saving(session_id)
        await cancel_and_await(*tasks)
        self.store.drop_session(session_id)

    def forget(self, session_id: str) -> None:
        """A session that ended: cancel its downloads now (awaited by `stop`), drop its files
        but its traces and videos (`KEPT_KINDS`: read after the session, until `drop`)."""
        for task in self._tasks.get(session_id, ()):
            task.cancel()
        self._forget_saving(session_id)
        self.store.drop_session(session_id, keep=KEPT_KINDS)

    def drop(self, session_id: str) -> None:
        """A closed session's record is forgotten: its kept traces and videos go too."""
        self.store.drop_session(session_id)

    def _forget_saving(self, session_id: str) -> None:
        for key in [k for k, (a, _) in self._saving.items() if a.session_id == session_id]:
            del self._saving[key]

    async def stop(self) -> None:
        """The runtime stops: every download's task is cancelled and awaited."""
        await self._owner.aclose()
        self._tasks.clear()

    # -------------------------------------------------------------------- uploads

    def payloads(self, session_id: str, raw: object, field: str = "files") -> list[FilePayload]:
        """The files of a `browser_file_upload` call (or a `fileChooser` wait at `field`),
        validated before any work starts."""
        if not isinstance(raw, list):
            raise invalid_argument(field, "array of files")
        if len(raw) > MAX_UPLOAD_FILES:
            raise invalid_argument(
                field,
                f"at most {MAX_UPLOAD_FILES} files",
                bound=Bound("files", "<=", MAX_UPLOAD_FILES),
            )
        out: list[FilePayload] = []
        total = 0
        for index, item in enumerate(raw):
            payload = self._payload(session_id, item, f"{field}[{index}]")
            total += len(payload.data)
            if total > MAX_UPLOAD_CALL_BYTES:
                raise invalid_argument(
                    field,
                    f"at most {MAX_UPLOAD_CALL_BYTES} bytes in all",
                    bound=Bound("uploadBytes", "<=", MAX_UPLOAD_CALL_BYTES),
                )
            out.append(payload)
        return out

    def _payload(self, session_id: str, item: object, field: str) -> FilePayload:
        if not isinstance(item, dict):
            raise invalid_argument(field, "object")
        sources = [k for k in _SOURCE_KEYS if k in item]
        if len(sources) != 1:
            raise invalid_argument(field, "exactly one of contentBase64, artifactId, path")
        if set(item) - {*_SOURCE_KEYS, "name", "mimeType"}:
            raise invalid_argument(field, "only the keys name, mimeType and one source")
        source = sources[0]
        if source == "contentBase64":
            data = self._decode(item["contentBase64"], f"{field}.contentBase64")
            if "name" not in item:
                raise invalid_argument(f"{field}.name", "required with contentBase64")
            name = sanitize_name(item["name"])
        elif source == "artifactId":
            artifact = self.store.get(session_id, item["artifactId"], f"{field}.artifactId")
            data = self._artifact_bytes(artifact, f"{field}.artifactId")
            name = sanitize_name(item.get("name", artifact.name))
        else:
            if self.upload_root is None:
                raise invalid_argument(
                    f"{field}.path", "only when the server runs with --upload-root DIR"
                )
            # Read once through one descriptor (persistence.confined): no second lookup by name.
            base, data = read_in_root(
                self.upload_root, item["path"], f"{field}.path", MAX_UPLOAD_FILE_BYTES
            )
            name = sanitize_name(item.get("name", base))
        if len(data) > MAX_UPLOAD_FILE_BYTES:
            raise self._too_big(field)
        return FilePayload(name, _mime(name, item.get("mimeType"), f"{field}.mimeType"), data)

    @staticmethod
    def _too_big(field: str) -> BrowserMeshError:
        return invalid_argument(
            field,
            f"at most {MAX_UPLOAD_FILE_BYTES} bytes per file",
            bound=Bound("fileBytes", "<=", MAX_UPLOAD_FILE_BYTES),
        )

    def _decode(self, raw: object, field: str) -> bytes:
        if not isinstance(raw, str):
            raise invalid_argument(field, "base64 string")
        if len(raw) > _B64_CHARS:
            raise self._too_big(field)
        try:
            return base64.b64decode(raw, validate=True)
        except (binascii.Error, ValueError):
            raise invalid_argument(field, "base64 (RFC 4648, standard alphabet)") from None

    def _artifact_bytes(self, artifact: Artifact, field: str) -> bytes:
        if artifact.state != "completed":
            raise invalid_argument(field, "a completed artifact")
        try:
            return artifact.path.read_bytes()
        except OSError:
            raise BrowserMeshError(ErrorCode.INTERNAL_ERROR) from None
