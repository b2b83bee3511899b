"""`contextSettings.proxy` on real Chromium (issue 19), with a loopback recording proxy
(tests/fixtures/proxy.py): a session's traffic goes through its proxy and its neighbour's does
not; proxy credentials work and appear in no result, resource or log record; a proxy that
refuses connections is `NAVIGATION_FAILED` with reason `proxy`; the network policy works
through a proxy; bad proxy settings are refused before anything launches."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.fixtures.network_site import NetworkSite
from tests.fixtures.proxy import RecordingProxy
from tests.support.clients import ToolClient
from tests.support.eventually import eventually

pytestmark = pytest.mark.anyio

USER = "buyer-user-canary-3f9a"
PASSWORD = "proxy-pass-canary-c41e"


@pytest.fixture(scope="module")
def site() -> Iterator[NetworkSite]:
    with NetworkSite() as s:
        s.page("/shop", "<!doctype html><title>Shop</title><p>welcome</p>")
        yield s


def through_proxy(site: NetworkSite, path: str, host: str = "shop.test") -> str:
    """A URL only the recording proxy can reach (nothing else resolves `*.test`)."""
    return f"http://{host}:{site.port}{path}"


async def session(client: ToolClient, **settings: Any) -> dict[str, str]:
    data = await client.ok("browser_session_create", {"contextSettings": settings})
    return {"sessionId": data["session"]["sessionId"], "pageId": data["initialPage"]["pageId"]}


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_a_session_goes_through_its_proxy_and_its_neighbour_does_not(
    client: ToolClient, site: NetworkSite
) -> None:
    with RecordingProxy() as proxy:
        proxied = await session(client, proxy={"server": proxy.base_url})
        neighbour = await session(client)
        page = await client.ok(
            "browser_navigate", {**proxied, "url": through_proxy(site, "/shop?proxied")}
        )
        assert page["url"] == through_proxy(site, "/shop?proxied")
        title = await client.ok("browser_get_title", proxied)
        assert title["title"] == "Shop"  # the site's page, carried by the proxy
        # Loopback too: Playwright proxies it unless `bypass` names a loopback entry.
        await client.ok("browser_navigate", {**proxied, "url": site.url("/shop?loopback")})
        await client.ok("browser_navigate", {**neighbour, "url": site.url("/shop?neighbour")})
        error = await client.err(
            "browser_navigate", {**neighbour, "url": through_proxy(site, "/shop?leak")}
        )
        assert (error["code"], error["details"]["reason"]) == ("NAVIGATION_FAILED", "dns")
        carried = [c.url for c in proxy.carried()]
        assert through_proxy(site, "/shop?proxied") in carried
        assert site.url("/shop?loopback") in carried
        assert all(url.startswith((through_proxy(site, "/"), site.url("/"))) for url in carried), (
            carried
        )
        assert not any("neighbour" in url or "leak" in url for url in carried)
        hosts = {r.path: r.headers["host"] for r in site.requests()}
        assert hosts["/shop?proxied"] == f"shop.test:{site.port}"
        assert hosts["/shop?neighbour"] == f"127.0.0.1:{site.port}"  # straight to the site


async def test_proxy_credentials_work_and_never_show(
    client: ToolClient, site: NetworkSite, log_records: list[dict[str, Any]]
) -> None:
    with RecordingProxy(credentials=(USER, PASSWORD)) as proxy:
        settings = {"proxy": {"server": proxy.base_url, "username": USER, "password": PASSWORD}}
        created = await client.ok("browser_session_create", {"contextSettings": settings})
        view = created["session"]
        assert view["contextSettings"]["proxy"] == {
            "server": proxy.base_url,
            "username": "[redacted]",
            "password": "[redacted]",
        }
        addr = {"sessionId": view["sessionId"], "pageId": created["initialPage"]["pageId"]}
        results: list[Any] = [created]
        results.append(
            await client.ok("browser_navigate", {**addr, "url": through_proxy(site, "/shop?auth")})
        )
        results.append(await client.ok("browser_get_title", addr))
        assert results[-1]["title"] == "Shop"
        answered = [c for c in proxy.carried() if c.url.endswith("/shop?auth")]
        assert [c.authorized for c in answered] == [False, True]  # challenged, then answered
        results.append(await client.ok("browser_observe", {**addr, "source": "network"}))
        results.append(await client.ok("browser_session_get", {"sessionId": view["sessionId"]}))
        results.append(await client.ok("browser_session_list"))
        for uri in ("browsermesh://sessions", f"browsermesh://sessions/{view['sessionId']}"):
            read = await client.client.read_resource(uri)
            results.append([c.text for c in read.contents])  # type: ignore[union-attr]
        error = await client.err(
            "browser_session_update", {"sessionId": view["sessionId"], "proxy": settings["proxy"]}
        )
        results.append(error)
        blob = json.dumps([results, log_records], default=str)
        assert USER not in blob and PASSWORD not in blob


async def test_a_refusing_proxy_is_a_proxy_failure(client: ToolClient, site: NetworkSite) -> None:
    addr = await session(client, proxy={"server": f"http://127.0.0.1:{closed_port()}"})
    error = await client.err("browser_navigate", {**addr, "url": through_proxy(site, "/shop")})
    assert error["code"] == "NAVIGATION_FAILED"
    assert error["details"]["reason"] == "proxy"
    assert "proxy" in error["nextStep"]


async def test_the_policy_holds_through_a_proxy(client: ToolClient, site: NetworkSite) -> None:
    """Route, redirect guard and proxy authentication coexist in one context."""
    allowed = through_proxy(site, "")
    other = through_proxy(site, "", host="tracker.test")
    site.page(
        "/mixed",
        f"""<!doctype html><title>Mixed</title><img src="{other}/asset.png?direct">
