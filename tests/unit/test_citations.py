"""The code cites only documents that are in the repository, and sections that exist (issue 32
item 5).

Scanned: every `.py` file under src/ and tests/ (but this one, whose examples cite on purpose). A
citation is either a document file name (`architecture.md`, `docs/decisions.md`, ...), which must
exist at that path from the repository root or under docs/, or a section sign: `reference §4.6`,
a word naming another document before the sign (the old product specification was cited as
"contract" + " §5.3"), or a bare `§6.6` (the code's shorthand for the product reference). A
section must be a numbered heading of docs/reference.md; a document cited by name must be the
reference, since no other numbered document is in the repository. A bare `§` on a line that
names another specification (an RFC, JSON-RPC) cites that one and is skipped.

Also: every relative link in README.md and docs/*.md points at a file in the repository.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SELF = Path("tests/unit/test_citations.py")
"""This file, relative to the root it is scanned from (its examples cite on purpose)."""

SECTION = re.compile(r"(?:\b(?P<doc>[A-Za-z][\w-]*)(?:'s)?\s+)?§\s?(?P<num>\d+(?:\.\d+)*)")
"""A section sign and its number, with the word before it (the document, when it names one)."""
DOCUMENT_FILE = re.compile(r"(?<![\w./-])(?P<path>[\w./-]*[\w-]+\.md)\b")
"""A Markdown file name, with the folders written before it."""
HEADING = re.compile(r"^#{1,6}\s+(?P<num>\d+(?:\.\d+)*)\.?\s", re.MULTILINE)
"""A numbered heading (`## 4. Tool reference`, `### 4.6 Element actions`)."""
LINK = re.compile(r"\]\((?P<target>[^)\s]+)\)")
"""A Markdown link target."""
OTHER_SPECS = re.compile(r"\bRFC\s?\d+|JSON-RPC")
"""Specifications a bare `§` may belong to instead of the reference."""
REFERENCE_NAMES = frozenset({"reference"})
"""Words that name docs/reference.md before a `§`."""
NAMED_DOCUMENTS = frozenset({"contract", "spec", "specification", "reference"})
"""Words that name a document before a `§` (any other word before it is prose: a bare `§`)."""


@dataclass(frozen=True)
class Citation:
    """One citation found in a file: the document it names and the section, if any."""

    line: int
    document: str
    section: str | None


def citations(text: str) -> Iterator[Citation]:
    """Every citation in `text`, in order: `document` is a file path for a file citation,
    "reference" for a section of the reference (named or bare), or the other document's word."""
    for number, line in enumerate(text.splitlines(), start=1):
        for match in DOCUMENT_FILE.finditer(line):
            yield Citation(number, match.group("path"), None)
        other_spec = OTHER_SPECS.search(line) is not None
        for match in SECTION.finditer(line):
            word = (match.group("doc") or "").lower()
            if word in REFERENCE_NAMES:
                yield Citation(number, "reference", match.group("num"))
            elif word in NAMED_DOCUMENTS:
                yield Citation(number, word, match.group("num"))
            elif not other_spec:
                yield Citation(number, "reference", match.group("num"))


def reference_sections(reference: str) -> frozenset[str]:
    """The section numbers of the reference's headings."""
    return frozenset(match.group("num") for match in HEADING.finditer(reference))


def document_exists(root: Path, path: str) -> bool:
    """Whether a cited file name is in the repository: at that path from the root or docs/."""
    for base in (root, root / "docs"):
        candidate = (base / path).resolve()
        if candidate.is_relative_to(root.resolve()) and candidate.is_file():
            return True
    return False


def problems(root: Path, text: str, sections: frozenset[str]) -> Iterator[str]:
    """What is wrong with the citations in `text`, one message each."""
    for cite in citations(text):
        if cite.section is None:
            if not document_exists(root, cite.document):
                yield f"line {cite.line}: {cite.document} is not in the repository"
        elif cite.document != "reference":
            yield (
                f"line {cite.line}: {cite.document} §{cite.section} cites a document that is not "
                "in the repository (the product reference is docs/reference.md: reference §N)"
            )
        elif cite.section not in sections:
            yield f"line {cite.line}: reference §{cite.section} is not a heading of reference.md"


