"""`contextSettings.network` on real Chromium (issue 19), against two loopback origins
(tests/fixtures/network_site.py): a blocked origin is never reached — not by page resources,
fetch, XHR, iframes, WebSockets, popups, redirects or top-level navigation — and each stop is
observed as `blocked_by_policy`; allow lists with wildcards; offline toggled while the session
runs; extra headers that reach the server and nothing else; browser_session_update's rules."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest

from browsermesh.runtime.runtime import Runtime
from tests.fixtures.network_site import NetworkSite
from tests.support.clients import ToolClient
from tests.support.eventually import eventually

pytestmark = pytest.mark.anyio

CANARY = "X-canary-value-2c71e0"
CANARY_2 = "X-canary-value-88b4d3"


@pytest.fixture(scope="module")
def origin_a() -> Iterator[NetworkSite]:
    with NetworkSite() as site:
        yield site


@pytest.fixture(scope="module")
def origin_b() -> Iterator[NetworkSite]:
    with NetworkSite() as site:
        yield site


def ws_url(site: NetworkSite, path: str) -> str:
    return "ws" + site.url(path)[4:]


def everything_page(a: NetworkSite, b: NetworkSite) -> str:
    """A page on `a` that reaches for `b` in every way a page can."""
    return f"""<!doctype html><title>Policy</title>
<p id=state></p>
<script>
const results = {{}};
const expected = ["fetch", "img", "redirectedImg", "script", "sw", "ws", "wsAllowed", "xhr"];
function mark(key, value) {{
  results[key] = value;
  document.getElementById("state").textContent = JSON.stringify(results);
  if (expected.every(k => k in results) && !document.getElementById("done")) {{
    const done = document.createElement("i"); done.id = "done"; document.body.append(done);
  }}
}}
</script>
<img src="{b.url("/asset.png")}" onload="mark('img','loaded')" onerror="mark('img','failed')">
<img src="{a.url("/redirect?to=" + b.url("/asset.png?redirected"))}"
  onload="mark('redirectedImg','loaded')" onerror="mark('redirectedImg','failed')">
<script src="{b.url("/script.js")}"></script>
<iframe src="{b.url("/frame")}"></iframe>
<button onclick="window.open('{b.url("/popup")}')">Open popup</button>
<script>
mark("script", window.scriptRan ? "ran" : "blocked");
fetch("{b.url("/api")}").then(() => mark("fetch", "ok"), () => mark("fetch", "failed"));
const xhr = new XMLHttpRequest();
xhr.open("GET", "{b.url("/api?xhr")}");
xhr.onload = () => mark("xhr", "ok"); xhr.onerror = () => mark("xhr", "failed"); xhr.send();
const ws = new WebSocket("{ws_url(b, "/ws")}");
ws.onopen = () => mark("ws", "open"); ws.onclose = e => mark("ws", "closed " + e.code);
const allowed = new WebSocket("{ws_url(a, "/ws")}");
allowed.onopen = () => {{ mark("wsAllowed", "open"); allowed.close(); }};
allowed.onclose = e => {{ if (!("wsAllowed" in results)) mark("wsAllowed", "closed " + e.code); }};
if (navigator.serviceWorker) {{
  // Playwright's "block" stubs register() (it resolves to nothing and registers nothing).
  navigator.serviceWorker.register("/sw.js").then(
    r => mark("sw", r ? "registered" : "blocked"), () => mark("sw", "refused"));
}} else {{ mark("sw", "absent"); }}
</script>"""


async def session(client: ToolClient, **settings: Any) -> dict[str, str]:
    data = await client.ok("browser_session_create", {"contextSettings": settings})
    return {"sessionId": data["session"]["sessionId"], "pageId": data["initialPage"]["pageId"]}


async def events_until(
    client: ToolClient, addr: dict[str, str], source: str, done: Any, timeout_s: float = 10.0
) -> list[dict[str, Any]]:
    """The source's events once `done(events)` holds (AssertionError after `timeout_s`)."""
    seen: list[dict[str, Any]] = []

    async def ready() -> bool:
        data = await client.ok("browser_observe", {**addr, "source": source, "limit": 100})
        seen[:] = data.get("events", [])
        return bool(done(seen))

    await eventually(ready, timeout_s, f"{source} events")
    return seen


