"""The ``browsermesh`` command line (reference §19.2, §19.3).

``main`` parses the arguments, prints help, version and usage/configuration errors itself,
and dispatches every other invocation to its module with a lazy import, so ``--help`` and
``--version`` stay fast and never load MCP or Playwright. It never lets a traceback escape.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TextIO

from browsermesh.cli_options import (
    DemoInvocation,
    DoctorInvocation,
    HelpInvocation,
    InstallBrowserInvocation,
    Invocation,
    ServeInvocation,
    UsageError,
    VersionInvocation,
    ViewLinkInvocation,
    help_text,
    parse_invocation,
    usage_summary,
)
from browsermesh.config import ConfigError, process_environ

__all__ = ["EXIT_FAILURE", "EXIT_OK", "EXIT_USAGE", "console_main", "main"]

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
_HELP_POINTER = "Run 'browsermesh --help' for all options."


def _write(stream: TextIO, text: str) -> None:
    try:
        stream.write(text)
        stream.flush()
    except (BrokenPipeError, ValueError, OSError):
        pass


def _usage_error_text(error: UsageError) -> str:
    return f"browsermesh: {error}\n\n{usage_summary()}\n\n{_HELP_POINTER}\n"


def _config_error_text(error: ConfigError) -> str:
    lines = ["browsermesh: configuration is invalid"]
    lines.extend(f"  {variable}: {message}" for variable, message in error.problems)
    lines.append("Run 'browsermesh --help' for the options and their BROWSERMESH_* variables.")
    return "\n".join(lines) + "\n"


def _dispatch(invocation: Invocation) -> int:
    if isinstance(invocation, HelpInvocation):
        _write(sys.stdout, help_text())
        return EXIT_OK
    if isinstance(invocation, VersionInvocation):
        from browsermesh._version import __version__

        _write(sys.stdout, f"{__version__}\n")
        return EXIT_OK
    if isinstance(invocation, InstallBrowserInvocation):
        from browsermesh.install_browser import install_browser

        return install_browser()
    if isinstance(invocation, DoctorInvocation):
        from browsermesh.doctor import run_doctor

        return run_doctor(invocation.config, invocation.as_json)
    if isinstance(invocation, DemoInvocation):
        from browsermesh.demo.scenario import run_demo

        return run_demo(invocation.headed)
    if isinstance(invocation, ViewLinkInvocation):
        from browsermesh.view_link import print_view_link

        return print_view_link(invocation.config, invocation.principal)
    if isinstance(invocation, ServeInvocation):
        from browsermesh.serve import serve

        return serve(invocation.config)
    raise AssertionError(f"unhandled invocation {type(invocation).__name__}")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line and return the process exit code (§19.3).

    ``argv`` excludes the program name; ``None`` means ``sys.argv[1:]``.
    """
    arguments = sys.argv[1:] if argv is None else list(argv)
    try:
        invocation = parse_invocation(arguments, process_environ())
    except UsageError as error:
        _write(sys.stderr, _usage_error_text(error))
        return EXIT_USAGE
    except ConfigError as error:
        _write(sys.stderr, _config_error_text(error))
        return EXIT_USAGE
    try:
        return _dispatch(invocation)
    except KeyboardInterrupt:
        _write(sys.stderr, "browsermesh: interrupted\n")
        return 130
    except Exception as error:  # last resort: one line, never a traceback
        _write(sys.stderr, f"browsermesh: fatal error ({type(error).__name__})\n")
        return EXIT_FAILURE


def console_main() -> None:
    """Console-script entry point: exits the process with :func:`main`'s status."""
    raise SystemExit(main())
