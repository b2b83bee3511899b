"""A fleet's session records as its directory holds them (issue 37, reference §37.1-§37.2), read
straight from the cluster's Redis: which replica holds a session, and in what state."""

from __future__ import annotations

import json
from typing import Any

import redis.asyncio as aioredis

from tests.support.eventually import eventually
from tests.support.fleet_cluster import FleetCluster


async def session_record(cluster: FleetCluster, session_id: str) -> dict[str, Any]:
    """The session's record in the directory ({} when there is none)."""
    client = aioredis.Redis.from_url(cluster.redis.url, decode_responses=True)
    try:
        found: dict[str, Any] = json.loads(await client.get(f"bm:session:{session_id}") or "{}")
        return found
    finally:
        await client.aclose()


async def owner_of(cluster: FleetCluster, session_id: str) -> str:
    """The replica id the directory names for `session_id` (once its record is written)."""
    found = await eventually(
        lambda: session_record(cluster, session_id), 15, "the session's record"
    )
    return str(found["replica"])
