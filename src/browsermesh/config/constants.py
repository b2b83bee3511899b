"""Names, defaults and bounds of the configuration (reference §19.1), standard library only.

Every other module of the package imports its literals from here, so a default or a bound is
written once. The per-variable integer bounds are in :mod:`browsermesh.config.variables`.
"""

from __future__ import annotations

from typing import Final, Literal, TypeAlias

__all__ = [
    "ALL_PROFILES",
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
    "LogLevel",
    "Profile",
    "Transport",
]

Profile: TypeAlias = Literal[
    "core", "observability", "persistence", "files", "eval", "testing", "vision", "webmcp"
]
LogLevel: TypeAlias = Literal["debug", "info", "warn", "error", "silent"]
Transport: TypeAlias = Literal["stdio", "http"]
Backend: TypeAlias = Literal["local", "cdp", "browser-server", "selenium-grid"]

ALL_PROFILES: Final[tuple[Profile, ...]] = (
    "core",
    "observability",
    "persistence",
    "files",
    "eval",
    "testing",
    "vision",
    "webmcp",
)
DEFAULT_PROFILES: Final[tuple[Profile, ...]] = ("core", "observability", "persistence", "files")
LOG_LEVELS: Final[tuple[LogLevel, ...]] = ("debug", "info", "warn", "error", "silent")
TRANSPORTS: Final[tuple[Transport, ...]] = ("stdio", "http")

ENV_PREFIX: Final = "BROWSERMESH_"

DEFAULT_HTTP_HOST: Final = "127.0.0.1"
DEFAULT_HTTP_PORT: Final = 7331
DEFAULT_HTTP_PATH: Final = "/mcp"
DEFAULT_DATA_DIR: Final = "~/.browsermesh"

MAX_BROWSER_ENDPOINTS: Final = 16
TOKEN_FILE_MAX_BYTES: Final = 1024 * 1024
