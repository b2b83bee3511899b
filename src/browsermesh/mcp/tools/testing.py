"""From exploration to regression test (issue 20, profile `testing`): export the recorded
sessions as one pytest-playwright module, and pause, resume or clear a session's recording."""

from __future__ import annotations

from typing import Any

from browsermesh.mcp.registry import Hints, ToolCall, ToolSpec
from browsermesh.mcp.schemas import BOOL, SESSION_ID, array, enum, integer, obj, output, string
from browsermesh.runtime.export import MAX_EXPORT_SESSIONS, RECORDING_ACTIONS

_RECORDING_STATE = {"recording": BOOL, "steps": integer(), "truncated": BOOL}


async def test_export(call: ToolCall) -> dict[str, Any]:
    op_id, data = call.runtime.test_export(
        call.principal, call.args.get("sessionIds"), call.args.get("tracing")
    )
    return {"operationId": op_id, **data}


async def recording(call: ToolCall) -> dict[str, Any]:
    op_id, data = call.runtime.set_recording(
        call.principal, call.session_id(), call.args.get("action")
    )
    return {"operationId": op_id, **data}


def specs() -> list[ToolSpec]:
    return [
        ToolSpec(
            name="browser_test_export",
            title="Export sessions as a test",
            description=(
                "What these sessions did, successful operations only, as one runnable pytest "
                "module (pytest-playwright, sync): a browser context per session, steps "
                "interleaved in the order BrowserMesh accepted them, waits as assertions. "
                "Passwords, and browser_fill_form fields sent with secret:true, are read from "
                "the environment variables listed in `secrets`. Save `code` as test_*.py and "
                "run pytest. tracing:true traces it per pytest-playwright's --tracing."
            ),
            profile="testing",
            hints=Hints(read_only=True, idempotent=True),
            input_schema=obj(
                {
                    "sessionIds": array(
                        SESSION_ID, minItems=1, maxItems=MAX_EXPORT_SESSIONS, uniqueItems=True
                    ),
                    "tracing": BOOL,
                },
                ["sessionIds"],
            ),
            output_schema=output(
                {
                    "language": string(),
                    "code": string(),
                    "steps": integer(),
                    "truncated": BOOL,
                    "secrets": array(string()),
                }
            ),
            handler=test_export,
        ),
        ToolSpec(
            name="browser_recording",
            title="Pause, resume or clear recording",
            description=(
                "Every session records its successful operations for browser_test_export. "
                "pause/resume stop and restart it; clear forgets what it recorded (e.g. after "
                "exploring, before the scenario to keep)."
            ),
            profile="testing",
            hints=Hints(idempotent=True),
            input_schema=obj(
                {"sessionId": SESSION_ID, "action": enum(*RECORDING_ACTIONS)},
                ["sessionId", "action"],
            ),
            output_schema=output(_RECORDING_STATE),
            handler=recording,
        ),
    ]
