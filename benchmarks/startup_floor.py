"""The start-up floor's child process (`benchmarks/startup.py`): the MCP SDK's low-level
`Server`, no tools, over stdio, imported the way `browsermesh` serve imports the SDK. What is
left of its spawn -> `initialize` time is the interpreter and the SDK alone."""

from __future__ import annotations

import anyio
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server


async def serve() -> None:
    server: Server[object] = Server("startup-floor")
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(serve)
