"""browser_runtime_info's text block names the browser, the profiles and the main limits
(issue 31 item 8), on real Chromium through the MCP client; the structured part is unchanged."""

from __future__ import annotations

import pytest

from tests.fixtures.site import FixtureSite
from tests.support.clients import ToolClient, open_page

pytestmark = pytest.mark.anyio


async def test_the_text_names_binary_version_profiles_and_limits(
    client: ToolClient, site: FixtureSite
) -> None:
    await open_page(client, site.url("/"))  # launches Chromium: the version is known
    result = await client.raw("browser_runtime_info", {})
    info = result.structured_content
    text = result.content[0].text
    lines = text.splitlines()
    assert 3 <= len(lines) <= 5, text
    assert info["browserVersion"] and info["browserVersion"] in text
    assert str(info["browserBinary"] or "default") in text
    assert "profiles: " + ", ".join(info["toolProfiles"]) in text
    assert f"{info['maxSessions']} sessions" in text
    assert f"timeout {info['defaultTimeoutMs']} ms" in text
    assert "ready" in text and info["serverVersion"] in text
    assert "resourceLimits" in info and "devices" in info  # structured content unchanged
