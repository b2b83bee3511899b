"""The blockResources route handler (engine/blocking.py) on stand-in routes: which requests it
aborts, that it never raises, and that its memory of aborted requests is weak and bounded."""

from __future__ import annotations

import gc
from typing import Any

import pytest

from browsermesh.engine.blocking import BLOCKED_FAILURE, ResourceBlocker
from browsermesh.engine.playwright_engine import resource_blocker

pytestmark = pytest.mark.anyio


class FakeRequest:
    def __init__(self, resource_type: str) -> None:
        self.resource_type = resource_type


class FakeRoute:
    def __init__(self, resource_type: str, fail: BaseException | None = None) -> None:
        self.request = FakeRequest(resource_type)
        self.calls: list[tuple[str, Any]] = []
        self._fail = fail

    async def abort(self, code: str) -> None:
        self.calls.append(("abort", code))
        if self._fail is not None:
            raise self._fail

    async def fallback(self) -> None:
        self.calls.append(("fallback", None))
        if self._fail is not None:
            raise self._fail


async def test_blocked_types_are_aborted_and_others_fall_back() -> None:
    blocker = ResourceBlocker(["image", "font"])
    image, script = FakeRoute("image"), FakeRoute("script")
    await blocker.handle(image)  # type: ignore[arg-type]
    await blocker.handle(script)  # type: ignore[arg-type]
    assert image.calls == [("abort", "blockedbyclient")]
    assert script.calls == [("fallback", None)]
    assert len(blocker) == 1
    failure = "net::ERR_BLOCKED_BY_CLIENT"
    assert blocker.failure(image.request, failure) == BLOCKED_FAILURE  # type: ignore[arg-type]
    assert len(blocker) == 0  # reported: forgotten
    assert blocker.failure(image.request, failure) == failure  # type: ignore[arg-type]
    assert blocker.failure(script.request, None) == "failed"  # type: ignore[arg-type]
    assert blocker.failure(object(), "net::ERR_FAILED") == "net::ERR_FAILED"  # type: ignore[arg-type]


async def test_the_handler_never_raises() -> None:
    blocker = ResourceBlocker(["media"])
    for kind in ("media", "xhr"):
        await blocker.handle(FakeRoute(kind, RuntimeError("Target closed")))  # type: ignore[arg-type]

    class Gone:
        @property
        def request(self) -> Any:
            raise RuntimeError("context closed")

    await blocker.handle(Gone())  # type: ignore[arg-type]


async def test_aborted_requests_are_held_weakly() -> None:
    blocker = ResourceBlocker(["image"])
    for _ in range(100):
        await blocker.handle(FakeRoute("image"))  # type: ignore[arg-type]
    gc.collect()
    assert len(blocker) == 0  # nothing kept a request alive


def test_no_blocker_without_the_setting() -> None:
    assert resource_blocker({}) is None
    assert resource_blocker({"viewport": {"width": 1, "height": 1}}) is None
    blocker = resource_blocker({"blockResources": ["image", "media"]})
    assert blocker is not None and blocker.resource_types == {"image", "media"}
