"""The live view across the fleet, the viewer's side (issue 37 item 2, reference §37.9).

With ``--fleet-redis`` and the fleet token, a viewer of any replica sees its principal's
sessions on every replica, and takes them over and downloads their recordings there:

- `FleetViews.join` gives a viewer a `FleetFeed`: this replica's own grid (its `LiveView`)
  merged with the grids of the replicas the directory says hold (or held) the principal's
  sessions, each followed over the channel (``{"watch": true}``, transports/view_channel.py)
  while the viewer stays; the directory is read again every `PEERS_S`, so a replica that gets
  the principal's first session joins within that, and one whose stream breaks is followed
  again once the directory still lists it. Sessions whose replica is gone, or refuses to be
  followed (no live view there), show as the directory has them (no pages, no pictures).
  Pictures pass through as they come.
- `FleetViews.relay_input` and `relay_artifact`: a take-over request or a download for a
  session another replica holds (or held) goes there, and its answer comes back as it is.

Nothing here reads a page; the owners do, each for its own sessions.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Final

import anyio
from starlette.background import BackgroundTask
from starlette.responses import JSONResponse, Response, StreamingResponse

from browsermesh.mcp.forwarding import CONNECT_S, FLEET_VIEW_PATH, directory_view
from browsermesh.model.frame_pacing import Frame
from browsermesh.model.tasks import TaskOwner, cancel_and_await
from browsermesh.runtime import fleet_routes
from browsermesh.runtime.live import MAX_VIEW_SESSIONS, LiveView, ViewerFeed
from browsermesh.transports.view import HEARTBEAT_S
from browsermesh.transports.view_channel import ANSWER_HEADER

if TYPE_CHECKING:
    import asyncio

    import httpx2

    from browsermesh.mcp.forwarding import FleetRouter
    from browsermesh.runtime.fleet import FleetMember
    from browsermesh.runtime.fleet_routes import Owner

__all__ = ["PEERS_S", "FleetFeed", "FleetViews"]

PEERS_S: Final = 1.0
"""How often a viewer's feed reads the directory for the replicas to follow."""
REFUSED_PAUSE_S: Final = 30.0
"""How long a replica that refused to be followed (no live view there, or another version) is
left alone before it is asked again."""
RELAY_S: Final = 30.0
"""How long a relayed take-over request or the start of a download may take."""
_ORPHANS: Final = ""
"""The part of the grid the directory shows (sessions whose replica is gone); sorts first."""
_NOT_RELAYED: Final = frozenset(
    {ANSWER_HEADER, "connection", "date", "keep-alive", "server", "transfer-encoding"}
)
"""The owner's answer's headers that stay behind (the channel's own, and hop-by-hop ones)."""


class FleetFeed(ViewerFeed):
    """One viewer's feed across the fleet: the grids of the replicas it follows, merged in
    creation order (a reload served by another replica shows the same order), and every
    replica's pictures."""

    def __init__(self, principal: str) -> None:
        super().__init__(principal)
        self._parts: dict[str, list[dict[str, Any]]] = {}
        self._shown: list[dict[str, Any]] | None = None
        self.task: asyncio.Task[None] | None = None

    def put_part(self, replica: str, sessions: object) -> None:
        """Replace `replica`'s cards (None or anything not a list: it shows none now)."""
        if isinstance(sessions, list):
            self._parts[replica] = [s for s in sessions if isinstance(s, dict)]
        else:
            self._parts.pop(replica, None)
        cards = [card for part in self._parts.values() for card in part]
        merged = sorted(cards, key=_created)[:MAX_VIEW_SESSIONS]
        if merged != self._shown:
            self._shown = merged
            super().put_state({"principal": self.principal, "sessions": merged})


def _created(card: dict[str, Any]) -> tuple[str, str]:
    """Cards in creation order, as one replica lists them, whichever replica serves the view
    (every replica writes `createdAt` the same way, ISO 8601 UTC)."""
    return (str(card.get("createdAt") or ""), str(card.get("sessionId") or ""))


class _Part:
    """This replica's `LiveView` writes into a `FleetFeed` through this."""

    def __init__(self, feed: FleetFeed, replica: str) -> None:
        self.principal = feed.principal
        self._feed = feed
        self._replica = replica

    def put_state(self, state: dict[str, Any]) -> None:
        self._feed.put_part(self._replica, state.get("sessions"))

    def put_frame(self, session_id: str, page_id: str, frame: Frame) -> None:
        self._feed.put_frame(session_id, page_id, frame)


def _orphan_card(record: dict[str, Any]) -> dict[str, Any]:
    """A card for a session whose replica cannot show it: what the directory holds."""
    return {**directory_view(record), "pages": [], "operations": []}


