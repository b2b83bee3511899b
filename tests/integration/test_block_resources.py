"""`contextSettings.blockResources` on real Chromium (issue 16 item 3), against the loopback
resources site (tests/fixtures/resources_site.py): blocked types fail as `blocked` in
`requestFailed`, never reach the server, and the page still loads and reads; without the setting
nothing is blocked and the context has no route."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from browsermesh.runtime.runtime import Runtime
from tests.fixtures.resources_site import (
    API_PATH,
    AUDIO_PATH,
    FONT_PATH,
    IMAGE_PATH,
    PAGE_PATH,
    VIDEO_PATH,
    ResourcesSite,
)
from tests.integration.test_invalid_argument_fields import FIELD_NEXT_STEP
from tests.support.clients import ToolClient
from tests.support.eventually import eventually

pytestmark = pytest.mark.anyio

ASSETS = {IMAGE_PATH: "image", FONT_PATH: "font", VIDEO_PATH: "media", AUDIO_PATH: "media"}
FETCHED = {"kind": "text", "text": "fetched 42", "state": "present"}


@pytest.fixture(scope="module")
def resources_site() -> Iterator[ResourcesSite]:
    with ResourcesSite() as site:
        yield site


def path_of(event: dict[str, Any]) -> str:
    return "/" + str(event["url"]).split("/", 3)[3]


async def load(client: ToolClient, site: ResourcesSite, **create: Any) -> dict[str, str]:
    """A new session (created with `create`) on the resources page, its fetch answered."""
    data = await client.ok("browser_session_create", create)
    addr = {"sessionId": data["session"]["sessionId"], "pageId": data["initialPage"]["pageId"]}
    await client.ok("browser_navigate", {**addr, "url": site.url(PAGE_PATH)})
    await client.ok("browser_wait", {**addr, "timeoutMs": 10_000, "condition": FETCHED})
    return addr


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


async def test_blocked_types_fail_as_blocked_and_the_page_still_works(
    client: ToolClient, resources_site: ResourcesSite, runtime: Runtime
) -> None:
    before = resources_site.hits()
    created = await client.ok(
        "browser_session_create",
        {"contextSettings": {"blockResources": ["font", "image", "media"]}},
    )
    view = created["session"]
    assert view["contextSettings"] == {"blockResources": ["image", "media", "font"]}
    addr = {"sessionId": view["sessionId"], "pageId": created["initialPage"]["pageId"]}
    got = await client.ok("browser_session_get", {"sessionId": view["sessionId"]})
    assert got["session"]["contextSettings"] == {"blockResources": ["image", "media", "font"]}
    await client.ok("browser_navigate", {**addr, "url": resources_site.url(PAGE_PATH)})
    await client.ok("browser_wait", {**addr, "timeoutMs": 10_000, "condition": FETCHED})

    failed = await events_until(
        client, addr, "requestFailed", lambda evs: set(ASSETS) <= {path_of(e) for e in evs}
    )
    assert {path_of(e) for e in failed} == set(ASSETS), failed
    for event in failed:
        assert event["kind"] == "request_failed"
        assert event["failure"] == "blocked", event
        assert event["resourceType"] == ASSETS[path_of(event)], event
        assert event["method"] == "GET" and event["durationMs"] >= 0
    filtered = await client.ok(
        "browser_observe", {**addr, "source": "requestFailed", "resourceType": "font"}
    )
    assert [path_of(e) for e in filtered.get("events", [])] == [FONT_PATH]

    network = (await client.ok("browser_observe", {**addr, "source": "network", "limit": 100}))[
        "events"
    ]
    responses = {path_of(e): e for e in network if e["kind"] == "response"}
    assert responses[PAGE_PATH]["status"] == 200
    assert responses[PAGE_PATH]["resourceType"] == "document"
    assert responses[API_PATH]["status"] == 200 and responses[API_PATH]["resourceType"] == "fetch"
    assert not set(ASSETS) & set(responses), responses
    image = next(e for e in network if e["kind"] == "request" and path_of(e) == IMAGE_PATH)
    detail = await client.ok(
        "browser_observe", {**addr, "source": "network", "requestId": image["requestId"]}
    )
    assert detail["request"]["failure"] == "blocked", detail

    # The blocked assets never reached the server; the document and the fetch did.
    hits = resources_site.hits() - before
    assert not set(ASSETS) & set(hits), hits
    assert hits[PAGE_PATH] == 1 and hits[API_PATH] == 1
    title = await client.ok("browser_get_title", addr)
    assert title["title"] == "Resources"
    text = await client.ok(
        "browser_visible_text", {**addr, "locator": {"strategy": "css", "value": "#state"}}
    )
    assert text["text"] == "fetched 42"

    record = runtime.sessions_snapshot()[view["sessionId"]]
    router = record.context.router  # type: ignore[union-attr]
    assert len(router) == 0  # every abort was reported and forgotten


async def test_without_the_setting_nothing_is_blocked_and_nothing_is_routed(
    client: ToolClient, resources_site: ResourcesSite, runtime: Runtime
) -> None:
    before = resources_site.hits()
    addr = await load(client, resources_site)
    view = (await client.ok("browser_session_get", {"sessionId": addr["sessionId"]}))["session"]
    assert "contextSettings" not in view  # none given: an empty object is left out
    network = await events_until(
        client,
        addr,
        "network",
        lambda evs: set(ASSETS) <= {path_of(e) for e in evs if e["kind"] == "response"},
    )
    responses = {path_of(e) for e in network if e["kind"] == "response"}
    assert set(ASSETS) | {PAGE_PATH, API_PATH} <= responses, network
    failed = (await client.ok("browser_observe", {**addr, "source": "requestFailed"})).get(
        "events", []
    )
    assert all(e["failure"] != "blocked" for e in failed), failed
    hits = resources_site.hits() - before
    assert set(ASSETS) <= set(hits), hits
    record = runtime.sessions_snapshot()[addr["sessionId"]]
    assert not record.context.router.routing  # type: ignore[union-attr]
    assert record.context.context._impl_obj._routes == []  # type: ignore[union-attr]


async def test_a_session_restored_from_a_saved_state_blocks_too(
    client: ToolClient, resources_site: ResourcesSite
) -> None:
    first = await load(client, resources_site)
    await client.ok("browser_state_save", {"sessionId": first["sessionId"], "stateId": "blk"})
    before = resources_site.hits()
    created = await client.ok(
        "browser_session_create",
        {"stateId": "blk", "contextSettings": {"blockResources": ["image"]}},
    )
    view = created["session"]
    assert view["restoredFromStateId"] == "blk"
    assert view["contextSettings"] == {"blockResources": ["image"]}
    addr = {"sessionId": view["sessionId"], "pageId": created["initialPage"]["pageId"]}
    await client.ok("browser_navigate", {**addr, "url": resources_site.url(PAGE_PATH)})
    await client.ok("browser_wait", {**addr, "timeoutMs": 10_000, "condition": FETCHED})
    failed = await events_until(
        client, addr, "requestFailed", lambda evs: IMAGE_PATH in {path_of(e) for e in evs}
    )
    assert [(path_of(e), e["failure"]) for e in failed] == [(IMAGE_PATH, "blocked")], failed
    network = await events_until(
        client,
        addr,
        "network",
        lambda evs: FONT_PATH in {path_of(e) for e in evs if e["kind"] == "response"},
    )
    assert FONT_PATH in {path_of(e) for e in network if e["kind"] == "response"}
    hits = resources_site.hits() - before
    assert IMAGE_PATH not in hits and hits[FONT_PATH] >= 1, hits


@pytest.mark.parametrize(
    ("value", "field", "rule", "clause"),
    [
        (["image", "document"], "contextSettings.blockResources[1]", "one of: stylesheet", None),
        (["websocket"], "contextSettings.blockResources[0]", "one of: stylesheet", None),
        (["font", "font"], "contextSettings.blockResources[1]", "each resource type once", None),
        ([], "contextSettings.blockResources", "at least 1 entry", " Bound: blockResources >= 1."),
        ("image", "contextSettings.blockResources", "array", None),
        ([7], "contextSettings.blockResources[0]", "one of: stylesheet", None),
    ],
)
async def test_invalid_values_name_the_field(
    client: ToolClient, value: object, field: str, rule: str, clause: str | None
) -> None:
    error = await client.err(
        "browser_session_create", {"contextSettings": {"blockResources": value}}
    )
    assert error["code"] == "INVALID_ARGUMENT"
    assert error["details"]["field"] == field
    assert error["details"]["rule"].startswith(rule), error
    assert error["nextStep"] == FIELD_NEXT_STEP
    if clause is not None:
        assert error["message"] == "Invalid argument." + clause
    listed = await client.ok("browser_session_list")
    assert listed["sessions"] == []  # refused before any browser resource
