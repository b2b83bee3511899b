"""The stdio transport (reference §18.1): the SDK's `stdio_server`, plus answers to malformed lines.

The SDK's reader turns a line that is not a valid JSON-RPC message into an exception on the read
stream, which the server drops: a request with a wrong `jsonrpc`, no `method` or non-object
`params` never got a reply. `GuardedLines` sits between stdin and the SDK's reader: valid lines
pass through unchanged, malformed ones are answered with the JSON-RPC error of
`transports.jsonrpc` (sent on the server's own write stream, so frames never interleave), and
blank lines and malformed responses are dropped, since JSON-RPC never answers those.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterable, AsyncIterator, Callable
from io import TextIOWrapper
from typing import IO, Any, cast

import anyio
import mcp.types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.server import Server
from mcp.server import stdio as sdk_stdio
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from browsermesh.transports.jsonrpc import check_message

_PENDING_REPLIES = 16


class GuardedLines:
    """Lines of `lines` that are valid JSON-RPC messages; malformed ones become replies."""

    def __init__(
        self, lines: AsyncIterable[str], replies: MemoryObjectSendStream[types.JSONRPCError]
    ) -> None:
        self._lines = lines
        self._replies = replies

    async def __aiter__(self) -> AsyncIterator[str]:
        async with self._replies:
            async for line in self._lines:
                if not line.strip():
                    continue
                malformed = check_message(line)
                if malformed is None:
                    yield line
                elif not malformed.response_shaped:
                    await self._replies.send(malformed.reply)


class _UnownedText(TextIOWrapper):
    """A text layer whose close never closes the buffer under it (the buffer is stdin's)."""

    def close(self) -> None:
        with contextlib.suppress(ValueError):
            self.detach()


def _claimed_stdin() -> tuple[IO[bytes], Callable[[], None] | None]:
    """stdin's bytes, read through the SDK's claim of fd 0 when it has one (fd 0 then points at
    the null device, so nothing else in the process, nor a child, reads the wire); otherwise
    stdin's buffer in place, which is the SDK's own fallback."""
    claim = getattr(sdk_stdio, "_claim_fd", None)
    diversion = getattr(sdk_stdio, "_open_stdin_diversion", None)
    if claim is None or diversion is None:
        return sys.stdin.buffer, None
    buffer, release = claim(0, sys.stdin, "rb", diversion)
    return cast(IO[bytes], buffer), release


async def _forward(replies: MemoryObjectReceiveStream[types.JSONRPCError], write: Any) -> None:
    """Send each reply on the server's write stream until either side closes."""
    with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
        async with replies:
            async for reply in replies:
                await write.send(SessionMessage(reply))


async def serve_stdio(server: Server[Any]) -> None:
    """Serve `server` over stdin/stdout until stdin closes."""
    send, receive = anyio.create_memory_object_stream[types.JSONRPCError](_PENDING_REPLIES)
    buffer, release = _claimed_stdin()
    try:
        text = anyio.wrap_file(_UnownedText(buffer, encoding="utf-8", errors="replace"))
        # stdio_server only iterates its `stdin` argument, line by line.
        guarded = cast(anyio.AsyncFile[str], GuardedLines(text, send))
        async with stdio_server(stdin=guarded) as (read, write), anyio.create_task_group() as tg:
            tg.start_soon(_forward, receive, write)
            await server.run(read, write, server.create_initialization_options())
            tg.cancel_scope.cancel()
    finally:
        if release is not None:
            release()
