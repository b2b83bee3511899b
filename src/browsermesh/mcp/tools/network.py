"""`browser_session_update` (issue 19): change a live session's network policy."""

from __future__ import annotations

from typing import Any

from browsermesh.mcp.registry import Hints, ToolCall, ToolSpec
from browsermesh.mcp.schemas import SESSION_VIEW, output, session_address


async def session_update(call: ToolCall) -> dict[str, Any]:
    changes: dict[str, Any] = {k: call.args[k] for k in ("network", "proxy") if k in call.args}
    op_id, view = await call.runtime.update_session(call.principal, call.session_id(), changes)
    return {"operationId": op_id, "sessionId": view["sessionId"], "session": view}


def specs() -> list[ToolSpec]:
    """The session update tool (profile `core`). `network` is validated field by field at
    runtime like `contextSettings`; `proxy` is published only so that passing it gets the
    rule saying why it cannot change, instead of an unknown-field error."""
    return [
        ToolSpec(
            name="browser_session_update",
            title="Update browser session",
            description=(
                "Change a live session's contextSettings.network; given fields replace, "
                "[]/{} clear."
            ),
            profile="core",
            hints=Hints(idempotent=True),
            input_schema=session_address({"network": {}, "proxy": {}}),
            output_schema=output({"session": SESSION_VIEW}),
            handler=session_update,
        )
    ]
