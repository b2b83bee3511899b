"""Caller-chosen names never make a large error (issue 12 #10; issue 31 item 7: not echoed)."""

from __future__ import annotations

import json

import pytest

from tests.support.clients import ToolClient

pytestmark = pytest.mark.anyio


async def test_unknown_tool_name_is_cut_in_the_error(mcp_client: ToolClient) -> None:
    result = await mcp_client.raw("x" * 5_000_000)
    assert result.is_error and result.structured_content is None
    text = result.content[0].text
    assert json.loads(text)["error"]["details"]["field"] == "name"
    assert len(text) < 400
    assert "xxx" not in text  # the name is caller text: not echoed


async def test_a_huge_metadata_key_is_cut_in_the_validation_path(mcp_client: ToolClient) -> None:
    result = await mcp_client.raw(
        "browser_session_create", {"metadata": {"k" * 1_000_000: "v" * 600}}
    )
    assert result.is_error
    assert len(result.content[0].text) < 2_000
