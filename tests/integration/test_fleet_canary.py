"""No secret reaches the fleet directory (issue 37, reference §37.3): a real-Chromium session
fills a password, sets a cookie and localStorage and visits a URL, each holding a canary; then
every key and value in Redis is read back (SCAN + the value of each, by type) and none holds it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis

from browsermesh.log import EventLog
from browsermesh.runtime.calls import PageCall
from tests.fixtures.site import FixtureSite
from tests.support.eventually import eventually
from tests.support.locators import label
from tests.support.redis_server import dump, running_redis
from tests.support.runtimes import real_runtime

pytestmark = pytest.mark.anyio

CANARY = "fleet-canary-7f3a9c"
PASSWORD = "redis-pw-canary-41b2"
STORE = """(v) => {
  document.cookie = 'bm_canary=' + v + '; path=/';
  localStorage.setItem('bm_canary', v);
  sessionStorage.setItem('bm_canary', v);
  return true;
}"""


async def test_no_canary_reaches_the_directory(tmp_path: Path, site: FixtureSite) -> None:
    log = EventLog("silent")
    records: list[dict[str, Any]] = []
    log.sinks.append(records.append)
    async with running_redis(tmp_path, password=PASSWORD) as server:
        client = aioredis.Redis.from_url(server.url, decode_responses=True)
        try:
            async with real_runtime(
                tmp_path, log, fleet_redis=server.url, replica_id="canary-replica"
            ) as runtime:
                runtime.start()
                _, view, page = await runtime.create_session(
                    name="shopper", metadata={"team": "qa"}
                )
                call = PageCall(principal="local", session_id=view["sessionId"], page_id=page)
                await runtime.navigate(call, site.url(f"/password?token={CANARY}"))
                await runtime.fill_form(call, [{"target": label("Password"), "value": CANARY}])
                await runtime.evaluate(call, STORE, CANARY)
                sid = view["sessionId"]

                async def written() -> bool:
                    text = await client.get(f"bm:session:{sid}")
                    return text is not None and json.loads(text)["status"] == "ready"

                await eventually(written, 15, "the record is written")
                live = await dump(client)
                info = json.dumps(runtime.info())
            closed = await dump(client)  # after the shutdown's tombstones
        finally:
            await client.aclose()
    keys = {key for key, _ in live}
    assert f"bm:session:{sid}" in keys and "bm:principal:local" in keys
    assert "bm:replica:canary-replica" in keys
    for key, value in live + closed:
        text = key + json.dumps(value, ensure_ascii=False)
        assert CANARY not in text, key
        assert PASSWORD not in text, key
    assert PASSWORD not in info
    assert not any(PASSWORD in json.dumps(r, ensure_ascii=False) for r in records)
