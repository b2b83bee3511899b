"""`contextSettings.initScripts` (issue 36 item 4): caller JavaScript that runs in every
document of a session (every frame, popups included) before the document's own scripts
(Playwright `BrowserContext.add_init_script`, added when the context is made, before its first
page).

Rules (documented decisions: docs/decisions.md, "Issue 36"):

- **bounds**: 1..10 scripts (`[]` is refused: omit the field for none), each 1..65,536
  characters (code points; newlines and tabs allowed, lone surrogates refused), 262,144 in
  all; returned as given, in order (the order they run in). A refusal names the script by
  index (`contextSettings.initScripts[2]`), never its text.
- **profile**: the scripts are arbitrary code, as `browser_evaluate`'s expressions are, so they
  are accepted only while the server publishes the `eval` profile. The parser sees no
  configuration; `runtime.lifecycle.session_args`, the one entry of every creation, batch and
  fork, checks it (:func:`check_eval_profile`).
- **view**: a session view (`model.settings.settings_view`) shows their count
  (`"initScripts": 2`), never their text (it may be long, or hold what the caller would not
  echo); the record keeps the scripts for the engine and the export. A count copied back into
  `contextSettings` is refused (not an array).
- **forks and restores** take their own `contextSettings`, as for every setting (reference §12):
  a fork runs the scripts its own call gives, not its source's.

Pure rules: no Playwright, no MCP, no I/O.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, Final, NoReturn

from browsermesh.errors import Bound, invalid_argument
from browsermesh.model.text import SURROGATE_RE

__all__ = [
    "INIT_SCRIPTS",
    "MAX_INIT_SCRIPTS",
    "MAX_INIT_SCRIPTS_TOTAL_CHARS",
    "MAX_INIT_SCRIPT_CHARS",
    "check_eval_profile",
    "init_scripts",
    "normalize_init_scripts",
]

INIT_SCRIPTS: Final = "initScripts"
"""The setting's wire name (`contextSettings.initScripts`)."""
MAX_INIT_SCRIPTS: Final = 10
MAX_INIT_SCRIPT_CHARS: Final = 65_536
MAX_INIT_SCRIPTS_TOTAL_CHARS: Final = 262_144
_PROFILE_RULE: Final = (
    "only when the server publishes the eval profile (it runs arbitrary JavaScript)"
)


def _fail(field: str, rule: str, bound: Bound | None = None) -> NoReturn:
    raise invalid_argument(field, rule, bound=bound)


def _bound(field: str, op: Any, number: int) -> Bound:
    """The bound clause under the field's short name (`initScripts[2] <= 65536`)."""
    return Bound(field.removeprefix("contextSettings."), op, number)


def normalize_init_scripts(value: object, field: str) -> list[str]:
    """The scripts at `field` (`contextSettings.initScripts`), checked and returned in order;
    a violation is `INVALID_ARGUMENT` naming the field (the script by index)."""
    if not isinstance(value, list | tuple):
        _fail(field, "array")
    if not value:
        _fail(field, "at least 1 entry (omit the field for none)", _bound(field, ">=", 1))
    if len(value) > MAX_INIT_SCRIPTS:
        most = MAX_INIT_SCRIPTS
        _fail(field, f"at most {most} entries", _bound(field, "<=", most))
    out: list[str] = []
    for index, script in enumerate(value):
        at = f"{field}[{index}]"
        if not isinstance(script, str):
            _fail(at, "string")
        if script == "":
            _fail(at, "at least 1 character", _bound(at, ">=", 1))
        if len(script) > MAX_INIT_SCRIPT_CHARS:
            most = MAX_INIT_SCRIPT_CHARS
            _fail(at, f"at most {most} characters", _bound(at, "<=", most))
        if SURROGATE_RE.search(script):
            _fail(at, "valid Unicode (no lone surrogates)")
        out.append(script)
    if sum(len(script) for script in out) > MAX_INIT_SCRIPTS_TOTAL_CHARS:
        most = MAX_INIT_SCRIPTS_TOTAL_CHARS
        _fail(field, f"at most {most} characters in all", _bound(field, "<=", most))
    return out


def check_eval_profile(normalized: Mapping[str, Any], tools: Collection[str]) -> None:
    """`INVALID_ARGUMENT` on `contextSettings.initScripts` when normalized settings carry
    scripts and `tools` (the published profiles) lack `eval`."""
    if INIT_SCRIPTS in normalized and "eval" not in tools:
        _fail(f"contextSettings.{INIT_SCRIPTS}", _PROFILE_RULE)


def init_scripts(normalized: Mapping[str, Any]) -> list[str]:
    """The scripts to add to a new context, in order, from normalized settings (`[]` without
    the setting)."""
    return list(normalized.get(INIT_SCRIPTS) or ())
