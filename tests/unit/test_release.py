"""The release (issue 23 item 3): one version, said alike by the version constant, the
changelog's top entry, ``browsermesh --version`` and ``browser_runtime_info``; the changelog
keeps the Keep a Changelog shape. The installed wheel says the same in tests/package."""

from __future__ import annotations

import datetime
import re

import pytest

from browsermesh import __version__, cli
from browsermesh.config import default_config
from browsermesh.runtime.runtime import Runtime
from tests.fakes import FakeEngine
from tests.support.release import CHANGELOG, changelog_version, release_headings

SECTIONS = {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}


def test_the_version_is_said_alike_everywhere(capsys: pytest.CaptureFixture[str]) -> None:
    assert changelog_version() == __version__
    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out == f"{__version__}\n"
    assert Runtime(default_config(), FakeEngine()).info()["serverVersion"] == __version__


def test_the_changelog_keeps_its_shape() -> None:
    text = CHANGELOG.read_text(encoding="utf-8")
    assert text.startswith("# Changelog\n")
    headings = release_headings()
    versions = [tuple(int(part) for part in version.split(".")) for version, _ in headings]
    assert versions == sorted(versions, reverse=True) and len(set(versions)) == len(versions)
    dates = [datetime.date.fromisoformat(date) for _, date in headings]
    assert dates == sorted(dates, reverse=True)
    second_level = re.findall(r"^## (.*)$", text, flags=re.MULTILINE)
    for heading in second_level:  # released entries, or one Unreleased on top
        assert heading == "[Unreleased]" or re.fullmatch(r"\[\d+\.\d+\.\d+\] - [\d-]+", heading)
    assert "[Unreleased]" not in second_level[1:]
    sections = re.findall(r"^### (.*)$", text, flags=re.MULTILINE)
    assert sections and set(sections) <= SECTIONS, set(sections) - SECTIONS


def test_release_headings_reads_only_released_entries() -> None:
    text = "# Changelog\n\n## [Unreleased]\n\n## [1.2.0] - 2027-01-02\n\n## [1.1.0] - 2026-12-31\n"
    assert release_headings(text) == [("1.2.0", "2027-01-02"), ("1.1.0", "2026-12-31")]
    assert release_headings("## [1.2] - 2027-01-02\n## 1.2.0\n") == []


README = CHANGELOG.parent / "README.md"
# A command that fetches "browsermesh" from PyPI, where this project is not published yet.
PYPI_FORM = re.compile(r'uvx browsermesh|pipx (install|run) browsermesh|"args": \["browsermesh"')
CHECKOUT_EXE = "/home/you/BrowserMesh/.venv/bin/browsermesh"


def test_the_readme_marks_every_pypi_command_as_not_yet_published() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    hits = [n for n, line in enumerate(lines) if PYPI_FORM.search(line)]
    assert hits, "the README shows the PyPI form too, marked"
    for n in hits:
        near = " ".join(lines[max(0, n - 1) : n + 1]).lower()
        assert "not yet" in near or "once" in near, lines[n]


def test_the_readme_configures_every_client_for_a_checkout() -> None:
    text = README.read_text(encoding="utf-8")
    assert f"claude mcp add browsermesh -- {CHECKOUT_EXE} --headless" in text  # Claude Code
    assert f'"command": "{CHECKOUT_EXE}"' in text  # Claude Desktop, Cursor (JSON)
    assert f'command = "{CHECKOUT_EXE}"' in text  # Codex (TOML)
    assert "uvx --from git+<repository URL> browsermesh" in text
    assert "pipx install git+<repository URL>" in text


def test_no_doctor_remediation_sends_the_user_to_pypi() -> None:
    from browsermesh import doctor

    texts = [getattr(doctor, name) for name in doctor.__all__ if name.endswith("_REMEDIATION")]
    assert len(texts) > 10
    for text in texts:
        assert "install browsermesh" not in text and "--force-reinstall" not in text, text
