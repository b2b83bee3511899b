"""A configured ref TTL (`BROWSERMESH_REF_TTL_MS`, issue 13) on real Chromium through the MCP
client: a ref works until its TTL has passed since capture, then answers
STALE_ELEMENT_REFERENCE. Using a ref does not refresh it."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from browsermesh.log import EventLog
from tests.fixtures.site import FixtureSite
from tests.support.clients import tool_client
from tests.support.runtimes import real_runtime

pytestmark = pytest.mark.anyio

TTL_MS = 1_000


async def test_a_ref_expires_after_the_configured_ttl(tmp_path: Path, site: FixtureSite) -> None:
    async with (
        real_runtime(tmp_path, EventLog("silent"), ref_ttl_ms=TTL_MS) as runtime,
        tool_client(runtime) as c,
    ):
        info = await c.ok("browser_runtime_info")
        assert info["refTtlMs"] == TTL_MS
        s, p = await c.session()
        addr = {"sessionId": s, "pageId": p}
        await c.ok("browser_navigate", {**addr, "url": site.url("/element-refs")})
        snap = await c.ok("browser_snapshot", {**addr, "includeRefs": True})
        # The capture happened before the snapshot answered, so the ref expires at the
        # latest TTL_MS after this instant.
        captured_by = time.monotonic()
        ref = next(r["ref"] for r in snap["refs"] if r.get("name") == "Ref input")
        await c.ok("browser_focus", {**addr, "ref": ref})
        # Here the passing of time is the condition under test.
        await asyncio.sleep(TTL_MS / 1000 + 0.1 - (time.monotonic() - captured_by))
        error = await c.err("browser_focus", {**addr, "ref": ref})
        assert error["code"] == "STALE_ELEMENT_REFERENCE"
        # a new capture issues a live ref for the same element
        again = await c.ok("browser_snapshot", {**addr, "includeRefs": True})
        fresh = next(r["ref"] for r in again["refs"] if r.get("name") == "Ref input")
        assert fresh != ref
        await c.ok("browser_focus", {**addr, "ref": fresh})
