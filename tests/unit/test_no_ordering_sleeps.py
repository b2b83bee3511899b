"""No fixed sleep orders a test's events (issue 32): every `sleep(` call in tests/ is listed
here with the reason time is the point, or it fails.

Events are ordered with the fake engine's `Gate` (`tests/fakes.py`), `all_tasks_blocked()`
(`tests/support/loop.py`) or an event; a condition something else makes true is awaited with
`eventually` (`tests/support/eventually.py`). The scan reads the syntax tree, so a `sleep(`
inside a string (a page's script, a child process's source) is not a call and not counted.
tests/fixtures is not scanned: those are the loopback sites, and a slow response there is what
the browser is served, not how a test orders its steps."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
NOT_SCANNED = ("fixtures",)
"""Folders of tests/ that hold the sites served to the browser, not tests."""

ALLOWED: dict[tuple[str, str], str] = {
    # The helpers that replace ordering sleeps.
    ("support/eventually.py", "eventually"): "its poll interval",
    ("support/loop.py", "all_tasks_blocked"): "sleep(0): one loop turn, no time passes",
    # The fake engine simulates work that takes time.
    ("fakes.py", "_work"): "a call takes `delay` s, or its whole budget when that is shorter",
    ("fakes.py", "wait"): "a URL wait polls the page like the engine's waits do",
    ("fakes.py", "action_and_wait"): "waiting for what a fake page never does uses the budget",
    # Work that takes time is what the test is about.
    ("unit/test_failures.py", "test_a_call_past_its_deadline_is_operation_timeout"): (
        "the work outlasts its deadline"
    ),
    ("unit/test_tasks.py", "_fail"): "the failure comes from a task that has run a turn",
    ("unit/test_tasks.py", "_slow_cleanup"): "a cleanup that takes time is awaited",
    ("unit/test_tasks.py", "first"): "the drain waits for work that takes time",
    ("unit/test_tasks.py", "second"): "the drain waits for work spawned late",
    ("unit/test_engine_task_owners.py", "create"): "a cleanup that takes time is awaited",
    ("unit/test_engine_task_owners.py", "close"): "a popup close that takes time is awaited",
    ("unit/test_engine_task_owners.py", "install"): "a cleanup that takes time is awaited",
    ("unit/test_mcp_feed.py", "test_a_short_call_sends_no_progress"): (
        "a call shorter than the progress grace sends nothing"
    ),
    ("unit/test_live_view_runtime.py", "test_pictures_run_only_while_someone_watches"): (
        "two refresh periods pass with nobody watching, and no picture is taken"
    ),
    # Expiry, backoff, rates: the passing of time is the condition under test.
    ("integration/test_ref_ttl.py", "test_a_ref_expires_after_the_configured_ttl"): "ref TTL",
    (
        "integration/test_locator_rules.py",
        "test_expired_ref_gets_a_fresh_ref_and_a_replaced_one_does_not",
    ): "ref TTL",
    ("integration/test_backends.py", "test_browser_server_pool_placement_and_failure_isolation"): (
        "an endpoint's backoff elapses"
    ),
    ("integration/test_evaluate.py", "_poll_open_loop"): "calls sent at a fixed rate (open loop)",
    ("stress/test_chaos.py", "test_drag_and_drop_on_a_blocked_page_times_out_within_its_budget"): (
        "the page's own 50 ms timer starts a loop that blocks the renderer; once it runs nothing "
        "answers, so there is no condition to poll"
    ),
    ("stress/test_stress.py", "test_fifty_concurrent_chromium_sessions_route_and_clean_up"): (
        "measurement: Chromium's helpers settle before the base process count"
    ),
    ("stress/soak.py", "_sample"): "measurement: Chromium's helpers settle before a sample",
}
"""(file below tests/, innermost enclosing function) -> why time is the point there."""


def sleeps_in(source: str) -> list[tuple[str, int]]:
    """Every `sleep(...)` call in `source` (`time.sleep`, `asyncio.sleep`, `anyio.sleep`,
    `ctx.sleep`, a bare `sleep`): (innermost enclosing function or "<module>", line)."""
    found: list[tuple[str, int]] = []

    def visit(node: ast.AST, function: str) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            function = node.name
        if isinstance(node, ast.Call):
            callee = node.func
            name = callee.attr if isinstance(callee, ast.Attribute) else getattr(callee, "id", "")
            if name == "sleep":
                found.append((function, node.lineno))
        for child in ast.iter_child_nodes(node):
            visit(child, function)

    visit(ast.parse(source), "<module>")
    return found


def scanned_files() -> list[Path]:
    return sorted(
        path for path in TESTS.rglob("*.py") if path.relative_to(TESTS).parts[0] not in NOT_SCANNED
    )


def test_the_scanner_finds_sleep_calls_and_not_strings() -> None:
    source = """
import asyncio, time
from anyio import sleep
time.sleep(1)
PAGE = "<script>await sleep(5); time.sleep(0.4)</script>"
async def outer():
    await asyncio.sleep(0.1)
    def inner():
        sleep(2)
    await ctx.sleep(5)
    await sleepy(1)
    asleep = asyncio.sleep
"""
    assert sleeps_in(source) == [("<module>", 4), ("outer", 7), ("inner", 9), ("outer", 10)]


def test_no_sleep_orders_events() -> None:
    seen: set[tuple[str, str]] = set()
    unlisted: list[str] = []
    for path in scanned_files():
        rel = path.relative_to(TESTS).as_posix()
        for function, line in sleeps_in(path.read_text()):
            seen.add((rel, function))
            if (rel, function) not in ALLOWED:
                unlisted.append(f"tests/{rel}:{line} in {function}()")
    assert not unlisted, (
        "a sleep orders events; use the fake engine's Gate, all_tasks_blocked(), an event or "
        "eventually(), or list it in ALLOWED with why time is the point:\n" + "\n".join(unlisted)
    )
    stale = sorted(set(ALLOWED) - seen)
    assert not stale, f"allowed sleeps that are gone (remove them from ALLOWED): {stale}"