class FleetViews:
    """The fleet-wide feeds of one listener's viewers (module doc)."""

    def __init__(self, live: LiveView, router: FleetRouter, member: FleetMember) -> None:
        self.live = live
        self.router = router
        self.member = member
        self.tasks = TaskOwner()
        self._parts: dict[FleetFeed, _Part] = {}

    def join(self, principal: str) -> FleetFeed:
        """A viewer of `principal`'s sessions across the fleet; `leave` must follow."""
        feed = FleetFeed(principal)
        part = _Part(feed, self.member.replica_id)
        self.live.add(part)
        self._parts[feed] = part
        feed.task = self.tasks.spawn(self._follow(feed), name=f"view-fleet-{principal}")
        return feed

    def leave(self, feed: ViewerFeed) -> None:
        """The viewer left: stop following (in an owned task)."""
        part = self._parts.pop(feed, None) if isinstance(feed, FleetFeed) else None
        if part is None:
            return
        self.live.leave(part)
        if isinstance(feed, FleetFeed) and feed.task is not None:
            self.tasks.spawn(cancel_and_await(feed.task), name="view-fleet-leave")

    async def aclose(self) -> None:
        """Stop following for every viewer (shutdown)."""
        for feed in list(self._parts):
            self.leave(feed)
        await self.tasks.drain()

    # ---------------------------------------------------------------- the grid

    async def _follow(self, feed: FleetFeed) -> None:
        """Follow the replicas holding the viewer's sessions, until cancelled."""
        streams: dict[str, asyncio.Task[bool]] = {}
        paused: dict[str, float] = {}  # replica -> when it may be asked again
        try:
            while True:
                found = await fleet_routes.peers(self.member, feed.principal)
                now = time.monotonic()
                records = list(found.orphans)  # shown as the directory has them
                for owner in found.owners:
                    running = streams.get(owner.replica)
                    if running is not None and _refused(running):
                        paused[owner.replica] = now + REFUSED_PAUSE_S
                        del streams[owner.replica]
                    if paused.get(owner.replica, 0.0) > now:
                        records += found.held.get(owner.replica, [])
                    elif running is None or running.done():
                        streams[owner.replica] = self.tasks.spawn(
                            self._stream(feed, owner), name=f"view-peer-{owner.replica}"
                        )
                shown = [_orphan_card(r) for r in records if r.get("status") != "closed"]
                feed.put_part(_ORPHANS, shown or None)
                await anyio.sleep(PEERS_S)  # a poll of the directory, not an ordering
        finally:
            await cancel_and_await(*streams.values())

    async def _stream(self, feed: FleetFeed, owner: Owner) -> bool:
        """One replica's grid and pictures of the viewer's principal, while it answers; False
        when it refused to be followed (followed again only after `REFUSED_PAUSE_S`)."""
        import httpx2

        body = {"principal": feed.principal, "watch": True}
        timeout = httpx2.Timeout(CONNECT_S, read=2 * HEARTBEAT_S + CONNECT_S)
        url = owner.endpoint + FLEET_VIEW_PATH
        try:
            async with self.router.http().stream("POST", url, json=body, timeout=timeout) as reply:
                if reply.status_code != 200 or ANSWER_HEADER not in reply.headers:
                    return False
                async for line in reply.aiter_lines():
                    self._take(feed, owner.replica, json.loads(line) if line.strip() else {})
        except (httpx2.HTTPError, OSError, ValueError):
            pass  # followed again once the directory still lists it
        finally:
            feed.put_part(owner.replica, None)
        return True

    @staticmethod
    def _take(feed: FleetFeed, replica: str, message: object) -> None:
        if not isinstance(message, dict):
            return
        state, frame = message.get("state"), message.get("frame")
        if isinstance(state, dict):
            feed.put_part(replica, state.get("sessions"))
        elif isinstance(frame, dict):
            sid, pid = frame.get("sessionId"), frame.get("pageId")
            data, source = frame.get("data"), frame.get("source")
            if all(isinstance(v, str) for v in (sid, pid, data, source)):
                feed.put_frame(str(sid), str(pid), Frame(data=str(data), source=str(source)))

    # ---------------------------------------------------------------- relays

    async def relay_input(
        self, action: str, principal: str, session_id: str, body: dict[str, Any]
    ) -> Response | None:
        """A take-over request for a session another replica holds, answered there; None
        when the session is this replica's (or nobody's: this replica answers 404)."""
        if self.live.core.owner_of(session_id) is not None:
            return None
        owner = await fleet_routes.holder(self.member, principal, session_id)
        if owner is None:
            return None
        request = {"principal": principal, "input": action, "body": body}
        return await self._relay(owner, request)

    async def relay_artifact(
        self, principal: str, session_id: str, artifact_id: str
    ) -> Response | None:
        """A download of another replica's session's artifact, sent from there."""
        owner = await fleet_routes.holder(self.member, principal, session_id)
        if owner is None:
            return None
        wanted = {"sessionId": session_id, "artifactId": artifact_id}
        return await self._relay(owner, {"principal": principal, "artifact": wanted})

    async def _relay(self, owner: Owner, request: dict[str, Any]) -> Response:
        """`request` on `owner`'s channel; its answer relayed as it comes (a download is
        streamed), or 503 when the owner does not answer."""
        import httpx2

        client = self.router.http()
        timeout = httpx2.Timeout(CONNECT_S, read=RELAY_S)
        try:
            sent = client.build_request(
                "POST", owner.endpoint + FLEET_VIEW_PATH, json=request, timeout=timeout
            )
            reply = await client.send(sent, stream=True)
        except (httpx2.HTTPError, OSError):
            return _unreachable()
        if ANSWER_HEADER not in reply.headers:
            await reply.aclose()
            return _unreachable()
        headers = {k: v for k, v in reply.headers.items() if k.lower() not in _NOT_RELAYED}
        return StreamingResponse(
            _body(reply),
            reply.status_code,
            headers,
            background=BackgroundTask(reply.aclose),
        )


async def _body(reply: httpx2.Response) -> AsyncIterator[bytes]:
    """The owner's answer's bytes (cut short if the owner breaks off)."""
    import httpx2

    try:
        with contextlib.suppress(httpx2.HTTPError, OSError):
            async for chunk in reply.aiter_raw():
                yield chunk
    finally:
        await reply.aclose()


def _refused(task: asyncio.Task[bool]) -> bool:
    """Whether a follower's task ended because its replica refused to be followed."""
    return task.done() and not task.cancelled() and task.exception() is None and not task.result()


def _unreachable() -> Response:
    message = "the replica that holds this session does not answer; try again shortly"
    return JSONResponse({"error": "owner_unreachable", "message": message}, 503)
