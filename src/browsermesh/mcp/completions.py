"""`completion/complete` for prompt arguments and resource template variables (issue 17).

Suggestions come only from the caller principal's own sessions (plus a fixed list of common
roles): `parallel_roles.roles` completes the item after the last comma from the roles and names
the caller's sessions carry; `diagnose_page.sessionId` and the templates' `{sessionId}` the
caller's live session ids; `diagnose_page.url` the http(s) URLs the caller's pages show. Matching
is a case-insensitive prefix match; at most `MAX_VALUES` values go back, with `total` and
`hasMore` saying how many matched. Nothing here reads the browser or waits in a queue.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

import mcp.types as types

from browsermesh.errors import BrowserMeshError
from browsermesh.mcp import prompts
from browsermesh.mcp.resources import ARTIFACTS_TEMPLATE, SESSION_TEMPLATE
from browsermesh.runtime.runtime import Runtime
from browsermesh.runtime.session import ACTIVE_STATUSES

MAX_VALUES = 100
"""The protocol's cap on values in one completion."""
COMMON_ROLES = ("admin", "buyer", "seller", "guest", "support", "editor", "viewer")
"""Offered after the caller's own roles, for a first session of each."""
MAX_ROLE_CHARS = 128
"""A session's role or name longer than this is no role suggestion."""

EMPTY = types.Completion(values=[], total=0, has_more=False)


def complete_prefix(candidates: Iterable[str], typed: str, *, keep: str = "") -> types.Completion:
    """The candidates that start with `typed` (case-insensitively), each once (the first
    spelling wins), prefixed with `keep`; at most `MAX_VALUES` of them, `total` counting all."""
    needle = typed.casefold()
    seen: set[str] = set()
    matches: list[str] = []
    for candidate in candidates:
        folded = candidate.casefold()
        if folded in seen or not folded.startswith(needle):
            continue
        seen.add(folded)
        matches.append(keep + candidate)
    values = matches[:MAX_VALUES]
    return types.Completion(values=values, total=len(matches), has_more=len(matches) > len(values))


def complete_roles(value: str, known: Iterable[str]) -> types.Completion:
    """Complete the last comma-separated item of a `roles` value; each value is the whole
    argument (what is typed before the item kept as typed), so a client can use it as is.
    Roles already listed before the last comma are not offered again."""
    head, comma, last = value.rpartition(",")
    typed = last.lstrip()
    keep = head + comma + last[: len(last) - len(typed)]
    listed = {r.casefold() for r in prompts.split_roles(head)} if comma else set()
    room = prompts.MAX_ROLES_CHARS - len(keep)  # a value must still be a valid `roles`
    fresh = [r for r in known if r.casefold() not in listed and len(r) <= room]
    return complete_prefix(fresh, typed.rstrip(), keep=keep)


def session_roles(views: Iterable[Mapping[str, Any]]) -> list[str]:
    """The roles the caller's sessions carry (metadata `role`, then name), in registry order,
    then `COMMON_ROLES`. A value with a comma could not be one item of a list, so is left out."""
    found: list[str] = []
    for view in views:
        for raw in (view.get("metadata", {}).get("role"), view.get("name")):
            role = raw.strip() if isinstance(raw, str) else ""
            if role and "," not in role and len(role) <= MAX_ROLE_CHARS:
                found.append(role)
    return [*found, *COMMON_ROLES]


def _http(url: str) -> bool:
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)


class Completions:
    """Answers `completion/complete` for one runtime, always for the calling principal."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    def _views(self, principal: str) -> list[dict[str, Any]]:
        try:
            return self.runtime.list_sessions(principal)[1]
        except BrowserMeshError:  # shutting down: nothing to suggest
            return []

    def _live_ids(self, principal: str) -> list[str]:
        return [v["sessionId"] for v in self._views(principal) if v["status"] in ACTIVE_STATUSES]

    def _urls(self, principal: str, context: Mapping[str, str]) -> list[str]:
        try:
            by_session = self.runtime.page_urls(principal)
        except BrowserMeshError:
            return []
        # With a session chosen already, its own pages are the useful suggestions.
        chosen = context.get("sessionId")
        if isinstance(chosen, str) and chosen in by_session:
            by_session = {chosen: by_session[chosen]}
        return [
            url
            for urls in by_session.values()
            for url in urls
            if len(url) <= prompts.MAX_URL_CHARS and _http(url)
        ]

    def complete(self, principal: str, params: types.CompleteRequestParams) -> types.CompleteResult:
        """The completion of `params.argument` for `principal`: no values for an argument
        nothing completes (or a value longer than the argument allows), and for a prompt or
        template BrowserMesh does not have (the spec lets a server answer those with an empty
        list; an error would only make a client's generic completion fail)."""
        ref, name, value = params.ref, params.argument.name, params.argument.value
        context = (params.context.arguments if params.context else None) or {}
        if isinstance(ref, types.PromptReference):
            target = (ref.name, name)
        elif ref.uri in (SESSION_TEMPLATE, ARTIFACTS_TEMPLATE):
            target = ("template", name)
        else:
            target = ("unknown template", name)
        limit = _LIMITS.get(target)
        if limit is None or len(value) > limit:
            return types.CompleteResult(completion=EMPTY)
        if target == ("parallel_roles", "roles"):
            completion = complete_roles(value, session_roles(self._views(principal)))
        elif target == ("diagnose_page", "url"):
            completion = complete_prefix(self._urls(principal, context), value)
        else:  # a sessionId: of the prompt or of a template
            completion = complete_prefix(self._live_ids(principal), value)
        return types.CompleteResult(completion=completion)


_LIMITS: dict[tuple[str, str], int] = {
    ("parallel_roles", "roles"): prompts.MAX_ROLES_CHARS,
    ("diagnose_page", "url"): prompts.MAX_URL_CHARS,
    ("diagnose_page", "sessionId"): prompts.MAX_SESSION_ID_CHARS,
    ("template", "sessionId"): prompts.MAX_SESSION_ID_CHARS,
}
"""What completes, and the longest value each argument takes."""