def tail(event: dict[str, Any]) -> str:
    return "/" + str(event["url"]).split("/", 3)[3]


async def test_a_blocked_origin_is_never_reached(
    client: ToolClient, origin_a: NetworkSite, origin_b: NetworkSite
) -> None:
    page = origin_a.page("/everything", everything_page(origin_a, origin_b))
    b_before = len(origin_b.requests())
    addr = await session(client, network={"blockOrigins": [origin_b.base_url]})
    await client.ok("browser_navigate", {**addr, "url": page})
    await client.ok(
        "browser_wait",
        {
            **addr,
            "timeoutMs": 10_000,
            "condition": {
                "kind": "locator",
                "locator": {"strategy": "css", "value": "#done"},
                "state": "attached",
            },
        },
    )
    state = await client.ok(
        "browser_visible_text", {**addr, "locator": {"strategy": "css", "value": "#state"}}
    )
    results = json.loads(state["text"])
    assert results == {
        "img": "failed",
        "redirectedImg": "failed",
        "script": "blocked",
        "fetch": "failed",
        "xhr": "failed",
        "ws": "closed 1008",
        "wsAllowed": "open",
        "sw": "blocked",  # no service workers under a policy
    }, results

    stopped = {
        "/asset.png",
        "/redirect?to=" + origin_b.url("/asset.png?redirected"),
        "/script.js",
        "/frame",
        "/api",
        "/api?xhr",
    }
    failed = await events_until(
        client, addr, "requestFailed", lambda evs: stopped <= {tail(e) for e in evs}
    )
    assert {tail(e) for e in failed} == stopped, failed
    assert all(e["failure"] == "blocked_by_policy" for e in failed), failed
    by_tail = {tail(e): e for e in failed}
    assert by_tail["/frame"]["resourceType"] == "document"
    assert by_tail["/api"]["resourceType"] == "fetch"
    assert by_tail["/api?xhr"]["resourceType"] == "xhr"
    # The redirect's own URL (on the allowed origin) is what failed: the guard stopped its 302.
    assert by_tail["/redirect?to=" + origin_b.url("/asset.png?redirected")]["url"].startswith(
        origin_a.base_url
    )

    # A popup to the blocked origin opens on nothing.
    popup = await client.ok(
        "browser_action_and_wait",
        {
            **addr,
            "action": {
                "kind": "click",
                "target": {"strategy": "role", "value": "button", "name": "Open popup"},
            },
            "wait": {"kind": "popup"},
        },
    )
    popup_page = popup["event"]["page"]
    # about:blank, or Chromium's error page once it commits: never the blocked URL.
    assert popup_page["url"] in ("about:blank", "chrome-error://chromewebdata/"), popup_page
    popup_addr = {"sessionId": addr["sessionId"], "pageId": popup_page["pageId"]}
    popup_failed = await events_until(client, popup_addr, "requestFailed", bool)
    assert [(tail(e), e["failure"], e["resourceType"]) for e in popup_failed] == [
        ("/popup", "blocked_by_policy", "document")
    ], popup_failed

    # Top-level navigation: directly, through a redirect, through a chain of redirects.
    direct = origin_b.url("/page")
    once = origin_a.url("/redirect?to=" + direct)
    chain = origin_a.url("/redirect?to=" + quote(origin_a.url("/redirect?to=" + direct), safe=""))
    for url in (direct, once, chain):
        error = await client.err("browser_navigate", {**addr, "url": url})
        assert error["code"] == "NAVIGATION_FAILED", (url, error)
        assert error["details"]["reason"] == "blocked_by_policy", (url, error)
        assert "network policy" in error["nextStep"]
        assert error["details"]["url"] == url.split("?", 1)[0]  # origin and path only
    assert "/redirect?to=" + direct in origin_a.paths()  # the chain's second hop was made
    assert origin_b.requests()[b_before:] == []
    # An allowed redirect still works.
    allowed = await client.ok(
        "browser_navigate", {**addr, "url": origin_a.url("/redirect?to=/frame")}
    )
    assert allowed["url"] == origin_a.url("/frame")


