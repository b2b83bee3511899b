"""A tool's behaviour hints (MCP tool annotations), defined below the MCP layer (issue 32) so a
catalogue in `model` (`model.element_ops`) can declare its tools' hints and `mcp.registry`
publish them as they are. Pure data: this module imports nothing."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Hints"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Hints:
    """The behaviour hints a client reads from a tool's annotations (all off by default)."""

    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    open_world: bool = False
