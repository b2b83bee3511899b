"""The live view's part of the fleet's channel, the owner's side (issue 37 item 2, reference
§37.9): what another replica's viewer asks of this replica's sessions.

`FleetChannelMiddleware` checks the caller (a private peer with the fleet token) and hands the
body of ``POST /fleet/v1/view`` here. One JSON object, always naming the `principal` the
sending replica signed in (the fleet vouches for it):

- ``{"principal", "watch": true}``: this replica's grid and pictures of the principal's
  sessions (its own `LiveView`, never further: one hop), as an NDJSON stream of
  ``{"state": grid}`` and ``{"frame": {sessionId, pageId, source, data}}`` lines and an empty
  ``{}`` line every `HEARTBEAT_S` of quiet, until the sender goes away;
- ``{"principal", "input": "hold" | "input" | "release", "body": {...}}``: one take-over request
  (`view_input.input_actions`), answered as the view answers it;
- ``{"principal", "artifact": {"sessionId", "artifactId"}}``: one download
  (`view_artifacts.artifact_server`), answered as the view answers it.

Every answer carries `ANSWER_HEADER`, so the sender tells this replica's answer from a refusal
of the channel itself.
"""

from __future__ import annotations

import json
from typing import Any, Final

import anyio
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from browsermesh.config.tokens import PRINCIPAL_RE
from browsermesh.runtime.live import LiveView
from browsermesh.transports.asgi import respond_json
from browsermesh.transports.view import HEARTBEAT_S
from browsermesh.transports.view_artifacts import Serve
from browsermesh.transports.view_input import ID_CHARS, Perform, text_field

__all__ = ["ANSWER_HEADER", "ViewChannel"]

ANSWER_HEADER: Final = "x-browsermesh-view-answer"
"""Set on every answer of this side (its value ``1``)."""
_NDJSON: Final = b"application/x-ndjson"


class ViewChannel:
    """Answers the view's channel requests for this replica's sessions (module doc)."""

    def __init__(self, live: LiveView, perform: Perform, serve: Serve) -> None:
        self.live = live
        self._perform = perform
        self._serve = serve

    async def __call__(self, body: bytes, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            raw = json.loads(body)
        except ValueError:
            raw = None
        principal = raw.get("principal") if isinstance(raw, dict) else None
        if not isinstance(principal, str) or not PRINCIPAL_RE.match(principal):
            await respond_json(send, 400, {"error": "bad_request"})
            return
        answer = await self._answer(principal, raw, receive, send)
        if answer is not None:
            answer.headers[ANSWER_HEADER] = "1"
            await answer(scope, receive, send)

    async def _answer(
        self, principal: str, raw: dict[str, Any], receive: Receive, send: Send
    ) -> Response | None:
        if raw.get("watch") is True:
            await self._watch(principal, receive, send)
            return None
        action, inner = raw.get("input"), raw.get("body")
        if isinstance(action, str) and isinstance(inner, dict):
            return await self._perform(action, principal, inner)
        wanted = raw.get("artifact")
        if isinstance(wanted, dict):
            session_id = text_field(wanted, "sessionId", ID_CHARS)
            artifact_id = text_field(wanted, "artifactId", ID_CHARS)
            if session_id is not None and artifact_id is not None:
                return await self._serve(principal, session_id, artifact_id)
        return Response(b'{"error":"bad_request"}', 400, media_type="application/json")

    async def _watch(self, principal: str, receive: Receive, send: Send) -> None:
        """Stream this replica's view of `principal` until the sender goes away."""
        feed = self.live.join(principal)
        try:
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [(b"content-type", _NDJSON), (ANSWER_HEADER.encode(), b"1")],
                }
            )
            async with anyio.create_task_group() as group:

                async def gone() -> None:
                    while (await receive())["type"] != "http.disconnect":
                        pass
                    group.cancel_scope.cancel()  # the sender's viewer left

                group.start_soon(gone)
                while True:
                    news: list[tuple[str, dict[str, Any]]] = []
                    with anyio.move_on_after(HEARTBEAT_S):
                        news = await feed.next()
                    lines = [{kind: data} for kind, data in news] or [{}]
                    chunk = b"".join(
                        json.dumps(line, ensure_ascii=False).encode() + b"\n" for line in lines
                    )
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
        except OSError:
            pass  # the sender's connection broke: nobody to tell
        finally:
            self.live.leave(feed)
