"""Runtime, session and page tools."""

from __future__ import annotations

import contextlib
from typing import Any

from browsermesh.mcp.registry import Hints, ToolCall, ToolOutput, ToolSpec
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
from browsermesh.runtime.calls import PageCall
from browsermesh.runtime.checks import validate_http_url
from browsermesh.runtime.info import summary_text

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

_SESSION_OUT = output({"session": SESSION_VIEW})


async def runtime_info(call: ToolCall) -> ToolOutput:
    """The structured runtime info, and its main facts as a few lines of text (issue 31)."""
    info = call.runtime.info(call.principal)
    return ToolOutput(info, text=summary_text(info))


async def session_create(call: ToolCall) -> dict[str, Any]:
    """The first (usually only) session as `session` + `initialPage`; with `count` > 1 also
    `sessions: [{session, initialPage}, ...]`, every one of them, first included."""
    a = call.args
    # A `url` is checked before anything is made: a bad one creates no session.
    target = None if a.get("url") is None else validate_http_url(a["url"])
    op_id, made = await call.runtime.create_sessions(
        call.principal,
        name=a.get("name"),
        metadata=a.get("metadata"),
        state_id=a.get("stateId"),
        context_settings=a.get("contextSettings"),
        from_session_id=a.get("fromSessionId"),
        count=a.get("count"),
    )
    created = [
        {"session": view, "initialPage": {"sessionId": view["sessionId"], "pageId": page_id}}
        for view, page_id in made
    ]
    if target is not None:
        await _open_first_pages(call, created, target)
    out: dict[str, Any] = {"operationId": op_id, **created[0]}
    if len(created) > 1:
        out["sessions"] = created
    return out


async def _open_first_pages(call: ToolCall, created: list[dict[str, Any]], url: str) -> None:
    """Navigate each new session's first page to `url` (issue 31: sign-in in one call fewer),
    adding where it landed (url, status, title, keys) to its `initialPage`. The navigations are
    ordinary `browser_navigate` operations (queued, recorded, policy-checked). If one fails,
    every session this call made is closed and the navigation's error is the answer: the
    client is never left holding sessions it was not told about."""
    try:
        for item in created:
            first = item["initialPage"]
            page = PageCall(
                principal=call.principal, session_id=first["sessionId"], page_id=first["pageId"]
            )
            _, landed = await call.runtime.navigate(page, url)
            first.update(landed.fields())
    except BaseException:
        for item in created:
            with contextlib.suppress(Exception):
                await call.runtime.close_session(call.principal, item["session"]["sessionId"])
        raise


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
            "fromSessionId": SESSION_ID,
            "count": integer(),
            "url": string(),
        }
    )


def specs(context_settings: Schema) -> list[ToolSpec]:
    """The session and page tools (profile `core`)."""
    return [
        ToolSpec(
            name="browser_runtime_info",
            title="Inspect BrowserMesh runtime",
            description="Server, browser, limits, devices; diagnose BROWSER_ERROR here.",
            profile="core",
            hints=Hints(read_only=True, idempotent=True),
            input_schema=EMPTY_INPUT,
            output_schema=_INFO_OUTPUT,
            handler=runtime_info,
        ),
        ToolSpec(
            name="browser_session_create",
            title="Create isolated browser session",
            description=(
                "Isolated session (own cookies, storage, tabs) + its first page: one per role, "
                "auth state or workflow. url: opens it there (as browser_navigate); "
                "fromSessionId: copies its storage; count: 1-10."
            ),
            profile="core",
            hints=Hints(),
            input_schema=create_input_schema(context_settings),
            output_schema=(
                output(
                    {
                        "session": SESSION_VIEW,
                        "initialPage": obj(
                            {"sessionId": string(), "pageId": string()},
                            ["sessionId", "pageId"],
                            closed=False,
                        ),
                    }
                )
            ),
            handler=session_create,
        ),
        ToolSpec(
            name="browser_session_list",
            title="List browser sessions",
            description="Your sessions, live and recently ended.",
            profile="core",
            hints=Hints(read_only=True, idempotent=True),
            input_schema=EMPTY_INPUT,
            output_schema=output({"sessions": array(SESSION_VIEW)}),
            handler=session_list,
        ),
        ToolSpec(
            name="browser_session_get",
            title="Get browser session",
            description="A session's status, labels, failureCode.",
            profile="core",
            hints=Hints(read_only=True, idempotent=True),
            input_schema=session_address(),
            output_schema=_SESSION_OUT,
            handler=session_get,
        ),
        ToolSpec(
            name="browser_session_close",
            title="Close browser session",
            description="Close a session after its queued work.",
            profile="core",
            hints=Hints(destructive=True, idempotent=True),
            input_schema=session_address(),
            output_schema=_SESSION_OUT,
            handler=session_close,
        ),
        ToolSpec(
            name="browser_page_create",
            title="Create browser page",
            description="Open another tab.",
            profile="core",
            hints=Hints(),
            input_schema=session_address(),
            output_schema=output({"pageId": string(), "page": PAGE_VIEW}),
            handler=page_create,
        ),
        ToolSpec(
            name="browser_page_list",
            title="List browser pages",
            description="Pages and their URLs.",
            profile="core",
            hints=Hints(read_only=True, idempotent=True),
            input_schema=session_address(),
            output_schema=output({"pages": array(PAGE_VIEW)}),
            handler=page_list,
        ),
        ToolSpec(
            name="browser_page_close",
            title="Close browser page",
            description="Close a page.",
            profile="core",
            hints=Hints(destructive=True),
            input_schema=obj({"sessionId": SESSION_ID, "pageId": PAGE_ID}, ["sessionId", "pageId"]),
            output_schema=FLAG_OUTPUT,
            handler=page_close,
        ),
    ]
