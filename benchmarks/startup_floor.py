"""The start-up floor's child process (`benchmarks/startup.py`): the MCP SDK's low-level
`Server`, no tools, over stdio, imported the way `browsermesh` serve imports the SDK (package
initialisers deferred). What is left of its spawn -> `initialize` time is the interpreter and
the SDK alone."""

from __future__ import annotations

import anyio

from browsermesh.transports.sdk_packages import defer_sdk_package_inits

defer_sdk_package_inits()

from mcp.server.lowlevel import Server  # noqa: E402  (after the deferral, on purpose)
from mcp.server.stdio import stdio_server  # noqa: E402


async def serve() -> None:
    server: Server[object] = Server("startup-floor")
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(serve)
