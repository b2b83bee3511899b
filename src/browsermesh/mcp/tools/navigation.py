"""Navigation and page-read tools."""

from __future__ import annotations

from typing import Any

from browsermesh.engine.protocol import HistoryStep
from browsermesh.mcp.registry import ToolCall, ToolSpec
from browsermesh.mcp.schemas import page_address, page_output, string


async def navigate(call: ToolCall) -> dict[str, Any]:
    op_id, url = await call.runtime.navigate(
        call.principal, call.session_id(), call.page_id(), call.args.get("url"), call.timeout()
    )
    return call.page_result(op_id, url=url)


def _history(step: HistoryStep) -> Any:
    async def handler(call: ToolCall) -> dict[str, Any]:
        op_id, url = await call.runtime.history(
            call.principal, call.session_id(), call.page_id(), step, call.timeout()
        )
        return call.page_result(op_id, url=url)

    return handler


async def get_url(call: ToolCall) -> dict[str, Any]:
    op_id, url = await call.runtime.get_url(
        call.principal, call.session_id(), call.page_id(), call.timeout()
    )
    return call.page_result(op_id, url=url)


async def get_title(call: ToolCall) -> dict[str, Any]:
    op_id, title = await call.runtime.get_title(
        call.principal, call.session_id(), call.page_id(), call.timeout()
    )
    return call.page_result(op_id, title=title)


_URL_OUT = page_output({"url": string()})


def specs() -> list[ToolSpec]:
    """Navigation tools (profile `core`)."""
    nav_in = page_address({"url": string(1, 8192)}, ("url",))
    return [
        ToolSpec(
            "browser_navigate",
            "Navigate browser page",
            "Load an absolute http(s) URL and wait for the load event.",
            "core",
            False,
            False,
            False,
            True,
            nav_in,
            _URL_OUT,
            navigate,
        ),
        ToolSpec(
            "browser_back",
            "Navigate browser page back",
            "Go back one history step.",
            "core",
            False,
            False,
            False,
            True,
            page_address(),
            _URL_OUT,
            _history("back"),
        ),
        ToolSpec(
            "browser_forward",
            "Navigate browser page forward",
            "Go forward one history step.",
            "core",
            False,
            False,
            False,
            True,
            page_address(),
            _URL_OUT,
            _history("forward"),
        ),
        ToolSpec(
            "browser_reload",
            "Reload browser page",
            "Reload the page.",
            "core",
            False,
            False,
            False,
            True,
            page_address(),
            _URL_OUT,
            _history("reload"),
        ),
        ToolSpec(
            "browser_get_url",
            "Get browser page URL",
            "The page's current URL.",
            "core",
            True,
            False,
            True,
            False,
            page_address(),
            _URL_OUT,
            get_url,
        ),
        ToolSpec(
            "browser_get_title",
            "Get browser page title",
            "The page's title.",
            "core",
            True,
            False,
            True,
            True,
            page_address(),
            page_output({"title": string()}),
            get_title,
        ),
    ]
