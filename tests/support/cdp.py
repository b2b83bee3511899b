"""A Chromium the tests start themselves with remote debugging (CDP attach, reference §14.2):
tests/integration/test_backends.py, and the opt-in shared browser of conftest's `runtime`."""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import anyio

from browsermesh.config import default_config, find_chromium, process_environ
from tests.support.eventually import eventually

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


@contextlib.contextmanager
def detached_chromium(profile: Path) -> Iterator[str]:
    """A debuggable Chromium started detached (not a descendant of pytest, so no test that
    counts or kills this process's Chromium children sees it), its CDP endpoint while the block
    runs, killed after."""
    argv = " ".join(shlex.quote(a) for a in debuggable_chromium(profile))
    # The shell starts Chromium in the background, prints its pid and exits: Chromium is
    # re-parented away from us.
    started = subprocess.run(
        ["sh", "-c", f"{argv} >/dev/null 2>&1 </dev/null & echo $!"],
        capture_output=True,
        text=True,
        check=True,
        start_new_session=True,
    )
    pid = int(started.stdout.strip())

    def listening() -> int | None:
        os.kill(pid, 0)  # raises once it has exited
        return devtools_port_of(profile)

    def gone() -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False

    try:
        port = anyio.run(eventually, listening, 30, "the shared Chromium listens")
        yield f"http://127.0.0.1:{port}"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        # Its parent now is init, which reaps it; one left behind is not this test's failure.
        with contextlib.suppress(AssertionError):
            anyio.run(eventually, gone, 10, "the shared Chromium exited")