async def test_cross_site_iframes_and_their_redirects_are_guarded(
    client: ToolClient, origin_a: NetworkSite, origin_b: NetworkSite
) -> None:
    """A frame of another site runs in its own renderer process: the route and the redirect
    guard reach its requests and redirects too."""
    other_site = f"http://localhost:{origin_a.port}"  # another site than 127.0.0.1
    img = other_site + "/redirect?to=" + origin_b.url("/asset.png?oopif")
    nested = other_site + "/redirect?to=" + origin_b.url("/frame?nested")
    origin_a.page(
        "/inner",
        f"""<!doctype html><title>Inner</title><img src="{img}"><iframe src="{nested}"></iframe>
<img src="{origin_b.url("/asset.png?direct")}">""",
    )
    outer = origin_a.page(
        "/outer", f'<!doctype html><title>Outer</title><iframe src="{other_site}/inner"></iframe>'
    )
    b_before = len(origin_b.requests())
    addr = await session(client, network={"blockOrigins": [origin_b.base_url]})
    await client.ok("browser_navigate", {**addr, "url": outer})
    stopped = {
        "/redirect?to=" + origin_b.url("/asset.png?oopif"),
        "/redirect?to=" + origin_b.url("/frame?nested"),
        "/asset.png?direct",
    }
    failed = await events_until(
        client, addr, "requestFailed", lambda evs: stopped <= {tail(e) for e in evs}
    )
    assert {(tail(e), e["failure"]) for e in failed} == {(t, "blocked_by_policy") for t in stopped}
    assert origin_b.requests()[b_before:] == []


async def test_an_allow_list_with_a_wildcard(
    client: ToolClient, origin_a: NetworkSite, origin_b: NetworkSite
) -> None:
    """`http://*.localhost:<port>`: every subdomain of localhost on that port (Chromium resolves
    them all to loopback), not localhost itself, not 127.0.0.1, not another port."""
    port = origin_a.port
    wildcard = f"http://*.localhost:{port}"
    page = origin_a.page(
        "/wild",
        f"""<!doctype html><title>Wild</title>
<img src="http://img.shop.localhost:{port}/asset.png?sub">
<img src="http://127.0.0.1:{port}/asset.png?address">
<img src="http://localhost:{port}/asset.png?apex">
<img src="http://img.localhost:{origin_b.port}/asset.png?port">""",
    )
    addr = await session(client, network={"allowOrigins": [wildcard.upper()]})
    view = (await client.ok("browser_session_get", {"sessionId": addr["sessionId"]}))["session"]
    assert view["contextSettings"] == {"network": {"allowOrigins": [wildcard]}}
    shop = page.replace("127.0.0.1", "shop.localhost")
    await client.ok("browser_navigate", {**addr, "url": shop})
    blocked = {"/asset.png?address", "/asset.png?apex", "/asset.png?port"}
    failed = await events_until(
        client, addr, "requestFailed", lambda evs: blocked <= {tail(e) for e in evs}
    )
    assert {tail(e) for e in failed} == blocked
    assert all(e["failure"] == "blocked_by_policy" for e in failed)
    assert "/asset.png?sub" in origin_a.paths()
    assert not blocked & set(origin_a.paths() + origin_b.paths())
    for url in (origin_a.url("/wild"), f"http://localhost:{port}/wild"):
        error = await client.err("browser_navigate", {**addr, "url": url})
        assert (error["code"], error["details"]["reason"]) == (
            "NAVIGATION_FAILED",
            "blocked_by_policy",
        )


OFFLINE_PAGE = """<!doctype html><title>Offline</title>
<button onclick="go()">Fetch</button><p id=out></p>
<script>
let n = 0;
function go() {
  const i = ++n;
  fetch("/api?n=" + i).then(() => { out.textContent = "ok " + i; },
                            () => { out.textContent = "failed " + i; });
}
</script>"""


