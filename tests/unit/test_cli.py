"""The ``browsermesh`` command line: output, exit codes, dispatch (§19.2, §19.3, §20.1)."""

from __future__ import annotations

import os
import subprocess
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from browsermesh import cli, install_browser
from browsermesh._version import __version__
from browsermesh.config import Config, help_text, usage_summary

HINT = "Run 'browsermesh --help' for all options."


@pytest.fixture
def environ(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, str]:
    """The environment main() sees (the config module's process_environ is replaced)."""
    values = {"HOME": str(tmp_path / "home"), "PATH": os.environ.get("PATH", "")}
    monkeypatch.setattr(cli, "process_environ", lambda: values)
    return values


def fake_module(
    monkeypatch: pytest.MonkeyPatch, name: str, attribute: str, function: Callable[..., Any]
) -> None:
    module = types.ModuleType(name)
    setattr(module, attribute, function)
    monkeypatch.setitem(sys.modules, name, module)


# ------------------------------------------------------------------------------------------
# Help, version
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("argv", [["--help"], ["-h"], ["--bogus", "-h"], ["demo", "--help"]])
def test_help(argv: list[str], environ: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(argv) == 0
    out, err = capsys.readouterr()
    assert out == help_text()
    assert err == ""


@pytest.mark.parametrize("argv", [["--version"], ["-v"], ["--timeout", "x", "-v"]])
def test_version(
    argv: list[str], environ: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    environ["BROWSERMESH_TIMEOUT_MS"] = "bad"
    assert cli.main(argv) == 0
    out, err = capsys.readouterr()
    assert out == f"{__version__}\n"
    assert err == ""


def test_main_defaults_to_sys_argv(
    environ: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "argv", ["browsermesh", "--version"])
    assert cli.main() == 0
    assert capsys.readouterr().out == f"{__version__}\n"


def test_console_main_exits_with_the_status(
    environ: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "argv", ["browsermesh", "--bogus"])
    with pytest.raises(SystemExit) as info:
        cli.console_main()
    assert info.value.code == 2


# ------------------------------------------------------------------------------------------
# Usage and configuration errors
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "reason"),
    [
        (["--bogus"], "unknown option --bogus"),
        (["--timeout"], "option --timeout requires a value"),
        (["--headless=true"], "option --headless does not take a value"),
        (["--json"], "--json requires --doctor"),
        (["--install-browser", "--doctor"], "--install-browser cannot be combined with --doctor"),
        (["demo", "--timeout", "1"], "demo accepts only --headed, not --timeout"),
        (["--port", "1"], "option --port requires --transport http"),
    ],
)
def test_usage_error_format(
    argv: list[str], reason: str, environ: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"browsermesh: {reason}\n\n{usage_summary()}\n\n{HINT}\n"
    assert "Traceback" not in err


def test_config_error_format(environ: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    environ["BROWSERMESH_TIMEOUT_MS"] = "SECRETVALUE"
    environ["BROWSERMESH_HEADLESS"] = "SECRETVALUE"
    assert cli.main(["--max-pages", "SECRETVALUE"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert lines[0] == "browsermesh: configuration is invalid"
    assert lines[1:4] == [
        "  BROWSERMESH_TIMEOUT_MS: must be an integer from 1 to 300000",
        "  BROWSERMESH_MAX_PAGES: must be an integer from 1 to 100 (from --max-pages)",
        "  BROWSERMESH_HEADLESS: must be true or false",
    ]
    assert "--help" in lines[4]
    assert len(lines) == 5
    assert "SECRETVALUE" not in err
    assert "Traceback" not in err


def test_config_error_never_echoes_values(
    environ: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text("alice:SECRETVALUE\nbob:SECRETVALUESECRETVALUE\nbob:SECRETVALUESECRET\n")
    environ.update(
        {
            "BROWSERMESH_AUTH_TOKEN_FILE": str(tokens),
            "BROWSERMESH_CDP_ENDPOINT": "SECRETVALUE",
            "BROWSERMESH_TOOLS": "SECRETVALUE",
            "BROWSERMESH_LOG_LEVEL": "SECRETVALUE",
            "BROWSERMESH_DATA_DIR": "",
            "BROWSERMESH_HTTP_PATH": "SECRETVALUE",
            "BROWSERMESH_ALLOWED_ORIGINS": "SECRETVALUE",
        }
    )
    assert cli.main(["--transport", "http", "--host", "SECRETVALUE.example"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert "secretvalue" not in err.lower()
    for variable in [
        "BROWSERMESH_AUTH_TOKEN_FILE",
        "BROWSERMESH_CDP_ENDPOINT",
        "BROWSERMESH_TOOLS",
        "BROWSERMESH_LOG_LEVEL",
        "BROWSERMESH_DATA_DIR",
        "BROWSERMESH_HTTP_PATH",
        "BROWSERMESH_ALLOWED_ORIGINS",
    ]:
        assert f"  {variable}: " in err
    assert "core, observability, persistence, files, eval" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["--transport", "http", "--host", "10.1.1.1"],
        ["--transport", "http", "--host", "0.0.0.0"],
        ["--tools", "core,nope"],
        ["--cdp-endpoint", "ws://a:1", "--browser-endpoint", "ws://b:1"],
    ],
)
def test_exit_2_situations(
    argv: list[str], environ: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("browsermesh: configuration is invalid\n")


# ------------------------------------------------------------------------------------------
# Dispatch (lazy imports)
# ------------------------------------------------------------------------------------------


def test_serve_dispatch(environ: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Config] = []

    def serve(config: Config) -> int:
        seen.append(config)
        return 0

    fake_module(monkeypatch, "browsermesh.serve", "serve", serve)
    environ["BROWSERMESH_TIMEOUT_MS"] = "5000"
    assert cli.main(["--headless", "--max-pages", "3"]) == 0
    [config] = seen
    assert (config.timeout_ms, config.headless, config.max_pages) == (5000, True, 3)


def test_doctor_dispatch(environ: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[Config, bool]] = []

    def run_doctor(config: Config, as_json: bool) -> int:
        seen.append((config, as_json))
        return 1

    fake_module(monkeypatch, "browsermesh.doctor", "run_doctor", run_doctor)
    assert cli.main(["--doctor", "--json", "--timeout", "77"]) == 1
    assert cli.main(["--doctor"]) == 1
    assert [(config.timeout_ms, as_json) for config, as_json in seen] == [
        (77, True),
        (10_000, False),
    ]


def test_demo_dispatch(environ: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[bool] = []

    def run_demo(headed: bool) -> int:
        seen.append(headed)
        return 0

    fake_module(monkeypatch, "browsermesh.demo.scenario", "run_demo", run_demo)
    environ["BROWSERMESH_TIMEOUT_MS"] = "bad"  # the demo's child process validates its config
    assert cli.main(["demo"]) == 0
    assert cli.main(["demo", "--headed"]) == 0
    assert seen == [False, True]


def test_install_browser_dispatch(environ: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(install_browser, "install_browser", lambda: 42)
    environ["BROWSERMESH_TIMEOUT_MS"] = "bad"
    assert cli.main(["--install-browser", "--max-pages", "0"]) == 42


def test_fatal_error_is_one_line_without_traceback(
    environ: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def serve(config: Config) -> int:
        raise RuntimeError("SECRETVALUE")

    fake_module(monkeypatch, "browsermesh.serve", "serve", serve)
    assert cli.main([]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err == "browsermesh: fatal error (RuntimeError)\n"


def test_keyboard_interrupt(
    environ: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted() -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(install_browser, "install_browser", interrupted)
    assert cli.main(["--install-browser"]) == 130
    assert "Traceback" not in capsys.readouterr().err


def test_help_and_version_import_nothing_heavy() -> None:
    code = (
        "import sys; from browsermesh.cli import main;"
        "assert main(['--version']) == 0;"
        "assert main(['--help']) == 0;"
        "heavy = [m for m in ('mcp', 'playwright', 'browsermesh.serve') if m in sys.modules];"
        "print('HEAVY=' + ','.join(heavy))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip().splitlines()[-1] == "HEAVY="


# ------------------------------------------------------------------------------------------
# Installer (§20.1, §19.4 step 2)
# ------------------------------------------------------------------------------------------


class FakeRun:
    def __init__(self, returncode: int = 0, error: BaseException | None = None) -> None:
        self.returncode = returncode
        self.error = error
        self.calls: list[tuple[list[str], dict[str, Any]]] = []

    def __call__(self, command: list[str], **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
        self.calls.append((command, kwargs))
        if self.error is not None:
            raise self.error
        return subprocess.CompletedProcess(command, self.returncode)


@pytest.mark.parametrize(("returncode", "status"), [(0, 0), (1, 1), (3, 3), (-9, 137), (-15, 143)])
def test_install_browser_exit_status(
    monkeypatch: pytest.MonkeyPatch, returncode: int, status: int
) -> None:
    run = FakeRun(returncode)
    monkeypatch.setattr("browsermesh.install_browser.subprocess.run", run)
    assert install_browser.install_browser() == status
    [(command, kwargs)] = run.calls
    assert command == [sys.executable, "-m", "playwright", "install", "chromium"]
    # Inherited stdio: progress stays visible.
    assert not {"stdin", "stdout", "stderr"} & kwargs.keys()


def test_install_browser_cannot_start(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(
        "browsermesh.install_browser.subprocess.run", FakeRun(error=FileNotFoundError("x"))
    )
    assert install_browser.install_browser() == 1
    assert "FileNotFoundError" in capsys.readouterr().err


def _fake_installer(monkeypatch: pytest.MonkeyPatch, script: str, apt: bool = False) -> None:
    command = [sys.executable, "-c", script]
    monkeypatch.setattr(install_browser, "install_command", lambda *_a: command)
    monkeypatch.setattr(install_browser, "missing_packages", lambda: ["chromium"])
    apt_steps = [[sys.executable, "-c", "print('pmstatus:chromium:50.0:Installing')"]]
    monkeypatch.setattr(install_browser, "apt_commands", lambda _p: apt_steps if apt else None)


PLAYWRIGHT_OUTPUT = (
    "print('Downloading Chromium 140.0 from https://cdn.example/x.zip');"
    "[print(f'|{chr(9632) * n}   |  {n * 10}% of 167.3 MiB') for n in (1, 5, 10)]"
)


@pytest.mark.anyio
async def test_auto_install_reports_the_installers_progress(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _fake_installer(monkeypatch, PLAYWRIGHT_OUTPUT)
    phases: list[str] = []
    assert await install_browser.auto_install_chromium(phases.append) is True
    assert phases == [
        "installing Chromium",
        "downloading Chromium 10%",
        "downloading Chromium 50%",
        "downloading Chromium 100%",
    ]
    out, err = capsys.readouterr()
    assert out == ""  # stdout belongs to MCP
    lines = err.splitlines()
    assert "installing" in lines[0] and lines[-1] == "browsermesh: Chromium installed"
    assert any(line.startswith("Downloading Chromium") for line in lines)  # the rest: stderr


@pytest.mark.anyio
async def test_auto_install_falls_back_to_apt_with_its_progress(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _fake_installer(monkeypatch, "raise SystemExit(1)", apt=True)
    phases: list[str] = []
    assert await install_browser.auto_install_chromium(phases.append) is True
    assert phases[-1] == "installing Chromium 50%"


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("script", "reason"),
    [("raise SystemExit(1)", "exit status 1"), ("import os; os.kill(os.getpid(), 9)", "137")],
)
async def test_auto_install_failure(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], script: str, reason: str
) -> None:
    _fake_installer(monkeypatch, script)
    assert await install_browser.auto_install_chromium(lambda _m: None) is False
    out, err = capsys.readouterr()
    assert out == ""
    last = err.splitlines()[-1]
    assert reason in last and "Run: browsermesh --install-browser" in last


@pytest.mark.anyio
async def test_auto_install_cannot_start(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(install_browser, "install_command", lambda *_a: ["/nonexistent/x"])
    monkeypatch.setattr(install_browser, "apt_commands", lambda _p: None)
    assert await install_browser.auto_install_chromium(lambda _m: None) is False
    assert "could not run the installer 'x'" in capsys.readouterr().err


def test_progress_lines() -> None:
    line = install_browser.progress_line
    assert line("|■■■■      |  40% of 167.3 MiB") == "downloading Chromium 40%"
    assert line("dlstatus:3:42.5:Retrieving file 3 of 9") == "downloading Chromium 42%"
    assert line("pmstatus:chromium:99.9:Setting up chromium") == "installing Chromium 100%"
    assert line("pmstatus:chromium:x:odd") is None
    assert line("Downloading Chromium from https://cdn/x (100% sure)") is None
    assert line("") is None


def test_install_command_installs_only_what_is_missing() -> None:
    base = [sys.executable, "-m", "playwright", "install"]
    assert install_browser.install_command() == [*base, "chromium"]
    both = ["chromium", "chromium-headless-shell"]
    assert install_browser.install_command(both) == [*base, "chromium"]
    only_shell = ["chromium-headless-shell"]
    assert install_browser.install_command(only_shell) == [*base, "--only-shell", "chromium"]
    assert install_browser.install_command(["chromium"]) == [*base, "--no-shell", "chromium"]


def test_apt_commands_need_root_and_apt(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("browsermesh.install_browser.shutil.which", lambda _name: "/x/apt-get")
    monkeypatch.setattr("browsermesh.engine.backends.running_as_root", lambda: True)
    assert install_browser.apt_commands(["chromium-headless-shell"]) == [
        ["/x/apt-get", "update", "-qq"],
        ["/x/apt-get", "install", "-y", "-qq", "-o", "APT::Status-Fd=1", "chromium-headless-shell"],
    ]
    assert install_browser.apt_commands([]) is None
    monkeypatch.setattr("browsermesh.engine.backends.running_as_root", lambda: False)
    assert install_browser.apt_commands(["chromium"]) is None


def test_ensure_browsers_does_nothing_when_both_are_found(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run = FakeRun(0)
    monkeypatch.setattr("browsermesh.install_browser.subprocess.run", run)
    monkeypatch.setattr("browsermesh.install_browser.missing_packages", lambda: [])
    assert install_browser.ensure_browsers() == 0
    assert run.calls == [] and capsys.readouterr().err == ""


def test_ensure_browsers_falls_back_to_apt(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = [["chromium-headless-shell"]]

    def fake_run(command: list[str], **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
        run_calls.append(command)
        if "playwright" in command:
            return subprocess.CompletedProcess(command, 1)  # the download is unavailable
        if "install" in command:
            missing[0] = []
        return subprocess.CompletedProcess(command, 0)

    run_calls: list[list[str]] = []
    monkeypatch.setattr("browsermesh.install_browser.subprocess.run", fake_run)
    monkeypatch.setattr("browsermesh.install_browser.missing_packages", lambda: missing[0])
    monkeypatch.setattr("browsermesh.install_browser.shutil.which", lambda _name: "apt-get")
    monkeypatch.setattr("browsermesh.engine.backends.running_as_root", lambda: True)
    assert install_browser.ensure_browsers() == 0
    assert run_calls == [
        [sys.executable, "-m", "playwright", "install", "--only-shell", "chromium"],
        ["apt-get", "update", "-qq"],
        ["apt-get", "install", "-y", "-qq", "-o", "APT::Status-Fd=1", "chromium-headless-shell"],
    ]
    assert "Debian's chromium-headless-shell" in capsys.readouterr().err


def test_ensure_browsers_warns_when_only_the_shell_stays_missing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("browsermesh.install_browser.subprocess.run", FakeRun(1))
    monkeypatch.setattr(
        "browsermesh.install_browser.missing_packages", lambda: ["chromium-headless-shell"]
    )
    monkeypatch.setattr("browsermesh.install_browser.apt_commands", lambda _packages: None)
    assert install_browser.ensure_browsers() == 0
    assert "no headless shell" in capsys.readouterr().err
    monkeypatch.setattr(
        "browsermesh.install_browser.missing_packages",
        lambda: ["chromium", "chromium-headless-shell"],
    )
    assert install_browser.ensure_browsers() == 1


# ------------------------------------------------------------------------------------------
# Real subprocesses (python -m browsermesh)
# ------------------------------------------------------------------------------------------


def run_module(
    args: list[str], extra_env: dict[str, str], cwd: Path
) -> subprocess.CompletedProcess[str]:
    child_env = {k: v for k, v in os.environ.items() if not k.startswith("BROWSERMESH_")}
    child_env.update(extra_env)
    return subprocess.run(
        [sys.executable, "-m", "browsermesh", *args],
        capture_output=True,
        text=True,
        env=child_env,
        cwd=cwd,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def test_python_m_browsermesh_version(tmp_path: Path) -> None:
    result = run_module(["--version"], {}, tmp_path)
    assert result.returncode == 0
    assert result.stdout == f"{__version__}\n"
    assert result.stderr == ""


def test_python_m_browsermesh_invalid_environment(tmp_path: Path) -> None:
    result = run_module([], {"BROWSERMESH_TIMEOUT_MS": "abc"}, tmp_path)
    assert result.returncode == 2
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    assert "BROWSERMESH_TIMEOUT_MS" in result.stderr
    assert "abc" not in result.stderr
