"""Filtered observation, newest-first reads, polling and the request detail read on real
Chromium (issue 15 item 4), against the loopback traffic site (tests/fixtures/observe_site.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.fixtures.observe_site import IMAGE_PATH, SCRIPT_PATH, SECRET_MARK, ObserveSite
from tests.support.clients import ToolClient, open_page
from tests.support.ports import closed_port

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def observe_site() -> Iterator[ObserveSite]:
    with ObserveSite() as site:
        yield site


class Recorder:
    """Calls browser_observe and keeps the whole text of every result, successes and errors."""

    def __init__(self, client: ToolClient, addr: dict[str, str]) -> None:
        self.client = client
        self.addr = addr
        self.texts: list[str] = []

    async def ok(self, **args: Any) -> dict[str, Any]:
        data = await self.client.ok("browser_observe", {**self.addr, **args})
        self.texts.append(json.dumps(data))
        return data

    async def err(self, **args: Any) -> dict[str, Any]:
        result = await self.client.raw("browser_observe", {**self.addr, **args})
        assert result.is_error
        self.texts.append(result.content[0].text)
        error: dict[str, Any] = json.loads(result.content[0].text)["error"]
        return error

    def everything(self) -> str:
        return "\n".join(self.texts)


async def traffic_page(client: ToolClient, site: ObserveSite) -> Recorder:
    addr = await open_page(client, site.url("/traffic"))
    done = {"kind": "text", "text": "done", "state": "present"}
    await client.ok("browser_wait", {**addr, "timeoutMs": 10_000, "condition": done})
    return Recorder(client, addr)


def paths(events: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(kind, path and query) of each event."""
    return [(e["kind"], "/" + e["url"].split("/", 3)[3]) for e in events]


def statuses(events: list[dict[str, Any]]) -> list[tuple[str, int]]:
    """(path and query, status) of each response event."""
    return [(path, e["status"]) for (_, path), e in zip(paths(events), events, strict=True)]


async def test_each_filter_and_combinations(client: ToolClient, observe_site: ObserveSite) -> None:
    obs = await traffic_page(client, observe_site)
    everything = await obs.ok(source="network", limit=100)
    assert not {"sessionId", "pageId"} & set(everything)  # the client's own address
    for event in everything.get("events", []):
        assert "sessionId" not in event and "pageId" not in event, event
    assert all(
        e["eventId"].startswith(everything.get("events", [])[0]["eventId"].split(".")[0] + ".")
        for e in everything.get("events", [])
    )
    assert len(everything.get("events", [])[0]["eventId"]) < 16

    items = await obs.ok(source="network", url="**/api/items?page=1")
    assert paths(items.get("events", [])) and set(paths(items.get("events", []))) == {
        ("request", "/api/items?page=1"),
        ("response", "/api/items?page=1"),
    }
    assert len(items.get("events", [])) == 4  # fetched twice

    posts = await obs.ok(source="network", method="POST")
    assert sorted(paths(posts.get("events", []))) == [
        ("request", "/api/broken"),
        ("request", "/api/orders"),
        ("response", "/api/broken"),
        ("response", "/api/orders"),
    ]

    errors = await obs.ok(source="network", statusMin=400)
    assert all(e["kind"] == "response" and e["status"] >= 400 for e in errors.get("events", []))
    assert {("/api/missing", 404), ("/api/broken", 500)} <= set(statuses(errors.get("events", [])))
    server = await obs.ok(source="network", statusMin=500, statusMax=599)
    assert statuses(server.get("events", [])) == [("/api/broken", 500)]
    created = await obs.ok(source="network", statusMin=201, statusMax=201)
    assert paths(created.get("events", [])) == [("response", "/api/orders")]

    images = await obs.ok(source="network", resourceType="image")
    assert sorted(paths(images.get("events", []))) == [
        ("request", IMAGE_PATH),
        ("response", IMAGE_PATH),
    ]
    scripts = await obs.ok(source="network", resourceType="script")
    assert sorted(paths(scripts.get("events", []))) == [
        ("request", SCRIPT_PATH),
        ("response", SCRIPT_PATH),
    ]
    fetches = await obs.ok(source="network", resourceType="fetch", limit=100)
    assert len(fetches.get("events", [])) == 12  # six fetches, request + response each
    assert all(p.startswith("/api/") for _, p in paths(fetches.get("events", [])))

    one = await obs.ok(source="network", url="**/api/**", method="GET", statusMin=400)
    assert [(e["kind"], e["status"]) for e in one.get("events", [])] == [("response", 404)]
    assert paths(one.get("events", [])) == [("response", "/api/missing")]
    nothing = await obs.ok(source="network", resourceType="image", method="POST")
    assert nothing.get("events", []) == []

    # a failed request under requestFailed, filtered by url and method
    port = closed_port()
    await client.ok(
        "browser_evaluate",
        {
            **obs.addr,
            "expression": f"fetch('http://127.0.0.1:{port}/nope').then(() => 1, () => 0)",
        },
    )
    for _ in range(50):
        failed = await obs.ok(source="requestFailed", url="**/nope")
        if failed.get("events", []):
            break
    (gone,) = failed.get("events", [])
    assert gone["kind"] == "request_failed" and gone["method"] == "GET"
    assert (await obs.ok(source="requestFailed", method="POST")).get("events", []) == []
    assert (await obs.ok(source="requestFailed", statusMin=100)).get("events", []) == []

    # filters belong to network sources; the runtime names the field
    for name, value in (("url", "**"), ("method", "GET"), ("statusMax", 500)):
        error = await obs.err(source="console", **{name: value})
        assert error["code"] == "INVALID_ARGUMENT"
        assert error["details"] == {
            "field": name,
            "rule": "only with source network or requestFailed",
        }
    bad = await obs.err(source="network", statusMin=500, statusMax=400)
    assert bad["details"]["field"] == "statusMin"
    assert (await obs.err(source="network", resourceType="img"))["details"]["field"] == (
        "resourceType"
    )
    assert (await obs.err(source="network", url="*" * 33))["details"]["field"] == "url"


