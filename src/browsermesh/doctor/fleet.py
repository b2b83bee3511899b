"""The doctor's fleet checks (issue 37): `fleet-redis`, whether the fleet's session directory
answers, and `fleet-token`, whether this replica can forward calls to the others (§37.6).

Runs only with ``--fleet-redis``: one PING, bounded by the directory's call bound and the
doctor's deadline. Its sentences are fixed: never the URL (its password) or an error's text.
"""

from __future__ import annotations

import anyio

from browsermesh.config import Config
from browsermesh.doctor.report import CheckResult, deadline_result, failed, passed
from browsermesh.model.deadline import Deadline

__all__ = [
    "FLEET_CHECK_ID",
    "FLEET_REMEDIATION",
    "FLEET_TOKEN_CHECK_ID",
    "check_fleet_redis",
    "check_fleet_token",
]

FLEET_CHECK_ID = "fleet-redis"
FLEET_REMEDIATION = (
    "Check that the Redis server of BROWSERMESH_FLEET_REDIS (--fleet-redis) is running and "
    "reachable from this machine, and that its URL and password are right."
)


async def check_fleet_redis(config: Config, deadline: Deadline) -> CheckResult:
    """PING the directory within the doctor's deadline."""
    from browsermesh.persistence.fleet_directory import DirectoryUnavailable, FleetDirectory

    url = config.fleet_redis
    assert url is not None  # the catalogue runs this check only when configured
    if deadline.expired():
        return deadline_result(FLEET_CHECK_ID, during=False)
    directory = FleetDirectory(url, lease_ms=config.fleet_lease_ms, tombstone_ms=1)
    try:
        with anyio.fail_after(max(0.001, deadline.remaining_ms() / 1000)):
            await directory.ping()
    except TimeoutError:
        return deadline_result(FLEET_CHECK_ID, during=True)
    except DirectoryUnavailable:
        return failed(
            FLEET_CHECK_ID,
            "FLEET_REDIS_UNREACHABLE",
            "The fleet directory did not answer PING in time.",
            FLEET_REMEDIATION,
        )
    finally:
        await directory.aclose()
    return passed(FLEET_CHECK_ID, "FLEET_REDIS_REACHABLE", "The fleet directory answers PING.")


FLEET_TOKEN_CHECK_ID = "fleet-token"
FLEET_TOKEN_REMEDIATION = (
    "Give every replica of the fleet the same --fleet-token-file (BROWSERMESH_FLEET_TOKEN_FILE), "
    "a 0600 file holding one token of 32 to 256 printable ASCII characters."
)
_PEERS_ASKED = 8


async def check_fleet_token(config: Config, deadline: Deadline) -> CheckResult:
    """Whether this replica can forward calls (reference §37.6): a fleet token is set, and the
    other live replicas (up to 8, from the directory) take it. A replica is asked with an empty
    call, which it answers 400 when the token is right and 401 when not: nothing runs."""
    if config.fleet_token is None:
        return passed(
            FLEET_TOKEN_CHECK_ID,
            "FLEET_TOKEN_MISSING",
            "Warning: no fleet token; this replica neither forwards calls nor takes forwarded "
            "ones (set --fleet-token-file on every replica).",
        )
    if deadline.expired():
        return deadline_result(FLEET_TOKEN_CHECK_ID, during=False)
    try:
        with anyio.fail_after(max(0.001, deadline.remaining_ms() / 1000)):
            refused, unreachable = await _ask_peers(config)
    except TimeoutError:
        return deadline_result(FLEET_TOKEN_CHECK_ID, during=True)
    if refused:
        return failed(
            FLEET_TOKEN_CHECK_ID,
            "FLEET_TOKEN_REFUSED",
            f"{refused} other replica(s) refused this replica's fleet token.",
            FLEET_TOKEN_REMEDIATION,
        )
    note = f" ({unreachable} other replica(s) did not answer)" if unreachable else ""
    return passed(
        FLEET_TOKEN_CHECK_ID,
        "FLEET_TOKEN_ACCEPTED",
        f"The fleet token is set and the live replicas take it{note}.",
    )


async def _ask_peers(config: Config) -> tuple[int, int]:
    """(replicas that refused the token, replicas that did not answer)."""
    import httpx2

    from browsermesh.config.fleet import replica_name
    from browsermesh.mcp.forwarding import FLEET_CALL_PATH
    from browsermesh.persistence.fleet_directory import DirectoryUnavailable, FleetDirectory

    assert config.fleet_redis is not None and config.fleet_token is not None
    directory = FleetDirectory(config.fleet_redis, lease_ms=config.fleet_lease_ms, tombstone_ms=1)
    try:
        leases = await directory.leases()
    except DirectoryUnavailable:
        return 0, 0  # the fleet-redis check reports the directory
    finally:
        await directory.aclose()
    own = replica_name(config.replica_id)
    endpoints = [
        str(lease["endpoint"])
        for replica, lease in sorted(leases.items())
        if replica != own and isinstance(lease.get("endpoint"), str)
    ][:_PEERS_ASKED]
    refused = unreachable = 0
    headers = {"authorization": f"Bearer {config.fleet_token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=3, trust_env=False) as http:
        for endpoint in endpoints:
            try:
                answer = await http.post(endpoint + FLEET_CALL_PATH, content=b"{}")
            except httpx2.HTTPError:
                unreachable += 1
                continue
            if answer.status_code in (401, 403):
                refused += 1
            elif answer.status_code != 400:
                unreachable += 1
    return refused, unreachable
