"""Where a call for a session this replica does not hold should go (issue 37 items 2 and 4,
reference §37.5-§37.7), read from the fleet's directory.

- `route`: the caller's session on another replica → its `Owner` (live record, live lease with
  a channel endpoint) or the error that says why it is gone or cannot be reached now; None
  when the directory knows nothing this replica should act on (the answer stays
  `SESSION_NOT_FOUND`).
- `placement`: the live replica with the fewest sessions that has room, for a new session
  this replica has no room for.
- `peers`: the other replicas holding the caller's sessions, and the records of those whose
  replica cannot answer (for a fleet-wide session list and live view);
- `holder`: the replica that holds or held one of the caller's sessions (the live view's
  take-over and downloads).

Only the directory is read here; the calls themselves travel in `mcp.forwarding`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from browsermesh.errors import BrowserMeshError, ErrorCode
from browsermesh.runtime.fleet import REPLICA_LOST, REPLICA_STOPPED
from browsermesh.runtime.session import ACTIVE_STATUSES

if TYPE_CHECKING:
    from browsermesh.runtime.fleet import FleetMember

__all__ = [
    "DIRECTORY_UNREACHABLE",
    "OWNER_UNREACHABLE",
    "Owner",
    "Peers",
    "holder",
    "peers",
    "placement",
    "route",
]

DIRECTORY_UNREACHABLE: Final = "directory_unreachable"
OWNER_UNREACHABLE: Final = "owner_unreachable"


@dataclass(frozen=True, slots=True)
class Owner:
    """A replica that can take a call: its id and its channel's base URL."""

    replica: str
    endpoint: str


@dataclass(slots=True)
class Peers:
    """The caller's sessions elsewhere, as the directory holds them: the replicas to ask
    (`owners`), each one's records (`held`, shown when it does not answer), and the records
    no replica can show (`orphans`: their replica is gone or has no channel)."""

    owners: list[Owner] = field(default_factory=list)
    held: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    orphans: list[dict[str, Any]] = field(default_factory=list)


def unreachable(reason: str) -> BrowserMeshError:
    """`SESSION_NOT_READY` with `reason` (retry shortly)."""
    return BrowserMeshError(ErrorCode.SESSION_NOT_READY, details={"reason": reason})


def needs_channel(answer: object) -> bool:
    """Whether `answer` is about a live session whose owner has no channel (a replica without
    the fleet token keeps SESSION_NOT_FOUND for it instead)."""
    return (
        isinstance(answer, BrowserMeshError) and answer.details.get("reason") == OWNER_UNREACHABLE
    )


def gone(record: dict[str, Any]) -> BrowserMeshError | None:
    """The error a terminal record answers (§37.5); None for a live one."""
    status, reason = record.get("status"), record.get("reason")
    if status == "closed":
        details = {"reason": REPLICA_STOPPED} if reason == REPLICA_STOPPED else {}
        return BrowserMeshError(ErrorCode.SESSION_CLOSED, details=details)
    if status == "failed" and reason == REPLICA_LOST:
        return BrowserMeshError(ErrorCode.BROWSER_DISCONNECTED, details={"reason": REPLICA_LOST})
    if status == "failed":
        return BrowserMeshError(ErrorCode.SESSION_NOT_READY)
    return None


def _owner(replica: str, lease: dict[str, Any] | None) -> Owner | None:
    endpoint = None if lease is None else lease.get("endpoint")
    if not isinstance(endpoint, str) or not endpoint:
        return None
    return Owner(replica, endpoint)


async def route(
    member: FleetMember, principal: str, session_id: object
) -> Owner | BrowserMeshError | None:
    """Where the caller's session `session_id`, not held here, is (see the module)."""
    from browsermesh.persistence.fleet_directory import DirectoryUnavailable

    directory = member.directory
    if directory is None or not isinstance(session_id, str) or not session_id:
        return None
    try:
        record = await directory.record(session_id)
        if not record or record.get("principal") != principal:
            return None  # unknown, or another principal's: the same answer
        replica = str(record.get("replica"))
        if replica == member.replica_id:
            return None  # ours once: the runtime's own answer stands
        if record.get("status") not in ACTIVE_STATUSES:
            return gone(record)
        if record.get("status") == "closing":  # takes no work (§13.3): no need to ask
            return BrowserMeshError(ErrorCode.SESSION_CLOSING)
        lease = await directory.lease(replica)
    except DirectoryUnavailable:
        return unreachable(DIRECTORY_UNREACHABLE)
    if lease is None:  # lapsed: the reaper will mark it so within a third of the lease
        return BrowserMeshError(ErrorCode.BROWSER_DISCONNECTED, details={"reason": REPLICA_LOST})
    return _owner(replica, lease) or unreachable(OWNER_UNREACHABLE)


async def holder(member: FleetMember, principal: str, session_id: str) -> Owner | None:
    """The other live replica that holds (or held: a closed session's traces and videos stay
    with it) the caller's session `session_id`, if the directory knows one with a channel;
    None otherwise, also when the directory does not answer."""
    from browsermesh.persistence.fleet_directory import DirectoryUnavailable

    directory = member.directory
    if directory is None or not session_id:
        return None
    try:
        record = await directory.record(session_id)
        if not record or record.get("principal") != principal:
            return None
        replica = str(record.get("replica"))
        if replica == member.replica_id:
            return None
        return _owner(replica, await directory.lease(replica))
    except DirectoryUnavailable:
        return None


async def placement(member: FleetMember) -> Owner | None:
    """The other live replica with a channel and room that holds the fewest sessions (ties:
    the most room, then the id); None when there is none or the directory does not answer."""
    from browsermesh.persistence.fleet_directory import DirectoryUnavailable

    directory = member.directory
    if directory is None:
        return None
    try:
        leases = await directory.leases()
    except DirectoryUnavailable:
        return None
    best: tuple[int, int, str] | None = None
    chosen: Owner | None = None
    for replica, lease in leases.items():
        owner = _owner(replica, lease)
        sessions, limit = lease.get("sessions"), lease.get("maxSessions")
        if owner is None or replica == member.replica_id:
            continue
        if not isinstance(sessions, int) or not isinstance(limit, int) or sessions >= limit:
            continue
        key = (sessions, -(limit - sessions), replica)
        if best is None or key < best:
            best, chosen = key, owner
    return chosen


async def peers(member: FleetMember, principal: str) -> Peers:
    """The caller's sessions on other replicas (see `Peers`); empty when the directory does
    not answer (the list then shows this replica's sessions only)."""
    from browsermesh.persistence.fleet_directory import DirectoryUnavailable

    out = Peers()
    directory = member.directory
    if directory is None:
        return out
    try:
        records = await directory.principal_records(principal)
        elsewhere = [r for r in records if r.get("replica") != member.replica_id]
        if not elsewhere:
            return out
        leases = await directory.leases()
    except DirectoryUnavailable:
        return out
    for record in elsewhere:
        replica = str(record.get("replica"))
        owner = _owner(replica, leases.get(replica))
        if owner is None:
            out.orphans.append(record)
            continue
        if replica not in out.held:
            out.held[replica] = []
            out.owners.append(owner)
        out.held[replica].append(record)
    return out
