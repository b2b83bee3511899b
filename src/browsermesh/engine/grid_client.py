"""The Selenium Grid 4 HTTP client (issue 22): new session, delete session, status.

One instance per Grid backend. The Grid URL's userinfo becomes HTTP basic auth and the header
file's lines are sent with every request (and with the CDP websocket, which goes through the
Grid's router too); neither ever appears in a URL this module builds, a log field or an error:
a failure is a `GridError` whose text is a fixed sentence (the raw cause only picks which).

Every request of a browser session carries two capabilities the Grid keeps on the session and
shows in `/status`: `browsermesh:owner` (this backend) and `browsermesh:request` (this one
request). They let the backend find, and delete, a Grid session created for a request it gave
up on (the Grid drops a queued request whose client hung up since 4.27, but a session created
in the same instant can still appear), and at shutdown every session it owns.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any, Final, Literal
from urllib.parse import unquote, urlsplit, urlunsplit

import httpx2

from browsermesh.redact import ENDPOINT_SCHEMES, sanitize_url

__all__ = ["OWNER_CAPABILITY", "REQUEST_CAPABILITY", "GridClient", "GridError", "GridSession"]

OWNER_CAPABILITY: Final = "browsermesh:owner"
REQUEST_CAPABILITY: Final = "browsermesh:request"
_JSON: Final = {"Content-Type": "application/json; charset=utf-8"}
_SHOWN_CHARS: Final = 512

GridFailure = Literal["unreachable", "rejected", "protocol", "timeout"]

_SENTENCES: Final[dict[GridFailure, str]] = {
    "unreachable": "the Selenium Grid could not be reached",
    "rejected": "the Selenium Grid refused to start a browser session",
    "protocol": "the Selenium Grid answered something other than a Chromium session with se:cdp",
    "timeout": "the Selenium Grid did not answer within the budget",
}


class GridError(Exception):
    """A Grid request failed; `str(exc)` is a fixed sentence (no URL, no response text)."""

    def __init__(self, kind: GridFailure, status: int | None = None) -> None:
        self.kind: GridFailure = kind
        self.status = status
        suffix = f" (HTTP {status})" if status is not None else ""
        super().__init__(_SENTENCES[kind] + suffix)


@dataclass(frozen=True, slots=True)
class GridSession:
    """A Grid browser session: its id (never shown: anyone reaching the Grid could drive the
    browser with it) and the CDP websocket URL through the Grid's router."""

    session_id: str
    cdp_url: str
    browser_version: str | None


def _base_and_auth(url: str) -> tuple[str, dict[str, str]]:
    """The URL without userinfo (and without a trailing slash), and its basic-auth header."""
    parts = urlsplit(url)
    netloc = parts.netloc.rpartition("@")[2]
    base = urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))
    headers: dict[str, str] = {}
    if parts.username is not None:
        pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
        headers["Authorization"] = "Basic " + base64.b64encode(pair).decode("ascii")
    return base, headers


