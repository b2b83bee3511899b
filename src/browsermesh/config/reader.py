"""Reading raw configuration values and collecting problems (reference §19.1).

A :class:`Reader` answers each variable from the command-line overrides first, then from the
``environ`` mapping it was given, and collects ``(variable, message)`` problems (naming the flag
when the value came from one) for one :class:`ConfigError`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, TypeAlias

from browsermesh.config.paths import expand_path
from browsermesh.config.variables import BoolSpec, IntSpec

__all__ = ["ConfigError", "Overrides", "Reader", "usable_text"]

Overrides: TypeAlias = Mapping[str, tuple[str, str]]
"""Command-line values: variable -> (raw value, the flag that gave it)."""

_INT_RE: Final = re.compile(r"^[+-]?[0-9]{1,19}$")


class ConfigError(Exception):
    """Invalid configuration (exit 2).

    ``problems`` holds ``(VARIABLE, validator message)`` pairs; messages never contain the
    offending value.
    """

    def __init__(self, problems: Sequence[tuple[str, str]]) -> None:
        self.problems: list[tuple[str, str]] = list(problems)
        super().__init__(
            "configuration is invalid: "
            + "; ".join(f"{variable}: {message}" for variable, message in self.problems)
        )


class Reader:
    """Raw values (command line over environment), the values read so far, and problems."""

    def __init__(self, environ: Mapping[str, str], overrides: Overrides) -> None:
        self.environ = environ
        self.overrides = overrides
        self.values: dict[str, Any] = {}
        self.problems: list[tuple[str, str]] = []
        self.sources: dict[str, str] = {variable: flag for variable, (_, flag) in overrides.items()}

    def get(self, variable: str) -> str | None:
        if variable in self.overrides:
            return self.overrides[variable][0]
        return self.environ.get(variable)

    def problem(self, variable: str, message: str) -> None:
        flag = self.sources.get(variable)
        suffix = f" (from {flag})" if flag else ""
        self.problems.append((variable, message + suffix))

    def integer(self, spec: IntSpec) -> int | None:
        raw = self.get(spec.variable)
        if raw is None:
            return None
        value = int(raw) if _INT_RE.match(raw) else None
        if value is not None and (
            spec.low <= value <= spec.high or (spec.zero_allowed and value == 0)
        ):
            return value
        if spec.zero_allowed:
            self.problem(spec.variable, f"must be 0 or an integer from {spec.low} to {spec.high}")
        else:
            self.problem(spec.variable, f"must be an integer from {spec.low} to {spec.high}")
        return None

    def boolean(self, spec: BoolSpec) -> bool | None:
        raw = self.get(spec.variable)
        if raw is None:
            return None
        if raw in ("true", "false"):
            return raw == "true"
        self.problem(spec.variable, "must be true or false")
        return None

    def parsed(
        self, variable: str, field: str, parse: Callable[[Reader, str], tuple[Any, str | None]]
    ) -> None:
        """Read ``variable`` (when given) with ``parse``, which answers ``(value, problem)``:
        the value into ``values[field]``, or the problem (never quoting the value)."""
        raw = self.get(variable)
        if raw is None:
            return
        value, problem = parse(self, raw)
        if problem is not None:
            self.problem(variable, problem)
        else:
            self.values[field] = value

    def path(self, raw: str) -> Path:
        return expand_path(raw, self.environ)


def usable_text(raw: str) -> bool:
    """Not blank and without NUL: worth handing to the file system."""
    return bool(raw.strip()) and "\0" not in raw
