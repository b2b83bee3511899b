"""The Selenium Grid backend's variables (issue 22): the Grid URL, contexts per Grid browser,
the capabilities file and the header file.

- ``BROWSERMESH_SELENIUM_GRID`` / ``--selenium-grid``: the Grid's ``http(s)`` base URL (the
  router or hub, e.g. ``http://grid:4444`` or ``https://host/selenium``); credentials may ride in
  its userinfo (HTTP basic auth).
- ``BROWSERMESH_GRID_CONTEXTS_PER_BROWSER`` / ``--grid-contexts-per-browser``: 1..50 (default 1,
  one Grid browser session per BrowserMesh session).
- ``BROWSERMESH_GRID_CAPABILITIES`` / ``--grid-capabilities``: a JSON file holding the W3C
  ``alwaysMatch`` capabilities object (``browserName``, ``browserVersion``, ``platformName``,
  ``goog:chromeOptions`` with ``args``, ``se:*`` options ...).
- ``BROWSERMESH_GRID_HEADER_FILE`` / ``--grid-header-file``: ``Name: value`` lines sent with
  every request to the Grid (e.g. ``Authorization: Bearer ...``).

Problem messages never contain a value: the URL's userinfo and the header file's contents are
secrets. Standard library only.
"""

from __future__ import annotations

import json
import re
import stat
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

from browsermesh.config.hosts import is_endpoint_url
from browsermesh.config.reader import Reader, usable_text
from browsermesh.config.variables import (
    V_GRID_CAPABILITIES,
    V_GRID_CONTEXTS_PER_BROWSER,
    V_GRID_HEADER_FILE,
    V_SELENIUM_GRID,
    IntSpec,
)

__all__ = [
    "DEFAULT_GRID_CAPABILITIES",
    "GRID_BROWSER_NAMES",
    "GRID_CONTEXTS_SPEC",
    "RESERVED_CAPABILITY_PREFIX",
    "read_grid",
]

GRID_CONTEXTS_SPEC: Final = IntSpec(V_GRID_CONTEXTS_PER_BROWSER, "grid_contexts_per_browser", 1, 50)
GRID_BROWSER_NAMES: Final = frozenset({"chrome", "chromium", "MicrosoftEdge"})
"""Chromium-based browsers a Grid gives a CDP endpoint (`se:cdp`) for: Playwright drives
Chromium only over CDP."""
DEFAULT_GRID_CAPABILITIES: Final[dict[str, Any]] = {"browserName": "chrome"}
RESERVED_CAPABILITY_PREFIX: Final = "browsermesh:"
"""Capabilities BrowserMesh sets itself (the owner and request markers of each Grid request)."""

_FILE_MAX_BYTES: Final = 65_536
_HEADER_NAME_RE: Final = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$")
_HEADER_VALUE_MAX: Final = 8_192
# An HTTP field value as the Grid client sends it (RFC 9110 field-content without the obsolete
# obs-text, which httpx refuses to encode): visible ASCII, with spaces and tabs inside.
_HEADER_VALUE_RE: Final = re.compile(r"[\x21-\x7e](?:[\x20-\x7e\t]*[\x21-\x7e])?")
_MAX_HEADERS: Final = 32
_GRID_SCHEMES: Final = frozenset({"http", "https"})


def read_grid(reader: Reader) -> bool:
    """Read the Grid variables into ``reader.values``; True when a Grid URL is given (even if
    invalid), so the other backends' exclusivity and the browser path rules can apply."""
    raw = reader.get(V_SELENIUM_GRID)
    given = raw is not None
    if raw is not None:
        if _valid_grid_url(raw):
            reader.values["selenium_grid"] = raw
        else:
            reader.problem(V_SELENIUM_GRID, "must be an absolute http or https URL")
    contexts = reader.integer(GRID_CONTEXTS_SPEC)
    if contexts is not None:
        reader.values["grid_contexts_per_browser"] = contexts
    reader.parsed(V_GRID_CAPABILITIES, "grid_capabilities", _read_capabilities)
    reader.parsed(V_GRID_HEADER_FILE, "grid_headers", _read_headers)
    return given


def _valid_grid_url(value: str) -> bool:
    if not is_endpoint_url(value, _GRID_SCHEMES):
        return False
    parts = urlsplit(value)
    return not (parts.query or parts.fragment)  # the Grid's base URL: paths are appended to it


def _read_small_file(reader: Reader, raw: str) -> tuple[str | None, str | None]:
    """The UTF-8 text of a small regular file, or a problem message."""
    if not usable_text(raw):
        return None, "must name a readable file"
    path: Path = reader.path(raw)
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            return None, "must name a regular file"
        if info.st_size > _FILE_MAX_BYTES:
            return None, "is larger than 64 KiB"
        data = path.read_bytes()
    except OSError:
        return None, "cannot be read"
    try:
        return data.decode("utf-8-sig"), None
    except UnicodeDecodeError:
        return None, "is not valid UTF-8"


def _read_capabilities(reader: Reader, raw: str) -> tuple[str, str | None]:
    """The capabilities file as canonical JSON text (the frozen config keeps text), or a
    problem naming the rule broken."""
    text, problem = _read_small_file(reader, raw)
    if text is None:
        return "", problem
    try:
        value = json.loads(text)
    except ValueError:
        return "", "must hold a JSON object (W3C alwaysMatch capabilities)"
    problem = capabilities_problem(value)
    if problem is not None:
        return "", problem
    return json.dumps(value, sort_keys=True), None


def capabilities_problem(value: Any) -> str | None:
    """Why a capabilities object cannot be sent, or None."""
    if not isinstance(value, dict):
        return "must hold a JSON object (W3C alwaysMatch capabilities)"
    if any(not isinstance(k, str) or k.startswith(RESERVED_CAPABILITY_PREFIX) for k in value):
        return f"must not set {RESERVED_CAPABILITY_PREFIX}* capabilities (BrowserMesh sets them)"
    name = value.get("browserName", DEFAULT_GRID_CAPABILITIES["browserName"])
    if name not in GRID_BROWSER_NAMES:
        return "browserName must be chrome, chromium or MicrosoftEdge (Chromium over CDP)"
    for key in ("browserVersion", "platformName"):
        if key in value and not isinstance(value[key], str):
            return f"{key} must be a string"
    options = value.get("goog:chromeOptions")
    if options is not None:
        if not isinstance(options, dict):
            return "goog:chromeOptions must be an object"
        args = options.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            return "goog:chromeOptions.args must be a list of strings"
    return None


def _read_headers(reader: Reader, raw: str) -> tuple[tuple[tuple[str, str], ...], str | None]:
    """``Name: value`` lines (blank lines and ``#`` comments skipped), or a problem naming the
    line number only (the values are credentials)."""
    text, problem = _read_small_file(reader, raw)
    if text is None:
        return (), problem
    headers: list[tuple[str, str]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        name, colon, value = stripped.partition(":")
        name, value = name.strip(), value.strip()
        if not colon or not _HEADER_NAME_RE.match(name):
            return (), f"line {number}: expected Name: value"
        if not value or len(value) > _HEADER_VALUE_MAX or not _HEADER_VALUE_RE.fullmatch(value):
            return (), (
                f"line {number}: the value must be 1 to 8192 visible ASCII characters or "
                "spaces (an HTTP field value)"
            )
        headers.append((name, value))
    if not headers:
        return (), "contains no Name: value lines"
    if len(headers) > _MAX_HEADERS:
        return (), f"has more than {_MAX_HEADERS} headers"
    return tuple(headers), None
