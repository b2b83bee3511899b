"""The SDK per-call costs `BrowserMeshServer` trims (issue 33), and that nothing visible changes."""

from __future__ import annotations

import mcp.types as types
import pytest
from mcp.server import Server
from opentelemetry import trace

from browsermesh.mcp.server import BrowserMeshServer, tracing_configured


def test_the_tracing_middleware_is_dropped_only_without_a_tracer_provider(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert not tracing_configured()
    assert [type(m).__name__ for m in Server("x").middleware] == ["OpenTelemetryMiddleware"]
    assert BrowserMeshServer("browsermesh").middleware == []

    class Installed(trace.TracerProvider):
        def get_tracer(self, *args: object, **kwargs: object) -> trace.Tracer:
            return trace.NoOpTracer()

    monkeypatch.setattr(trace, "get_tracer_provider", Installed)
    assert tracing_configured()
    kept = BrowserMeshServer("browsermesh").middleware
    assert [type(m).__name__ for m in kept] == ["OpenTelemetryMiddleware"]


def test_the_server_info_stamp_equals_the_sdks_and_is_never_shared() -> None:
    ours = BrowserMeshServer(
        "browsermesh", version="1.2.3", title="T", website_url="https://x.test"
    )
    sdk = Server("browsermesh", version="1.2.3", title="T", website_url="https://x.test")
    first = ours.server_info_stamp
    assert first == sdk.server_info_stamp
    first["name"] = "changed"
    assert ours.server_info_stamp == sdk.server_info_stamp
    assert ours.server_info_stamp is not ours.server_info_stamp


def test_a_stamp_with_nested_values_is_still_deep_copied() -> None:
    icons = [types.Icon(src="https://x.test/i.png", mime_type="image/png")]
    ours = BrowserMeshServer("browsermesh", version="1", icons=icons)
    first = ours.server_info_stamp
    assert first == Server("browsermesh", version="1", icons=icons).server_info_stamp
    first["icons"][0]["src"] = "changed"
    assert ours.server_info_stamp["icons"][0]["src"] == "https://x.test/i.png"
