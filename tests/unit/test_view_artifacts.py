"""The artifact download of the live view (issue 35; reference §33.3; transports/view_artifacts.py)
on Starlette's test client over a real artifact store: the file is sent from an open file with
the same headers as ever, and a file that vanished after its lookup is 404, not a 500."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.testclient import TestClient

from browsermesh.log import EventLog
from browsermesh.persistence.artifact_record import Artifact
from browsermesh.persistence.artifacts import ArtifactStore
from browsermesh.transports.view_artifacts import artifact_path, artifact_routes

HEADERS = {"x-content-type-options": "nosniff", "cache-control": "no-store"}
DATA = bytes(range(256)) * 1000  # 256 kB: several chunks


async def _viewer(request: Request) -> str | None:
    return "alice" if request.headers.get("x-viewer") == "alice" else None


def _client(store: ArtifactStore) -> TestClient:
    core: Any = SimpleNamespace(
        owner_of=lambda session_id: "alice", files=SimpleNamespace(store=store)
    )
    app = Starlette(routes=artifact_routes(core, _viewer, EventLog(), HEADERS))
    return TestClient(app, raise_server_exceptions=False, headers={"x-viewer": "alice"})


@pytest.fixture
def store(tmp_path: Path) -> ArtifactStore:
    return ArtifactStore(tmp_path / "artifacts")


def _video(store: ArtifactStore) -> Artifact:
    return store.put("s1", "alice", None, "video", "video-<s1>.mp4", "video/mp4", DATA)


def test_an_artifact_downloads_whole_as_an_attachment(store: ArtifactStore) -> None:
    artifact = _video(store)
    with _client(store) as http:
        got = http.get(artifact_path("s1", artifact.artifact_id))
        assert got.status_code == 200
        assert got.content == DATA
        assert got.headers["content-length"] == str(len(DATA))
        assert got.headers["content-type"] == "video/mp4"
        assert got.headers["content-disposition"] == (
            "attachment; filename*=UTF-8''video-%3Cs1%3E.mp4"
        )
        assert got.headers["x-content-type-options"] == "nosniff"
        assert http.get(artifact_path("s1", "a-nope")).status_code == 404


def test_a_file_gone_after_its_lookup_is_not_found(
    store: ArtifactStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    artifact = _video(store)
    lookup = store.get

    def get_then_prune(session_id: str, artifact_id: object) -> Artifact:
        found = lookup(session_id, artifact_id)
        found.path.unlink()  # a prune between the lookup and the send
        return found

    monkeypatch.setattr(store, "get", get_then_prune)
    with _client(store) as http:
        got = http.get(artifact_path("s1", artifact.artifact_id))
    assert got.status_code == 404
    assert got.text == "not found"
    assert got.headers["x-content-type-options"] == "nosniff"
