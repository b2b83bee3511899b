"""The doctor's `fleet-redis` check (issue 37): whether the fleet's session directory answers.

Runs only with ``--fleet-redis``: one PING, bounded by the directory's call bound and the
doctor's deadline. Its sentences are fixed: never the URL (its password) or an error's text.
"""

from __future__ import annotations

import anyio

from browsermesh.config import Config
from browsermesh.doctor.report import CheckResult, deadline_result, failed, passed
from browsermesh.model.deadline import Deadline

__all__ = ["FLEET_CHECK_ID", "FLEET_REMEDIATION", "check_fleet_redis"]

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
