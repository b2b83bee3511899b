"""`browser_runtime_info`: a registry read that never waits on a queue or launches Chromium."""

from __future__ import annotations

import platform
from functools import cache
from importlib import metadata
from typing import TYPE_CHECKING, Any

from browsermesh._version import __version__
from browsermesh.engine.video import ffmpeg_binary

if TYPE_CHECKING:
    from browsermesh.runtime.core import RuntimeCore


@cache
def _dist_version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "unknown"


def runtime_info(runtime: RuntimeCore, transport: str, principal: str) -> dict[str, Any]:
    """The runtime_info structured result (reference §4.1) as `principal` sees it."""
    from browsermesh.model.devices import device_summaries
    from browsermesh.model.labels import LABEL_LIMITS

    cfg = runtime.config
    engine = runtime.engine
    active, failed = runtime.counts()
    fleet = {} if runtime.fleet is None else {"fleet": runtime.fleet.info()}  # §37
    return {
        "operationId": "",  # filled by the caller
        "serverVersion": __version__,
        "pythonVersion": platform.python_version(),
        "playwrightVersion": _dist_version("playwright"),
        "mcpVersion": _dist_version("mcp"),
        "browserProduct": "chromium",
        "browserVersion": engine.browser_version,
        "browserBinary": engine.browser_binary,
        "browserLaunchState": engine.launch_state,
        "browserBackend": engine.backend,
        "endpoints": engine.endpoints(),
        "sandbox": engine.sandbox,
        "transport": transport,
        "toolProfiles": list(cfg.tools),
        "headless": cfg.headless,
        "persistenceEnabled": cfg.persistence,
        "uploadRootEnabled": cfg.upload_root is not None,
        "traceSessions": cfg.trace_sessions,
        "secretNames": runtime.secrets.names(principal),
        "webmcp": engine.webmcp,
        "videoEncoder": ffmpeg_binary() is not None,
        "defaultTimeoutMs": cfg.timeout_ms,
        "maxSessions": cfg.max_sessions,
        "maxPagesPerSession": cfg.max_pages,
        "resourceLimits": {
            "session": dict(LABEL_LIMITS),
            "screenshot": {
                "maxDimensionPixels": cfg.screenshot_max_dimension,
                "maxPixels": cfg.screenshot_max_pixels,
                "maxBytes": cfg.screenshot_max_bytes,
            },
            "visibleText": {
                "maxChars": cfg.visible_text_max_chars,
                "maxBytes": cfg.visible_text_max_bytes,
            },
            "persistence": {
                "maxStates": cfg.max_saved_states,
                "maxStateBytes": cfg.max_state_bytes,
                "maxTotalBytes": cfg.max_state_total_bytes,
                "maxStateOrigins": cfg.max_state_origins,
            },
            "artifacts": {
                "maxCount": cfg.max_artifacts,
                "maxSessionBytes": cfg.max_artifact_session_bytes,
                "maxPrincipalBytes": cfg.max_artifact_principal_bytes,
                "maxTotalBytes": cfg.max_artifact_total_bytes,
            },
            "observability": {
                "maxEventsPerRing": cfg.observability_events,
                "maxEventsPerResponse": cfg.observability_page_size,
                "maxStringChars": cfg.observability_string_chars,
                "maxResponseBytes": cfg.observability_response_bytes,
            },
        },
        # contextSettings.device names (issue 19): name → "WxH" viewport, " mobile" when isMobile.
        "devices": dict(device_summaries()),
        "shutdownGraceMs": cfg.shutdown_grace_ms,
        "refTtlMs": cfg.ref_ttl_ms,
        "actionabilitySettleMs": cfg.actionability_settle_ms,
        "settleMs": cfg.settle_ms,
        "activeSessions": active,
        "failedSessions": failed,
        **fleet,
    }


_STATES = {"ready": "ready", "failed": "failed"}


def summary_text(info: dict[str, Any]) -> str:
    """The text block of browser_runtime_info (issue 31 item 8): the structured result's main
    facts in a few lines (browser binary and version, tool profiles, the main limits), so a
    client that reads only the text need not parse the JSON."""
    state = _STATES.get(info["browserLaunchState"], "not started")
    version = info["browserVersion"] or "version unknown until launch"
    binary = info["browserBinary"] or "default"
    limits = info["resourceLimits"]
    text = limits["visibleText"]
    return "\n".join(
        [
            f"BrowserMesh {info['serverVersion']} · {info['transport']} · "
            f"{info['activeSessions']} active, {info['failedSessions']} failed sessions",
            f"browser: {info['browserProduct']} {version} ({binary}, {info['browserBackend']}) · "
            f"{state} · {'headless' if info['headless'] else 'headed'}",
            f"profiles: {', '.join(info['toolProfiles'])}",
            f"limits: {info['maxSessions']} sessions, {info['maxPagesPerSession']} pages each · "
            f"timeout {info['defaultTimeoutMs']} ms · refs {info['refTtlMs']} ms · "
            f"visible text {text['maxChars']} chars · "
            f"observe {limits['observability']['maxEventsPerResponse']} events/read",
        ]
    )
