"""Configuration: the frozen :class:`Config`, its loading from the environment, the host parser
and the Chromium lookup (reference §19, §18.2-18.6, §14.1). The only reader of ``os.environ``.

The package is split by job; this module only re-exports its public names, so
``from browsermesh.config import X`` keeps working for every name it ever offered.

Module map:

- ``constants``: literals, defaults and bounds (profiles, log levels, transports, HTTP defaults);
- ``variables``: the ``BROWSERMESH_*`` names and the bounds of the integer and boolean ones;
- ``settings``: :class:`Config` and :func:`default_config` (its field defaults are the defaults);
- ``environment``: the one reader of the environment and the validating builder
  (:func:`load_config`, :class:`ConfigError`);
- ``reader``: reading raw values and collecting problems;
- ``http_options``: the transport and HTTP listener variables and the rules that tie them;
- ``grid``: the Selenium Grid variables (URL, contexts per browser, capabilities, headers);
- ``fleet``: the fleet directory's URL (never shown whole) and the replica id (issue 37);
- ``hosts``: the one host/authority/origin parser (shared with the HTTP transport) and the
  default allowlists;
- ``tokens``: the bearer-token file;
- ``chromium``: where the local Chromium (or its headless shell) is;
- ``paths``: file-system helpers shared by the environment reader and the Chromium lookup.

The command-line parser and help text live in :mod:`browsermesh.cli_options`, beside the CLI;
their names are still importable from here, loaded on first use (that module builds on this
package, so importing it here eagerly would be circular).

Standard library only: ``browsermesh --version`` and ``--help`` import this package, and
startup time matters.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from browsermesh.config.chromium import (
    BINARY_KINDS,
    BinaryKind,
    ChromiumLocation,
    binary_kind,
    find_chromium,
    locate_chromium,
    locate_full_chromium,
    locate_headless_shell,
    system_chromium_candidates,
)
from browsermesh.config.constants import (
    ALL_PROFILES,
    DEFAULT_DATA_DIR,
    DEFAULT_HTTP_HOST,
    DEFAULT_HTTP_PATH,
    DEFAULT_HTTP_PORT,
    DEFAULT_PROFILES,
    ENV_PREFIX,
    LOG_LEVELS,
    MAX_BROWSER_ENDPOINTS,
    TOKEN_FILE_MAX_BYTES,
    TRANSPORTS,
    Backend,
    LogLevel,
    Profile,
    Transport,
)
from browsermesh.config.environment import (
    build_config,
    config_from_environment,
    load_config,
    process_environ,
)
from browsermesh.config.hosts import (
    derive_allowed_hosts,
    derive_allowed_origins,
    is_loopback_host,
    is_wildcard_host,
)
from browsermesh.config.reader import ConfigError
from browsermesh.config.settings import Config, default_config
from browsermesh.config.tokens import parse_auth_token_file

if TYPE_CHECKING:
    from browsermesh.cli_options import (
        DemoInvocation,
        DoctorInvocation,
        HelpInvocation,
        InstallBrowserInvocation,
        Invocation,
        ServeInvocation,
        UsageError,
        VersionInvocation,
        help_text,
        parse_invocation,
        usage_summary,
    )

__all__ = [
    "ALL_PROFILES",
    "BINARY_KINDS",
    "DEFAULT_DATA_DIR",
    "DEFAULT_HTTP_HOST",
    "DEFAULT_HTTP_PATH",
    "DEFAULT_HTTP_PORT",
    "DEFAULT_PROFILES",
    "ENV_PREFIX",
    "LOG_LEVELS",
    "MAX_BROWSER_ENDPOINTS",
    "TOKEN_FILE_MAX_BYTES",
    "TRANSPORTS",
    "Backend",
    "BinaryKind",
    "ChromiumLocation",
    "Config",
    "ConfigError",
    "DemoInvocation",
    "DoctorInvocation",
    "HelpInvocation",
    "InstallBrowserInvocation",
    "Invocation",
    "LogLevel",
    "Profile",
    "ServeInvocation",
    "Transport",
    "UsageError",
    "VersionInvocation",
    "binary_kind",
    "build_config",
    "config_from_environment",
    "default_config",
    "derive_allowed_hosts",
    "derive_allowed_origins",
    "find_chromium",
    "help_text",
    "is_loopback_host",
    "is_wildcard_host",
    "load_config",
    "locate_chromium",
    "locate_full_chromium",
    "locate_headless_shell",
    "parse_auth_token_file",
    "parse_invocation",
    "process_environ",
    "system_chromium_candidates",
    "usage_summary",
]


def __getattr__(name: str) -> object:
    """The command-line names, from :mod:`browsermesh.cli_options` on first use."""
    if not name.startswith("__"):  # import-machinery probes never load the CLI module
        from browsermesh import cli_options  # its __all__ is the one list of these names

        if name in cli_options.__all__:
            return getattr(cli_options, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
