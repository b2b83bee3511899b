"""A fleet whose replicas do not all serve the live view (issue 37, reference §37.9): replica A
with the view, replica B with ``--no-view``, both served over real HTTP in this process, one
real `redis-server`, real Chromium.

B's channel answers the view's part ``404 no_view`` itself (never through access control, which
would log a refused bearer token every second a viewer watches), and A's viewer sees B's
session as the directory holds it (its card without pages or pictures) instead of not at all.
When the directory stops answering, A's view and `browsermesh view-link` say to try again
(503), not to sign in again.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import anyio
import httpx2
import pytest

from browsermesh.mcp.forwarding import FLEET_VIEW_PATH
from browsermesh.view_link import print_view_link
from tests.support.http_transport import TOKENS, Running, connect, http_server
from tests.support.redis_server import running_redis
from tests.support.view_client import new_link, sign_in, view_events

pytestmark = pytest.mark.anyio

FLEET_TOKEN = "fleet-token-" + "fedcba9876543210" * 3
WAIT_S = 60.0


class Base:
    """A replica's base URL (what `view_client` needs)."""

    def __init__(self, running: Running) -> None:
        parts = urlsplit(running.url)
        self.base = f"{parts.scheme}://{parts.netloc}"


async def test_a_replica_without_the_view_shows_in_the_grid_from_the_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    common = {"fleet_token": FLEET_TOKEN, "fleet_lease_ms": 3_000}
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
    async with (
        running_redis(tmp_path) as redis,
        http_server(
            tmp_path / "a", tokens=True, replica_id="a", view=True, fleet_redis=redis.url, **common
        ) as a,
        http_server(
            tmp_path / "b", tokens=True, replica_id="b", view=False, fleet_redis=redis.url, **common
        ) as b,
    ):
        for running in (a, b):
            assert running.runtime.fleet is not None
            running.runtime.fleet.start()
        a_base, b_base = Base(a), Base(b)
        async with connect(b.url, "auto", TOKENS["alice"]) as on_b:
            made = await on_b.ok("browser_session_create", {"name": "made-on-b"})
            sid = made["session"]["sessionId"]

            async with httpx2.AsyncClient(trust_env=False, timeout=30) as http:
                refused = await http.post(
                    b_base.base + FLEET_VIEW_PATH,
                    json={"principal": "alice", "watch": True},
                    headers={"Authorization": f"Bearer {FLEET_TOKEN}"},
                )
                assert refused.status_code == 404 and refused.json() == {"error": "no_view"}

                login = await sign_in(http, a_base, await new_link(a_base, "alice"))
                cookie = "bm_view=" + login.cookies["bm_view"]
                card: dict[str, object] = {}
                with anyio.fail_after(WAIT_S):
                    async for kind, data in view_events(http, a_base, cookie):
                        cards = {c["sessionId"]: c for c in data.get("sessions", [])}
                        if kind == "state" and sid in cards:
                            card = cards[sid]
                            break
                assert card["name"] == "made-on-b" and card["status"] == "ready", card
                assert card["pages"] == [], card  # no pictures: B has no view to follow

            rejected = [r for r in b.records if r.get("message") == "auth.rejected"]
            assert not rejected, f"B's access control saw the view's channel: {rejected}"
            await on_b.ok("browser_session_close", {"sessionId": sid})

        # The directory stops answering: the view says "try again" (503), never "sign in again"
        # (401), and so does `browsermesh view-link`.
        redis.stop()
        async with httpx2.AsyncClient(trust_env=False, timeout=30) as http:
            page = await http.get(a_base.base + "/view/", headers={"Cookie": cookie})
        assert page.status_code == 503 and page.json()["error"] == "directory_unreachable"
        port = int(urlsplit(a.url).port or 0)
        config = a.runtime.config.replace(http_port=port)
        failed = await anyio.to_thread.run_sync(print_view_link, config, "alice")
        assert failed == 1
        assert "the fleet's directory does not answer" in capsys.readouterr().err
