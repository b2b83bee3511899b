"""The session resources (reference §21.2, issue 17): what they list and read, and when they
change.

- `browsermesh://sessions`: the caller's sessions, as browser_session_list returns them.
- `browsermesh://sessions/{sessionId}`: one session as browser_session_get returns it, plus its
  pages as browser_page_list returns them, each with its title.
- `browsermesh://sessions/{sessionId}/artifacts`: its artifacts as browser_downloads lists them.

Every read is the caller principal's: another principal's session reads exactly like an unknown
one (JSON-RPC -32602 "Resource not found"). `SessionResources` is also the runtime's
`SessionWatcher`: it maps each `SessionChange` to the URIs whose content changed and hands
them to `Clients`, which tells only the owner's connections and listen streams.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import mcp.types as types
from mcp import MCPError

from browsermesh.errors import BrowserMeshError, ErrorCode
from browsermesh.mcp.clients import Clients
from browsermesh.mcp.lean import lean_result
from browsermesh.model.ids import ID_TEXT
from browsermesh.runtime.runtime import Runtime
from browsermesh.runtime.session import ACTIVE_STATUSES
from browsermesh.runtime.watchers import SessionChange

if TYPE_CHECKING:
    from browsermesh.mcp.forwarding import FleetRouter

INVALID_PARAMS = -32602
MIME = "application/json"
SESSIONS_URI = "browsermesh://sessions"
SESSION_TEMPLATE = SESSIONS_URI + "/{sessionId}"
ARTIFACTS_TEMPLATE = SESSION_TEMPLATE + "/artifacts"
MAX_LISTED_SESSIONS = 100
"""Live sessions `resources/list` names at most (two entries each); the rest are still readable."""
MAX_ARTIFACTS = 100
"""Artifacts one artifacts read lists (browser_downloads' page limit); `nextOffset` says more."""

SESSIONS_RESOURCE = types.Resource(
    name="sessions",
    title="Live BrowserMesh sessions",
    uri=SESSIONS_URI,
    description="Your sessions, as browser_session_list returns them.",
    mime_type=MIME,
)
TEMPLATES = [
    types.ResourceTemplate(
        name="session",
        title="One BrowserMesh session",
        uri_template=SESSION_TEMPLATE,
        description="One of your sessions (as browser_session_get) and its pages with titles.",
        mime_type=MIME,
    ),
    types.ResourceTemplate(
        name="session-artifacts",
        title="Artifacts of one BrowserMesh session",
        uri_template=ARTIFACTS_TEMPLATE,
        description="Downloads and PDFs of one of your sessions, as browser_downloads lists them.",
        mime_type=MIME,
    ),
]


MAX_SUBSCRIBED_URI_CHARS = 2048
"""A subscribed URI is at most this long (longer ones are refused, not stored)."""


def session_uri(session_id: str) -> str:
    return f"{SESSIONS_URI}/{session_id}"


def artifacts_uri(session_id: str) -> str:
    return f"{SESSIONS_URI}/{session_id}/artifacts"


def parse_uri(uri: str) -> tuple[str, str | None] | None:
    """`("sessions", None)`, `("session", id)` or `("artifacts", id)`; None for any other URI."""
    if uri == SESSIONS_URI:
        return "sessions", None
    rest = uri.removeprefix(SESSIONS_URI + "/")
    if rest == uri:
        return None
    parts = rest.split("/")
    if not ID_TEXT.fullmatch(parts[0]) or parts[1:] not in ([], ["artifacts"]):
        return None
    return ("artifacts" if len(parts) == 2 else "session"), parts[0]


def _is_session_uri(uri: str) -> bool:
    parsed = parse_uri(uri)
    return parsed is not None and parsed[0] == "session"


def not_found(uri: str) -> MCPError:
    """The one answer for an unknown URI, an unknown session and another principal's session."""
    return MCPError(INVALID_PARAMS, "Resource not found", {"uri": uri})


def _json(uri: str, data: dict[str, Any]) -> types.ReadResourceResult:
    # The views as tools answer them (no nulls, no empty objects: `mcp.lean`); a document's
    # own keys stay (`sessions: []`, `artifacts: []`).
    text = json.dumps(lean_result(data, {}, required=tuple(data)), indent=2, ensure_ascii=False)
    return types.ReadResourceResult(
        contents=[types.TextResourceContents(uri=uri, mime_type=MIME, text=text)]
    )


def _listing(views: Sequence[dict[str, Any]]) -> types.ListResourcesResult:
    """The listing of `views`: `browsermesh://sessions`, then each live session and its
    artifacts (at most `MAX_LISTED_SESSIONS`)."""
    resources = [SESSIONS_RESOURCE]
    live = [v for v in views if v["status"] in ACTIVE_STATUSES][:MAX_LISTED_SESSIONS]
    for view in live:
        sid = view["sessionId"]
        label = f"Session {sid}" + (f" ({view['name']})" if "name" in view else "")
        resources.append(
            types.Resource(
                name=f"session-{sid}",
                title=label,
                uri=session_uri(sid),
                description="Status, labels and pages of this session.",
                mime_type=MIME,
            )
        )
        resources.append(
            types.Resource(
                name=f"session-{sid}-artifacts",
                title=f"Artifacts of session {sid}",
                uri=artifacts_uri(sid),
                description="Downloads and PDFs of this session.",
                mime_type=MIME,
            )
        )
    return types.ListResourcesResult(resources=resources)


class SessionResources:
    """Lists and reads the session resources of a principal; tells `clients` when they change."""

    def __init__(
        self, runtime: Runtime, clients: Clients, router: FleetRouter | None = None
    ) -> None:
        self.runtime = runtime
        self.clients = clients
        self.router = router  # with a fleet: the other replicas' sessions too (§37.7)

    # ------------------------------------------------------------------ SessionWatcher

    def session_changed(self, change: SessionChange) -> None:
        """Map one change to the URIs whose content changed (timestamps aside)."""
        who, sid, kind = change.principal, change.session_id, change.kind
        if kind in ("created", "closed"):
            self.clients.resource_list_changed(who)
        if kind in ("created", "closed", "state"):
            self.clients.resource_updated(who, SESSIONS_URI)
        if kind != "created":
            self.clients.resource_updated(who, session_uri(sid))
        if kind in ("artifacts", "closed"):
            self.clients.resource_updated(who, artifacts_uri(sid))

    def watches_pages(self, principal: str) -> bool:
        """Only a subscriber to one session's URI reads its pages; the listing and the
        artifacts show none of them."""
        return self.clients.watching(principal, _is_session_uri)

    # ------------------------------------------------------------------ requests

    def list(self, principal: str) -> types.ListResourcesResult:
        """`browsermesh://sessions`, then each live session and its artifacts (at most
        `MAX_LISTED_SESSIONS` sessions, in registry order)."""
        return _listing(self._own_views(principal))

    async def fleet_list(self, principal: str) -> types.ListResourcesResult:
        """`list`, then the caller's live sessions on the fleet's other replicas (from the
        directory: no replica is asked)."""
        if self.router is None:
            return self.list(principal)
        others = await self.router.fleet_records(principal)
        return _listing([*self._own_views(principal), *others])

    def _own_views(self, principal: str) -> Sequence[dict[str, Any]]:
        """The caller's sessions on this replica; none while shutting down (only the listing
        itself is left)."""
        try:
            return self.runtime.list_sessions(principal)[1]
        except BrowserMeshError:
            return []

    async def read(
        self, principal: str, uri: str, *, forwarded: bool = False
    ) -> types.ReadResourceResult:
        """The content of `uri` for `principal` (`forwarded`: another replica asks, §37.6)."""
        parsed = parse_uri(uri)
        if parsed is None:
            raise not_found(uri)
        kind, sid = parsed
        try:
            if kind == "sessions":
                _, views = self.runtime.list_sessions(principal)
                if self.router is not None and not forwarded:
                    views = [*views, *await self.router.fleet_sessions(principal)]
                return _json(uri, {"sessions": views})
            assert sid is not None
            held = self.runtime.core.owner_of(sid) is not None
            if self.router is not None and not forwarded and not held:
                return await self.router.read_elsewhere(principal, uri, sid)
            if kind == "session":
                _, view = self.runtime.get_session(principal, sid)
                _, pages = await self.runtime.session_pages(principal, sid)
                return _json(uri, {"session": view, "pages": pages})
            _, listing = self.runtime.downloads(principal, sid, MAX_ARTIFACTS, 0)
            return _json(uri, {"sessionId": sid, **listing})
        except BrowserMeshError as err:
            if err.code is ErrorCode.SESSION_NOT_FOUND:
                raise not_found(uri) from None
            raise MCPError(-32603, err.message) from None

    def check_subscribable(self, uri: str) -> None:
        """Accept any URI of sane length, as the SDK's 2026-07-28 listen handler does: a
        subscription to a URI that is not (or not yet, or not the caller's) one of ours is
        honoured and never fires. Refusing unknown ones would tell a caller whether another
        principal's session exists, and clients (the conformance suite among them) subscribe
        before the resource is there."""
        if len(uri) > MAX_SUBSCRIBED_URI_CHARS:
            raise not_found(uri[:MAX_SUBSCRIBED_URI_CHARS])
