"""Secrets by name (issue 36 item 2, reference §36): the `{"secret": "NAME"}` value a client
sends in place of a typed value, and the rule for a secret's name. Pure data, no I/O.

A client that may use a secret names it; the server looks the value up in the caller's secrets
file (persistence.secret_files) and fills it. The name is all the conversation ever carries.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from browsermesh.errors import invalid_argument

__all__ = ["MAX_SECRET_NAME_CHARS", "SECRET_NAME", "SecretRef", "parse_secret_ref"]

MAX_SECRET_NAME_CHARS: Final = 128
SECRET_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
"""A secret's name: an environment variable's name (the export reads the variable of the same
name), at most `MAX_SECRET_NAME_CHARS` characters."""

NAME_RULE: Final = "a secret name: letters, digits and _, not starting with a digit, 1..128"


@dataclass(frozen=True, slots=True)
class SecretRef:
    """A value given by name: `name` of a secret, `field` the argument's JSON path (errors
    name `<field>.secret`)."""

    name: str
    field: str


def parse_secret_ref(raw: object, field: str) -> SecretRef | None:
    """`raw` as a secret reference when it is an object (`{"secret": NAME}` and nothing else),
    None when it is not an object (the caller checks its other forms);
    `INVALID_ARGUMENT` naming `field` or `field.secret` for a malformed one."""
    if not isinstance(raw, dict):
        return None
    if set(raw) != {"secret"}:
        raise invalid_argument(field, 'a string or {"secret": NAME} with no other key')
    name = raw["secret"]
    if not isinstance(name, str) or SECRET_NAME.fullmatch(name) is None:
        raise invalid_argument(f"{field}.secret", NAME_RULE)
    return SecretRef(name, field)
