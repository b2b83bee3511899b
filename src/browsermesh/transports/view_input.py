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

In a fleet (reference §37.9) a request for a session another replica holds is relayed to it
over the fleet's channel, which runs the same `input_actions` there. Every answer forbids
caching and framing, like the view's. Nothing here reads a page.
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

__all__ = [
    "ACTIONS",
    "ID_CHARS",
    "MAX_INPUT_BODY_BYTES",
    "Perform",
    "Relay",
    "input_actions",
    "input_routes",
    "text_field",
]

ACTIONS: Final = ("hold", "input", "release")
"""The take-over's requests, each ``POST /view/<action>``."""
MAX_INPUT_BODY_BYTES: Final = 65_536
_VIEWER_CHARS: Final = 64
ID_CHARS: Final = 128
"""A session, page or artifact id in a view request, at most."""


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


def text_field(body: dict[str, Any], key: str, limit: int) -> str | None:
    value = body.get(key)
    if isinstance(value, str) and 0 < len(value) <= limit and value.isprintable():
        return value
    return None


Perform = Callable[[str, str, dict[str, Any]], Awaitable[Response]]
"""`perform(action, principal, body)`: one take-over request of a principal, answered."""
Relay = Callable[[str, str, str, dict[str, Any]], Awaitable[Response | None]]
"""`relay(action, principal, sessionId, body)`: the owner's answer when the session is held by
another replica of the fleet (reference §37.9), else None (answered here)."""


def input_actions(handover: Handover, headers: dict[str, str]) -> Perform:
    """The take-over actions (`ACTIONS`) of this replica's sessions, for a principal already
    checked: by this listener's cookie and ``Origin``, or by the replica that took the
    request (the fleet's channel)."""

    def addressed(body: dict[str, Any], *, page: bool) -> tuple[str, str, str] | Response:
        viewer = text_field(body, "viewer", _VIEWER_CHARS)
        session_id = text_field(body, "sessionId", ID_CHARS)
        page_id = text_field(body, "pageId", ID_CHARS) if page else ""
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

    # action -> (whether it names a page, what it does), in the order of `ACTIONS`.
    acts: dict[str, tuple[bool, Callable[[str, str, str, str, Any], Awaitable[Any]]]] = dict(
        zip(ACTIONS, [(True, take), (False, play), (False, give_back)], strict=True)
    )

    async def perform(action: str, principal: str, body: dict[str, Any]) -> Response:
        if action not in acts:
            return _answer(404, {"error": "not_found"}, headers)
        page, act = acts[action]
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

    return perform


def input_routes(
    handover: Handover,
    viewer_of: Callable[[Request], Awaitable[str | None]],
    same_origin: Callable[[Request], bool],
    log: EventLog,
    headers: dict[str, str],
    relay: Relay | None = None,
) -> list[BaseRoute]:
    """The take-over routes, mounted under ``/view`` (see the module doc); with `relay`, a
    session of another replica's is taken over there."""
    perform = input_actions(handover, headers)

    async def guarded(request: Request) -> tuple[str, dict[str, Any]] | Response:
        principal = await viewer_of(request)
        if principal is None:
            return _answer(401, {"error": "unauthorized"}, headers)
        if not same_origin(request):
            log.warn("view.input_refused", principal=principal, reason="not_same_origin")
            return _answer(403, {"error": "forbidden"}, headers)
        body = await _body(request)
        if body is None:
            return _answer(400, {"error": "bad_request", "message": "a JSON object"}, headers)
        return principal, body

    def route(action: str) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            checked = await guarded(request)
            if isinstance(checked, Response):
                return checked
            principal, body = checked
            session_id = text_field(body, "sessionId", ID_CHARS)
            if relay is not None and session_id is not None:
                relayed = await relay(action, principal, session_id, body)
                if relayed is not None:
                    return relayed
            return await perform(action, principal, body)

        return endpoint

    return [Route(f"/{action}", route(action), methods=["POST"]) for action in ACTIONS]
