"""BrowserMesh: an MCP server that gives AI agents many isolated Chromium sessions at once.

Public library exports (loaded lazily so that importing the package stays cheap): the runtime
factory, the MCP server factory, the config loader, the error class and the error-code enum.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from browsermesh._version import __version__

if TYPE_CHECKING:
    from browsermesh.config import default_config, load_config
    from browsermesh.errors import BrowserMeshError, ErrorCode
    from browsermesh.factory import create_runtime
    from browsermesh.mcp.server import create_server

__all__ = [
    "BrowserMeshError",
    "ErrorCode",
    "__version__",
    "create_runtime",
    "create_server",
    "default_config",
    "load_config",
]

_EXPORTS = {
    "create_runtime": "browsermesh.factory",
    "create_server": "browsermesh.mcp.server",
    "load_config": "browsermesh.config",
    "default_config": "browsermesh.config",
    "BrowserMeshError": "browsermesh.errors",
    "ErrorCode": "browsermesh.errors",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(name)
    import importlib

    return getattr(importlib.import_module(module), name)
