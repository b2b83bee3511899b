"""The release's version as CHANGELOG.md states it (tests/unit/test_release.py and the
installed-package test compare it with what the code and the installed server say)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

CHANGELOG: Final = Path(__file__).resolve().parents[2] / "CHANGELOG.md"
# "## [0.4.0] - 2026-12-02"; "## [Unreleased]" may stand above the released entries.
RELEASE_HEADING: Final = re.compile(r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})$")


def release_headings(text: str | None = None) -> list[tuple[str, str]]:
    """(version, date) of every released entry, top first."""
    source = CHANGELOG.read_text(encoding="utf-8") if text is None else text
    return [
        (match[1], match[2])
        for line in source.splitlines()
        if (match := RELEASE_HEADING.match(line)) is not None
    ]


def changelog_version() -> str:
    """The version of the changelog's top released entry."""
    headings = release_headings()
    assert headings, f"{CHANGELOG} has no '## [x.y.z] - yyyy-mm-dd' entry"
    return headings[0][0]
