"""Who may reach the HTTP listener: the Host/Origin allowlists and bearer tokens (§18.3, §18.5).

:class:`AccessPolicy` holds one listener's rules and answers the three questions the access-control
middleware (`transports.auth`) asks of every request: is this ``Host`` allowed, is this ``Origin``
allowed, and which principal owns this token. :func:`bound_allowlists` narrows the derived defaults
once a ``--port 0`` listener knows its port. Pure rules: no ASGI, no I/O.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from browsermesh.config import Config, derive_allowed_hosts, derive_allowed_origins
from browsermesh.config.hosts import split_authority, split_origin

__all__ = ["AccessPolicy", "bound_allowlists"]

_DEFAULT_PORTS: Final = {"http": 80, "https": 443, "ws": 80, "wss": 443}


@dataclass(frozen=True, slots=True)
class _Rule:
    scheme: str | None  # origins only
    host: str
    port: int | None  # None: any port

    def matches(self, scheme: str | None, host: str, port: int) -> bool:
        return (
            self.scheme == scheme and self.host == host and (self.port is None or self.port == port)
        )


def _host_rule(entry: str) -> _Rule | None:
    parts = split_authority(entry, wildcard_port=True)
    return None if parts is None else _Rule(None, parts[0], parts[1])


def _origin_rule(entry: str) -> _Rule | None:
    parts = split_origin(entry, wildcard_port=True)
    return None if parts is None else _Rule(parts[0], parts[1], parts[2])


def _rules(entries: Iterable[str], parse: Any) -> tuple[_Rule, ...] | None:
    """None when ``*`` disables the check; unparsable entries are dropped (config validated)."""
    entries = list(entries)
    if "*" in entries:
        return None
    rules = (parse(entry) for entry in entries)
    return tuple(rule for rule in rules if rule is not None)


class AccessPolicy:
    """Host/Origin allowlists and the bearer-token table of one HTTP listener."""

    def __init__(
        self,
        allowed_hosts: Sequence[str],
        allowed_origins: Sequence[str],
        tokens: Sequence[tuple[str, str]] = (),
    ) -> None:
        self._hosts: tuple[_Rule, ...] | None = ()
        self._origins: tuple[_Rule, ...] | None = ()
        self.set_allowlists(allowed_hosts, allowed_origins)
        # Compare SHA-256 digests: equal lengths, so compare_digest is constant time even for
        # tokens of different lengths.
        self._tokens = tuple(
            (principal, hashlib.sha256(token.encode("utf-8")).digest())
            for principal, token in tokens
        )

    @classmethod
    def from_config(cls, config: Config) -> AccessPolicy:
        return cls(config.allowed_hosts, config.allowed_origins, config.auth_tokens)

    def set_allowlists(self, allowed_hosts: Sequence[str], allowed_origins: Sequence[str]) -> None:
        """Replace both allowlists (the listener learns its ephemeral port only once bound)."""
        self._hosts = _rules(allowed_hosts, _host_rule)
        self._origins = _rules(allowed_origins, _origin_rule)

    @property
    def auth_required(self) -> bool:
        return bool(self._tokens)

    def host_allowed(self, host_header: str | None, scheme: str = "http") -> bool:
        """The ``Host`` check: a missing or malformed header fails unless the check is off."""
        if self._hosts is None:
            return True
        if not host_header:
            return False
        parts = split_authority(host_header, wildcard_port=False)
        if parts is None:
            return False
        host, port = parts
        effective = port if port is not None else _DEFAULT_PORTS.get(scheme, 80)
        return any(rule.matches(None, host, effective) for rule in self._hosts)

    def origin_allowed(self, origin: str | None) -> bool:
        """The ``Origin`` check: absent → allowed (non-browser clients); ``null`` → refused."""
        if origin is None or self._origins is None:
            return True
        parts = split_origin(origin, wildcard_port=False)
        if parts is None:
            return False
        scheme, host, port = parts
        effective = port if port is not None else _DEFAULT_PORTS.get(scheme, -1)
        return any(rule.matches(scheme, host, effective) for rule in self._origins)

    def principal_for(self, token: bytes) -> str | None:
        """The principal whose token equals ``token``; every token is compared (no early exit)."""
        digest = hashlib.sha256(token).digest()
        matched: str | None = None
        for principal, expected in self._tokens:
            if hmac.compare_digest(digest, expected) and matched is None:
                matched = principal
        return matched


def bound_allowlists(config: Config, port: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The Host and Origin allowlists once `port` is bound.

    With `--port 0` the defaults had to be derived before the port was known, so they match any
    port (`:*`); once bound they are derived again for `port`, so a page on another loopback
    port cannot reach the server (§18.5 defaults name `<port>`). Lists given explicitly (even ones
    with `:*`) are kept as they are; a list equal to the port-0 defaults counts as derived.
    """
    hosts, origins = config.allowed_hosts, config.allowed_origins
    if config.http_port == 0:
        if hosts == derive_allowed_hosts(config.http_host, 0):
            hosts = derive_allowed_hosts(config.http_host, port)
        if origins == derive_allowed_origins(config.http_host, 0):
            origins = derive_allowed_origins(config.http_host, port)
    return hosts, origins