def scan(root: Path) -> list[str]:
    """Every citation problem in the Python files under `root`/src and `root`/tests (but this
    one)."""
    sections = reference_sections((root / "docs" / "reference.md").read_text(encoding="utf-8"))
    found: list[str] = []
    for folder in ("src", "tests"):
        for path in sorted((root / folder).rglob("*.py")):
            rel = path.relative_to(root)
            if rel == SELF:
                continue  # this file's examples are citations on purpose
            text = path.read_text(encoding="utf-8")
            found.extend(f"{rel}: {problem}" for problem in problems(root, text, sections))
    return found


def broken_links(root: Path) -> list[str]:
    """Relative links of README.md and docs/*.md whose target is not a file in the repository."""
    root = root.resolve()
    found: list[str] = []
    for doc in [root / "README.md", *sorted((root / "docs").glob("*.md"))]:
        for match in LINK.finditer(doc.read_text(encoding="utf-8")):
            target = match.group("target").split("#", 1)[0]
            if not target or re.match(r"^[a-z][a-z0-9+.-]*:", target):
                continue  # an anchor in the same file, or a URL (https:, mailto:)
            resolved = (doc.parent / target).resolve()
            if not resolved.is_relative_to(root) or not resolved.exists():
                found.append(f"{doc.relative_to(root)}: {match.group('target')}")
    return found


def test_the_code_cites_only_what_the_repository_holds() -> None:
    assert scan(ROOT) == []


def test_document_links_stay_in_the_repository() -> None:
    assert broken_links(ROOT) == []


SECTIONS = frozenset({"4", "4.6", "16.2"})
OLD = "contract"
"""The name of the document the code used to cite, spelled so a search-and-replace of its
citations across the code leaves these examples as they are."""


def found(text: str) -> list[str]:
    return list(problems(ROOT, text, SECTIONS))


def test_a_reference_section_that_exists_passes() -> None:
    assert found("see reference §4.6 and (§16.2), reference §4") == []


def test_a_missing_section_fails() -> None:
    assert found("reference §4.7") == ["line 1: reference §4.7 is not a heading of reference.md"]
    assert found("x\nbare (§99)") == ["line 2: reference §99 is not a heading of reference.md"]


def test_a_document_outside_the_repository_fails() -> None:
    assert found(f"# {OLD} §4.6") == [
        f"line 1: {OLD} §4.6 cites a document that is not in the repository "
        "(the product reference is docs/reference.md: reference §N)"
    ]
    assert found(f"the {OLD}'s §16.2")[0].startswith(f"line 1: {OLD} §16.2")


def test_file_citations_must_exist() -> None:
    assert found("(architecture.md, issue 18) and docs/decisions.md") == []
    assert found("docs/decisions-19-network.md") == [
        "line 1: docs/decisions-19-network.md is not in the repository"
    ]
    assert found("../shared/design/architecture.md") == [
        "line 1: ../shared/design/architecture.md is not in the repository"
    ]


def test_another_specification_section_is_skipped() -> None:
    assert found("JSON-RPC 2.0 (§5.1) and RFC 9110 §11.2") == []


def test_reference_sections_come_from_numbered_headings() -> None:
    text = "# Title\n## 4. Tools\n### 4.6 Element actions\n#### Notes\n### 16.2 Codes (20)\n"
    assert reference_sections(text) == frozenset({"4", "4.6", "16.2"})


def test_a_link_outside_the_repository_fails(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text(
        "[ok](b.md) [gone](c.md) [out](../../x.md) [w](https://e.org)"
    )
    (tmp_path / "docs" / "b.md").write_text("")
    (tmp_path / "README.md").write_text("[doc](docs/a.md#top) [self](#x)")
    assert broken_links(tmp_path) == ["docs/a.md: c.md", "docs/a.md: ../../x.md"]


def test_scan_reads_every_python_file_under_src_and_tests(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "reference.md").write_text("## 4. Tools\n### 4.6 Element actions\n")
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "tests").mkdir()
    (tmp_path / "src" / "pkg" / "a.py").write_text('"""See reference §4.6."""\n')
    (tmp_path / "tests" / "b.py").write_text(f"# {OLD} §4.6, then (§4.9)\n")
    assert scan(tmp_path) == [
        f"tests/b.py: line 1: {OLD} §4.6 cites a document that is not in the repository "
        "(the product reference is docs/reference.md: reference §N)",
        "tests/b.py: line 1: reference §4.9 is not a heading of reference.md",
    ]
