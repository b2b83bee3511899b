"""BrowserMesh: an MCP server that gives AI agents many isolated Chromium sessions at once.

Public library exports (loaded lazily so that importing the package stays cheap): the runtime
factory, the MCP server factory, the config loader, the error class and the error-code enum.
The product is specified in docs/reference.md, the layout in docs/architecture.md.

Module map (each package's ``__init__`` has its own):

- ``transports/``: stdio and Streamable HTTP, access control, the live view's HTTP side.
- ``mcp/``: tool specs, schemas, validation, the result envelope, prompts, resources.
- ``runtime/``: sessions, per-session queues, deadlines, cancellation, principals, recording.
- ``engine/``: the only importer of Playwright: backends, locators, snapshots, waits, policy.
- ``persistence/``: saved states and artifacts on disk.
- ``model/``: pure data and rules: catalogues, bounds, parsers, the deadline, task ownership.
- ``config/``: the only reader of the environment; the frozen configuration.
- ``doctor/``: ``browsermesh --doctor``, the installation checks.
- ``demo/``: ``browsermesh demo``, the end-to-end proof.
- ``errors``: the error codes, their messages and next steps, the details allowlist.
- ``redact``: the one URL sanitizer and the page's secret values.
- ``text_redact``: the one text redactor (by value, never by word).
- ``log``: structured JSON-line logging on stderr.
- ``factory``: the public factories: a runtime wired to its backend, the MCP server for it.
- ``serve``: start the runtime and the transport, shut down cleanly.
- ``cli``: the ``browsermesh`` command line; ``cli_options``: its options, help and parser.
- ``view_link``: ``browsermesh view-link``, a one-time link to the live view.
- ``install_browser``: installing Chromium and its headless shell.
- ``__main__``: ``python -m browsermesh``; ``_version``: the one version constant.
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
