"""What a session did, for a person (issue 35, profile `testing`): Playwright traces and
session videos, saved as artifacts of the session (read with browser_artifact_read, or from the
live view's links)."""

from __future__ import annotations

from typing import Any

from browsermesh.mcp.registry import Hints, ToolCall, ToolSpec
from browsermesh.mcp.schemas import BOOL, SESSION_ID, enum, obj, string
from browsermesh.runtime.traces import TRACE_ACTIONS
from browsermesh.runtime.videos import CHAPTER_MAX_CHARS, VIDEO_ACTIONS

_OBJECT = {"type": "object"}


async def trace(call: ToolCall) -> dict[str, Any]:
    op_id, data = await call.runtime.trace(call.principal, call.session_id(), call.args)
    return {"operationId": op_id, **data}


async def video(call: ToolCall) -> dict[str, Any]:
    op_id, data = await call.runtime.video(call.principal, call.session_id(), call.args)
    return {"operationId": op_id, **data}


def specs() -> list[ToolSpec]:
    return [
        ToolSpec(
            name="browser_trace",
            title="Record a Playwright trace",
            description=(
                "Trace the session (all pages) for Playwright's Trace Viewer, each call a "
                "step. stop saves trace.zip as an artifact (passwords removed); discard drops it."
            ),
            profile="testing",
            hints=Hints(),
            input_schema=obj(
                {
                    "sessionId": SESSION_ID,
                    "action": enum(*TRACE_ACTIONS),
                    "screenshots": BOOL,
                    "snapshots": BOOL,
                    "sources": BOOL,
                },
                ["sessionId", "action"],
            ),
            output_schema=_OBJECT,
            handler=trace,
        ),
        ToolSpec(
            name="browser_video",
            title="Record a session video",
            description=(
                "Video (MP4) of the page each call uses, captioned with the calls; chapter "
                "adds a title card. stop saves it as an artifact."
            ),
            profile="testing",
            hints=Hints(),
            input_schema=obj(
                {
                    "sessionId": SESSION_ID,
                    "action": enum(*VIDEO_ACTIONS),
                    "chapter": string(1, CHAPTER_MAX_CHARS),
                },
                ["sessionId", "action"],
            ),
            output_schema=_OBJECT,
            handler=video,
        ),
    ]
