"""Navigation and page-read tools."""

from __future__ import annotations

from typing import Any

from browsermesh.mcp.registry import Hints, ToolCall, ToolSpec
from browsermesh.mcp.schemas import page_address, page_output, string
from browsermesh.model.navigation import HistoryStep


async def navigate(call: ToolCall) -> dict[str, Any]:
    op_id, landed = await call.runtime.navigate(call.page(), call.args.get("url"))
    return call.page_result(op_id, **landed.fields())


def _history(step: HistoryStep) -> Any:
    async def handler(call: ToolCall) -> dict[str, Any]:
        op_id, landed = await call.runtime.history(call.page(), step)
        return call.page_result(op_id, **landed.fields())

    return handler


async def get_url(call: ToolCall) -> dict[str, Any]:
    op_id, url = await call.runtime.get_url(call.page())
    return call.page_result(op_id, url=url)


async def get_title(call: ToolCall) -> dict[str, Any]:
    op_id, title = await call.runtime.get_title(call.page())
    return call.page_result(op_id, title=title)


_URL_OUT = page_output({"url": string()})


def specs() -> list[ToolSpec]:
    """Navigation tools (profile `core`)."""
    nav_in = page_address({"url": string(1, 8192)}, ("url",))
    return [
        ToolSpec(
            name="browser_navigate",
            title="Navigate browser page",
            description=(
                "Load an http(s) URL, wait for load; answers url, status, title, keys "
                "(so do back/forward/reload)."
            ),
            profile="core",
            hints=Hints(open_world=True),
            input_schema=nav_in,
            output_schema=_URL_OUT,
            handler=navigate,
        ),
        ToolSpec(
            name="browser_back",
            title="Navigate browser page back",
            description="Go back.",
            profile="core",
            hints=Hints(open_world=True),
            input_schema=page_address(),
            output_schema=_URL_OUT,
            handler=_history("back"),
        ),
        ToolSpec(
            name="browser_forward",
            title="Navigate browser page forward",
            description="Go forward.",
            profile="core",
            hints=Hints(open_world=True),
            input_schema=page_address(),
            output_schema=_URL_OUT,
            handler=_history("forward"),
        ),
        ToolSpec(
            name="browser_reload",
            title="Reload browser page",
            description="Reload.",
            profile="core",
            hints=Hints(open_world=True),
            input_schema=page_address(),
            output_schema=_URL_OUT,
            handler=_history("reload"),
        ),
        ToolSpec(
            name="browser_get_url",
            title="Get browser page URL",
            description="Page URL.",
            profile="core",
            hints=Hints(read_only=True, idempotent=True),
            input_schema=page_address(),
            output_schema=_URL_OUT,
            handler=get_url,
        ),
        ToolSpec(
            name="browser_get_title",
            title="Get browser page title",
            description="Page title.",
            profile="core",
            hints=Hints(read_only=True, idempotent=True, open_world=True),
            input_schema=page_address(),
            output_schema=page_output({"title": string()}),
            handler=get_title,
        ),
    ]
