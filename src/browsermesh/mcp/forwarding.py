"""Calls for sessions on other replicas of the fleet (issue 37 items 2 and 4, reference §37.6).

`FleetRouter` is asked before a tool runs. A call naming a `sessionId` this replica does not
hold is routed by the directory (`runtime.fleet_routes.route`): to the owner over the fleet's
internal channel (when this replica has the fleet token), or answered with the error that says
why the session is gone or cannot be reached now. `browser_session_list` adds the caller's
sessions of the other replicas; `browser_session_create` on a replica without room goes to the
least-loaded one. A forwarded call is never forwarded again (one hop).

The channel: `POST <endpoint>/fleet/v1/call` with `Authorization: Bearer <fleet token>` and
`{tool, arguments, principal, budgetMs, progress}`; the owner answers an NDJSON stream of
`{"phase", "totalS"}` lines (the call's progress phases, relayed to this call's own feed)
and one `{"result"}` line, the owner's CallToolResult. The principal travels as a fact the
fleet vouches for: only holders of the fleet token reach the channel.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any, Final

import anyio
import mcp.types as types

from browsermesh.errors import BrowserMeshError, ErrorCode
from browsermesh.model import progress
from browsermesh.runtime import fleet_routes
from browsermesh.runtime.fleet import REPLICA_LOST, REPLICA_STOPPED
from browsermesh.runtime.session import ACTIVE_STATUSES

if TYPE_CHECKING:
    import httpx2

    from browsermesh.runtime.fleet import FleetMember
    from browsermesh.runtime.fleet_routes import Owner
    from browsermesh.runtime.runtime import Runtime

__all__ = ["CONNECT_S", "FLEET_CALL_PATH", "FLEET_VIEW_PATH", "FleetRouter", "OwnerUnreachable"]

FLEET_CALL_PATH: Final = "/fleet/v1/call"
FLEET_VIEW_PATH: Final = "/fleet/v1/view"
"""The live view's part of the channel (transports/view_channel.py, reference §37.9)."""
CONNECT_S: Final = 2.0
"""How long reaching the owner may take (a private network answers in milliseconds)."""
ANSWER_SLACK_S: Final = 10.0
"""How long past the call's budget the owner may take to answer (it ends its work at the
budget and then writes the error)."""
OWNER_GRACE_S: Final = 2.0
"""How long a call whose owner does not answer waits for the directory to say why."""
OWNER_POLL_S: Final = 0.1
LIST_S: Final = 5.0
"""How long another replica's session list may take."""


class OwnerUnreachable(Exception):
    """The owner did not take the call or broke off before its answer."""


def error_code(result: types.CallToolResult) -> str | None:
    """The code of an error result (§16.1), else None."""
    if not result.is_error or not result.content:
        return None
    block = result.content[-1]
    try:
        payload = json.loads(block.text) if isinstance(block, types.TextContent) else None
        code = payload.get("error", {}).get("code") if isinstance(payload, dict) else None
    except (ValueError, AttributeError):
        return None
    return code if isinstance(code, str) else None


