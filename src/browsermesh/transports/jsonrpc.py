"""Answers for malformed JSON-RPC messages, shared by the stdio and HTTP transports (issue 12 #9).

The SDK's stdio reader drops a line that is not a valid JSON-RPC message without a reply, so a
client waiting for that request's answer waits forever; its HTTP transport answers -32602 with
pydantic's text, which quotes the offending values. JSON-RPC 2.0 (§5.1) wants -32700 "Parse error"
(id null) for invalid JSON and -32600 "Invalid Request" for anything else, with the request's id
when it can be read. The messages here are those fixed texts: nothing of the input is echoed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import mcp.types as types
from mcp.types import INVALID_REQUEST, PARSE_ERROR

RequestId = int | str | None


@dataclass(frozen=True, slots=True)
class Malformed:
    """A message the SDK would refuse, and the JSON-RPC error that answers it.

    `response_shaped`: it looks like a client's answer to a server request (`result` or `error`,
    no `method`). A stream never answers a response, so stdio drops those silently."""

    reply: types.JSONRPCError
    response_shaped: bool = False


def error_reply(request_id: RequestId, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(
        jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message)
    )


def _request_id(decoded: object) -> RequestId:
    """The id a reply may carry: a string or an integer id of an object, else null."""
    if not isinstance(decoded, dict):
        return None
    value = decoded.get("id")
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    return None


def _valid(raw: str | bytes) -> bool:
    """Whether the SDK reads `raw` as one message that is what it claims to be.

    The SDK ignores an `id` that is neither a string nor an integer (`true`, `1.5`, `null`, an
    object) and reads the request as a notification, which is never answered; MCP requires a
    string or integer id, so such a message is an invalid request."""
    try:
        message = types.jsonrpc_message_adapter.validate_json(raw, by_name=False)
    except ValueError:  # pydantic's ValidationError, for invalid JSON too
        return False
    if not isinstance(message, types.JSONRPCNotification):
        return True
    decoded = json.loads(raw)
    return not (isinstance(decoded, dict) and "id" in decoded)


def check_message(raw: str | bytes) -> Malformed | None:
    """None when `raw` is one valid JSON-RPC message; otherwise the answer to it."""
    if _valid(raw):
        return None
    try:
        decoded = json.loads(raw)
    except (ValueError, RecursionError):  # bad JSON, bad UTF-8, a huge number, deep nesting
        return Malformed(error_reply(None, PARSE_ERROR, "Parse error"))
    response_shaped = (
        isinstance(decoded, dict)
        and "method" not in decoded
        and ("result" in decoded or "error" in decoded)
    )
    reply = error_reply(_request_id(decoded), INVALID_REQUEST, "Invalid Request")
    return Malformed(reply, response_shaped)