async def tick(client: ToolClient, addr: dict[str, str], n: int) -> None:
    expression = (
        f"Promise.all([fetch('/api/tick?n={n}').then((r) => r.text()), "
        "fetch('/api/missing').then((r) => r.text())]).then(() => 1)"
    )
    await client.ok("browser_evaluate", {**addr, "expression": expression})


async def test_newest_first_then_polling_misses_and_repeats_nothing(
    client: ToolClient, observe_site: ObserveSite
) -> None:
    obs = await traffic_page(client, observe_site)
    tail = await obs.ok(source="network", url="**/api/**", newestFirst=True, limit=2)
    assert paths(tail.get("events", [])) == [
        ("response", "/api/export"),
        ("request", "/api/export"),
    ]
    seqs = [int(e["eventId"].split(".")[1], 36) for e in tail.get("events", [])]
    assert seqs == sorted(seqs, reverse=True)
    newest = await obs.ok(source="network", newestFirst=True, limit=1)
    assert (
        tail.get("nextCursor") == newest.get("events", [])[0]["eventId"]
    )  # the newest event examined
    assert (await obs.ok(source="network", sinceEventId=tail.get("nextCursor"))).get(
        "events", []
    ) == []

    # poll tick responses (limit 1) while the page makes more traffic
    cursor = tail.get("nextCursor")
    seen: list[str] = []
    wanted = {"url": "**/api/tick*", "statusMin": 200, "statusMax": 299, "limit": 1}

    async def poll() -> int:
        nonlocal cursor
        data = await obs.ok(source="network", sinceEventId=cursor, **wanted)
        assert data["gap"] is False
        seen.extend(e["url"].rsplit("=", 1)[1] for e in data.get("events", []))
        assert all(e["kind"] == "response" for e in data.get("events", []))
        cursor = data.get("nextCursor")
        return len(data.get("events", []))

    for n in range(6):
        await tick(client, obs.addr, n)
        await poll()
    for _ in range(100):  # the last responses may still be on their way
        if len(seen) >= 6:
            break
        if await poll() == 0:
            settle = {"kind": "load", "state": "load"}
            await client.ok("browser_wait", {**obs.addr, "timeoutMs": 5_000, "condition": settle})
    assert seen == [str(n) for n in range(6)]
    # a forward read from the final cursor returns nothing; the same read without it, all six
    assert (await obs.ok(source="network", sinceEventId=cursor, **wanted)).get("events", []) == []
    every = await obs.ok(source="network", **{**wanted, "limit": 100})
    assert [e["url"].rsplit("=", 1)[1] for e in every.get("events", [])] == seen


