"""What a page's history can be asked to do: browser_back, browser_forward, browser_reload.

Pure data, here so that the tool layer (mcp), the runtime and the engine port share one
definition without mcp importing the engine (tests/unit/test_architecture.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

HistoryStep = Literal["back", "forward", "reload"]


@dataclass(frozen=True)
class Landing:
    """Where a navigation left the page (issue 31 item 2): the final URL, the main document's
    HTTP status (None without one: about:blank, a same-document step), the title and the key
    text lines the action table's header shows."""

    url: str
    status: int | None = None
    title: str = ""
    keys: tuple[str, ...] = ()
    page_tools: int | None = None
    """How many WebMCP tools the page registers (issue 36 item 1): counted only while the
    `webmcp` profile is published, shown only when not 0."""

    def fields(self) -> dict[str, Any]:
        """The lean result fields: ``url`` always, the others only when they say something."""
        out: dict[str, Any] = {"url": self.url}
        if self.status is not None:
            out["status"] = self.status
        if self.title:
            out["title"] = self.title
        if self.keys:
            out["keys"] = list(self.keys)
        if self.page_tools:
            out["pageTools"] = self.page_tools
        return out