class FleetRouter:
    """Routes calls across the fleet for one dispatcher (only with `--fleet-redis`)."""

    def __init__(self, runtime: Runtime, fleet: FleetMember) -> None:
        self.runtime = runtime
        self.fleet = fleet
        self._token = runtime.config.fleet_token
        self._client: httpx2.AsyncClient | None = None

    @property
    def forwards(self) -> bool:
        """Whether this replica may send calls to others (it holds the fleet token)."""
        return self._token is not None

    def http(self) -> httpx2.AsyncClient:
        """The channel's HTTP client (it sends the fleet token); only when `forwards`."""
        if self._client is None:
            import httpx2

            assert self._token is not None
            self._client = httpx2.AsyncClient(
                headers={"authorization": f"Bearer {self._token}"},
                follow_redirects=False,
                trust_env=False,  # a proxy from the environment must not see the token
            )
        return self._client

    def _budget_ms(self, args: dict[str, Any], started: float) -> int:
        """The call's budget (`timeoutMs` or the default) less the time spent so far."""
        given = args.get("timeoutMs")
        budget = given if isinstance(given, int) else self.runtime.config.timeout_ms
        return max(1, budget - int((time.monotonic() - started) * 1000))

    # ---------------------------------------------------------------- session-addressed calls

    async def route(
        self,
        name: str,
        args: dict[str, Any],
        principal: str,
        started: float,
        session_id: object,
    ) -> types.CallToolResult | BrowserMeshError | None:
        """The answer for a call about `session_id` this replica should not run itself, or
        None (run it here)."""
        if not isinstance(session_id, str) or self.runtime.core.owner_of(session_id) is not None:
            return None
        where = await fleet_routes.route(self.fleet, principal, session_id)
        live = isinstance(where, fleet_routes.Owner) or fleet_routes.needs_channel(where)
        if live and not self.forwards:
            return None  # live elsewhere, but no channel here: SESSION_NOT_FOUND, as before
        if not isinstance(where, fleet_routes.Owner):
            return where
        try:
            return await self.send(where, name, args, principal, self._budget_ms(args, started))
        except OwnerUnreachable:
            return await self._why_unreachable(principal, session_id, started, args)

    async def _why_unreachable(
        self, principal: str, session_id: str, started: float, args: dict[str, Any]
    ) -> BrowserMeshError:
        """The owner did not answer: stopping or lost? Its records say so within moments (a
        stopping replica writes them as it closes its sessions), so the directory is asked
        again for up to `OWNER_GRACE_S` (within the call's budget)."""
        grace = min(OWNER_GRACE_S, self._budget_ms(args, started) / 1000)
        with anyio.move_on_after(grace):
            while True:
                again = await fleet_routes.route(self.fleet, principal, session_id)
                if isinstance(again, BrowserMeshError) and not fleet_routes.needs_channel(again):
                    return again
                await anyio.sleep(OWNER_POLL_S)
        return fleet_routes.unreachable(fleet_routes.OWNER_UNREACHABLE)

    async def send(
        self, owner: Owner, name: str, args: dict[str, Any], principal: str, budget_ms: int
    ) -> types.CallToolResult:
        """Run the call on `owner` and relay its progress phases; its answer."""
        from pydantic import ValidationError

        body = {
            "tool": name,
            "arguments": args,
            "principal": principal,
            "budgetMs": budget_ms,
            "progress": progress.active(),
        }
        answer = await self._exchange(owner, body, budget_ms)
        try:
            return types.CallToolResult.model_validate(answer.get("result"))
        except ValidationError:
            raise OwnerUnreachable from None

    async def _exchange(self, owner: Owner, body: dict[str, Any], budget_ms: int) -> dict[str, Any]:
        """POST `body` to `owner`'s channel; relay the phases; the last line (the answer)."""
        import httpx2

        timeout = httpx2.Timeout(CONNECT_S, read=budget_ms / 1000 + ANSWER_SLACK_S)
        url = owner.endpoint + FLEET_CALL_PATH
        try:
            async with self.http().stream("POST", url, json=body, timeout=timeout) as response:
                if response.status_code != 200:
                    raise OwnerUnreachable
                async for line in response.aiter_lines():
                    message = json.loads(line) if line.strip() else {}
                    if not isinstance(message, dict):
                        break
                    phase, total = message.get("phase"), message.get("totalS")
                    if not isinstance(phase, str):
                        return message
                    total_ms = total * 1000 if isinstance(total, int | float) else None
                    progress.report(phase[:200], total_ms=total_ms)
        except (httpx2.HTTPError, OSError, ValueError):
            raise OwnerUnreachable from None
        raise OwnerUnreachable  # the stream ended without an answer

    def stopping(self, args: dict[str, Any]) -> BrowserMeshError | None:
        """What a call for a session of this replica answers while the replica stops: the fleet
        goes on, so for the caller the session closed (`replica_stopped`, §37.8); None for a
        call without a session (RUNTIME_SHUTTING_DOWN: the balancer's next replica takes it)."""
        if not isinstance(args.get("sessionId"), str):
            return None
        return BrowserMeshError(ErrorCode.SESSION_CLOSED, details={"reason": REPLICA_STOPPED})

    # ---------------------------------------------------------------- placement and the list

    def over_limit(self, args: dict[str, Any]) -> bool:
        """Whether a session create would pass this replica's session limit."""
        count = args.get("count")
        wanted = count if isinstance(count, int) else 1
        return self.runtime.core.active_count() + wanted > self.runtime.config.max_sessions

    async def place(
        self, args: dict[str, Any], principal: str, started: float
    ) -> types.CallToolResult | None:
        """A session create this replica has no room for, run by the least-loaded replica
        with room; None (run it here, which answers LIMIT_EXCEEDED) when there is none."""
        if not self.forwards:
            return None
        owner = await fleet_routes.placement(self.fleet)
        if owner is None:
            return None
        budget = self._budget_ms(args, started)
        try:
            result = await self.send(owner, "browser_session_create", args, principal, budget)
        except OwnerUnreachable:
            return None
        # A replica stopping meanwhile made nothing: the answer is this replica's own.
        return None if error_code(result) == ErrorCode.RUNTIME_SHUTTING_DOWN else result

    async def fleet_sessions(self, principal: str) -> list[dict[str, Any]]:
        """The caller's sessions on other replicas: each replica's own list, asked at once;
        a replica that does not answer (and one without a channel) is shown by its records."""
        found = await fleet_routes.peers(self.fleet, principal)
        views = [directory_view(r) for r in found.orphans]
        if not self.forwards:
            return views + [directory_view(r) for held in found.held.values() for r in held]

        async def ask(owner: Owner) -> None:
            try:
                result = await self.send(owner, "browser_session_list", {}, principal, 5_000)
            except OwnerUnreachable:
                result = None
            listed = None if result is None else (result.structured_content or {}).get("sessions")
            if isinstance(listed, list):
                views.extend(v for v in listed if isinstance(v, dict))
            else:
                views.extend(directory_view(r) for r in found.held.get(owner.replica, []))

        with anyio.move_on_after(LIST_S + CONNECT_S):
            async with anyio.create_task_group() as group:
                for owner in found.owners:
                    group.start_soon(ask, owner)
        return views

    async def fleet_records(self, principal: str) -> list[dict[str, Any]]:
        """The caller's live sessions on other replicas as the directory holds them (the
        resource listing: no replica is asked)."""
        found = await fleet_routes.peers(self.fleet, principal)
        records = [*found.orphans, *(r for held in found.held.values() for r in held)]
        return [directory_view(r) for r in records if r.get("status") in ACTIVE_STATUSES]

    async def read_elsewhere(
        self, principal: str, uri: str, session_id: str
    ) -> types.ReadResourceResult:
        """A session resource of another replica, read there; raises what the directory says
        (`SESSION_NOT_FOUND` for what is nobody's to show here)."""
        where = await fleet_routes.route(self.fleet, principal, session_id)
        if isinstance(where, BrowserMeshError):
            raise where
        if where is None or not self.forwards:
            raise BrowserMeshError(ErrorCode.SESSION_NOT_FOUND)
        body = {"resource": uri, "principal": principal, "budgetMs": 5_000, "progress": False}
        try:
            answer = await self._exchange(where, body, 5_000)
        except OwnerUnreachable:
            raise fleet_routes.unreachable(fleet_routes.OWNER_UNREACHABLE) from None
        if "resource" not in answer:
            raise BrowserMeshError(ErrorCode.SESSION_NOT_FOUND)
        return types.ReadResourceResult.model_validate(answer["resource"])


def directory_view(record: dict[str, Any]) -> dict[str, Any]:
    """A SessionView (§3.4) from a directory record, for a session whose replica cannot show
    its own: id, name, status, creation time, labels, and why it failed."""
    out: dict[str, Any] = {"sessionId": record.get("sessionId")}
    if isinstance(record.get("name"), str):
        out["name"] = record["name"]
    out["status"] = record.get("status")
    out["createdAt"] = record.get("createdAt")
    metadata = record.get("metadata")
    out["metadata"] = metadata if isinstance(metadata, dict) else {}
    reason = record.get("reason")
    if record.get("status") == "failed":
        if reason == REPLICA_LOST:
            out["failureCode"] = ErrorCode.BROWSER_DISCONNECTED.value
        elif reason in ErrorCode.__members__:
            out["failureCode"] = reason
    return out
