"""Two ASGI helpers shared by the HTTP middlewares: read a request header, answer with JSON.

Used whenever a middleware answers a request itself (421/403/401 from access control, 400 from the
JSON-RPC guard, 429 from the MCP session limit, 503 from the request drain) instead of passing it
to the SDK.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from starlette.types import Scope, Send

__all__ = ["header", "respond_json"]


def header(scope: Scope, name: bytes) -> bytes | None:
    """The first value of header `name` (lower-case bytes), or None when absent."""
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return bytes(value)
    return None


async def respond_json(
    send: Send,
    status: int,
    body: Mapping[str, object],
    headers: Sequence[tuple[bytes, bytes]] = (),
) -> None:
    """A complete response: `status` with `body` as compact JSON and any extra `headers`."""
    payload = json.dumps(body, separators=(",", ":")).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})
