"""A session's artifacts over HTTP for its principal (issue 35): the live view's links to
traces and videos, and any artifact's download.

``GET /view/artifacts/{sessionId}/{artifactId}``: the viewer (the view's cookie, or ``local``)
must own the session (live, or a closed one whose record is kept: traces and videos outlive
their session); anything else is 404, never saying whether it exists for someone else. The
content is always an attachment with a fixed type per kind: a page's download may be HTML, and
this origin must never render it (a trace is `application/zip`, a video `video/mp4` so the
view's player can play it; every other kind `application/octet-stream`).

In a fleet (reference §37.9) the artifact of a session another replica holds (or held) is
fetched from that replica over the fleet's channel.

The file is opened before the answer starts and sent from that open file: a file removed
after the lookup (a prune, a session's records forgotten) is 404 like an unknown id if it went
before the open, and is sent whole if it went after (an open file outlives its name), never a
500 halfway.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Final
from urllib.parse import quote

import anyio
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from browsermesh.errors import BrowserMeshError
from browsermesh.log import EventLog
from browsermesh.persistence.artifact_record import ArtifactKind
from browsermesh.runtime.core import RuntimeCore

__all__ = [
    "ARTIFACTS_PATH",
    "Relay",
    "Serve",
    "artifact_path",
    "artifact_routes",
    "artifact_server",
]

ARTIFACTS_PATH: Final = "/artifacts"
_SERVED_TYPES: Final[dict[ArtifactKind, str]] = {
    "download": "application/octet-stream",
    "pdf": "application/octet-stream",
    "trace": "application/zip",
    "video": "video/mp4",
}
_CHUNK_BYTES: Final = 64 * 1024  # as Starlette's FileResponse reads


def artifact_path(session_id: str, artifact_id: str) -> str:
    """The artifact's address below ``/view`` (the live view's cards link it)."""
    return f"{ARTIFACTS_PATH}/{quote(session_id, safe='')}/{quote(artifact_id, safe='')}"


Serve = Callable[[str, str, str], Awaitable[Response]]
"""`serve(principal, sessionId, artifactId)`: the artifact's answer for a checked principal."""
Relay = Callable[[str, str, str], Awaitable[Response | None]]
"""`relay(principal, sessionId, artifactId)`: the answer of the replica that holds (or held)
the session, when it is another replica of the fleet (reference §37.9), else None."""


def artifact_server(core: RuntimeCore, log: EventLog, headers: Mapping[str, str]) -> Serve:
    """The download of this replica's sessions' artifacts (see the module doc), for a
    principal already checked: by this listener's cookie, or by the fleet's channel."""

    def not_found() -> Response:
        return Response(b"not found", 404, dict(headers), media_type="text/plain")

    async def serve(principal: str, session_id: str, artifact_id: str) -> Response:
        if core.owner_of(session_id) != principal:
            return not_found()
        try:
            artifact = core.files.store.get(session_id, artifact_id)
        except BrowserMeshError:
            return not_found()
        if artifact.state != "completed":
            return not_found()
        try:
            file = await anyio.open_file(artifact.path, "rb")  # closed by the response
        except OSError:  # gone since the lookup: as if it never was
            return not_found()
        log.info("view.artifact", principal=principal, sessionId=session_id)
        disposition = f"attachment; filename*=UTF-8''{quote(artifact.name, safe='')}"
        return _OpenFileResponse(
            file,
            {**headers, "content-disposition": disposition},
            _SERVED_TYPES[artifact.kind],
        )

    return serve


def artifact_routes(
    core: RuntimeCore,
    viewer: Callable[[Request], Awaitable[str | None]],
    log: EventLog,
    headers: Mapping[str, str],
    relay: Relay | None = None,
) -> list[Route]:
    """The download route (see the module doc); with `relay`, another replica's session's
    artifact is fetched from it."""
    serve = artifact_server(core, log, headers)

    async def download(request: Request) -> Response:
        principal = await viewer(request)
        if principal is None:
            return Response(b"unauthorized", 401, dict(headers), media_type="text/plain")
        session_id = request.path_params["session_id"]
        artifact_id = request.path_params["artifact_id"]
        if relay is not None and core.owner_of(session_id) is None:
            relayed = await relay(principal, session_id, artifact_id)
            if relayed is not None:
                return relayed
        return await serve(principal, session_id, artifact_id)

    return [
        Route(ARTIFACTS_PATH + "/{session_id}/{artifact_id}", download, methods=["GET"]),
    ]


class _OpenFileResponse(StreamingResponse):
    """An open file sent in chunks (its size, read from the open file, as the content length)
    and closed when the answer ends, however it ends (sent, the client gone, cancelled)."""

    def __init__(
        self, file: anyio.AsyncFile[bytes], headers: Mapping[str, str], media_type: str
    ) -> None:
        try:
            size = os.fstat(file.wrapped.fileno()).st_size
        except BaseException:
            file.wrapped.close()
            raise
        super().__init__(_chunks(file, size), 200, headers, media_type)
        self.headers["content-length"] = str(size)
        self._file = file

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            # Not `aclose`: in a cancelled scope its thread hop would raise before the close.
            self._file.wrapped.close()


async def _chunks(file: anyio.AsyncFile[bytes], size: int) -> AsyncIterator[bytes]:
    """The first `size` bytes of `file`, read off the event loop (fewer if it was cut short:
    the client then sees a short body, not another file's bytes)."""
    left = size
    while left > 0:
        chunk = await file.read(min(_CHUNK_BYTES, left))
        if not chunk:
            return
        left -= len(chunk)
        yield chunk
