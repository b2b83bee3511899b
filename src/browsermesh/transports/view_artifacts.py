"""A session's artifacts over HTTP for its principal (issue 35): the live view's links to
traces and videos, and any artifact's download.

``GET /view/artifacts/{sessionId}/{artifactId}``: the viewer (the view's cookie, or ``local``)
must own the session (live, or a closed one whose record is kept: traces and videos outlive
their session); anything else is 404, never saying whether it exists for someone else. The
content is always an attachment with a fixed type per kind: a page's download may be HTML, and
this origin must never render it (a trace is `application/zip`, a video `video/mp4` so the
view's player can play it; every other kind `application/octet-stream`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Route

from browsermesh.errors import BrowserMeshError
from browsermesh.log import EventLog
from browsermesh.persistence.artifact_record import ArtifactKind
from browsermesh.runtime.core import RuntimeCore

__all__ = ["ARTIFACTS_PATH", "artifact_path", "artifact_routes"]

ARTIFACTS_PATH: Final = "/artifacts"
_SERVED_TYPES: Final[dict[ArtifactKind, str]] = {
    "download": "application/octet-stream",
    "pdf": "application/octet-stream",
    "trace": "application/zip",
    "video": "video/mp4",
}


def artifact_path(session_id: str, artifact_id: str) -> str:
    """The artifact's address below ``/view`` (the live view's cards link it)."""
    return f"{ARTIFACTS_PATH}/{quote(session_id, safe='')}/{quote(artifact_id, safe='')}"


def artifact_routes(
    core: RuntimeCore,
    viewer: Callable[[Request], str | None],
    log: EventLog,
    headers: Mapping[str, str],
) -> list[Route]:
    """The download route (see the module doc)."""

    def not_found() -> Response:
        return Response(b"not found", 404, dict(headers), media_type="text/plain")

    async def download(request: Request) -> Response:
        principal = viewer(request)
        if principal is None:
            return Response(b"unauthorized", 401, dict(headers), media_type="text/plain")
        session_id = request.path_params["session_id"]
        if core.owner_of(session_id) != principal:
            return not_found()
        try:
            artifact = core.files.store.get(session_id, request.path_params["artifact_id"])
        except BrowserMeshError:
            return not_found()
        if artifact.state != "completed":
            return not_found()
        log.info("view.artifact", principal=principal, sessionId=session_id)
        disposition = f"attachment; filename*=UTF-8''{quote(artifact.name, safe='')}"
        return FileResponse(
            artifact.path,
            200,
            {**headers, "content-disposition": disposition},
            media_type=_SERVED_TYPES[artifact.kind],
        )

    return [
        Route(ARTIFACTS_PATH + "/{session_id}/{artifact_id}", download, methods=["GET"]),
    ]
