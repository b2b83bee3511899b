"""Runtime, session and page tools."""

from __future__ import annotations

from typing import Any

from browsermesh.mcp.registry import ToolCall, ToolOutput, ToolSpec
from browsermesh.mcp.schemas import (
    EMPTY_INPUT,
    FLAG_OUTPUT,
    NO_CONTROL,
    PAGE_ID,
    PAGE_VIEW,
    SESSION_ID,
    SESSION_VIEW,
    Schema,
    array,
    integer,
    obj,
    output,
    session_address,
    string,
)

_POSITIVE = integer(1)
_INFO_OUTPUT: Schema = output(
    {"serverVersion": string(), "activeSessions": integer(0), "resourceLimits": {"type": "object"}}
)

_METADATA: Schema = {
    "type": "object",
    "maxProperties": 32,
    "propertyNames": {
        "minLength": 1,
        "maxLength": 64,
        "pattern": NO_CONTROL,
        "not": {"enum": ["__proto__", "constructor", "prototype"]},
    },
    "additionalProperties": string(max_length=512, pattern=NO_CONTROL),
}

_SESSION_OUT = output({"sessionId": string(), "session": SESSION_VIEW})


async def runtime_info(call: ToolCall) -> ToolOutput:
    info = call.runtime.info()
    state = {"ready": "browser ready", "failed": "browser failed"}.get(
        info["browserLaunchState"], "browser not started"
    )
    summary = (
        f"BrowserMesh {info['serverVersion']} · {state} · {info['activeSessions']} active, "
        f"{info['failedSessions']} failed sessions"
    )
    return ToolOutput(info, text=summary)


async def session_create(call: ToolCall) -> dict[str, Any]:
    a = call.args
    op_id, view, page_id = await call.runtime.create_session(
        call.principal,
        name=a.get("name"),
        metadata=a.get("metadata"),
        state_id=a.get("stateId"),
        context_settings=a.get("contextSettings"),
    )
    return {
        "operationId": op_id,
        "session": view,
        "initialPage": {"sessionId": view["sessionId"], "pageId": page_id},
    }


async def session_list(call: ToolCall) -> dict[str, Any]:
    op_id, views = call.runtime.list_sessions(call.principal)
    return {"operationId": op_id, "sessions": views}


async def session_get(call: ToolCall) -> dict[str, Any]:
    op_id, view = call.runtime.get_session(call.principal, call.session_id())
    return {"operationId": op_id, "sessionId": view["sessionId"], "session": view}


async def session_close(call: ToolCall) -> dict[str, Any]:
    op_id, view = await call.runtime.close_session(call.principal, call.session_id())
    return {"operationId": op_id, "sessionId": view["sessionId"], "session": view}


async def page_create(call: ToolCall) -> dict[str, Any]:
    op_id, page = await call.runtime.create_page(call.principal, call.session_id())
    return {
        "operationId": op_id,
        "sessionId": page["sessionId"],
        "pageId": page["pageId"],
        "page": page,
    }


async def page_list(call: ToolCall) -> dict[str, Any]:
    op_id, pages = await call.runtime.list_pages(call.principal, call.session_id())
    return {"operationId": op_id, "sessionId": call.args["sessionId"], "pages": pages}


async def page_close(call: ToolCall) -> dict[str, Any]:
    op_id = await call.runtime.close_page(call.principal, call.session_id(), call.page_id())
    return call.page_result(
        op_id,
        closed=True,
    )


def create_input_schema(context_settings: Schema) -> Schema:
    return obj(
        {
            "name": string(1, 128, pattern=NO_CONTROL),
            "metadata": _METADATA,
            "stateId": string(1, 128),
            "contextSettings": context_settings,
        }
    )


def specs(context_settings: Schema) -> list[ToolSpec]:
    """The session and page tools (profile `core`)."""
    return [
        ToolSpec(
            "browser_runtime_info",
            "Inspect BrowserMesh runtime",
            "Server, browser and limit info (diagnose BROWSER_ERROR here).",
            "core",
            True,
            False,
            True,
            False,
            EMPTY_INPUT,
            _INFO_OUTPUT,
            runtime_info,
        ),
        ToolSpec(
            "browser_session_create",
            "Create isolated browser session",
            "Isolated session (own cookies, storage, pages) and its first page: one per user, "
            "role, auth state or parallel workflow; calls name sessionId and pageId.",
            "core",
            False,
            False,
            False,
            False,
            create_input_schema(context_settings),
            output(
                {
                    "session": SESSION_VIEW,
                    "initialPage": obj(
                        {"sessionId": string(), "pageId": string()},
                        ["sessionId", "pageId"],
                        closed=False,
                    ),
                }
            ),
            session_create,
        ),
        ToolSpec(
            "browser_session_list",
            "List browser sessions",
            "List your sessions (live and recently ended).",
            "core",
            True,
            False,
            True,
            False,
            EMPTY_INPUT,
            output({"sessions": array(SESSION_VIEW)}),
            session_list,
        ),
        ToolSpec(
            "browser_session_get",
            "Get browser session",
            "One session's status, labels and failureCode.",
            "core",
            True,
            False,
            True,
            False,
            session_address(),
            _SESSION_OUT,
            session_get,
        ),
        ToolSpec(
            "browser_session_close",
            "Close browser session",
            "Close a session after its queued work.",
            "core",
            False,
            True,
            True,
            False,
            session_address(),
            _SESSION_OUT,
            session_close,
        ),
        ToolSpec(
            "browser_page_create",
            "Create browser page",
            "Open another page (tab) in a session.",
            "core",
            False,
            False,
            False,
            False,
            session_address(),
            output({"sessionId": string(), "pageId": string(), "page": PAGE_VIEW}),
            page_create,
        ),
        ToolSpec(
            "browser_page_list",
            "List browser pages",
            "A session's pages and their URLs.",
            "core",
            True,
            False,
            True,
            False,
            session_address(),
            output({"sessionId": string(), "pages": array(PAGE_VIEW)}),
            page_list,
        ),
        ToolSpec(
            "browser_page_close",
            "Close browser page",
            "Close one page of a session.",
            "core",
            False,
            True,
            False,
            False,
            obj({"sessionId": SESSION_ID, "pageId": PAGE_ID}, ["sessionId", "pageId"]),
            FLAG_OUTPUT,
            page_close,
        ),
    ]