async def test_offline_toggled_while_the_session_runs(
    client: ToolClient, origin_a: NetworkSite
) -> None:
    addr = await session(client, network={})
    await client.ok("browser_navigate", {**addr, "url": origin_a.page("/offline", OFFLINE_PAGE)})
    button = {"strategy": "role", "value": "button", "name": "Fetch"}

    async def fetch_shows(text: str) -> None:
        await client.ok("browser_click", {**addr, "locator": button})
        await client.ok(
            "browser_wait",
            {
                **addr,
                "timeoutMs": 10_000,
                "condition": {"kind": "text", "text": text, "state": "present"},
            },
        )

    await fetch_shows("ok 1")
    off = await client.ok(
        "browser_session_update", {"sessionId": addr["sessionId"], "network": {"offline": True}}
    )
    assert off["session"]["contextSettings"]["network"] == {"offline": True}
    await fetch_shows("failed 2")
    error = await client.err("browser_navigate", {**addr, "url": origin_a.url("/frame")})
    assert (error["code"], error["details"]["reason"]) == ("NAVIGATION_FAILED", "connection")
    on = await client.ok(
        "browser_session_update", {"sessionId": addr["sessionId"], "network": {"offline": False}}
    )
    assert on["session"]["contextSettings"]["network"] == {"offline": False}
    await client.ok("browser_navigate", {**addr, "url": origin_a.url("/offline")})
    await fetch_shows("ok 1")
    api = [p for p in origin_a.paths() if p.startswith("/api?n=")]
    assert api == ["/api?n=1", "/api?n=1"]  # the offline fetch never left the browser


async def test_extra_headers_reach_the_server_and_nothing_else(
    client: ToolClient, origin_a: NetworkSite, runtime: Runtime, log_records: list[Any]
) -> None:
    page = origin_a.page(
        "/headers",
        '<!doctype html><title>Headers</title><img src="/asset.png?h">'
        '<p id=out></p><script>fetch("/api?h").then(() => out.textContent = "fetched")</script>',
    )
    created = await client.ok(
        "browser_session_create",
        {"contextSettings": {"network": {"extraHeaders": {"X-Canary": CANARY}}}},
    )
    sid = created["session"]["sessionId"]
    addr = {"sessionId": sid, "pageId": created["initialPage"]["pageId"]}
    assert created["session"]["contextSettings"] == {
        "network": {"extraHeaders": {"X-Canary": "[redacted]"}}
    }
    results: list[Any] = [created]
    results.append(await client.ok("browser_navigate", {**addr, "url": page}))
    await client.ok(
        "browser_wait",
        {
            **addr,
            "timeoutMs": 10_000,
            "condition": {"kind": "text", "text": "fetched", "state": "present"},
        },
    )
    seen = {r.path: r.headers.get("x-canary") for r in origin_a.requests()}
    assert seen["/headers"] == seen["/asset.png?h"] == seen["/api?h"] == CANARY

    network = await client.ok("browser_observe", {**addr, "source": "network", "limit": 100})
    results.append(network)
    api = next(
        e for e in network.get("events", []) if e["kind"] == "request" and tail(e) == "/api?h"
    )
    results.append(
        await client.ok(
            "browser_observe", {**addr, "source": "network", "requestId": api["requestId"]}
        )
    )
    results.append(await client.ok("browser_session_get", {"sessionId": sid}))
    results.append(await client.ok("browser_session_list"))
    updated = await client.ok(
        "browser_session_update",
        {"sessionId": sid, "network": {"extraHeaders": {"X-Other": CANARY_2}}},
    )
    assert updated["session"]["contextSettings"]["network"] == {
        "extraHeaders": {"X-Other": "[redacted]"}
    }
    results.append(updated)
    before = len(origin_a.requests())
    results.append(await client.ok("browser_navigate", {**addr, "url": origin_a.url("/frame")}))
    later = origin_a.requests()[before:]
    assert [r.headers.get("x-other") for r in later if r.path == "/frame"] == [CANARY_2]
    assert all("x-canary" not in r.headers for r in later)  # replaced, not added
    for uri in ("browsermesh://sessions", f"browsermesh://sessions/{sid}"):
        read = await client.client.read_resource(uri)
        results.append([c.text for c in read.contents])  # type: ignore[union-attr]
    results.append(await client.ok("browser_runtime_info"))
    blob = json.dumps([results, log_records], default=str)
    assert CANARY not in blob and CANARY_2 not in blob
    record = runtime.sessions_snapshot()[sid]
    assert record.context_settings["network"]["extraHeaders"] == {"X-Other": CANARY_2}


