"""A Chromium the tests start themselves with remote debugging (CDP attach, contract §14.2):
tests/integration/test_backends.py, and the opt-in shared browser of conftest's `runtime`."""

from __future__ import annotations

from pathlib import Path

from browsermesh.config import default_config, find_chromium, process_environ

CHROMIUM = find_chromium(default_config(headless=True), process_environ()) or "chromium"
"""The binary the suite's headless sessions use (the headless shell when one is installed)."""


def debuggable_chromium(profile: Path) -> list[str]:
    """The command line of a headless Chromium listening for CDP on a port it picks, with the
    flags of Playwright's own headless launch that pages can tell (no scrollbars, no sound)."""
    return [
        CHROMIUM,
        "--headless=new",
        "--no-sandbox",
        "--hide-scrollbars",
        "--mute-audio",
        "--remote-debugging-port=0",
        f"--user-data-dir={profile}",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "about:blank",
    ]


def devtools_port_of(profile: Path) -> int | None:
    """The port Chromium chose, from the DevToolsActivePort file in its profile (None until
    Chromium has written it)."""
    try:
        lines = (profile / "DevToolsActivePort").read_text().split()
    except OSError:
        return None
    return int(lines[0]) if len(lines) >= 2 else None
