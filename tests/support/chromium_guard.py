"""The `chromium` marker: applied by what a test uses, and proved by what a test launches.

A test is marked when it lives where every test drives a real browser (`tests/integration`,
`tests/package`, `tests/stress`) or when it requests a fixture that starts a real runtime
(`CHROMIUM_FIXTURES`, looked up in the test's whole fixture closure, so `client` and
`mcp_client` count through `runtime`). Nobody marks a test by hand.

The guard proves the rule: a test that is *not* marked fails (at teardown) when it used a browser
anyway, seen two ways:
- in this process: every `BrowserType.launch`, `launch_persistent_context`, `connect_over_cdp`
  and `connect` call of Playwright's async API that returns a browser is counted (the engine's
  local, CDP and server backends and the doctor's smoke check all go through them);
- in child processes (a stdio server, the doctor CLI, a Chromium a test starts itself): a
  sampler thread watches this process's descendants for a new Chromium browser process while
  an unmarked test runs (a browser lives far longer than the sampling period).

With `BM_TEST_LAUNCH_REPORT=path` the sampler watches every test and, at the end of the session,
the counts per test and in total are written to `path` as JSON (issue 18: how many browsers one
full run starts).
"""

from __future__ import annotations

import functools
import json
import os
import threading
from collections import Counter
from collections.abc import Callable, Generator, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.support.procs import browser_main_pids, children

MARKER = "chromium"
TESTS = Path(__file__).resolve().parents[1]
CHROMIUM_DIRS = frozenset({"integration", "package", "stress"})
"""Folders of tests/ whose every test drives a real browser (or a real server that does)."""
CHROMIUM_FIXTURES = frozenset({"runtime", "client", "mcp_client"})
"""Fixtures (tests/conftest.py) that start a real runtime, hence a real Chromium when used."""
PLAYWRIGHT_ENTRY_POINTS = ("launch", "launch_persistent_context", "connect_over_cdp", "connect")
REPORT_ENV = "BM_TEST_LAUNCH_REPORT"
SAMPLE_S = 0.05


def needs_chromium(path: Path, fixturenames: Iterable[str]) -> bool:
    """The rule: by location below tests/, or by a real-runtime fixture in the closure."""
    try:
        folder = path.resolve().relative_to(TESTS).parts[0]
    except (ValueError, IndexError):
        folder = ""
    return folder in CHROMIUM_DIRS or not CHROMIUM_FIXTURES.isdisjoint(fixturenames)


def chromium_browsers(root: int) -> set[int]:
    """Chromium browser processes descending from `root` (cheap when `root` has no child)."""
    return set(browser_main_pids(root)) if children(root) else set()


# ------------------------------------------------------------------------------------------
# The guard
# ------------------------------------------------------------------------------------------


@dataclass
class Usage:
    """What one test used: Playwright entry-point calls and new Chromium browser processes."""

    calls: Counter[str] = field(default_factory=Counter)
    browsers: set[int] = field(default_factory=set)

    def __bool__(self) -> bool:
        return bool(self.calls or self.browsers)

    def describe(self) -> str:
        parts = [f"{n} BrowserType.{name}()" for name, n in sorted(self.calls.items())]
        if self.browsers:
            parts.append(f"{len(self.browsers)} Chromium browser process(es) started")
        return ", ".join(parts)


