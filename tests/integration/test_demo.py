"""``browsermesh demo`` (reference §20.3): the real command end to end, plus its pure helpers."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from browsermesh.demo.scenario import (
    PASS_LINE,
    DemoFailure,
    _error_payload,
    format_step,
    pick_ref,
    server_command,
    table_has_order,
)

ROOT = Path(__file__).resolve().parents[2]
SESSION_ID = r"s[0-9a-z]{4,}"  # model.ids short_id("s")
STEP = re.compile(rf"^\[(\d{{2}})\] (buyer|admin) ({SESSION_ID}) (browser_[a-z_]+) → (.+)$")

REFS = [
    {"ref": "s3e1", "role": "textbox", "name": "Item", "tag": "input"},
    {"ref": "s3e2", "role": "combobox", "name": "Quantity", "tag": "select"},
    {"ref": "s3e3", "role": "button", "name": "Place order", "tag": "button"},
]


def _run_demo(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "browsermesh", "demo", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        env=env,
        cwd=ROOT,
        timeout=150,
    )


def test_demo_passes_end_to_end(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    # The test process's environment; the data directory is pointed at a fresh path only to
    # prove that the demo (server run with --no-persistence) never creates or touches it.
    done = _run_demo(env={**os.environ, "BROWSERMESH_DATA_DIR": str(data_dir)})
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "Traceback" not in output
    lines = done.stdout.splitlines()
    assert lines[-1] == PASS_LINE
    assert "browser_session_create listed" in done.stdout

    steps = [match for line in lines if (match := STEP.match(line))]
    assert [int(m.group(1)) for m in steps] == list(range(1, len(steps) + 1))
    by_role: dict[str, list[tuple[str, str, str]]] = {"buyer": [], "admin": []}
    for match in steps:
        by_role[match.group(2)].append((match.group(3), match.group(4), match.group(5)))
    # One session per role, each step line naming that role's real session id.
    buyer_ids = {session for session, _, _ in by_role["buyer"]}
    admin_ids = {session for session, _, _ in by_role["admin"]}
    assert len(buyer_ids) == 1 and len(admin_ids) == 1 and buyer_ids != admin_ids
    buyer_tools = [tool for _, tool, _ in by_role["buyer"]]
    admin_tools = [tool for _, tool, _ in by_role["admin"]]
    assert buyer_tools == [
        "browser_session_create",
        "browser_navigate",
        "browser_snapshot",
        "browser_fill",
        "browser_select_option",
        "browser_action_and_wait",
        "browser_session_close",
    ]
    assert admin_tools[0] == "browser_session_create"
    assert admin_tools[1] == "browser_navigate"
    assert admin_tools[-3:] == ["browser_wait", "browser_visible_text", "browser_session_close"]
    buyer_outcomes = {tool: outcome for _, tool, outcome in by_role["buyer"]}
    admin_outcomes = {tool: outcome for _, tool, outcome in by_role["admin"]}
    assert "/orders/" in buyer_outcomes["browser_action_and_wait"]
    assert "Blue teapot" in admin_outcomes["browser_visible_text"]
    assert buyer_outcomes["browser_session_close"] == "closed"
    assert admin_outcomes["browser_session_close"] == "closed"
    assert not data_dir.exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="DISPLAY applies to Linux")
def test_headed_without_display_fails_cleanly(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env["BROWSERMESH_DATA_DIR"] = str(tmp_path / "data")
    done = _run_demo("--headed", env=env)
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert "Traceback" not in output
    assert PASS_LINE not in output
    assert "FAIL: browser_session_create" in done.stdout
    assert "  nextStep: " in done.stdout
    assert "needs a display" in done.stdout
    assert not (tmp_path / "data").exists()


# -- pure helpers ---------------------------------------------------------------------------------


def test_format_step() -> None:
    line = format_step(3, "buyer", "s1x7q", "browser_fill", 'filled [s3e1] "Item"')
    assert line == '[03] buyer s1x7q browser_fill → filled [s3e1] "Item"'
    assert format_step(12, "admin", None, "browser_session_create", "error BROWSER_ERROR") == (
        "[12] admin - browser_session_create → error BROWSER_ERROR"
    )


def test_format_step_flattens_and_bounds_the_outcome() -> None:
    line = format_step(1, "admin", "s", "browser_visible_text", "Orders\nOrder\tItem\n" + "x" * 500)
    assert "\n" not in line and "\t" not in line
    outcome = line.split(" → ", 1)[1]
    assert outcome.startswith("Orders Order Item x") and outcome.endswith("…")
    assert len(outcome) == 160


def test_server_command() -> None:
    assert server_command(False) == [
        "-m",
        "browsermesh",
        "--no-persistence",
        "--log-level",
        "warn",
        "--headless",
        "--transport",
        "stdio",
    ]
    assert "--headed" in server_command(True)


def test_pick_ref_by_role_and_name() -> None:
    assert pick_ref(REFS, ("textbox",), "Item") == "s3e1"
    assert pick_ref(REFS, ("combobox", "listbox"), "Quantity") == "s3e2"
    assert pick_ref(REFS, ("button",), "Place order") == "s3e3"
    with pytest.raises(DemoFailure, match="0 button elements"):
        pick_ref(REFS, ("button",), "Item")
    with pytest.raises(DemoFailure, match="2 textbox elements"):
        pick_ref([*REFS, {"ref": "s3e9", "role": "textbox", "name": "Item"}], ("textbox",), "Item")


def test_table_has_order() -> None:
    text = "Orders\nOrder\tItem\tQuantity\n1\tBlue teapot\t2"
    assert table_has_order(text, "Blue teapot", "2")
    assert not table_has_order(text, "Blue teapot", "3")
    assert not table_has_order("Orders\nOrder\tItem\tQuantity", "Blue teapot", "2")


def _result(text: str) -> SimpleNamespace:
    return SimpleNamespace(content=[SimpleNamespace(type="text", text=text)])


def test_error_payload() -> None:
    body = (
        '{"ok":false,"error":{"code":"OPERATION_TIMEOUT","message":"Operation timed out.",'
        '"nextStep":"Retry with a larger timeoutMs.","operationId":"o1abc"}}'
    )
    assert _error_payload(_result(body)) == (
        "OPERATION_TIMEOUT",
        "Operation timed out.",
        "Retry with a larger timeoutMs.",
    )
    code, message, _ = _error_payload(
        _result("Input validation error: Invalid arguments for tool browser_fill: ref: bad\nmore")
    )
    assert code == "INPUT_VALIDATION" and message.startswith("Input validation error")
