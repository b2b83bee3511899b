"""The official MCP conformance suite against a real ``browsermesh --transport http`` (issue 17).

``@modelcontextprotocol/conformance`` (pinned in ``scripts/node-tools.sh``, installed under
``.tools/conformance`` and run with the Node 22 there) drives its server scenarios over Streamable
HTTP against ``python -m browsermesh --transport http --port 0`` from this source tree, on
loopback with a temporary data directory. The run passes when every failing scenario is listed in
``tests/conformance/expected-failures.yml`` and every listed one still fails (the suite itself
rejects a stale entry).

That file may list only scenarios that call the suite's own fixtures (tools such as
``test_image_content``, fixed prompts and ``test://`` resources), each with a one-line reason;
``test_expected_failures_are_suite_scenarios_with_reasons`` keeps its names honest.

When the Node tools are missing these tests fail, naming ``bash scripts/node-tools.sh``; they never
skip. Select with ``pytest tests/package/test_conformance.py`` or ``-m package``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from tests.support.http_process import HttpServerProcess

pytestmark = pytest.mark.package

REPO = Path(__file__).resolve().parents[2]
NODE = REPO / ".tools/node22/node_modules/node/bin/node"
PACKAGE = REPO / ".tools/conformance/node_modules/@modelcontextprotocol/conformance"
EXPECTED_FAILURES = REPO / "tests/conformance/expected-failures.yml"
NODE_TOOLS = REPO / "scripts/node-tools.sh"
SUITE_TIMEOUT = 75.0  # the whole server suite takes about 1-2 s on loopback
LIST_TIMEOUT = 30.0

ANSI = re.compile(r"\x1b\[[0-9;]*m")
ENTRY = re.compile(r"^  - (?P<name>[a-z0-9][a-z0-9-]*) +# (?P<reason>\S.*)$")
RESULT_DIR = re.compile(r"^server-(?P<name>.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$")
BASELINE_SECTIONS = {
    "Expected failures (in baseline):": "expected",
    "Stale baseline entries (now passing - remove from baseline):": "stale",
    "Unexpected failures (not in baseline):": "unexpected",
}


def pinned_version() -> str:
    """The conformance version ``scripts/node-tools.sh`` installs (its CONFORMANCE_VERSION)."""
    found = re.search(r"^CONFORMANCE_VERSION=(\S+)$", NODE_TOOLS.read_text(), re.MULTILINE)
    assert found, f"no CONFORMANCE_VERSION= line in {NODE_TOOLS}"
    return found.group(1)


@dataclass(frozen=True)
class Conformance:
    """The installed conformance CLI: ``node <entry> ...``."""

    node: Path
    entry: Path

    def run(self, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
        """One CLI run with captured text output; raises on timeout."""
        return subprocess.run(
            [str(self.node), str(self.entry), *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            cwd=REPO,
        )

    def server_scenarios(self) -> list[str]:
        """Every server scenario ``list --server`` names, pending ones included."""
        proc = self.run("list", "--server", timeout=LIST_TIMEOUT)
        assert proc.returncode == 0, f"conformance list --server: {proc.stderr[-2000:]}"
        names = re.findall(r"^  - (\S+)", proc.stdout, re.MULTILINE)
        assert names, f"conformance list --server printed no scenarios:\n{proc.stdout}"
        return names


def find_conformance() -> Conformance:
    """The suite from scripts/node-tools.sh; when it is absent the calling test FAILS."""
    hint = "run `bash scripts/node-tools.sh` (scripts/test.sh does it) to install it"
    if not NODE.is_file():
        pytest.fail(f"Node 22 for the conformance suite is missing ({NODE}); {hint}", pytrace=False)
    manifest = PACKAGE / "package.json"
    if not manifest.is_file():
        pytest.fail(f"the MCP conformance suite is missing ({PACKAGE}); {hint}", pytrace=False)
    meta = json.loads(manifest.read_text(encoding="utf-8"))
    if meta["version"] != pinned_version():
        pytest.fail(
            f"conformance {meta['version']} is installed, {pinned_version()} is pinned; {hint}",
            pytrace=False,
        )
    entry = PACKAGE / meta["bin"]["conformance"]
    assert entry.is_file(), entry
    return Conformance(node=NODE, entry=entry)


def parse_expected_failures(text: str) -> dict[str, str]:
    """Scenario name -> one-line reason, from the expected-failures file's text.

    The format is what ``conformance server --expected-failures`` reads (YAML with a ``server:``
    list of scenario names) with one rule more: after ``server:`` every line is exactly one entry,
    ``  - <scenario>  # <reason>``. Comment lines and blank lines may only precede ``server:``.
    Raises ValueError naming the first offending line.
    """
    entries: dict[str, str] = {}
    in_list = False
    for number, line in enumerate(text.splitlines(), start=1):
        if not in_list:
            if line == "server:":
                in_list = True
            elif line.strip() and not line.startswith("#"):
                raise ValueError(f"line {number}: only comments may precede `server:`: {line!r}")
            continue
        match = ENTRY.match(line)
        if match is None:
            raise ValueError(f"line {number}: not `  - <scenario>  # <reason>`: {line!r}")
        name = match["name"]
        if name in entries:
            raise ValueError(f"line {number}: {name} is listed twice")
        entries[name] = match["reason"].strip()
    if not in_list:
        raise ValueError("no `server:` list")
    loaded = YAML(typ="safe", pure=True).load(text)
    if loaded != {"server": list(entries)}:
        raise ValueError(f"YAML reads differently from the entries: {loaded!r}")
    return entries


# --------------------------------------------------------------------------------------------
# The expected-failures file
# --------------------------------------------------------------------------------------------


def test_expected_failures_are_suite_scenarios_with_reasons() -> None:
    entries = parse_expected_failures(EXPECTED_FAILURES.read_text(encoding="utf-8"))
    assert entries, f"{EXPECTED_FAILURES} lists nothing: delete it or list a scenario"
    known = find_conformance().server_scenarios()
    unknown = sorted(set(entries) - set(known))
    assert not unknown, (
        f"{EXPECTED_FAILURES.name} lists scenarios the suite does not have: {unknown}; "
        f"`conformance list --server` names: {known}"
    )


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("server:\n  - ping\n", "not `  - <scenario>  # <reason>`"),
        ("server:\n  - ping  #\n", "not `  - <scenario>  # <reason>`"),
        ("server:\n  - ping  # a\n  - ping  # b\n", "listed twice"),
        ("server:\n  - ping  # a\n  # more reason\n", "line 3"),
        ("# only a comment\n", "no `server:` list"),
        ("client: []\nserver:\n  - ping  # a\n", "only comments may precede"),
    ],
)
def test_malformed_expected_failures_are_rejected(text: str, problem: str) -> None:
    with pytest.raises(ValueError, match=re.escape(problem)):
        parse_expected_failures(text)


def test_well_formed_expected_failures_parse() -> None:
    text = "# why\n\nserver:\n  - tools-call-image  # calls test_image_content\n  - ping   # x y\n"
    assert parse_expected_failures(text) == {
        "tools-call-image": "calls test_image_content",
        "ping": "x y",
    }


# --------------------------------------------------------------------------------------------
# The server suite against a real HTTP server
# --------------------------------------------------------------------------------------------


class LoopbackServer(HttpServerProcess):
    """``python -m browsermesh --transport http --port 0`` from this tree, stderr drained."""

    def __init__(self, data_dir: Path) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("BROWSERMESH_")}
        env["BROWSERMESH_DATA_DIR"] = str(data_dir)
        cmd = [sys.executable, "-m", "browsermesh", "--transport", "http", "--port", "0"]
        super().__init__([*cmd, "--headless", "--no-auto-install"], env, REPO)


def baseline_report(stdout: str) -> dict[str, list[str]]:
    """The suite's closing baseline report: expected / stale / unexpected scenario names."""
    report: dict[str, list[str]] = {kind: [] for kind in BASELINE_SECTIONS.values()}
    section: str | None = None
    for raw in ANSI.sub("", stdout).splitlines():
        line = raw.strip()
        if line in BASELINE_SECTIONS:
            section = BASELINE_SECTIONS[line]
        elif section and line[:2] in {"~ ", "✓ ", "✗ "}:
            report[section].append(line[2:])
        else:
            section = None
    return report