class GridClient:
    """HTTP calls to one Grid. The connection pool opens on first use; `aclose` ends it."""

    def __init__(
        self,
        url: str,
        headers: tuple[tuple[str, str], ...] = (),
        *,
        transport: httpx2.AsyncBaseTransport | None = None,
    ) -> None:
        self.shown = sanitize_url(url, max_chars=_SHOWN_CHARS, allowed_schemes=ENDPOINT_SCHEMES)
        self.base, auth = _base_and_auth(url)
        # The header file wins over the URL's userinfo (it is the explicit one).
        self.headers: dict[str, str] = {**auth, **dict(headers)}
        self._client: httpx2.AsyncClient | None = None
        self._transport = transport  # tests: a fake Grid

    def _http(self) -> httpx2.AsyncClient:
        if self._client is None:
            # No redirects: a redirect could carry the credentials elsewhere. No environment
            # proxies: the Grid is addressed directly, as configured.
            self._client = httpx2.AsyncClient(
                headers=self.headers,
                follow_redirects=False,
                trust_env=False,
                transport=self._transport,
            )
        return self._client

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()

    async def _request(
        self, method: str, path: str, timeout_s: float, body: dict[str, Any] | None = None
    ) -> tuple[int, Any]:
        content = None if body is None else json.dumps(body)
        try:
            response = await self._http().request(
                method,
                self.base + path,
                content=content,
                headers=_JSON if body is not None else None,
                timeout=httpx2.Timeout(max(0.001, timeout_s)),
            )
        except httpx2.TimeoutException:
            raise GridError("timeout") from None
        except httpx2.HTTPError:
            raise GridError("unreachable") from None
        try:
            payload = response.json()
        except ValueError:
            payload = None
        return response.status_code, payload

    async def new_session(self, capabilities: dict[str, Any], timeout_s: float) -> GridSession:
        """A new browser session (the Grid's queue wait included), within `timeout_s`. An
        asyncio cancellation closes the request (the Grid then drops it from its queue)."""
        status, payload = await self._request(
            "POST", "/session", timeout_s, {"capabilities": {"alwaysMatch": capabilities}}
        )
        value = payload.get("value") if isinstance(payload, dict) else None
        if status != 200 or not isinstance(value, dict):
            raise GridError("rejected", status)
        session_id = value.get("sessionId")
        caps = value.get("capabilities")
        cdp = caps.get("se:cdp") if isinstance(caps, dict) else None
        if not isinstance(session_id, str) or not session_id:
            raise GridError("protocol", status)
        if not isinstance(cdp, str):
            # A session without CDP (not Chromium) is no use: end it at once.
            await self.delete_session(session_id, timeout_s=5)
            raise GridError("protocol", status)
        version = caps.get("browserVersion") if isinstance(caps, dict) else None
        return GridSession(
            session_id, self.cdp_url(cdp), version if isinstance(version, str) else None
        )

    def cdp_url(self, se_cdp: str) -> str:
        """The `se:cdp` URL with the Grid's scheme, host and port as configured here: a Grid
        reports the address it knows itself by (a pod IP behind a Kubernetes service, a
        container name), which may not be reachable from BrowserMesh; the path is the
        router's (`/session/<id>/se/cdp`), kept."""
        ours = urlsplit(self.base)
        theirs = urlsplit(se_cdp)
        scheme = "wss" if ours.scheme == "https" else "ws"
        return urlunsplit((scheme, ours.netloc, theirs.path, theirs.query, ""))

    async def delete_session(self, session_id: str, timeout_s: float) -> None:
        """End a Grid session (its browser exits, the slot frees). An unknown session (already
        gone: its node died, or the Grid timed it out) counts as deleted."""
        status, _ = await self._request("DELETE", f"/session/{session_id}", timeout_s)
        if status >= 400 and status != 404:
            raise GridError("rejected", status)

    async def alive(self, session_id: str, timeout_s: float) -> bool | None:
        """Whether the Grid still runs the session (a WebDriver read the router forwards to the
        node: a dead node or browser answers an error at once, while the CDP websocket through
        the router stays open). None when the Grid itself could not be asked. It also counts as
        activity for the node's idle-session timeout, which CDP traffic does not."""
        try:
            status, _ = await self._request("GET", f"/session/{session_id}/timeouts", timeout_s)
        except GridError:
            return None
        return status == 200 if status in (200, 404, 500) else None

    async def status(self, timeout_s: float) -> dict[str, Any]:
        """The Grid's `/status` value (`ready`, `message`, `nodes`)."""
        code, payload = await self._request("GET", "/status", timeout_s)
        value = payload.get("value") if isinstance(payload, dict) else None
        if code != 200 or not isinstance(value, dict):
            raise GridError("unreachable" if code >= 500 else "rejected", code)
        return value

    async def owned_sessions(self, owner: str, timeout_s: float) -> dict[str, str]:
        """Grid session id -> request marker, for every session carrying `owner`."""
        found: dict[str, str] = {}
        for node in (await self.status(timeout_s)).get("nodes") or []:
            for slot in node.get("slots") or [] if isinstance(node, dict) else []:
                session = slot.get("session") if isinstance(slot, dict) else None
                if not isinstance(session, dict):
                    continue
                caps = session.get("capabilities")
                sid = session.get("sessionId")
                mine = isinstance(caps, dict) and caps.get(OWNER_CAPABILITY) == owner
                if mine and isinstance(caps, dict) and isinstance(sid, str):
                    found[sid] = str(caps.get(REQUEST_CAPABILITY, ""))
        return found
