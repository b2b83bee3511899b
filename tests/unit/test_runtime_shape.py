"""The runtime by composition (issue 32 item 2) on the fake engine: the facade keeps the public
API callers use, every operation is a service's own method, and a creation's arguments are
checked once however many sessions the call makes."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

import browsermesh.model.labels as labels
import browsermesh.model.settings as settings
from browsermesh.config import default_config
from browsermesh.log import EventLog
from browsermesh.runtime.core import RuntimeCore
from browsermesh.runtime.runtime import LOCAL_PRINCIPAL, Runtime
from tests.fakes import FakeEngine

pytestmark = pytest.mark.anyio

OPERATIONS = [
    "create_session",
    "create_sessions",
    "list_sessions",
    "get_session",
    "session_pages",
    "page_urls",
    "close_session",
    "update_session",
    "save_state",
    "list_states",
    "remove_state",
    "create_page",
    "list_pages",
    "close_page",
    "shutdown",
    "hurry_shutdown",
    "navigate",
    "history",
    "get_url",
    "get_title",
    "element_action",
    "fill_form",
    "scroll",
    "drag",
    "visible_text",
    "wait",
    "action_and_wait",
    "observe",
    "evaluate",
    "snapshot",
    "find",
    "screenshot",
    "file_upload",
    "downloads",
    "artifact_read",
    "pdf",
    "test_export",
    "set_recording",
    "owner_of",
    "run_page_op",
    "run_session_op",
    "info",
    "counts",
    "sessions_snapshot",
]
"""Every method the runtime offered before the split (mcp/, factory, serve, demo, tests)."""
ATTRIBUTES = [
    "config",
    "engine",
    "log",
    "states",
    "clock",
    "tasks",
    "watchers",
    "files",
    "transport",
    "shutting_down",
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[Runtime]:
    config = default_config(timeout_ms=2000, max_sessions=6, data_dir=tmp_path)
    async with Runtime(config, FakeEngine(), EventLog("silent")) as rt:
        yield rt


async def test_the_facade_keeps_the_public_api(rig: Runtime) -> None:
    for name in OPERATIONS:
        method = getattr(rig, name)
        assert callable(method), name
        # Bound to a service or the core, never a forwarding copy on the facade itself.
        assert getattr(method, "__self__", None) is not rig, name
    for name in ATTRIBUTES:
        assert hasattr(rig, name), name
    assert isinstance(rig.core, RuntimeCore)
    assert rig.watchers is rig.core.watchers  # a watcher added here is the core's
    rig.transport = "http"
    assert rig.info()["transport"] == "http"


def counting(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[object]:
    """Replace `module.name` by a wrapper that notes each call's first argument."""
    calls: list[object] = []
    real: Callable[..., Any] = getattr(module, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        calls.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, wrapper)
    return calls


@pytest.mark.parametrize("count", [None, 1, 3])
async def test_a_creation_is_checked_once(
    rig: Runtime, monkeypatch: pytest.MonkeyPatch, count: int | None
) -> None:
    seen_settings = counting(monkeypatch, settings, "normalize_context_settings")
    seen_labels = counting(monkeypatch, labels, "validate_labels")
    _, created = await rig.create_sessions(
        LOCAL_PRINCIPAL, name="n", context_settings={"locale": "en-GB"}, count=count
    )
    assert len(created) == (count or 1)
    assert seen_settings == [{"locale": "en-GB"}]
    assert seen_labels == ["n"]
    assert all(view["contextSettings"]["locale"] == "en-GB" for view, _ in created)


async def test_a_fork_is_checked_once(rig: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    _, view, _ = await rig.create_session(LOCAL_PRINCIPAL)
    seen = counting(monkeypatch, settings, "normalize_context_settings")
    _, created = await rig.create_sessions(
        LOCAL_PRINCIPAL, from_session_id=view["sessionId"], count=2
    )
    assert len(created) == 2 and seen == [None]