async def test_update_rules_over_mcp(client: ToolClient) -> None:
    plain = await session(client)
    error = await client.err(
        "browser_session_update", {"sessionId": plain["sessionId"], "network": {"offline": True}}
    )
    assert error["code"] == "INVALID_ARGUMENT" and error["details"]["field"] == "network"
    assert "contextSettings.network" in error["details"]["rule"]
    netted = await session(client, network={})
    error = await client.err(
        "browser_session_update",
        {"sessionId": netted["sessionId"], "proxy": {"server": "http://127.0.0.1:3128"}},
    )
    assert error["details"] == {
        "field": "proxy",
        "rule": "fixed when the session is created (Chromium sets a context's proxy once): "
        "create a new session with contextSettings.proxy",
    }
    assert "operationId" not in error
    error = await client.err(
        "browser_session_update",
        {"sessionId": netted["sessionId"], "network": {"blockOrigins": ["x", "https://ok.test"]}},
    )
    assert error["details"]["field"] == "network.blockOrigins[0]"
    bad = await client.raw(
        "browser_session_update", {"sessionId": netted["sessionId"], "networks": {}}
    )
    assert bad.is_error and "networks" in bad.content[0].text


async def test_origin_lists_set_and_removed_while_the_session_runs(
    client: ToolClient, origin_a: NetworkSite, origin_b: NetworkSite, runtime: Runtime
) -> None:
    page = origin_a.page(
        "/later",
        f'<!doctype html><title>Later</title><img src="{origin_b.url("/asset.png?later")}">'
        f'<img src="{origin_a.url("/redirect?to=" + origin_b.url("/asset.png?hop"))}">',
    )
    addr = await session(client, network={})
    sid = addr["sessionId"]
    context = runtime.sessions_snapshot()[sid].context
    assert not context.router.routing  # type: ignore[union-attr]

    async def load_counts() -> tuple[int, int]:
        before = origin_b.paths()
        await client.ok("browser_navigate", {**addr, "url": page})
        await client.ok("browser_wait", {**addr, "condition": {"kind": "load", "state": "load"}})
        now = origin_b.paths()[len(before) :]
        return now.count("/asset.png?later"), now.count("/asset.png?hop")

    assert await load_counts() == (1, 1)  # no list yet: both reach the other origin
    updated = await client.ok(
        "browser_session_update",
        {"sessionId": sid, "network": {"blockOrigins": [origin_b.base_url]}},
    )
    assert updated["session"]["contextSettings"]["network"] == {"blockOrigins": [origin_b.base_url]}
    assert await load_counts() == (0, 0)
    failed = await events_until(
        client,
        addr,
        "requestFailed",
        lambda evs: (
            {"/asset.png?later", "/redirect?to=" + origin_b.url("/asset.png?hop")}
            <= {tail(e) for e in evs}
        ),
    )
    assert {e["failure"] for e in failed} == {"blocked_by_policy"}
    cleared = await client.ok(
        "browser_session_update", {"sessionId": sid, "network": {"blockOrigins": []}}
    )
    assert "network" not in cleared["session"].get("contextSettings", {})  # empty: left out
    assert await load_counts() == (1, 1)
    assert not context.router.routing  # type: ignore[union-attr]
    assert context.context._impl_obj._routes == []  # type: ignore[union-attr]


async def test_a_dedicated_workers_requests_and_redirects_are_stopped(
    client: ToolClient, origin_a: NetworkSite, origin_b: NetworkSite
) -> None:
    hop = origin_a.url("/redirect?to=" + origin_b.url("/api?worker-hop"))
    origin_a._pages["/worker.js"] = (
        f'fetch("{hop}").catch(() => 0); fetch("{origin_b.url("/api?worker-direct")}")'
        f'.catch(() => 0); fetch("{origin_a.url("/api?worker-ok")}");'
    ).encode()
    page = origin_a.page(
        "/worker", '<!doctype html><title>Worker</title><script>new Worker("/worker.js")</script>'
    )
    b_before = len(origin_b.requests())
    addr = await session(client, network={"blockOrigins": [origin_b.base_url]})
    await client.ok("browser_navigate", {**addr, "url": page})
    stopped = {"/api?worker-direct", "/redirect?to=" + origin_b.url("/api?worker-hop")}
    failed = await events_until(
        client, addr, "requestFailed", lambda evs: stopped <= {tail(e) for e in evs}
    )
    assert {(tail(e), e["failure"]) for e in failed} == {(t, "blocked_by_policy") for t in stopped}
    assert origin_b.requests()[b_before:] == []
    assert "/api?worker-ok" in origin_a.paths()


