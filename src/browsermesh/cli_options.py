"""The command line's options, help text and parser (reference §19.2), beside cli.py.

:func:`parse_invocation` turns the arguments into one :class:`Invocation`: help and version
first, then ``demo``, ``--install-browser``, ``--doctor`` or serving, whose configuration comes
from :func:`browsermesh.config.build_config` with the options as overrides of their
``BROWSERMESH_*`` variables. Standard library only, like the configuration: ``--help`` and
``--version`` go through here and must stay fast.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, TypeAlias

from browsermesh._version import __version__
from browsermesh.cli_flags import OPTIONS, OPTIONS_BY_FLAG
from browsermesh.config.environment import build_config
from browsermesh.config.settings import Config
from browsermesh.config.variables import (
    V_TRANSPORT,
)

__all__ = [
    "DemoInvocation",
    "DoctorInvocation",
    "HelpInvocation",
    "InstallBrowserInvocation",
    "Invocation",
    "ServeInvocation",
    "UsageError",
    "VersionInvocation",
    "ViewLinkInvocation",
    "help_text",
    "parse_invocation",
    "usage_summary",
]


class UsageError(Exception):
    """An unknown or misused command-line option (exit 2). ``str(exc)`` is the reason."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class HelpInvocation:
    """``browsermesh --help`` / ``-h``."""


@dataclass(frozen=True, slots=True)
class VersionInvocation:
    """``browsermesh --version`` / ``-v``."""


@dataclass(frozen=True, slots=True)
class InstallBrowserInvocation:
    """``browsermesh --install-browser`` (other options are ignored)."""


@dataclass(frozen=True, slots=True)
class DoctorInvocation:
    """``browsermesh --doctor [--json] [options]``."""

    config: Config
    as_json: bool = False


@dataclass(frozen=True, slots=True)
class DemoInvocation:
    """``browsermesh demo [--headed]``."""

    headed: bool = False


@dataclass(frozen=True, slots=True)
class ServeInvocation:
    """``browsermesh [options]``: serve MCP."""

    config: Config


@dataclass(frozen=True, slots=True)
class ViewLinkInvocation:
    """``browsermesh view-link [--principal <name>] [options]``: a live view link of a running
    HTTP server (issue 21); ``config`` names the server and the token file."""

    config: Config
    principal: str | None = None


Invocation: TypeAlias = (
    HelpInvocation
    | VersionInvocation
    | InstallBrowserInvocation
    | DoctorInvocation
    | DemoInvocation
    | ServeInvocation
    | ViewLinkInvocation
)


_HELP_FLAGS: Final = frozenset({"--help", "-h"})
_VERSION_FLAGS: Final = frozenset({"--version", "-v"})
_HELP_COLUMN: Final = 32
_POSITIONAL_ECHO_RE: Final = re.compile(r"^[A-Za-z0-9_.-]{1,32}$")

_USAGE_FORMS: Final[tuple[tuple[str, str], ...]] = (
    ("browsermesh [options]", "Serve MCP over stdio (or HTTP with --transport http)"),
    ("browsermesh demo [--headed]", "Run the end-to-end demo"),
    ("browsermesh view-link [--principal <name>]", "Print a one-time link to the live view"),
    ("browsermesh --install-browser", "Install Playwright's Chromium"),
    ("browsermesh --doctor [--json] [options]", "Diagnose the installation"),
    ("browsermesh --help|-h", "Show this help"),
    ("browsermesh --version|-v", "Print the version"),
)


def usage_summary() -> str:
    """The ``Usage:`` block listing the invocation forms (§19.2), without a trailing newline."""
    width = max(len(form) for form, _ in _USAGE_FORMS) + 2
    lines = ["Usage:"]
    lines.extend(f"  {form.ljust(width)}{summary}" for form, summary in _USAGE_FORMS)
    return "\n".join(lines)


def help_text() -> str:
    """The full ``--help`` text (§19.2), ending with a newline."""
    lines = [
        f"BrowserMesh {__version__} - many isolated Chromium browser sessions for AI agents (MCP)",
        "",
        usage_summary(),
        "",
        "Options:",
    ]
    for option in OPTIONS:
        label = option.flag if option.alias is None else f"{option.flag}, {option.alias}"
        if option.placeholder is not None:
            label = f"{label} {option.placeholder}"
        if len(label) < _HELP_COLUMN:
            lines.append(f"  {label.ljust(_HELP_COLUMN)}{option.summary}")
        else:
            lines.append(f"  {label}")
            lines.append(f"  {' ' * _HELP_COLUMN}{option.summary}")
    lines += [
        "",
        "Every configuration option maps to a BROWSERMESH_* environment variable (for example",
        "--timeout -> BROWSERMESH_TIMEOUT_MS, --no-persistence -> BROWSERMESH_PERSISTENCE=false,",
        "--headless/--headed -> BROWSERMESH_HEADLESS); the command line takes precedence over",
        "the environment. --host, --port, --path, --auth-token-file, --allowed-hosts,",
        "--allowed-origins, --session-idle-ms, --max-mcp-sessions-per-principal and --no-view",
        "need --transport http. Output budgets (observability, screenshots, visible text, saved",
        "states, artifacts), the element-ref lifetime (BROWSERMESH_REF_TTL_MS) and the",
        "actionability settle time (BROWSERMESH_ACTIONABILITY_SETTLE_MS) and the page settle",
        "time (BROWSERMESH_SETTLE_MS) are set through",
        "BROWSERMESH_* variables only.",
    ]
    return "\n".join(lines) + "\n"