async def test_request_detail_allowlists_headers_and_never_leaks_secrets(
    client: ToolClient, observe_site: ObserveSite
) -> None:
    obs = await traffic_page(client, observe_site)
    assert f"Bearer auth-{SECRET_MARK}" in observe_site.authorizations  # it was on the wire
    created = await obs.ok(source="network", url="**/api/orders", statusMin=200)
    (response,) = created.get("events", [])
    order = await obs.ok(source="network", requestId=response["requestId"])
    assert set(order) >= {"operationId", "source", "request"}
    assert "events" not in order and order["source"] == "network"
    request = order["request"]
    assert request["requestId"] == response["requestId"]
    assert (request["method"], request["status"], request["resourceType"]) == ("POST", 201, "fetch")
    assert request["url"] == observe_site.url("/api/orders")
    assert isinstance(request["durationMs"], int) and request["durationMs"] >= 0
    assert "responseStart" in request["timing"]
    assert all(isinstance(v, int) and v >= 0 for v in request["timing"].values())
    headers = request["responseHeaders"]
    assert headers["content-type"] == "application/json"
    assert headers["content-length"] == "9"
    assert headers["cache-control"] == "no-store"
    assert headers["location"] == observe_site.url("/api/orders/7?session=[REDACTED]&view=full")
    assert set(headers) <= {
        "content-type",
        "content-length",
        "content-disposition",
        "location",
        "cache-control",
        "etag",
        "last-modified",
    }

    items = await obs.ok(source="network", url="**/api/items*", statusMin=200, limit=1)
    detail = await obs.ok(source="network", requestId=items.get("events", [])[0]["requestId"])
    item_headers = detail["request"]["responseHeaders"]
    assert item_headers["etag"] == '"items-v1"'
    assert item_headers["last-modified"] == "Wed, 21 Oct 2015 07:28:00 GMT"
    assert "set-cookie" not in item_headers

    export = await obs.ok(source="network", url="**/api/export", newestFirst=True, limit=1)
    export_detail = await obs.ok(
        source="network", requestId=export.get("events", [])[0]["requestId"]
    )
    assert export_detail["request"]["responseHeaders"]["content-disposition"] == (
        'attachment; filename="export.csv"'
    )
    # a request event (not only a response) names the request too
    image = await obs.ok(source="network", resourceType="image", limit=1)
    assert image.get("events", [])[0]["kind"] == "request"
    image_detail = await obs.ok(source="network", requestId=image.get("events", [])[0]["requestId"])
    assert image_detail["request"]["responseHeaders"]["content-type"] == "image/png"

    unknown = await obs.err(source="network", requestId="r999")
    assert unknown["code"] == "INVALID_ARGUMENT"
    assert unknown["details"] == {
        "field": "requestId",
        "rule": "a requestId of a retained network event of this page",
    }
    wrong_source = await obs.err(source="requestFailed", requestId=response["requestId"])
    assert wrong_source["details"]["field"] == "requestId"
    for name, value in (("limit", 5), ("sinceEventId", response["eventId"]), ("method", "POST")):
        combined = await obs.err(source="network", requestId=response["requestId"], **{name: value})
        assert combined["details"] == {"field": name, "rule": "not with requestId"}

    # the cookie the page was given went back to the server with the second items request,
    # and the Authorization header was sent: neither ever crosses, in any result
    await obs.ok(source="network", limit=100)
    await obs.ok(source="network", limit=100, newestFirst=True)
    for event in (await obs.ok(source="network", limit=100)).get("events", []):
        await obs.ok(source="network", requestId=event["requestId"])
    text = obs.everything().lower()
    assert SECRET_MARK not in text
    for word in ("set-cookie", "cookie", "authorization", "bearer"):
        assert word not in text, word
