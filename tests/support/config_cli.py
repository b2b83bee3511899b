"""Configuration checks shared by the option tests whose values hold secrets (the Grid's and the
fleet's URLs): every problem must name the variable and the rule, never the value."""

from __future__ import annotations

import pytest

from browsermesh.cli_options import ServeInvocation, parse_invocation
from browsermesh.config import Config, ConfigError, load_config

SECRET = "pw-canary-5d1e"
"""The password the tests put in URLs: no problem text may carry it."""


def problems(environ: dict[str, str], argv: list[str] | None = None) -> list[tuple[str, str]]:
    """The configuration problems of `environ` (and `argv` when given), none quoting SECRET."""
    with pytest.raises(ConfigError) as info:
        if argv is None:
            load_config(environ)
        else:
            parse_invocation(argv, environ)
    assert SECRET not in str(info.value)
    return info.value.problems


def serve(argv: list[str], environ: dict[str, str] | None = None) -> Config:
    """The configuration a serving invocation of `argv` runs with."""
    invocation = parse_invocation(argv, environ or {})
    assert isinstance(invocation, ServeInvocation)
    return invocation.config
