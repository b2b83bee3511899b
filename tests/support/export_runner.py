"""Running an exported regression test (issue 20) the way a CI job would: `python -m pytest`
on the module in a folder of its own, with pytest-playwright and this machine's Chromium.

The project's own suite runs with pytest-playwright disabled (`-p no:playwright` in
pyproject's addopts: its `page`/`browser`/`context` fixtures and its autouse fixtures are not
ours). Here it is the only plugin: autoload is off and `-p pytest_playwright.pytest_playwright`
loads it, so the run is fast and sees nothing of this repository (its own `pytest.ini` makes
the folder the rootdir). The browser is the Chromium BrowserMesh finds (`find_chromium`),
written into the folder's `conftest.py` as a literal, so pytest-playwright never downloads one.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Final

from browsermesh.config import default_config, find_chromium, process_environ
from browsermesh.engine.backends import QUIET_FLAGS

__all__ = ["EXPORTED_TEST_FILE", "chromium_path", "run_exported", "write_export"]

EXPORTED_TEST_FILE: Final = "test_exported.py"
RUN_TIMEOUT_S: Final = 180

_CONFTEST = '''"""pytest-playwright on this machine's Chromium (tests/support/export_runner.py)."""

from typing import Any

import pytest


@pytest.fixture(scope="session")
def browser_type_launch_args() -> dict[str, Any]:
    return {{"executable_path": {path!r}, "headless": True, "args": {args!r}}}
'''
_INI = "[pytest]\naddopts = -p no:cacheprovider\n"


def chromium_path() -> str:
    """The headless Chromium BrowserMesh itself would launch here."""
    path = find_chromium(default_config(headless=True), process_environ())
    assert path is not None, "no Chromium found (scripts/setup.sh installs one)"
    return path


def write_export(folder: Path, text: str) -> Path:
    """`text` as `folder/test_exported.py`, with the `conftest.py` and `pytest.ini` that run
    it on this machine's Chromium; returns the test file."""
    folder.mkdir(parents=True, exist_ok=True)
    args = ["--no-sandbox", *QUIET_FLAGS]
    (folder / "conftest.py").write_text(_CONFTEST.format(path=chromium_path(), args=args))
    (folder / "pytest.ini").write_text(_INI)
    test = folder / EXPORTED_TEST_FILE
    test.write_text(text, encoding="utf-8")
    return test


def run_exported(
    test: Path,
    env: dict[str, str] | None = None,
    *,
    timeout_s: float = RUN_TIMEOUT_S,
    options: tuple[str, ...] = (),
) -> subprocess.CompletedProcess[str]:
    """`python -m pytest` on the exported `test` in its folder; `env` adds variables (the
    base URL, secrets), `options` pytest options (pytest-playwright's `--tracing`). Returns the
    finished process (output in `stdout`)."""
    environ = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PYTEST_", "BM_SECRET_", "BM_BASE_URL", "BM_STATE_"))
    }
    environ.update({"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", **(env or {})})
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "pytest_playwright.pytest_playwright",
            *options,
            test.name,
        ],
        cwd=test.parent,
        env=environ,
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    )
