"""What a page's history can be asked to do: browser_back, browser_forward, browser_reload.

Pure data, here so that the tool layer (mcp), the runtime and the engine port share one
definition without mcp importing the engine (tests/unit/test_architecture.py)."""

from __future__ import annotations

from typing import Literal

HistoryStep = Literal["back", "forward", "reload"]