async def test_other_spellings_of_a_blocked_address_are_blocked(
    client: ToolClient, origin_a: NetworkSite, origin_b: NetworkSite
) -> None:
    """`[::ffff:127.0.0.1]` and `0.0.0.0` reach the server on 127.0.0.1; a redirect may spell
    the address as a number (`Location` is judged as written): all are the blocked origin."""
    port = origin_b.port
    mapped, unspecified = f"http://[::ffff:127.0.0.1]:{port}", f"http://0.0.0.0:{port}"
    decimal = origin_a.url(f"/redirect?to=http://2130706433:{port}/asset.png?decimal")
    page = origin_a.page(
        "/spellings",
        f"""<!doctype html><title>Spellings</title>
<img src="{mapped}/asset.png?mapped"><img src="{unspecified}/asset.png?unspecified">
<img src="{decimal}"><img src="/asset.png?after">""",
    )
    b_before = len(origin_b.requests())
    addr = await session(client, network={"blockOrigins": [origin_b.base_url]})
    await client.ok("browser_navigate", {**addr, "url": page})
    stopped = {
        "/asset.png?mapped",
        "/asset.png?unspecified",
        f"/redirect?to=http://2130706433:{port}/asset.png?decimal",
    }
    failed = await events_until(
        client, addr, "requestFailed", lambda evs: stopped <= {tail(e) for e in evs}
    )
    assert {(tail(e), e["failure"]) for e in failed} == {(t, "blocked_by_policy") for t in stopped}
    for url in (mapped + "/frame", unspecified + "/frame"):
        error = await client.err("browser_navigate", {**addr, "url": url})
        assert (error["code"], error["details"]["reason"]) == (
            "NAVIGATION_FAILED",
            "blocked_by_policy",
        ), (url, error)
    assert "/asset.png?after" in origin_a.paths()  # the page went on past the stopped ones
    assert origin_b.requests()[b_before:] == []


def opener_page(a: NetworkSite, b: NetworkSite) -> str:
    hop = a.url("/redirect?to=" + b.url("/frame?by-page"))
    return a.page(
        "/opener",
        f"""<!doctype html><title>Opener</title>
<button onclick="window.pop = window.open('{a.url("/frame?popup")}')">Open popup</button>
<button onclick="window.pop.location = '{hop}'">Send popup</button>""",
    )


async def open_popup(client: ToolClient, addr: dict[str, str]) -> dict[str, str]:
    """Click "Open popup" and wait for the popup to have loaded its allowed first page."""
    opened = await client.ok(
        "browser_action_and_wait",
        {
            **addr,
            "action": {
                "kind": "click",
                "target": {"strategy": "role", "value": "button", "name": "Open popup"},
            },
            "wait": {"kind": "popup"},
        },
    )
    popup = {"sessionId": addr["sessionId"], "pageId": opened["event"]["page"]["pageId"]}
    frame = {"kind": "text", "text": "framed", "state": "present"}  # /frame's own text
    await client.ok("browser_wait", {**popup, "timeoutMs": 10_000, "condition": frame})
    return popup


@pytest.mark.parametrize("network", ["allow", "block"])
async def test_a_popup_navigated_by_its_opener_through_a_redirect_is_stopped(
    client: ToolClient, origin_a: NetworkSite, origin_b: NetworkSite, network: str
) -> None:
    page = opener_page(origin_a, origin_b)
    lists = {
        "allowOrigins" if network == "allow" else "blockOrigins": [
            origin_a.base_url if network == "allow" else origin_b.base_url
        ]
    }
    b_before = len(origin_b.requests())
    addr = await session(client, network=lists)
    await client.ok("browser_navigate", {**addr, "url": page})
    popup = await open_popup(client, addr)
    send = {"strategy": "role", "value": "button", "name": "Send popup"}
    await client.ok("browser_click", {**addr, "locator": send})
    hop = "/redirect?to=" + origin_b.url("/frame?by-page")
    failed = await events_until(
        client, popup, "requestFailed", lambda evs: hop in {tail(e) for e in evs}
    )
    assert [(tail(e), e["failure"]) for e in failed] == [(hop, "blocked_by_policy")], failed
    assert origin_b.requests()[b_before:] == []


