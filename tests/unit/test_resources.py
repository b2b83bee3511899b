"""Session resources on the fake engine (mcp.resources, issue 17): which URIs each change
touches, and the bound on what `resources/list` names."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from browsermesh.config import default_config
from browsermesh.mcp.clients import Clients
from browsermesh.mcp.resources import (
    MAX_LISTED_SESSIONS,
    SESSIONS_URI,
    SessionResources,
    artifacts_uri,
    session_uri,
)
from browsermesh.runtime.runtime import Runtime
from browsermesh.runtime.watchers import SessionChange
from tests.fakes import FakeEngine

pytestmark = pytest.mark.anyio


class Told(Clients):
    """Clients that record what they were asked to send instead of sending it."""

    def __init__(self) -> None:
        super().__init__(lambda _session_id: None)
        self.told: list[tuple[str, str, str | None]] = []

    def resource_updated(self, principal: str, uri: str) -> None:
        self.told.append(("updated", principal, uri))

    def resource_list_changed(self, principal: str) -> None:
        self.told.append(("list_changed", principal, None))


def test_each_change_touches_the_uris_whose_content_changed(tmp_path: Path) -> None:
    runtime = Runtime(default_config(data_dir=tmp_path), FakeEngine())
    told = Told()
    resources = SessionResources(runtime, told)
    one, arts = session_uri("s1"), artifacts_uri("s1")
    expected: dict[str, list[tuple[str, str, str | None]]] = {
        "created": [("list_changed", "bob", None), ("updated", "bob", SESSIONS_URI)],
        "state": [("updated", "bob", SESSIONS_URI), ("updated", "bob", one)],
        "pages": [("updated", "bob", one)],
        "artifacts": [("updated", "bob", one), ("updated", "bob", arts)],
        "closed": [
            ("list_changed", "bob", None),
            ("updated", "bob", SESSIONS_URI),
            ("updated", "bob", one),
            ("updated", "bob", arts),
        ],
    }
    for kind, notes in expected.items():
        told.told.clear()
        resources.session_changed(SessionChange("bob", "s1", kind))  # type: ignore[arg-type]
        assert told.told == notes, kind


async def test_the_listing_is_bounded_and_live_only(tmp_path: Path) -> None:
    runtime = Runtime(
        default_config(data_dir=tmp_path, max_sessions=MAX_LISTED_SESSIONS + 5),
        FakeEngine(delay=0),
    )
    resources = SessionResources(runtime, Told())
    try:
        ids = [(await runtime.create_session("alice"))[1]["sessionId"] for _ in range(102)]
        await runtime.create_session("bob")
        await runtime.close_session("alice", ids[0])
        listed = [str(r.uri) for r in resources.list("alice").resources]
        assert listed[0] == SESSIONS_URI
        assert len(listed) == 1 + 2 * MAX_LISTED_SESSIONS
        assert listed[1:3] == [session_uri(ids[1]), artifacts_uri(ids[1])]  # the closed one left
        names: list[Any] = [r.name for r in resources.list("alice").resources]
        assert len(set(names)) == len(names)
        assert [str(r.uri) for r in resources.list("carol").resources] == [SESSIONS_URI]
    finally:
        await runtime.shutdown()
