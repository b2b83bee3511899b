"""Layering rules (reference §25): checked on the import statements of every module."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "browsermesh"


def imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            # `from browsermesh import engine` imports browsermesh.engine
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def modules(folder: str) -> list[Path]:
    return sorted((SRC / folder).rglob("*.py"))


def test_only_engine_imports_playwright() -> None:
    for path in SRC.rglob("*.py"):
        uses = {m for m in imports_of(path) if m.split(".")[0] == "playwright"}
        rel = path.relative_to(SRC)
        if uses and rel.parts[0] != "engine":
            # The doctor's browser smoke checks talk to Playwright directly by design (§20.2;
            # doctor/grid.py: the smoke check on a Selenium Grid, issue 22).
            assert rel.as_posix() in ("doctor/smoke.py", "doctor/grid.py"), f"{rel} {uses}"


def test_model_is_pure() -> None:
    banned = {
        "playwright",
        "mcp",
        "os",
        "pathlib",
        "shutil",
        "subprocess",
        "browsermesh.runtime",
        "browsermesh.engine",
        "browsermesh.mcp",
        "browsermesh.persistence",
    }
    for path in modules("model"):
        for module in imports_of(path):
            assert not any(module == b or module.startswith(b + ".") for b in banned), (
                f"{path.name} imports {module}"
            )


def test_layers_point_down() -> None:
    rules = {
        "engine": {"browsermesh.runtime", "browsermesh.mcp", "browsermesh.transports"},
        "runtime": {"browsermesh.mcp", "browsermesh.transports"},
        "persistence": {"browsermesh.runtime", "browsermesh.engine", "browsermesh.mcp"},
        # Tool handlers talk to the runtime only; the engine and the state store sit below it.
        "mcp": {"browsermesh.engine", "browsermesh.persistence", "playwright"},
    }
    for folder, banned in rules.items():
        for path in modules(folder):
            for module in imports_of(path):
                assert not any(module.startswith(b) for b in banned), f"{path} imports {module}"


def reads_environment(path: Path) -> bool:
    """Whether the module's code (not its string literals: the test export writes code that
    reads `os.environ`, model/export_python.py) uses `os.environ`, `os.getenv` or imports them."""
    names = {"environ", "environb", "getenv", "getenvb"}
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Attribute) and node.attr in names:
            owner = node.value
            if isinstance(owner, ast.Name) and owner.id == "os":
                return True
        elif isinstance(node, ast.ImportFrom) and node.module == "os":
            imported = {alias.name for alias in node.names}
            if imported & names:
                return True
    return False


def test_only_config_reads_the_environment() -> None:
    for path in SRC.rglob("*.py"):
        if reads_environment(path):
            rel = path.relative_to(SRC).as_posix()
            assert rel == "config/environment.py", f"{rel} reads the environment"


# ------------------------------------------------------------------------------------------
# Module size (issue 18): no module above 500 lines without a reason written at its top
# ------------------------------------------------------------------------------------------

MAX_MODULE_LINES = 500


def _size_reason(path: Path) -> bool:
    """True when the module docstring has a line starting with ``Size:`` (why it is long)."""
    docstring = ast.get_docstring(ast.parse(path.read_text())) or ""
    return any(line.strip().startswith("Size:") for line in docstring.splitlines())


def _oversized() -> set[str]:
    return {
        path.relative_to(SRC).as_posix()
        for path in SRC.rglob("*.py")
        if len(path.read_text().splitlines()) > MAX_MODULE_LINES and not _size_reason(path)
    }


def test_no_module_above_the_size_limit_without_a_reason() -> None:
    offenders = sorted(_oversized())
    assert not offenders, (
        f"modules above {MAX_MODULE_LINES} lines without a 'Size:' line in their docstring "
        "(split them along their seams, or say why the content belongs together): "
        + ", ".join(offenders)
    )


def test_only_the_fleet_directory_imports_redis() -> None:
    """Issue 37: the Redis client is one port (persistence/fleet_directory.py)."""
    for path in SRC.rglob("*.py"):
        uses = {m for m in imports_of(path) if m.split(".")[0] == "redis"}
        rel = path.relative_to(SRC).as_posix()
        assert not uses or rel == "persistence/fleet_directory.py", f"{rel} {uses}"
