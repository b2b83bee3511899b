"""Raw JSON-RPC messages, for tests that speak the protocol themselves (stdio or HTTP)."""

from __future__ import annotations

from typing import Any

INITIALIZE_PARAMS: dict[str, Any] = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "raw", "version": "1"},
}
INITIALIZE: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": INITIALIZE_PARAMS,
}
"""A raw `initialize` request, for tests that speak JSON-RPC themselves (stdio or HTTP)."""
