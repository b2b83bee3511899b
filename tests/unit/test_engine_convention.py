"""One engine convention (issue 32 item 3; docs/architecture.md "Deadlines and cancellation"),
checked on the source: every port method doing browser work takes the call's
`OperationContext`; every wait in engine/ goes through `engine.bounded`; one `quietly`; one
failure translator (`engine/failures.py`).

Each rule is a function from one module's source to its violations, run on the code base
(none expected) and on a small bad source (one expected), so that each can fail.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "browsermesh"
ENGINE = SRC / "engine"

CLEAN_UP = frozenset({"close_context", "stop", "close"})
"""Port methods that are clean-up with the engine's own fixed bound: they take no context."""
BUILDERS = frozenset({"browser_error", "navigation_error"})
BOUNDING = frozenset({("asyncio", "wait_for"), ("asyncio", "timeout"), ("asyncio", "timeout_at")})
BOUNDING |= {("anyio", "fail_after"), ("anyio", "move_on_after")}


def engine_modules() -> list[Path]:
    return sorted(ENGINE.rglob("*.py"))


def _name(path: Path) -> str:
    return path.relative_to(SRC).as_posix()


# ------------------------------------------------------------------------------- the rules


def port_without_context(source: str) -> list[str]:
    """Async methods of the port's Protocol classes (Engine, ChangeWatcher) that do browser
    work but take no `ctx: OperationContext`, or still take a `timeout_ms`."""
    found: list[str] = []
    for cls in ast.walk(ast.parse(source)):
        if not isinstance(cls, ast.ClassDef):
            continue
        if not any(ast.unparse(base).startswith("Protocol") for base in cls.bases):
            continue
        for method in cls.body:
            if not isinstance(method, ast.AsyncFunctionDef) or method.name in CLEAN_UP:
                continue
            args = {a.arg: a.annotation for a in [*method.args.args, *method.args.kwonlyargs]}
            annotation = args.get("ctx")
            if annotation is None or ast.unparse(annotation) != "OperationContext":
                found.append(f"{cls.name}.{method.name} takes no ctx: OperationContext")
            if "timeout_ms" in args:
                found.append(f"{cls.name}.{method.name} takes timeout_ms")
    return found


def bare_bounds(source: str) -> list[str]:
    """`asyncio.wait_for` / `asyncio.timeout` (and anyio's scopes), by attribute or imported
    by name, and a timed `asyncio.wait`: outside engine/bounded.py the engine waits through
    `bounded` (or `first_done` for a race)."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "asyncio.wait":
            if any(keyword.arg == "timeout" for keyword in node.keywords):
                found.append(f"line {node.lineno}: asyncio.wait(..., timeout=...)")
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if (node.value.id, node.attr) in BOUNDING:
                found.append(f"line {node.lineno}: {node.value.id}.{node.attr}")
        elif isinstance(node, ast.ImportFrom) and node.module in ("asyncio", "anyio"):
            for alias in node.names:
                if (node.module, alias.name) in BOUNDING:
                    found.append(f"line {node.lineno}: from {node.module} import {alias.name}")
    return found


def quietly_definitions(source: str) -> int:
    """How many functions named `quietly` the source defines."""
    return sum(
        isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == "quietly"
        for node in ast.walk(ast.parse(source))
    )


def _catches_exception(handler: ast.ExceptHandler) -> bool:
    """A bare `except:`, `except Exception` or `except BaseException`, alone or in a tuple."""
    if handler.type is None:
        return True
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(ast.unparse(t) in ("Exception", "BaseException") for t in types)


def _called(node: ast.AST) -> str | None:
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else None


def handwritten_translations(source: str) -> list[str]:
    """`except Exception` handlers that build `browser_error(...)` / `navigation_error(...)`
    themselves: outside engine/failures.py that is `failures.translated(rule)`'s job."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ExceptHandler) or not _catches_exception(node):
            continue
        for inner in ast.walk(node):
            if (called := _called(inner)) in BUILDERS:
                found.append(f"line {inner.lineno}: except ... {called}(...)")
    return found


# ----------------------------------------------------------------- the code base holds them


def test_every_port_method_doing_browser_work_takes_the_operation_context() -> None:
    assert port_without_context((ENGINE / "protocol.py").read_text()) == []


def test_only_bounded_py_bounds_a_wait() -> None:
    found = {
        _name(path): hits
        for path in engine_modules()
        if path.name != "bounded.py" and (hits := bare_bounds(path.read_text()))
    }
    assert found == {}
    assert bare_bounds((ENGINE / "bounded.py").read_text())  # where the one bound lives


def test_there_is_one_quietly() -> None:
    defined = {
        _name(path): count
        for path in sorted(SRC.rglob("*.py"))
        if (count := quietly_definitions(path.read_text()))
    }
    assert defined == {"engine/bounded.py": 1}


def test_playwright_failures_are_translated_only_in_failures_py() -> None:
    found = {
        _name(path): hits
        for path in sorted(SRC.rglob("*.py"))
        if path != ENGINE / "failures.py" and (hits := handwritten_translations(path.read_text()))
    }
    assert found == {}


# ------------------------------------------------------------------ each rule can fail


BAD_PORT = """
class Engine(Protocol[ContextT, PageT]):
    async def navigate(self, page: PageT, url: str, timeout_ms: float) -> Landing: ...
    async def act(self, page: PageT, ctx: OperationContext) -> None: ...
    async def close_context(self, context: ContextT) -> None: ...
"""

BAD_BOUNDS = [
    "async def f(x):\n    return await asyncio.wait_for(x, timeout=1)\n",
    "async def f(x):\n    async with asyncio.timeout(1):\n        await x\n",
    "from asyncio import wait_for\n",
    "async def f(x):\n    with anyio.fail_after(1):\n        await x\n",
    "async def f(a, b):\n    await asyncio.wait({a, b}, timeout=1)\n",
]

BAD_TRANSLATIONS = [
    "async def f(p):\n    try:\n        await p.goto(u)\n"
    "    except Exception as exc:\n        raise navigation_error(exc, u, 5) from None\n",
    "async def f(p):\n    try:\n        await p.close()\n"
    "    except (KeyError, Exception) as exc:\n        raise failures.browser_error(exc)\n",
]


def test_the_port_rule_names_a_method_without_context() -> None:
    assert port_without_context(BAD_PORT) == [
        "Engine.navigate takes no ctx: OperationContext",
        "Engine.navigate takes timeout_ms",
    ]


@pytest.mark.parametrize("source", BAD_BOUNDS)
def test_the_bound_rule_names_a_bare_wait(source: str) -> None:
    assert len(bare_bounds(source)) == 1


def test_the_quietly_rule_counts_definitions() -> None:
    source = "async def quietly(x):\n    pass\n\n\ndef quietly(y):\n    pass\n"
    assert quietly_definitions(source) == 2


@pytest.mark.parametrize("source", BAD_TRANSLATIONS)
def test_the_translator_rule_names_a_handwritten_translation(source: str) -> None:
    assert len(handwritten_translations(source)) == 1


def test_the_translator_rule_allows_a_narrow_handler_and_a_builder_outside_one() -> None:
    source = (
        "def f(exc):\n    try:\n        g()\n    except KeyError:\n"
        "        raise browser_error(exc)\n    return browser_error(exc, 'launch')\n"
    )
    assert handwritten_translations(source) == []