@dataclass(slots=True)
class _Scan:
    """The command line read once, left to right."""

    given: list[str]  # option flags in command-line order
    overrides: dict[str, tuple[str, str]]  # variable -> (raw value, flag)
    endpoints: list[str] | None  # --browser-endpoint values (repeatable)
    positionals: list[str]
    principal: str | None = None  # --principal (view-link)


def _scan(tokens: Sequence[str]) -> _Scan:
    scan = _Scan([], {}, None, [])
    index = 0
    while index < len(tokens):
        token = tokens[index]
        index += 1
        if not token.startswith("-") or token == "-":
            scan.positionals.append(token)
            continue
        name, has_value, inline = token.partition("=")
        option = OPTIONS_BY_FLAG.get(name) if name.startswith("--") else None
        if option is None:
            raise UsageError(f"unknown option {name}")
        if option.placeholder is None:
            if has_value:
                raise UsageError(f"option {name} does not take a value")
            value = option.toggle_value
        elif has_value:
            value = inline
        else:
            if index >= len(tokens) or tokens[index].startswith("--"):
                raise UsageError(f"option {name} requires a value")
            value = tokens[index]
            index += 1
        scan.given.append(name)
        if name == "--principal":
            scan.principal = value
        if option.variable is None or value is None:
            continue
        if option.repeatable:
            scan.endpoints = [*(scan.endpoints or []), value]
        else:
            scan.overrides[option.variable] = (value, name)
    return scan


def _demo(scan: _Scan) -> DemoInvocation:
    positionals = scan.positionals
    if positionals[0] != "demo" or len(positionals) > 1:
        extra = positionals[1] if positionals[0] == "demo" else positionals[0]
        shown = f" '{extra}'" if _POSITIONAL_ECHO_RE.match(extra) else ""
        raise UsageError(f"unexpected argument{shown}")
    others = [flag for flag in scan.given if flag != "--headed"]
    if others:
        raise UsageError(f"demo accepts only --headed, not {others[0]}")
    return DemoInvocation(headed="--headed" in scan.given)


_VIEW_LINK_FLAGS: Final = frozenset({"--host", "--port", "--auth-token-file", "--principal"})


def _view_link(scan: _Scan, environ: Mapping[str, str]) -> ViewLinkInvocation:
    """``view-link``: the running server's address and token file, read as serving reads them."""
    if len(scan.positionals) > 1:
        raise UsageError("view-link takes no arguments")
    others = [flag for flag in scan.given if flag not in _VIEW_LINK_FLAGS]
    if others:
        raise UsageError(
            f"view-link accepts --host, --port, --auth-token-file and --principal, not {others[0]}"
        )
    overrides = {**scan.overrides, V_TRANSPORT: ("http", "view-link")}
    return ViewLinkInvocation(build_config(environ, overrides, None), scan.principal)


def _check_http_flags(scan: _Scan, environ: Mapping[str, str]) -> None:
    http_flags = [flag for flag in scan.given if OPTIONS_BY_FLAG[flag].http_only]
    if not http_flags:
        return
    transport = scan.overrides[V_TRANSPORT][0] if V_TRANSPORT in scan.overrides else None
    if transport is None:
        transport = environ.get(V_TRANSPORT, "stdio")
    # An invalid transport value is reported as a configuration problem instead.
    if transport == "stdio":
        raise UsageError(f"option {http_flags[0]} requires --transport http")


def parse_invocation(argv: Sequence[str], environ: Mapping[str, str]) -> Invocation:
    """Parse the command line (without the program name) against ``environ`` (§19.2).

    Raises :class:`UsageError` for misused options and :class:`ConfigError` for invalid
    configuration; both mean exit 2.
    """
    tokens = list(argv)
    if any(token in _HELP_FLAGS for token in tokens):
        return HelpInvocation()
    if any(token in _VERSION_FLAGS for token in tokens):
        return VersionInvocation()

    scan = _scan(tokens)
    if scan.positionals and scan.positionals[0] == "view-link":
        return _view_link(scan, environ)
    if "--principal" in scan.given:
        raise UsageError("--principal requires view-link")
    if scan.positionals:
        return _demo(scan)
    given = scan.given
    if "--install-browser" in given and "--doctor" in given:
        raise UsageError("--install-browser cannot be combined with --doctor")
    if "--json" in given and "--doctor" not in given:
        raise UsageError("--json requires --doctor")
    if "--install-browser" in given:
        return InstallBrowserInvocation()
    _check_http_flags(scan, environ)

    endpoints = scan.endpoints
    cli_endpoints = None if endpoints is None else (tuple(endpoints), "--browser-endpoint")
    config = build_config(environ, scan.overrides, cli_endpoints)
    if "--doctor" in given:
        return DoctorInvocation(config=config, as_json="--json" in given)
    return ServeInvocation(config=config)
