"""The per-session artifact store: downloads and generated PDFs on disk (issue 14).

Layout: ``<data_dir>/artifacts/<session-dir>/<artifactId>`` (ids are model.ids short ids such
as ``a4k2q``: no file outlives the server, see below), where ``<session-dir>`` is the first
32 hex digits of the SHA-256 of the session id (never the raw id: it is not a safe path
component). While content is being written it lives in ``<artifactId>.part``; completion
checks the byte quotas and then atomically renames it into place, so a file without the suffix is
always complete. Directories are created on demand with mode 0700 and files get mode 0600, both
set explicitly so the umask does not matter.

Records live in memory only (one dict per session); the disk holds only content. No session
survives a restart, so start-up calls `ArtifactStore.clear_all`, which removes everything under
the root, half-written files included.

Quotas (`ArtifactLimits`, all `LIMIT_EXCEEDED`):

- ``artifacts`` (``BROWSERMESH_MAX_ARTIFACTS``): in-progress plus completed artifacts of one
  session, checked when an artifact begins. Failed and canceled records do not count; they are
  kept for the listing, but only the newest `max_count` of them per session (older ones are
  forgotten, so a page that keeps failing downloads cannot grow the memory without bound).
- ``artifactSessionBytes`` / ``artifactPrincipalBytes`` / ``artifactTotalBytes``: the bytes on
  disk of the session's / the principal's / every session's artifacts, completed ones and those
  in progress (their bytes so far, reported with `progress` while a download streams), checked
  at each `progress` and at completion. A refused artifact is deleted and kept as ``failed``.

Calls come from one asyncio loop, but file writes may run in worker threads
(`asyncio.to_thread`); the record bookkeeping is guarded by a lock and every method is short and
synchronous. Unexpected OS errors become ``INTERNAL_ERROR`` whose cause names only the exception
type and errno, never a path.

The record, its limits and its cleaned labels live in `persistence.artifact_record` (their names
are importable from here too); the file modes and the exclusive write in `persistence.fileio`.
"""

from __future__ import annotations

import base64
import builtins
import contextlib
import hashlib
import os
import shutil
import stat
import threading
from pathlib import Path
from typing import Any, Final, Literal

from browsermesh.errors import Bound, BrowserMeshError, ErrorCode, invalid_argument
from browsermesh.model.arguments import bounded_int
from browsermesh.model.clock import iso_now
from browsermesh.model.ids import short_id
from browsermesh.persistence.artifact_record import (
    DEFAULT_NAME,
    KEPT_KINDS,
    MIME_MAX_CHARS,
    NAME_MAX_CHARS,
    PART_SUFFIX,
    SOURCE_URL_MAX_CHARS,
    Artifact,
    ArtifactKind,
    ArtifactLimits,
    ArtifactState,
    clean_mime,
    clean_url,
    sanitize_name,
)
from browsermesh.persistence.fileio import (
    DIR_MODE,
    FILE_MODE,
    os_failure,
    read_range,
    utf8_cut,
    write_exclusive,
)
from browsermesh.persistence.trust import distrust

__all__ = [
    "COMPLETED_RULE",
    "DEFAULT_NAME",
    "GET_RULE",
    "KEPT_KINDS",
    "MIME_MAX_CHARS",
    "NAME_MAX_CHARS",
    "PART_SUFFIX",
    "READ_DEFAULT_BYTES",
    "READ_MAX_BYTES",
    "SOURCE_URL_MAX_CHARS",
    "Artifact",
    "ArtifactKind",
    "ArtifactLimits",
    "ArtifactState",
    "ArtifactStore",
    "artifacts_root",
    "sanitize_name",
    "session_dir_name",
]

READ_DEFAULT_BYTES: Final = 65_536
READ_MAX_BYTES: Final = 1_048_576

VAR_MAX_ARTIFACTS: Final = "BROWSERMESH_MAX_ARTIFACTS"
VAR_MAX_SESSION_BYTES: Final = "BROWSERMESH_MAX_ARTIFACT_SESSION_BYTES"
VAR_MAX_PRINCIPAL_BYTES: Final = "BROWSERMESH_MAX_ARTIFACT_PRINCIPAL_BYTES"
VAR_MAX_TOTAL_BYTES: Final = "BROWSERMESH_MAX_ARTIFACT_TOTAL_BYTES"

GET_RULE: Final = "an artifactId of this session (browser_downloads lists them)"
COMPLETED_RULE: Final = "a completed artifact"

