"""Caller-chosen names are cut before the input-validation channel echoes them (issue 12 #10)."""

from __future__ import annotations

import pytest

from tests.conftest import ToolClient

pytestmark = pytest.mark.anyio


async def test_unknown_tool_name_is_cut_in_the_error(mcp_client: ToolClient) -> None:
    result = await mcp_client.raw("x" * 5_000_000)
    assert result.is_error and result.structured_content is None
    text = result.content[0].text
    assert text.startswith("Input validation error: Invalid arguments for tool xxx")
    assert len(text) < 300
    assert "x" * 64 not in text  # 63 characters and an ellipsis at most


async def test_a_huge_metadata_key_is_cut_in_the_validation_path(mcp_client: ToolClient) -> None:
    result = await mcp_client.raw(
        "browser_session_create", {"metadata": {"k" * 1_000_000: "v" * 600}}
    )
    assert result.is_error
    assert len(result.content[0].text) < 2_000