async def test_a_popup_navigated_by_the_agent_through_a_redirect_is_stopped(
    client: ToolClient, origin_a: NetworkSite, origin_b: NetworkSite
) -> None:
    page = opener_page(origin_a, origin_b)
    b_before = len(origin_b.requests())
    addr = await session(client, network={"blockOrigins": [origin_b.base_url]})
    await client.ok("browser_navigate", {**addr, "url": page})
    popup = await open_popup(client, addr)
    url = origin_a.url("/redirect?to=" + origin_b.url("/frame?by-agent"))
    error = await client.err("browser_navigate", {**popup, "url": url})
    assert (error["code"], error["details"]["reason"]) == ("NAVIGATION_FAILED", "blocked_by_policy")
    failed = await events_until(client, popup, "requestFailed", bool)
    assert [(tail(e), e["failure"]) for e in failed] == [
        ("/redirect?to=" + origin_b.url("/frame?by-agent"), "blocked_by_policy")
    ], failed
    assert origin_b.requests()[b_before:] == []


async def test_a_new_sessions_first_navigation_through_a_redirect_is_stopped(
    client: ToolClient, origin_a: NetworkSite, origin_b: NetworkSite
) -> None:
    """The page is armed before its first request (it used to be armed by it, too late)."""
    b_before = len(origin_b.requests())
    addr = await session(client, network={"allowOrigins": [origin_a.base_url]})
    url = origin_a.url("/redirect?to=" + origin_b.url("/frame?first"))
    error = await client.err("browser_navigate", {**addr, "url": url})
    assert (error["code"], error["details"]["reason"]) == ("NAVIGATION_FAILED", "blocked_by_policy")
    failed = await events_until(client, addr, "requestFailed", bool)
    assert [(tail(e), e["failure"]) for e in failed] == [
        ("/redirect?to=" + origin_b.url("/frame?first"), "blocked_by_policy")
    ]
    assert origin_b.requests()[b_before:] == []


@pytest.mark.parametrize(
    ("kind", "send"),
    [
        ("keepalive", 'fetch(URL, {keepalive: true, method: "POST", body: "x"})'),
        ("beacon", 'navigator.sendBeacon(URL, "x")'),
    ],
)
async def test_a_request_sent_from_pagehide_is_stopped(
    client: ToolClient, origin_a: NetworkSite, origin_b: NetworkSite, kind: str, send: str
) -> None:
    """Sent as the document goes away: Playwright's route never sees it (no network id)."""
    target = origin_b.url(f"/api?{kind}")
    page = origin_a.page(
        f"/pagehide-{kind}",
        f"""<!doctype html><title>Leaving</title><script>
addEventListener("pagehide", () => {{ const URL = "{target}"; {send}; }});
</script>""",
    )
    b_before = len(origin_b.requests())
    addr = await session(client, network={"allowOrigins": [origin_a.base_url]})
    await client.ok("browser_navigate", {**addr, "url": page})
    await client.ok("browser_navigate", {**addr, "url": origin_a.url("/frame")})
    failed = await events_until(
        client, addr, "requestFailed", lambda evs: f"/api?{kind}" in {tail(e) for e in evs}
    )
    assert [(tail(e), e["failure"]) for e in failed] == [(f"/api?{kind}", "blocked_by_policy")]
    assert origin_b.requests()[b_before:] == []


async def test_a_shared_worker_is_closed_before_it_runs(
    client: ToolClient, origin_a: NetworkSite, origin_b: NetworkSite
) -> None:
    """A shared worker is a target outside every page: it cannot be guarded, so it is closed
    before it runs (fail closed) and reported as stopped."""
    origin_a._pages["/shared-worker.js"] = (
        f'fetch("{origin_b.url("/api?shared")}").catch(() => 0);'
        f'onconnect = () => fetch("{origin_b.url("/api?shared-connect")}").catch(() => 0);'
    ).encode()
    page = origin_a.page(
        "/shared",
        "<!doctype html><title>Shared</title><script>"
        'new SharedWorker("/shared-worker.js").port.start();</script>',
    )
    b_before = len(origin_b.requests())
    addr = await session(client, network={"blockOrigins": [origin_b.base_url]})
    await client.ok("browser_navigate", {**addr, "url": page})
    failed = await events_until(
        client, addr, "requestFailed", lambda evs: "/shared-worker.js" in {tail(e) for e in evs}
    )
    assert [(tail(e), e["failure"]) for e in failed] == [("/shared-worker.js", "blocked_by_policy")]
    assert origin_b.requests()[b_before:] == []