_DEFAULT_LIMITS: Final = ArtifactLimits()


def artifacts_root(data_dir: Path) -> Path:
    """Where the artifacts of a server with this data directory live (the store's root)."""
    return data_dir / "artifacts"


def session_dir_name(session_id: str) -> str:
    """The directory of a session below the root: a hash, never the raw id."""
    return hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]


# --- errors -------------------------------------------------------------------------------------


def _untrusted(reason: str) -> BrowserMeshError:
    return BrowserMeshError(ErrorCode.INTERNAL_ERROR, cause=f"artifact directory is {reason}")


def _limit(name: str, number: int, variable: str) -> BrowserMeshError:
    return BrowserMeshError(ErrorCode.LIMIT_EXCEEDED, bound=Bound(name, "<=", number, variable))


def _unlink_quietly(path: Path) -> None:
    """Remove a file (or a directory someone put in its place) if present; never raises."""
    try:
        os.unlink(path)
    except IsADirectoryError:
        shutil.rmtree(path, ignore_errors=True)
    except OSError:
        return


# --- the store ----------------------------------------------------------------------------------


class ArtifactStore:
    """Artifacts of live sessions: in-memory records, content under `root` (see the module)."""

    def __init__(self, root: Path, limits: ArtifactLimits = _DEFAULT_LIMITS) -> None:
        self.root = Path(os.path.abspath(root))
        self.limits = limits
        self._lock = threading.RLock()
        self._sessions: dict[str, dict[str, Artifact]] = {}

    # -- start-up and session end --

    def clear_all(self) -> None:
        """Forget every record and remove everything under the root (best effort; a symlinked
        root is removed as a link, never followed)."""
        with self._lock:
            self._sessions.clear()
            try:
                info = os.lstat(self.root)
            except OSError:
                return
            if stat.S_ISDIR(info.st_mode):
                shutil.rmtree(self.root, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    os.unlink(self.root)

    def drop_session(self, session_id: str, *, keep: frozenset[ArtifactKind] = frozenset()) -> None:
        """Forget a session's records (in-progress ones become ``canceled``) and delete its
        content; artifacts of the `keep` kinds (completed or still being written) stay, with
        their directory, until a later call without `keep`."""
        with self._lock:
            records = self._sessions.pop(session_id, {})
            kept = {
                key: a
                for key, a in records.items()
                if a.kind in keep and a.state in ("completed", "in_progress")
            }
            for artifact in records.values():
                if artifact.artifact_id in kept:
                    continue
                if artifact.state == "in_progress":
                    artifact.state = "canceled"
                artifact.size = 0
                if kept:
                    _unlink_quietly(artifact.part_path)
                    _unlink_quietly(artifact.path)
            if kept:
                self._sessions[session_id] = kept
            else:
                self._remove_session_dir(session_id)

    # -- writing --

    def begin(
        self,
        session_id: str,
        principal: str,
        page_id: str | None,
        kind: ArtifactKind,
        suggested_name: object,
        mime_type: object,
        source_url: object,
    ) -> Artifact:
        """Start an artifact (``in_progress``); the caller writes its content to `part_path`."""
        with self._lock:
            records = self._sessions.get(session_id, {})
            active = sum(1 for a in records.values() if a.state in ("in_progress", "completed"))
            if active >= self.limits.max_count:
                raise _limit("artifacts", self.limits.max_count, VAR_MAX_ARTIFACTS)
            directory = self._ensure_session_dir(session_id)
            artifact_id = short_id("a")  # unique for the server's life; start-up clears the disk
            artifact = Artifact(
                artifact_id=artifact_id,
                session_id=session_id,
                principal=principal,
                page_id=page_id,
                kind=kind,
                name=sanitize_name(suggested_name),
                mime_type=clean_mime(mime_type),
                source_url=clean_url(source_url),
                state="in_progress",
                size=0,
                created_at=iso_now(),
                path=directory / artifact_id,
            )
            self._sessions.setdefault(session_id, records)[artifact_id] = artifact
            self._prune(records)
            return artifact

    def complete(self, artifact: Artifact) -> Artifact:
        """Check the byte quotas and move the ``.part`` file into place (``completed``).

        An artifact that is no longer in progress (canceled, its session dropped) only has its
        leftover ``.part`` removed and is returned unchanged. A missing or non-regular ``.part``
        fails the artifact (``BROWSER_ERROR``); a quota breach deletes it, marks it ``failed``
        and raises ``LIMIT_EXCEEDED``.
        """
        with self._lock:
            if artifact.state != "in_progress" or not self._is_live(artifact):
                _unlink_quietly(artifact.part_path)
                if not self._is_live(artifact):
                    self._remove_session_dir_if_empty(artifact)
                return artifact
            try:
                info = os.lstat(artifact.part_path)
            except OSError:
                info = None
            if info is None or not stat.S_ISREG(info.st_mode):
                self.fail(artifact)
                raise BrowserMeshError(
                    ErrorCode.BROWSER_ERROR, cause="artifact content was not written"
                )
            size = info.st_size
            breach = self._quota_breach(artifact, size)
            if breach is not None:
                self.fail(artifact)
                raise breach
            try:
                os.chmod(artifact.part_path, FILE_MODE)  # a regular file of our 0700 directory
                os.replace(artifact.part_path, artifact.path)
            except OSError as exc:
                self.fail(artifact)
                raise os_failure(exc, "artifact completion failed") from None
            artifact.size = size
            artifact.state = "completed"
            return artifact

    def progress(self, artifact: Artifact, written: int) -> BrowserMeshError | None:
        """Record the bytes an in-progress artifact has on disk so far (they count against the
        byte quotas of every other artifact too); the quota they breach, if any."""
        with self._lock:
            if artifact.state != "in_progress" or not self._is_live(artifact):
                return None
            artifact.size = written
            return self._quota_breach(artifact, written)

    def room(self, artifact: Artifact) -> int:
        """How many bytes `artifact` may have under every byte quota (0 when none are left)."""
        with self._lock:
            session, principal, total = self._used(artifact)
            limits = self.limits
            return max(
                0,
                min(
                    limits.max_session_bytes - session,
                    limits.max_principal_bytes - principal,
                    limits.max_total_bytes - total,
                ),
            )

    def fail(self, artifact: Artifact, state: Literal["failed", "canceled"] = "failed") -> None:
        """Delete the artifact's content (``.part`` and final file) and keep the record with
        `state` and size 0."""
        with self._lock:
            _unlink_quietly(artifact.part_path)
            _unlink_quietly(artifact.path)
            artifact.state = state
            artifact.size = 0
            if not self._is_live(artifact):
                self._remove_session_dir_if_empty(artifact)

    def put(
        self,
        session_id: str,
        principal: str,
        page_id: str | None,
        kind: ArtifactKind,
        name: object,
        mime_type: object,
        data: bytes,
        source_url: object = None,
    ) -> Artifact:
        """`begin` + write `data` (mode 0600) + `complete`, for content the server made (PDFs)."""
        artifact = self.begin(session_id, principal, page_id, kind, name, mime_type, source_url)
        try:
            write_exclusive(artifact.part_path, data, sync=False)
        except OSError as exc:
            self.fail(artifact)
            raise os_failure(exc, "artifact write failed") from None
        except BaseException:
            self.fail(artifact)
            raise
        return self.complete(artifact)

    # -- reading --

    def list(self, session_id: str) -> builtins.list[Artifact]:
        """The session's artifacts, newest first."""
        with self._lock:
            return builtins.list(reversed(self._sessions.get(session_id, {}).values()))

    def get(self, session_id: str, artifact_id: object, field: str = "artifactId") -> Artifact:
        """The artifact `artifact_id` of this session; any other value (unknown, or of another
        session) is `INVALID_ARGUMENT` naming `field`, never saying whether it exists elsewhere."""
        with self._lock:
            found = (
                self._sessions.get(session_id, {}).get(artifact_id)
                if isinstance(artifact_id, str)
                else None
            )
        if found is None:
            raise invalid_argument(field, GET_RULE)
        return found

    def usage(self, session_id: str) -> tuple[int, int]:
        """(count, bytes) of the session's completed artifacts."""
        with self._lock:
            done = [
                a for a in self._sessions.get(session_id, {}).values() if a.state == "completed"
            ]
            return len(done), sum(a.size for a in done)

    def read(
        self,
        artifact: Artifact,
        mode: Literal["text", "base64"],
        offset: int = 0,
        max_bytes: int = READ_DEFAULT_BYTES,
    ) -> dict[str, Any]:
        """Bytes ``[offset, offset + max_bytes)`` of a completed artifact, as UTF-8 text (never
        ending inside a multibyte sequence unless that sequence alone is longer than `max_bytes`;
        invalid bytes become U+FFFD) or base64."""
        if artifact.state != "completed" or not self._is_live(artifact):
            raise invalid_argument("artifactId", COMPLETED_RULE)
        size = artifact.size
        bounded_int(offset, "offset", 0, size)
        bounded_int(max_bytes, "maxBytes", 1, READ_MAX_BYTES)
        chunk = read_range(artifact.path, offset, max_bytes, "artifact")
        if mode == "text":
            if offset + len(chunk) < size:
                cut = utf8_cut(chunk)
                if cut > 0:
                    chunk = chunk[:cut]
            content = chunk.decode("utf-8", errors="replace")
        elif mode == "base64":
            content = base64.b64encode(chunk).decode("ascii")
        else:
            raise invalid_argument("encoding", "text or base64")
        length = len(chunk)
        truncated = offset + length < size
        out: dict[str, Any] = {
            "artifactId": artifact.artifact_id,
            "encoding": mode,
            "content": content,
            "offset": offset,
            "length": length,
            "size": size,
            "truncated": truncated,
        }
        if truncated:
            out["nextOffset"] = offset + length
        return out

    # -- internals --

    def _is_live(self, artifact: Artifact) -> bool:
        return self._sessions.get(artifact.session_id, {}).get(artifact.artifact_id) is artifact

    def _used(self, artifact: Artifact) -> tuple[int, int, int]:
        """Bytes of every other artifact on disk (completed, or in progress so far) of the
        artifact's session, of its principal, of every session."""
        session = principal = total = 0
        for session_id, records in self._sessions.items():
            for other in records.values():
                if other.state not in ("completed", "in_progress") or other is artifact:
                    continue
                total += other.size
                if other.principal == artifact.principal:
                    principal += other.size
                if session_id == artifact.session_id:
                    session += other.size
        return session, principal, total

    def _quota_breach(self, artifact: Artifact, size: int) -> BrowserMeshError | None:
        session, principal, total = (used + size for used in self._used(artifact))
        limits = self.limits
        if session > limits.max_session_bytes:
            return _limit("artifactSessionBytes", limits.max_session_bytes, VAR_MAX_SESSION_BYTES)
        if principal > limits.max_principal_bytes:
            return _limit(
                "artifactPrincipalBytes", limits.max_principal_bytes, VAR_MAX_PRINCIPAL_BYTES
            )
        if total > limits.max_total_bytes:
            return _limit("artifactTotalBytes", limits.max_total_bytes, VAR_MAX_TOTAL_BYTES)
        return None

    def _prune(self, records: dict[str, Artifact]) -> None:
        """Keep at most `max_count` failed/canceled records per session (the newest)."""
        ended = [key for key, a in records.items() if a.state in ("failed", "canceled")]
        for key in ended[: max(0, len(ended) - self.limits.max_count)]:
            del records[key]

    def _ensure_session_dir(self, session_id: str) -> Path:
        """Create (0700) and check the root and the session's directory: each must be a real
        directory of ours, not a symlink; group/other bits on one of ours are removed."""
        directory = self.root / session_dir_name(session_id)
        try:
            if not self.root.parent.is_dir():
                os.makedirs(self.root.parent, DIR_MODE, exist_ok=True)
                os.chmod(self.root.parent, DIR_MODE)
        except OSError as exc:
            raise os_failure(exc, "data directory creation failed") from None
        for path in (self.root, directory):
            try:
                os.mkdir(path, DIR_MODE)
            except FileExistsError:
                pass
            except OSError as exc:
                raise os_failure(exc, "artifact directory creation failed") from None
            try:
                info = os.lstat(path)
                reason = distrust(info, directory=True)
                if reason is not None:
                    raise _untrusted(reason)
                if stat.S_IMODE(info.st_mode) != DIR_MODE:
                    os.chmod(path, DIR_MODE)
            except OSError as exc:
                raise os_failure(exc, "artifact directory check failed") from None
        return directory

    def _remove_session_dir(self, session_id: str) -> None:
        directory = self.root / session_dir_name(session_id)
        try:
            info = os.lstat(directory)
        except OSError:
            return
        if stat.S_ISDIR(info.st_mode):
            shutil.rmtree(directory, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                os.unlink(directory)

    def _remove_session_dir_if_empty(self, artifact: Artifact) -> None:
        """A dropped session's directory that a late writer re-created."""
        if artifact.session_id in self._sessions:
            return
        with contextlib.suppress(OSError):
            os.rmdir(artifact.path.parent)
