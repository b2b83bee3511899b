"""Who is looking at the live view (issue 21): one-time link codes and view-session cookies.

Without a token file every caller of the loopback listener is the principal ``local``, as on
the MCP endpoint, and no cookie is needed. With tokens:

1. A principal's link is ``/view/login?code=<code>``: the code is random (192 bits), lives
   `CODE_TTL_S` and works once. Codes are issued at start-up (one per principal, printed on
   stderr) and by ``POST /view/link`` with the principal's bearer token (``browsermesh
   view-link``). The bearer token itself never appears in a URL.
2. Opening the link shows a page naming the principal whose view it opens (and the one this
   browser is signed in as, if any); only its Continue button, a same-origin ``POST``, redeems
   the code (issue 30 #6: a link sent by someone else could otherwise sign a victim's browser
   into the sender's view, login CSRF). Redeeming a code opens a view session: a random cookie
   value, ``HttpOnly``, ``SameSite=Strict``, ``Path=/view``, valid `SESSION_TTL_S`, kept in
   memory only (a restart ends every view session) — or, in a fleet with its token, in the
   fleet's directory, so any replica takes them (reference §37.9).

Only SHA-256 digests of codes and cookie values are kept (in memory or in Redis). Both tables
are bounded per principal (`MAX_CODES_PER_PRINCIPAL`, `MAX_VIEW_SESSIONS_PER_PRINCIPAL`): past
its bound a principal's own entry closest to expiry goes, so one principal opening many view
sessions signs out only its own oldest browsers (issue 30 #6). Global bounds (`MAX_CODES`,
`MAX_VIEW_SESSIONS`) cap the memory (the fleet's store has only the per-principal bounds:
principals come from the token file); past one, the principal with the most entries loses its
entry closest to expiry. No ASGI.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from collections import Counter
from collections.abc import Callable
from typing import Final, Literal, Protocol

from browsermesh.runtime.runtime import LOCAL_PRINCIPAL
from browsermesh.transports.access import AccessPolicy

__all__ = [
    "CODE_TTL_S",
    "COOKIE_NAME",
    "MAX_CODES",
    "MAX_CODES_PER_PRINCIPAL",
    "MAX_VIEW_SESSIONS",
    "MAX_VIEW_SESSIONS_PER_PRINCIPAL",
    "SESSION_TTL_S",
    "SharedSecrets",
    "ViewAuth",
    "ViewAuthUnavailable",
    "cookie_value",
]

CODE_TTL_S: Final = 60.0
SESSION_TTL_S: Final = 12 * 3600.0
COOKIE_NAME: Final = "bm_view"
MAX_CODES_PER_PRINCIPAL: Final = 16
"""Unused codes one principal may have at once (a link is redeemed within a minute)."""
MAX_VIEW_SESSIONS_PER_PRINCIPAL: Final = 64
"""View sessions (signed-in browsers) one principal may have at once."""
MAX_CODES: Final = 1024
MAX_VIEW_SESSIONS: Final = 4096
"""Global bounds of the two tables (memory), far above what the per-principal bounds allow for
a token file of a few dozen principals; past one, the largest principal's entry closest to
expiry goes, so a principal that floods the table evicts only its own entries (issue 30 #6)."""


Kind = Literal["code", "session"]


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
    """digest -> (principal, expiry): a table of secrets that expire, bounded per principal
    (`per_principal`) and in all (`limit`)."""

    def __init__(self, per_principal: int, limit: int, now: Callable[[], float]) -> None:
        self._per_principal = per_principal
        self._limit = limit
        self._now = now
        self._items: dict[bytes, tuple[str, float]] = {}
        self._counts: Counter[str] = Counter()

    def __len__(self) -> int:
        self._prune()
        return len(self._items)

    def count(self, principal: str) -> int:
        """How many live entries `principal` has."""
        self._prune()
        return self._counts[principal]

    def add(self, principal: str, ttl_s: float) -> str:
        self._prune()
        while self._counts[principal] >= self._per_principal:
            self._evict(principal)
        while len(self._items) >= self._limit:
            self._evict(self._counts.most_common(1)[0][0])
        secret = secrets.token_urlsafe(24)
        self._items[_digest(secret)] = (principal, self._now() + ttl_s)
        self._counts[principal] += 1
        return secret

    def get(self, secret: str, *, remove: bool) -> str | None:
        key = _digest(secret)
        entry = self._items.get(key)
        if entry is None:
            return None
        principal, expiry = entry
        expired = self._now() >= expiry
        if remove or expired:
            self._delete(key)
        return None if expired else principal

    def _evict(self, principal: str) -> None:
        """Drop `principal`'s entry closest to expiry."""
        mine = [k for k, (owner, _) in self._items.items() if owner == principal]
        self._delete(min(mine, key=lambda k: self._items[k][1]))

    def _delete(self, key: bytes) -> None:
        principal, _ = self._items.pop(key)
        self._counts[principal] -= 1
        if not self._counts[principal]:
            del self._counts[principal]

    def _prune(self) -> None:
        now = self._now()
        for key in [k for k, (_, expiry) in self._items.items() if now >= expiry]:
            self._delete(key)


class SharedSecrets(Protocol):
    """Where a fleet keeps the view's codes and sessions (the directory, reference §37.9):
    digests only, each with its lifetime, bounded per principal."""

    async def view_put(
        self, kind: str, digest: str, principal: str, ttl_ms: int, per_principal: int
    ) -> None: ...

    async def view_get(self, kind: str, digest: str, *, remove: bool) -> str | None: ...


class ViewAuthUnavailable(Exception):
    """The fleet's shared store did not answer: the view answers 503 (try again)."""


class ViewAuth:
    """The live view's codes and sessions for one listener (see the module doc). With
    `shared` (a fleet with its token, reference §37.9) they live in the fleet's directory, so
    a link from any replica signs in on any replica, once, and its cookie works on all;
    `shared()` returning None, or a store that fails, raises `ViewAuthUnavailable`."""

    def __init__(
        self,
        policy: AccessPolicy,
        *,
        now: Callable[[], float] = time.monotonic,
        code_ttl_s: float = CODE_TTL_S,
        session_ttl_s: float = SESSION_TTL_S,
        shared: Callable[[], SharedSecrets | None] | None = None,
    ) -> None:
        self.policy = policy
        self.code_ttl_s = code_ttl_s
        self.session_ttl_s = session_ttl_s
        self._shared = shared
        self._codes = _Expiring(MAX_CODES_PER_PRINCIPAL, MAX_CODES, now)
        self._sessions = _Expiring(MAX_VIEW_SESSIONS_PER_PRINCIPAL, MAX_VIEW_SESSIONS, now)

    @property
    def required(self) -> bool:
        """Whether viewers need a cookie (a token file is configured)."""
        return self.policy.auth_required

    def principal_for_token(self, token: bytes) -> str | None:
        """The principal of a bearer token (the MCP endpoint's rule)."""
        return self.policy.principal_for(token)

    async def issue_code(self, principal: str) -> str:
        """A new one-time code for `principal`'s link."""
        return await self._add("code", principal)

    async def peek(self, code: str) -> str | None:
        """The principal of a valid, unused, unexpired `code`, which stays unused (the login
        page names it before the viewer agrees), else None."""
        return await self._get("code", code, remove=False)

    async def redeem(self, code: str) -> str | None:
        """The principal of a valid, unused, unexpired `code` (used up now), else None."""
        return await self._get("code", code, remove=True)

    async def open_session(self, principal: str) -> str:
        """A new view session's cookie value."""
        return await self._add("session", principal)

    async def principal_of(self, cookie_header: bytes | None) -> str | None:
        """The viewer's principal: ``local`` without tokens, else its live view session's."""
        if not self.required:
            return LOCAL_PRINCIPAL
        value = cookie_value(cookie_header)
        return None if value is None else await self._get("session", value, remove=False)

    def set_cookie(self, value: str) -> bytes:
        """The ``Set-Cookie`` header value of a new view session."""
        return (
            f"{COOKIE_NAME}={value}; Path=/view; HttpOnly; SameSite=Strict; "
            f"Max-Age={int(self.session_ttl_s)}"
        ).encode("latin-1")

    def _store(self) -> SharedSecrets | None:
        if self._shared is None:
            return None
        store = self._shared()
        if store is None:
            raise ViewAuthUnavailable
        return store

    async def _add(self, kind: Kind, principal: str) -> str:
        store = self._store()
        if store is None:
            table = self._codes if kind == "code" else self._sessions
            return table.add(principal, self._ttl(kind))
        secret = secrets.token_urlsafe(24)
        bound = MAX_CODES_PER_PRINCIPAL if kind == "code" else MAX_VIEW_SESSIONS_PER_PRINCIPAL
        ttl_ms = int(self._ttl(kind) * 1000)
        from browsermesh.persistence.fleet_directory import DirectoryUnavailable

        try:
            await store.view_put(kind, _digest(secret).hex(), principal, ttl_ms, bound)
        except DirectoryUnavailable as exc:
            raise ViewAuthUnavailable from exc
        return secret

    async def _get(self, kind: Kind, secret: str, *, remove: bool) -> str | None:
        if not secret:
            return None
        store = self._store()
        if store is None:
            table = self._codes if kind == "code" else self._sessions
            return table.get(secret, remove=remove)
        from browsermesh.persistence.fleet_directory import DirectoryUnavailable

        try:
            return await store.view_get(kind, _digest(secret).hex(), remove=remove)
        except DirectoryUnavailable as exc:
            raise ViewAuthUnavailable from exc

    def _ttl(self, kind: Kind) -> float:
        return self.code_ttl_s if kind == "code" else self.session_ttl_s
