"""The secrets a session's recording knows, and the rule that keeps them out of its steps (issue
30, item 1). Pure data, no I/O.

A recording learns secret values two ways: the page's password-field values, read by the
describer before each action (`learn`), and the text the client typed into a password field or
marked `secret` (`value`). Every step then passes through `scrub` before it is kept:

- a typed or chosen value (`Value`) that contains a known secret is recorded as a secret
  reference, and the SAME value always names the SAME environment variable, so a "Confirm"
  field filled with the password replays the password's own variable;
- any other recorded string (a locator the client wrote, a wait's text, a URL) has each known
  secret replaced by ``[REDACTED]``: the replay may then miss, but the export never carries the
  value. The describer already avoids locators that contain a page secret, so this is the last
  guard, not the usual path.

Values are kept only in memory, at most `MAX_KNOWN_SECRETS` of them (the newest), and the map
from a value to its variable is keyed by a keyed hash, not by the value.
"""

from __future__ import annotations

import dataclasses
import hashlib
import secrets
from collections.abc import Iterable, Mapping
from typing import Any, Final, TypeVar

from browsermesh.model.recording import Value, field_label, secret_name
from browsermesh.redact import SecretValues

__all__ = ["MAX_KNOWN_SECRETS", "StepSecrets"]

MAX_KNOWN_SECRETS: Final = 64
"""Secret values one recording remembers (the oldest are forgotten first)."""

T = TypeVar("T")


class StepSecrets:
    """The known secret values of one session's recording and the variables they replay from."""

    __slots__ = ("_key", "_names", "_order", "_values")

    def __init__(self) -> None:
        self._key = secrets.token_bytes(16)
        self._order: dict[str, None] = {}
        self._values = SecretValues()
        self._names: dict[bytes, str] = {}

    def __repr__(self) -> str:  # never show the values themselves
        return f"StepSecrets(<{len(self._order)} values>)"

    def __bool__(self) -> bool:
        return bool(self._order)

    def _digest(self, text: str) -> bytes:
        data = text.encode("utf-8", "surrogatepass")
        return hashlib.blake2b(data, key=self._key, digest_size=16).digest()

    def values(self) -> tuple[str, ...]:
        """The known values themselves, for another in-process holder (a trace's scrub, a video's
        captions)."""
        return self._values.values()

    def learn(self, values: Iterable[str]) -> None:
        """Remember `values` (a page's password values, typed secrets); empty ones are ignored."""
        fresh = [v for v in values if isinstance(v, str) and v and v not in self._order]
        if not fresh:
            return
        for value in fresh:
            self._order[value] = None
        while len(self._order) > MAX_KNOWN_SECRETS:
            oldest = next(iter(self._order))
            del self._order[oldest]
            self._names.pop(self._digest(oldest), None)
        self._values = SecretValues(self._order)

    def name(self, text: str, env: str) -> None:
        """Remember `text` as the secret the client named `env` (issue 36, §36): recorded
        steps that typed it replay it from the environment variable `env` itself."""
        self._names[self._digest(text)] = env
        self.learn([text])

    def value(
        self, owner: str, locator: Mapping[str, Any] | None, text: str, *, secret: bool
    ) -> Value:
        """`text` typed into the field `locator` names (wire form), as recorded: a secret
        reference when it is `secret` (a password field, or marked by the client) or contains a
        known secret, else the literal text. The same text always names the same variable."""
        if not secret and not self._values.appears_in(text):
            return Value.literal(text)
        digest = self._digest(text)
        name = self._names.get(digest)
        if name is None:
            label = field_label(self.scrub(dict(locator))) if locator is not None else ""
            name = secret_name(owner, label)
            self._names[digest] = name
        self.learn([text])
        return Value.secret(name)

    def scrub(self, item: T, owner: str = "") -> T:
        """`item` (a step, or any part of one) with no known secret left in it: `Value`s that
        contain one become secret references, every other string has them replaced."""
        if not self._order:
            return item
        return self._scrub(item, owner, None)  # type: ignore[no-any-return]  # T in, T out

    def _scrub(self, item: Any, owner: str, locator: Mapping[str, Any] | None) -> Any:
        if isinstance(item, str):
            return self._values.text(item)
        if isinstance(item, Value):
            if item.text is None:
                return item
            return self.value(owner, locator, item.text, secret=False)
        if isinstance(item, Mapping):
            return {
                self._scrub(k, owner, None): self._scrub(v, owner, None) for k, v in item.items()
            }
        if isinstance(item, list | tuple):
            return type(item)(self._scrub(v, owner, locator) for v in item)
        if dataclasses.is_dataclass(item) and not isinstance(item, type):
            here = getattr(item, "locator", None)
            context = here if isinstance(here, Mapping) else locator
            changes = {
                f.name: self._scrub(getattr(item, f.name), owner, context)
                for f in dataclasses.fields(item)
                if f.init
            }
            return dataclasses.replace(item, **changes)
        return item
