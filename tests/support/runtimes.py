"""Real-Chromium runtimes for tests: the harness settings and a runtime shut down after use."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from browsermesh.config import Config, default_config
from browsermesh.factory import create_runtime
from browsermesh.log import EventLog
from browsermesh.runtime.runtime import Runtime


def real_config(tmp_path: Path, **overrides: Any) -> Config:
    """The real-runtime harness settings (reference §26.1), with a 15 s default budget instead of
    5 s: session creation and the first Chromium launch share it, and CI machines are shared
    and noisy. Tests that exercise deadlines pass their own small `timeoutMs`."""
    values: dict[str, Any] = {
        "headless": True,
        "timeout_ms": 15_000,
        "max_sessions": 50,
        "max_pages": 10,
        "data_dir": tmp_path / "data",
        "tools": ("core", "observability", "persistence", "files", "eval"),
    }
    values.update(overrides)
    return default_config(**values)


@asynccontextmanager
async def real_runtime(
    tmp_path: Path, log: EventLog | None = None, **overrides: Any
) -> AsyncIterator[Runtime]:
    """A real-Chromium runtime with `real_config(tmp_path, **overrides)`, shut down after."""
    rt = create_runtime(real_config(tmp_path, **overrides), log)
    try:
        yield rt
    finally:
        await rt.shutdown()
