"""The live view's take-over endpoints (issue 34, reference §30.1): a person takes a session's
page over, sends it mouse and keyboard input, and hands it back.

- ``POST /view/hold`` ``{viewer, sessionId, pageId}``: take the page over (200), or 409 with
  who holds it;
- ``POST /view/input`` ``{viewer, sessionId, events}``: play the holder's input (200), 409 when
  this tab does not hold the session (any more), 400 naming the field of a bad event;
- ``POST /view/release`` ``{viewer, sessionId}``: hand it back.

Who may: only a viewer signed in to the view (the same cookie as the view's page and event
stream; ``local`` without a token file, where the view and ``/mcp`` are open alike), for its own
principal's sessions (another principal's session is 404, as if it did not exist), from a page
of this server: ``Origin`` must be this server's, as for the view's sign-in form, so another site
cannot post input with the person's cookie. `viewer` is the view tab's own random id: it tells
the principal's tabs apart (one holder per session). Bodies are JSON, at most 64 KiB.

Every answer forbids caching and framing, like the view's. Nothing here reads a page.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any, Final

from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from browsermesh.errors import BrowserMeshError, ErrorCode, error_payload
from browsermesh.log import EventLog
from browsermesh.runtime.handover import Handover, HoldRefused, NotHolder

__all__ = ["MAX_INPUT_BODY_BYTES", "input_routes"]

MAX_INPUT_BODY_BYTES: Final = 65_536
_VIEWER_CHARS: Final = 64
_ID_CHARS: Final = 128


def _answer(status: int, body: dict[str, Any], headers: dict[str, str]) -> Response:
    return JSONResponse(body, status, headers)


async def _body(request: Request) -> dict[str, Any] | None:
    """The request's JSON object, or None (too large, not JSON, not an object)."""
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        return None
    raw = b""
    try:
        async for chunk in request.stream():
            raw += chunk
            if len(raw) > MAX_INPUT_BODY_BYTES:
                return None
    except ClientDisconnect:
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _text(body: dict[str, Any], key: str, limit: int) -> str | None:
    value = body.get(key)
    if isinstance(value, str) and 0 < len(value) <= limit and value.isprintable():
        return value
    return None


def input_routes(
    handover: Handover,
    viewer_of: Callable[[Request], str | None],
    same_origin: Callable[[Request], bool],
    log: EventLog,
    headers: dict[str, str],
) -> list[BaseRoute]:
    """The take-over routes, mounted under ``/view`` (see the module doc)."""

    async def guarded(request: Request) -> tuple[str, dict[str, Any]] | Response:
        principal = viewer_of(request)
        if principal is None:
            return _answer(401, {"error": "unauthorized"}, headers)
        if not same_origin(request):
            log.warn("view.input_refused", principal=principal, reason="not_same_origin")
            return _answer(403, {"error": "forbidden"}, headers)
        body = await _body(request)
        if body is None:
            return _answer(400, {"error": "bad_request", "message": "a JSON object"}, headers)
        return principal, body

    def addressed(body: dict[str, Any], *, page: bool) -> tuple[str, str, str] | Response:
        viewer = _text(body, "viewer", _VIEWER_CHARS)
        session_id = _text(body, "sessionId", _ID_CHARS)
        page_id = _text(body, "pageId", _ID_CHARS) if page else ""
        if viewer is None or session_id is None or page_id is None:
            missing = (
                "viewer" if viewer is None else "sessionId" if session_id is None else "pageId"
            )
            return _answer(400, {"error": "bad_request", "field": missing}, headers)
        return viewer, session_id, page_id

    def refused(err: BrowserMeshError) -> Response:
        status = 404  # not the viewer's (or no longer there)
        if "field" in err.details:  # a bad event: the field and the rule
            status = 400
        elif err.code in (
            ErrorCode.SESSION_CLOSING,
            ErrorCode.SESSION_NOT_READY,
            ErrorCode.BROWSER_ERROR,
        ):
            status = 409  # not now
        return _answer(status, {"error": err.code.value, **error_payload(err)["error"]}, headers)

    async def answered(
        request: Request, *, page: bool, act: Callable[[str, str, str, str, Any], Awaitable[Any]]
    ) -> Response:
        """Check the request, then `act(principal, viewer, sessionId, pageId, body)`; its
        refusals as answers (the module doc)."""
        checked = await guarded(request)
        if isinstance(checked, Response):
            return checked
        principal, body = checked
        where = addressed(body, page=page)
        if isinstance(where, Response):
            return where
        try:
            result = await act(principal, *where, body)
        except HoldRefused as held:
            message = f"{held.held_by} holds this session in another view"
            refusal = {"error": "held", "heldBy": held.held_by, "message": message}
            return _answer(409, refusal, headers)
        except NotHolder:
            return _answer(409, {"error": "not_holder"}, headers)
        except BrowserMeshError as err:
            return refused(err)
        return _answer(200, result if isinstance(result, dict) else {"ok": True}, headers)

    async def take(principal: str, viewer: str, sid: str, pid: str, _: Any) -> dict[str, Any]:
        held = await handover.take(principal, viewer, sid, pid)
        return {
            "sessionId": sid,
            "pageId": held.page_id,
            "heldBy": held.principal,
            "pingMs": handover.ping_ms,
        }

    async def play(principal: str, viewer: str, sid: str, _pid: str, body: Any) -> None:
        await handover.send(principal, viewer, sid, body.get("events"))

    async def give_back(principal: str, viewer: str, sid: str, _pid: str, _: Any) -> None:
        await handover.release(principal, viewer, sid)

    async def hold(request: Request) -> Response:
        return await answered(request, page=True, act=take)

    async def send(request: Request) -> Response:
        return await answered(request, page=False, act=play)

    async def release(request: Request) -> Response:
        return await answered(request, page=False, act=give_back)

    return [
        Route("/hold", hold, methods=["POST"]),
        Route("/input", send, methods=["POST"]),
        Route("/release", release, methods=["POST"]),
    ]