class ChromiumGuard:
    """Counts browser use per test; registered as a plugin for the session (see conftest)."""

    def __init__(self, report_path: str | None) -> None:
        self.report_path = report_path
        self.root = os.getpid()
        self.usage: dict[str, Usage] = {}
        self.marked: dict[str, bool] = {}
        self._lock = threading.Lock()
        self._current: Usage | None = None
        self._baseline: set[int] = set()
        self._watching = False
        self._stop = threading.Event()
        self._sampler: threading.Thread | None = None
        self._restore: list[Callable[[], None]] = []

    # Playwright entry points ---------------------------------------------------------------

    def install(self) -> None:
        from playwright.async_api import BrowserType

        for name in PLAYWRIGHT_ENTRY_POINTS:
            original = getattr(BrowserType, name)
            setattr(BrowserType, name, self._counting(name, original))
            self._restore.append(functools.partial(setattr, BrowserType, name, original))
        self._sampler = threading.Thread(target=self._sample, name="chromium-guard", daemon=True)
        self._sampler.start()

    def uninstall(self) -> None:
        for restore in reversed(self._restore):
            restore()
        self._restore.clear()
        self._stop.set()
        if self._sampler is not None:
            self._sampler.join(timeout=5)

    def _counting(self, name: str, original: Callable[..., Any]) -> Callable[..., Any]:
        guard = self

        @functools.wraps(original)
        async def counted(*args: Any, **kwargs: Any) -> Any:
            result = await original(*args, **kwargs)
            guard.record_call(name)  # a browser was had (a refused connection is no use)
            return result

        return counted

    def record_call(self, name: str) -> None:
        with self._lock:
            if self._current is not None:
                self._current.calls[name] += 1

    # Child processes -------------------------------------------------------------------------

    def _sample(self) -> None:
        while not self._stop.wait(SAMPLE_S):
            self.sample_once()

    def sample_once(self) -> None:
        """One look at the descendants (the sampler's tick; `finish` takes a last one)."""
        with self._lock:
            usage, baseline, watching = self._current, self._baseline, self._watching
        if usage is None or not watching:
            return
        new = chromium_browsers(self.root) - baseline
        if new:
            with self._lock:
                if self._current is usage:
                    usage.browsers |= new

    # Per test --------------------------------------------------------------------------------

    def start(self, nodeid: str, marked: bool) -> None:
        """Attribute what follows to `nodeid`. Processes are watched for an unmarked test (and
        for every test when reporting); Playwright calls are always counted (that is cheap)."""
        usage = self.usage.setdefault(nodeid, Usage())
        self.marked[nodeid] = marked
        watching = not marked or self.report_path is not None
        baseline = chromium_browsers(self.root) if watching else set()
        with self._lock:
            self._current, self._baseline, self._watching = usage, baseline, watching

    def finish(self, nodeid: str) -> Usage:
        self.sample_once()
        with self._lock:
            self._current = None
        return self.usage.get(nodeid, Usage())

    # Hooks -----------------------------------------------------------------------------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        self.start(item.nodeid, item.get_closest_marker(MARKER) is not None)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        if call.when != "teardown":
            return report
        usage = self.finish(item.nodeid)
        if usage and item.get_closest_marker(MARKER) is None and report.passed:
            report.outcome = "failed"
            report.longrepr = (
                f"{item.nodeid} is not marked `{MARKER}` but used a browser: "
                f"{usage.describe()}. Move it below tests/integration (or request a real-runtime "
                "fixture) so tests/support/chromium_guard.py marks it."
            )
        return report

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.report_path is None:
            return
        Path(self.report_path).write_text(json.dumps(self.summary(), indent=1, sort_keys=True))

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.report_path is None:
            return
        totals = self.summary()["totals"]
        terminalreporter.write_line(f"chromium guard: {json.dumps(totals, sort_keys=True)}")

    def summary(self) -> dict[str, Any]:
        calls: Counter[str] = Counter()
        browsers: set[int] = set()
        tests: dict[str, Any] = {}
        for nodeid, usage in self.usage.items():
            calls.update(usage.calls)
            browsers |= usage.browsers
            tests[nodeid] = {
                "marked": self.marked.get(nodeid, False),
                "calls": dict(usage.calls),
                "browsers": len(usage.browsers),
            }
        unused = sorted(
            n for n, t in tests.items() if t["marked"] and not (t["calls"] or t["browsers"])
        )
        return {
            "totals": {
                **{f"calls.{k}": v for k, v in sorted(calls.items())},
                "browser_processes": len(browsers),
                "tests": len(tests),
                "tests_using_a_browser": sum(
                    1 for t in tests.values() if t["calls"] or t["browsers"]
                ),
            },
            "marked_but_no_browser": unused,
            "tests": tests,
        }


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if needs_chromium(item.path, getattr(item, "fixturenames", ())):
            item.add_marker(MARKER)


def pytest_configure(config: pytest.Config) -> None:
    guard = ChromiumGuard(os.environ.get(REPORT_ENV) or None)
    guard.install()
    config.pluginmanager.register(guard, "chromium-guard")
    config.stash[_GUARD] = guard


def pytest_unconfigure(config: pytest.Config) -> None:
    guard = config.stash.get(_GUARD, None)
    if guard is not None:
        guard.uninstall()


_GUARD = pytest.StashKey[ChromiumGuard]()
