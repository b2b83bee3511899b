"""The `chromium` marker is applied by rule and its guard fails an unmarked test that used a
browser (tests/support/chromium_guard.py; issue 18). No real browser here: a process that looks
like one, and Playwright entry points replaced by fakes."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.support.chromium_guard import (
    MARKER,
    TESTS,
    ChromiumGuard,
    chromium_browsers,
    needs_chromium,
)
from tests.support.procs import chromium_kind

pytestmark = pytest.mark.anyio

SLEEP = shutil.which("sleep") or "/bin/sleep"


def test_location_and_fixtures_decide() -> None:
    for folder in ("integration", "package", "stress"):
        assert needs_chromium(TESTS / folder / "test_x.py", ())
    assert not needs_chromium(TESTS / "unit" / "test_x.py", ("tmp_path", "site"))
    for fixture in ("runtime", "client", "mcp_client"):
        assert needs_chromium(TESTS / "unit" / "test_x.py", ("tmp_path", fixture))
    assert not needs_chromium(Path("/elsewhere/test_x.py"), ())


def test_nobody_marks_by_hand() -> None:
    """The rule is the only source of the marker (a hand mark would hide a wrong rule)."""
    for path in TESTS.rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr == MARKER:
                base = node.value
                assert not (isinstance(base, ast.Attribute) and base.attr == "mark"), (
                    f"{path.relative_to(TESTS)}:{node.lineno} marks `{MARKER}` by hand"
                )


@pytest.mark.parametrize(
    ("cmdline", "kind"),
    [
        (b"/usr/lib/chromium/chromium\0--headless\0--remote-debugging-pipe\0", "browser"),
        (b"/ms-playwright/chromium_headless_shell-1/chrome-linux/headless_shell\0--x\0", "browser"),
        (b"/usr/lib/chromium/chromium --type=renderer --lang=en", "renderer"),
        (
            b"/usr/lib/chromium/chromium --type=utility --utility-sub-type=network.mojom.Net",
            "utility:network.mojom.Net",
        ),
        (b"/usr/lib/chromium/chrome_crashpad_handler\0--database=/tmp/x\0", "crashpad"),
        (b"/usr/bin/python3\0-m\0pytest\0-m\0not chromium\0", None),
        (b"node\0cli.js\0run-driver\0", None),
    ],
)
def test_chromium_processes_are_told_by_program(cmdline: bytes, kind: str | None) -> None:
    assert chromium_kind(cmdline) == kind


async def test_playwright_entry_points_count_only_a_browser_had() -> None:
    guard = ChromiumGuard(report_path=None)

    async def launched(*args: Any, **kwargs: Any) -> str:
        return "browser"

    async def refused(*args: Any, **kwargs: Any) -> str:
        raise ConnectionRefusedError

    launch = guard._counting("launch", launched)
    connect = guard._counting("connect_over_cdp", refused)
    guard.start("t::a", marked=False)
    assert await launch(object(), headless=True) == "browser"
    with pytest.raises(ConnectionRefusedError):
        await connect(object(), "http://127.0.0.1:9/")
    usage = guard.finish("t::a")
    assert dict(usage.calls) == {"launch": 1}
    assert usage.describe() == "1 BrowserType.launch()"


def fake_browser(program: Path | str) -> subprocess.Popen[bytes]:
    """A child whose argv says Chromium: `sleep`, run under a Chromium program name."""
    proc = subprocess.Popen([str(program), "60"], executable=SLEEP)
    # A vfork parent resumes before the kernel has laid out the child's argv; wait for it.
    cmdline = Path(f"/proc/{proc.pid}/cmdline")
    for _ in range(1000):
        if cmdline.read_bytes():
            return proc
    raise AssertionError("the fake browser never showed its argv")


def test_a_child_browser_process_is_seen(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    proc = fake_browser(tmp_path / "chromium")
    try:
        assert proc.pid in chromium_browsers(os.getpid())
    finally:
        proc.kill()
        proc.wait()
        forgive(request)


def forgive(request: pytest.FixtureRequest) -> None:
    """This test made a fake browser on purpose (now reaped): the session's guard must not
    hold it against it."""
    guard: ChromiumGuard = request.config.pluginmanager.get_plugin("chromium-guard")
    guard.usage[request.node.nodeid].browsers.clear()


def test_an_unmarked_test_that_starts_a_browser_fails(
    pytester: pytest.Pytester, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    pid_file = tmp_path / "pids"
    pytester.makeconftest(
        textwrap.dedent(
            """
            import pytest

            pytest_plugins = ["tests.support.chromium_guard"]

            @pytest.fixture
            def runtime():
                return "a real runtime would be here"
            """
        )
    )
    pytester.makepyfile(
        textwrap.dedent(
            f"""
            from tests.unit.test_chromium_guard import fake_browser

            def start():
                proc = fake_browser({str(tmp_path / "chromium")!r})
                with open({str(pid_file)!r}, "a") as fh:
                    fh.write(f"{{proc.pid}}\\n")

            def test_unmarked_launches():
                start()

            def test_marked_launches(runtime):
                start()

            def test_unmarked_quiet():
                pass
            """
        )
    )
    try:
        everything = pytester.runpytest_inprocess("-p", "no:cacheprovider")
        fast = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-m", "not chromium")
    finally:
        for pid in pid_file.read_text().split():
            os.kill(int(pid), 9)
            os.waitpid(int(pid), 0)
        forgive(request)
    # The marked test (by its `runtime` fixture) may start one; the unmarked one may not.
    everything.assert_outcomes(passed=3, errors=1)
    everything.stdout.fnmatch_lines(
        [
            "*ERROR at teardown of test_unmarked_launches*",
            "*is not marked `chromium` but used a browser: 1 Chromium browser process(es)*",
        ]
    )
    fast.assert_outcomes(passed=2, errors=1, deselected=1)
