"""Secrets by name (issue 36 item 2, reference §36): which secrets a principal may use, the
value a `{"secret": NAME}` stands for, and what a session must hide once it used one.

`--secrets-file` names one dotenv file; ``{principal}`` in it is the caller's principal, so
over HTTP each principal has its own file (the configuration refuses a shared file when there
are several principals). A name the caller's file does not hold is `INVALID_ARGUMENT` on the
field, in words that never list the names that exist (they may be another principal's).

Once a value is filled it is one of its session's secrets: the engine redacts it from every page
read like a password field's value, the session's observe events from their text, the recording
replays it from the environment variable of the same name, and a trace scrubs it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from browsermesh.config.secrets import PRINCIPAL_PLACEHOLDER
from browsermesh.errors import invalid_argument
from browsermesh.log import EventLog
from browsermesh.model.secret_refs import SecretRef
from browsermesh.persistence.secret_files import SecretFiles, SecretsRead

if TYPE_CHECKING:
    from browsermesh.engine.protocol import Engine
    from browsermesh.runtime.session import SessionRecord

__all__ = ["SecretBook", "use_secret"]

_UNKNOWN_RULE: Final = (
    "the name of a secret this caller may use (browser_runtime_info lists secretNames)"
)


class SecretBook:
    """The secrets files of a server (`template` is the configured path, None = no secrets)."""

    def __init__(self, template: str | None, log: EventLog) -> None:
        self._template = template
        self._files = SecretFiles()
        self._log = log
        self._warned: set[tuple[str, str]] = set()

    def path(self, principal: str) -> Path | None:
        """The secrets file of `principal` (None when the server has none)."""
        if self._template is None:
            return None
        return Path(self._template.replace(PRINCIPAL_PLACEHOLDER, principal))

    def _read(self, principal: str) -> SecretsRead:
        path = self.path(principal)
        if path is None:
            return SecretsRead(missing=True)
        read = self._files.read(path)
        if read.problem is not None and (principal, read.problem) not in self._warned:
            # The operator's mistake, told once per principal and problem (never a value).
            self._warned.add((principal, read.problem))
            self._log.warn("secrets.refused", principal=principal, reason=read.problem)
        return read

    def names(self, principal: str) -> list[str]:
        """The names `principal` may use, sorted (none while its file is refused)."""
        read = self._read(principal)
        return sorted(read.values) if read.problem is None else []

    def value(self, principal: str, ref: SecretRef) -> str:
        """The value `ref` names for `principal`; `INVALID_ARGUMENT` on `<field>.secret` when
        the caller has no such secret (or its file is refused)."""
        read = self._read(principal)
        value = read.values.get(ref.name) if read.problem is None else None
        if value is None:
            raise invalid_argument(f"{ref.field}.secret", _UNKNOWN_RULE)
        return value


def use_secret(engine: Engine[Any, Any], rec: SessionRecord, name: str, value: str) -> None:
    """Make `value` (the secret `name`) one of `rec`'s secrets before it reaches the page:
    every later page read, observe event, recorded step and trace of the session hides it."""
    rec.named_secrets.add((value,))
    rec.step_secrets.name(value, name)
    if rec.context is not None:
        engine.remember_secrets(rec.context, (value,))
