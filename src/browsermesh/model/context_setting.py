"""What one context setting is to each layer (reference §12, issue 32): the entry type of
`model.settings.CONTEXT_SETTINGS`, the catalogue of `browser_session_create`'s
`contextSettings`.

A leaf module (it imports nothing of BrowserMesh), so that the catalogue's readers can name its
types without the parsers: normalization (`model.settings.normalize_context_settings`) calls
each entry's parser, the engine (`engine.playwright_engine.context_kwargs`) dispatches on its
`rule`, the test export (`model.test_export`) on its `export` form, both with `match` +
`typing.assert_never`, so a rule or form one of them forgot is a mypy error.
tests/unit/test_context_settings_catalogue.py checks that every entry carries what each layer
needs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

__all__ = ["ContextRule", "ContextSetting", "ExportForm", "Parser"]

ContextRule: TypeAlias = Literal["keyword", "descriptor", "grant", "route", "policy", "init script"]
"""How the engine applies a setting to a new context: `keyword` passes the value to
`new_context` under the entry's keyword; `descriptor` merges the named device's descriptor under
the explicit settings (model/devices.py), and its screen, which has no setting of its own, goes
to `screen`; `grant` grants the permissions once the context exists; `route` is the context's
request route (engine/policy.py); `policy` becomes `new_context` options through
`engine.policy.network_kwargs` (service workers, offline, headers, proxy); `init script` adds
each script to the context (`add_init_script`) once it exists, before its first page."""

ExportForm: TypeAlias = Literal[
    "keyword", "device", "permissions", "network", "init scripts", "not reproduced"
]
"""How the test export reproduces a setting: `keyword` (a `new_context` argument under the
entry's keyword), `device` (the arguments spread over `playwright.devices[name]`),
`permissions` (`grant_permissions` per origin), `network` (service workers, offline and headers
read as secrets; the origin lists are not reproduced), `init scripts` (`add_init_script` per
script right after the context is made), `not reproduced` (named in a comment)."""

Parser: TypeAlias = Callable[[object, str], Any]
"""A setting's parser: the raw value and its path under `contextSettings` (the setting's name)
→ the normalized value; a violation is `INVALID_ARGUMENT` naming the field by that path."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextSetting:
    """One `contextSettings` field and what each layer does with it."""

    name: str
    """The wire name (`contextSettings.<name>`); the catalogue's order is the normalized
    result's."""
    parse: Parser
    rule: ContextRule
    keyword: str | None
    """Playwright's `new_context` keyword when `rule` (and `export`) is `keyword`; None for a
    setting with its own rule."""
    export: ExportForm
    default: Any = None
    """What the context gets when neither the caller nor a named device gives the setting;
    None: Playwright's own default (no argument)."""
