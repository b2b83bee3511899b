"""Short opaque identifiers (issue 15, byte hygiene).

Every result names its operation, session and page, and clients copy session and page ids into
every call, so their length is paid on every call twice. An id here is a one-letter kind, a
base-36 counter (unique for the server's life) and three random characters (so an id kept from
an earlier server process is very unlikely to name a new object of this one): ``s1x7q``,
``p2k0m``, ``o5abc``. Callers treat ids as opaque; the server never parses one, it only looks it
up.
"""

from __future__ import annotations

import itertools
import re
import secrets
import string

__all__ = ["ID_TEXT", "base36", "short_id"]

_DIGITS = string.digits + string.ascii_lowercase
_COUNTER = itertools.count(1)
_RANDOM_CHARS = 3
ID_TEXT = re.compile(r"[A-Za-z0-9_-]{1,128}")
"""What an id written into text we parse (a resource URI, a prompt argument) may look like:
generous for ids of other servers and versions, but nothing that could carry other text."""


def base36(value: int) -> str:
    """`value` (>= 0) in lowercase base 36 without leading zeros."""
    if value < 0:
        raise ValueError("base36 takes a non-negative integer")
    out = ""
    while True:
        value, digit = divmod(value, 36)
        out = _DIGITS[digit] + out
        if value == 0:
            return out


def short_id(kind: str) -> str:
    """A new id of `kind` (one lowercase letter): kind + counter + 3 random characters.

    The counter is process-wide, so no two ids of one server are ever equal, whatever their kind.
    """
    # One read of the system's random source per id (a choice per character costs several);
    # the modulo's bias (256 = 7 * 36 + 4) does not matter for a name.
    suffix = "".join(_DIGITS[b % 36] for b in secrets.token_bytes(_RANDOM_CHARS))
    return f"{kind}{base36(next(_COUNTER))}{suffix}"
