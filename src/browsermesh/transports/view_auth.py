"""Who is looking at the live view (issue 21): one-time link codes and view-session cookies.

Without a token file every caller of the loopback listener is the principal ``local``, as on
the MCP endpoint, and no cookie is needed. With tokens:

1. A principal's link is ``/view/login?code=<code>``: the code is random (192 bits), lives
   `CODE_TTL_S` and works once. Codes are issued at start-up (one per principal, printed on
   stderr) and by ``POST /view/link`` with the principal's bearer token (``browsermesh
   view-link``). The bearer token itself never appears in a URL.
2. Redeeming a code opens a view session: a random cookie value, ``HttpOnly``,
   ``SameSite=Strict``, ``Path=/view``, valid `SESSION_TTL_S`, kept in memory only (a restart
   ends every view session).

Only SHA-256 digests of codes and cookie values are kept. Both tables are bounded: past the
bound the entry closest to expiry goes. Pure bookkeeping: no ASGI, no I/O.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from collections.abc import Callable
from typing import Final

from browsermesh.runtime.runtime import LOCAL_PRINCIPAL
from browsermesh.transports.access import AccessPolicy

__all__ = [
    "CODE_TTL_S",
    "COOKIE_NAME",
    "SESSION_TTL_S",
    "ViewAuth",
    "cookie_value",
]

CODE_TTL_S: Final = 60.0
SESSION_TTL_S: Final = 12 * 3600.0
COOKIE_NAME: Final = "bm_view"
MAX_CODES: Final = 256
MAX_VIEW_SESSIONS: Final = 256


def _digest(secret: str) -> bytes:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).digest()


def cookie_value(header: bytes | None, name: str = COOKIE_NAME) -> str | None:
    """The value of cookie `name` in a ``Cookie`` request header, or None."""
    if not header:
        return None
    for part in header.decode("latin-1").split(";"):
        key, eq, value = part.strip().partition("=")
        if eq and key == name and value:
            return value.strip().strip('"')
    return None


class _Expiring:
    """digest -> (principal, expiry): a bounded table of secrets that expire."""

    def __init__(self, limit: int, now: Callable[[], float]) -> None:
        self._limit = limit
        self._now = now
        self._items: dict[bytes, tuple[str, float]] = {}

    def __len__(self) -> int:
        self._prune()
        return len(self._items)

    def add(self, principal: str, ttl_s: float) -> str:
        self._prune()
        while len(self._items) >= self._limit:
            oldest = min(self._items, key=lambda k: self._items[k][1])
            del self._items[oldest]
        secret = secrets.token_urlsafe(24)
        self._items[_digest(secret)] = (principal, self._now() + ttl_s)
        return secret

    def get(self, secret: str, *, remove: bool) -> str | None:
        key = _digest(secret)
        entry = self._items.pop(key, None) if remove else self._items.get(key)
        if entry is None:
            return None
        principal, expiry = entry
        if self._now() >= expiry:
            self._items.pop(key, None)
            return None
        return principal

    def _prune(self) -> None:
        now = self._now()
        for key in [k for k, (_, expiry) in self._items.items() if now >= expiry]:
            del self._items[key]


class ViewAuth:
    """The live view's codes and sessions for one listener (see the module doc)."""

    def __init__(
        self,
        policy: AccessPolicy,
        *,
        now: Callable[[], float] = time.monotonic,
        code_ttl_s: float = CODE_TTL_S,
        session_ttl_s: float = SESSION_TTL_S,
    ) -> None:
        self.policy = policy
        self.code_ttl_s = code_ttl_s
        self.session_ttl_s = session_ttl_s
        self._codes = _Expiring(MAX_CODES, now)
        self._sessions = _Expiring(MAX_VIEW_SESSIONS, now)

    @property
    def required(self) -> bool:
        """Whether viewers need a cookie (a token file is configured)."""
        return self.policy.auth_required

    def principal_for_token(self, token: bytes) -> str | None:
        """The principal of a bearer token (the MCP endpoint's rule)."""
        return self.policy.principal_for(token)

    def issue_code(self, principal: str) -> str:
        """A new one-time code for `principal`'s link."""
        return self._codes.add(principal, self.code_ttl_s)

    def redeem(self, code: str) -> str | None:
        """The principal of a valid, unused, unexpired `code` (used up now), else None."""
        if not code:
            return None
        return self._codes.get(code, remove=True)

    def open_session(self, principal: str) -> str:
        """A new view session's cookie value."""
        return self._sessions.add(principal, self.session_ttl_s)

    def principal_of(self, cookie_header: bytes | None) -> str | None:
        """The viewer's principal: ``local`` without tokens, else its live view session's."""
        if not self.required:
            return LOCAL_PRINCIPAL
        value = cookie_value(cookie_header)
        return None if value is None else self._sessions.get(value, remove=False)

    def set_cookie(self, value: str) -> bytes:
        """The ``Set-Cookie`` header value of a new view session."""
        return (
            f"{COOKIE_NAME}={value}; Path=/view; HttpOnly; SameSite=Strict; "
            f"Max-Age={int(self.session_ttl_s)}"
        ).encode("latin-1")
