"""Where the local Chromium is (reference §14.1 steps 1-3): the configured path, Playwright's
cached build, or a system browser; a headless shell is preferred for headless sessions.

Used when a local session launches, by ``--install-browser`` (to tell what is missing) and by
the doctor. Lookups read only the ``environ`` mapping they are given and the file system;
Playwright is located with ``find_spec``, never imported.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path
from typing import Final, Literal, TypeAlias

from browsermesh.config.paths import expand_path, is_executable_file
from browsermesh.config.settings import Config

__all__ = [
    "BINARY_KINDS",
    "BinaryKind",
    "ChromiumLocation",
    "binary_kind",
    "find_chromium",
    "locate_chromium",
    "locate_full_chromium",
    "locate_headless_shell",
    "system_chromium_candidates",
]

BinaryKind: TypeAlias = Literal["headless-shell", "chromium"]
"""Which Chromium binary a local browser runs: the headless shell (the old headless mode, a
separate build that cannot open windows and does less work per page) or the full browser."""
BINARY_KINDS: Final[tuple[BinaryKind, ...]] = ("headless-shell", "chromium")


@dataclass(frozen=True, slots=True)
class ChromiumLocation:
    """Where a Chromium executable was found.

    ``source`` is ``configured`` (BROWSERMESH_BROWSER_PATH), ``playwright`` (a build in
    Playwright's browser cache) or ``system``; ``kind`` says whether it is a headless shell.
    """

    path: str
    source: Literal["configured", "playwright", "system"]
    kind: BinaryKind = "chromium"


_SYSTEM_NAMES: Final = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
_SYSTEM_SHELL_NAMES: Final = ("chromium-headless-shell", "chrome-headless-shell")
# Debian's /usr/bin/chromium-headless-shell is a shell script that runs
# /usr/lib/chromium/chromium-headless-shell as a child (no exec): launching the real binary
# saves a process per browser and keeps Playwright's pid the browser's own.
_DEBIAN_SHELL: Final = ("lib", "chromium", "chromium-headless-shell")

# Executable paths inside a Playwright ``chromium-<revision>`` directory, per platform family,
# newest layouts first (Chrome for Testing builds, then the older Chromium builds).
_PLAYWRIGHT_LAYOUTS: Final[dict[str, tuple[str, ...]]] = {
    "linux": ("chrome-linux64/chrome", "chrome-linux-arm64/chrome", "chrome-linux*/chrome"),
    "darwin": (
        "chrome-mac-*/Google Chrome for Testing.app/Contents/MacOS/Google Chrome for Testing",
        "chrome-mac*/Chromium.app/Contents/MacOS/Chromium",
    ),
    "win32": ("chrome-win64/chrome.exe", "chrome-win*/chrome.exe"),
}
# The same inside a ``chromium_headless_shell-<revision>`` directory (Playwright >= 1.49).
_PLAYWRIGHT_SHELL_LAYOUTS: Final[dict[str, tuple[str, ...]]] = {
    "linux": (
        "chrome-headless-shell-linux64/chrome-headless-shell",
        "chrome-headless-shell-linux-arm64/chrome-headless-shell",
        "chrome-headless-shell-linux*/chrome-headless-shell",
        "chrome-linux/headless_shell",
    ),
    "darwin": ("chrome-headless-shell-mac-*/chrome-headless-shell",),
    "win32": ("chrome-headless-shell-win64/chrome-headless-shell.exe",),
}
_PLAYWRIGHT_BUILDS: Final[dict[BinaryKind, tuple[str, dict[str, tuple[str, ...]]]]] = {
    "chromium": ("chromium", _PLAYWRIGHT_LAYOUTS),
    "headless-shell": ("chromium-headless-shell", _PLAYWRIGHT_SHELL_LAYOUTS),
}


def binary_kind(path: str) -> BinaryKind:
    """The kind of a configured executable, from its file name (``chrome-headless-shell``,
    ``chromium-headless-shell``, Playwright's older ``headless_shell``)."""
    name = os.path.basename(path).lower().replace("_", "-")
    return "headless-shell" if "headless-shell" in name else "chromium"


def _platform_family(platform: str) -> str:
    if platform.startswith("win"):
        return "win32"
    if platform == "darwin":
        return "darwin"
    return "linux"


def _playwright_package_dir() -> Path | None:
    try:
        spec = find_spec("playwright")  # locates the package without importing it
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _playwright_registry_dir(
    environ: Mapping[str, str], platform: str, package_dir: Path | None
) -> Path | None:
    configured = environ.get("PLAYWRIGHT_BROWSERS_PATH")
    if configured == "0":
        if package_dir is None:
            return None
        return package_dir / "driver" / "package" / ".local-browsers"
    if configured:
        return expand_path(configured, environ)
    family = _platform_family(platform)
    if family == "win32":
        base = environ.get("LOCALAPPDATA")
        if not base:
            home = environ.get("USERPROFILE")
            base = os.path.join(home, "AppData", "Local") if home else None
        return Path(base, "ms-playwright") if base else None
    home = environ.get("HOME") or os.path.expanduser("~")
    if family == "darwin":
        return Path(home, "Library", "Caches", "ms-playwright")
    cache = environ.get("XDG_CACHE_HOME") or os.path.join(home, ".cache")
    return Path(cache, "ms-playwright")


def _playwright_revision(package_dir: Path | None, name: str = "chromium") -> str | None:
    """The revision of build ``name`` the installed Playwright launches (its browsers.json)."""
    if package_dir is None:
        return None
    try:
        text = (package_dir / "driver" / "package" / "browsers.json").read_text("utf-8")
        for browser in json.loads(text)["browsers"]:
            if browser.get("name") == name:
                return str(browser["revision"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return None


def _revision_key(directory: str) -> tuple[int, str]:
    suffix = os.path.basename(directory).rpartition("-")[2]
    return (int(suffix) if suffix.isdigit() else -1, directory)


def _find_playwright_build(
    environ: Mapping[str, str], platform: str, kind: BinaryKind = "chromium"
) -> str | None:
    name, layouts = _PLAYWRIGHT_BUILDS[kind]
    package_dir = _playwright_package_dir()
    registry = _playwright_registry_dir(environ, platform, package_dir)
    if registry is None or not registry.is_dir():
        return None
    revision = _playwright_revision(package_dir, name)
    prefix = name.replace("-", "_")  # Playwright's directory names use underscores
    root = glob.escape(str(registry))
    if revision is not None:
        # The revision the installed Playwright launches; an older leftover does not count.
        directories = [os.path.join(str(registry), f"{prefix}-{revision}")]
    else:
        directories = sorted(glob.glob(os.path.join(root, f"{prefix}-*")), key=_revision_key)
        directories.reverse()
    for directory in directories:
        for layout in layouts[_platform_family(platform)]:
            pattern = os.path.join(glob.escape(directory), *layout.split("/"))
            for candidate in sorted(glob.glob(pattern)):
                if is_executable_file(candidate):
                    return candidate
    return None


def system_chromium_candidates(environ: Mapping[str, str], platform: str) -> list[str]:
    """Fixed well-known absolute locations checked on macOS and Windows (§14.1 step 3)."""
    family = _platform_family(platform)
    if family == "darwin":
        return [
            "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
            "/Applications/Chromium.app/Contents/MacOS/Chromium",
        ]
    if family == "win32":
        roots = [
            environ.get("PROGRAMFILES") or environ.get("ProgramFiles") or r"C:\Program Files",
            environ.get("PROGRAMFILES(X86)")
            or environ.get("ProgramFiles(x86)")
            or r"C:\Program Files (x86)",
            environ.get("LOCALAPPDATA") or environ.get("LocalAppData") or "",
        ]
        return [
            "\\".join((root.rstrip("\\/"), "Google", "Chrome", "Application", "chrome.exe"))
            for root in roots
            if root
        ]
    return []


def _find_system_chromium(environ: Mapping[str, str], platform: str) -> str | None:
    family = _platform_family(platform)
    if family == "linux":
        search_path = environ.get("PATH", os.defpath)
        for name in _SYSTEM_NAMES:
            found = shutil.which(name, path=search_path)
            if found is not None:
                return os.path.abspath(found)
        return None
    for candidate in system_chromium_candidates(environ, platform):
        if os.path.isfile(candidate) and (family == "win32" or os.access(candidate, os.X_OK)):
            return candidate
    return None


def _find_system_shell(environ: Mapping[str, str], platform: str) -> str | None:
    """A system headless shell on ``PATH`` (Linux; Debian's ``chromium-headless-shell``)."""
    if _platform_family(platform) != "linux":
        return None
    search_path = environ.get("PATH", os.defpath)
    for name in _SYSTEM_SHELL_NAMES:
        found = shutil.which(name, path=search_path)
        if found is None:
            continue
        found = os.path.abspath(found)
        prefix = os.path.dirname(os.path.dirname(found))
        real = os.path.join(prefix, *_DEBIAN_SHELL)
        return real if is_executable_file(real) else found
    return None


def locate_headless_shell(
    environ: Mapping[str, str], *, platform: str | None = None
) -> ChromiumLocation | None:
    """A headless shell: Playwright's cached build, then a system one; None when neither."""
    platform = sys.platform if platform is None else platform
    managed = _find_playwright_build(environ, platform, "headless-shell")
    if managed is not None:
        return ChromiumLocation(managed, "playwright", "headless-shell")
    system = _find_system_shell(environ, platform)
    if system is not None:
        return ChromiumLocation(system, "system", "headless-shell")
    return None


def locate_full_chromium(
    environ: Mapping[str, str], *, platform: str | None = None
) -> ChromiumLocation | None:
    """The full browser: Playwright's cached Chromium, then a system Chromium or Chrome."""
    platform = sys.platform if platform is None else platform
    managed = _find_playwright_build(environ, platform, "chromium")
    if managed is not None:
        return ChromiumLocation(managed, "playwright")
    system = _find_system_chromium(environ, platform)
    if system is not None:
        return ChromiumLocation(system, "system")
    return None


def locate_chromium(
    config: Config, environ: Mapping[str, str], *, platform: str | None = None
) -> ChromiumLocation | None:
    """Resolve the local Chromium executable (§14.1 steps 1-3); None when nothing is found.

    The configured path wins for both modes. Otherwise headless sessions get a headless shell
    when one is found (it does less work per page) and the full browser when not; headed
    sessions get the full browser only (a headless shell cannot open a window).
    """
    if config.browser_path is not None:
        return ChromiumLocation(config.browser_path, "configured", binary_kind(config.browser_path))
    if config.headless:
        shell = locate_headless_shell(environ, platform=platform)
        if shell is not None:
            return shell
    return locate_full_chromium(environ, platform=platform)


def find_chromium(
    config: Config, environ: Mapping[str, str], *, platform: str | None = None
) -> str | None:
    """The path of the local Chromium executable (§14.1 steps 1-3), or None."""
    location = locate_chromium(config, environ, platform=platform)
    return None if location is None else location.path