<img src="{allowed}/redirect?to={other}/asset.png?redirected">""",
    )
    with RecordingProxy(credentials=(USER, PASSWORD)) as proxy:
        addr = await session(
            client,
            proxy={"server": proxy.base_url, "username": USER, "password": PASSWORD},
            network={"allowOrigins": [allowed]},
        )
        await client.ok("browser_navigate", {**addr, "url": allowed + "/mixed"})
        stopped = {"/asset.png?direct", f"/redirect?to={other}/asset.png?redirected"}
        seen: dict[str, str] = {}

        async def all_stopped() -> bool:
            events = (await client.ok("browser_observe", {**addr, "source": "requestFailed"}))[
                "events"
            ]
            seen.clear()
            seen.update({"/" + e["url"].split("/", 3)[3]: e["failure"] for e in events})
            return stopped <= set(seen)

        await eventually(all_stopped, 10, "both requests stopped")
        assert seen == dict.fromkeys(stopped, "blocked_by_policy"), seen
        assert not [c.url for c in proxy.carried() if urlsplit(c.url).hostname == "tracker.test"]
        assert any(c.url.endswith("/mixed") and c.authorized for c in proxy.carried())


@pytest.mark.parametrize(
    ("proxy", "field", "rule"),
    [
        ({"server": f"http://{USER}:{PASSWORD}@127.0.0.1:3128"}, "contextSettings.proxy.server",
         "no credentials in the server"),
        ({"server": "ftp://127.0.0.1:21"}, "contextSettings.proxy.server", "http://, https://"),
        ({"server": "http://127.0.0.1"}, "contextSettings.proxy.server", "an explicit port"),
        ({"server": "socks5://127.0.0.1:1080", "username": USER, "password": PASSWORD},
         "contextSettings.proxy.username", "no credentials with socks5"),
        ({"server": "http://127.0.0.1:3128", "password": PASSWORD},
         "contextSettings.proxy.password", "only together with proxy.username"),
        ({"bypass": "x"}, "contextSettings.proxy.server", "required"),
    ],
)  # fmt: skip
async def test_bad_proxy_settings_are_refused_before_anything_launches(
    client: ToolClient, proxy: dict[str, Any], field: str, rule: str
) -> None:
    error = await client.err("browser_session_create", {"contextSettings": {"proxy": proxy}})
    assert error["code"] == "INVALID_ARGUMENT"
    assert error["details"]["field"] == field
    assert error["details"]["rule"].startswith(rule)
    assert USER not in json.dumps(error) and PASSWORD not in json.dumps(error)
    info = await client.ok("browser_runtime_info")
    assert info["browserLaunchState"] == "not_started"
    assert (await client.ok("browser_session_list"))["sessions"] == []