def failed_checks(results: Path) -> dict[str, list[str]]:
    """Scenario -> its FAILURE/WARNING checks (``STATUS id: message``), from checks.json."""
    failed: dict[str, list[str]] = {}
    for checks_file in sorted(results.glob("*/checks.json")):
        match = RESULT_DIR.match(checks_file.parent.name)
        assert match, checks_file
        bad = [
            f"{check['status']} {check['id']}: {check.get('errorMessage') or check['description']}"
            for check in json.loads(checks_file.read_text(encoding="utf-8"))
            if check["status"] in {"FAILURE", "WARNING"}
        ]
        if bad:
            failed[match["name"]] = bad
    return failed


def test_server_scenarios_pass_with_expected_failures(tmp_path: Path) -> None:
    conformance = find_conformance()
    listed = parse_expected_failures(EXPECTED_FAILURES.read_text(encoding="utf-8"))
    results = tmp_path / "results"
    server = LoopbackServer(tmp_path / "data")
    try:
        url = server.wait_listening()
        proc = conformance.run(
            "server",
            "--url",
            url,
            "--output-dir",
            str(results),
            "--expected-failures",
            str(EXPECTED_FAILURES),
            timeout=SUITE_TIMEOUT,
        )
    finally:
        code = server.stop(timeout=20)
    report = baseline_report(proc.stdout)
    failed = failed_checks(results)
    ran = len(list(results.glob("*/checks.json")))

    problems = [
        f"  {name} (unexpected failure): " + "; ".join(failed.get(name, ["?"]))
        for name in report["unexpected"]
    ] + [f"  {name} (stale entry: passes now)" for name in report["stale"]]
    passed = proc.returncode == 0 and not problems
    assert passed, (
        f"conformance server exited {proc.returncode} after {ran} scenarios\n"
        + "\n".join(problems or [ANSI.sub("", proc.stdout)[-3000:], proc.stderr[-2000:]])
        + f"\n--- server stderr ---\n{server.log_tail()}"
    )
    # Every entry ran and failed: the suite ignores a name it did not run (a pending scenario).
    not_run = sorted(set(listed) - set(report["expected"]))
    assert not not_run, f"listed, but the suite did not run them as expected failures: {not_run}"
    assert set(failed) == set(listed), failed
    assert code == 0, f"server exit {code} after SIGTERM\n{server.log_tail()}"
    assert not any("Traceback" in line for line in server.lines), server.log_tail()
