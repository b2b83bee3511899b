"""The arguments of ``browser_observe`` as one query: filters, order, request detail (issue 15).

:func:`parse_query` checks how the arguments combine (the filters only with ``network`` and
``requestFailed``; ``requestId`` only with ``network`` and alone) and every filter value;
``source``, ``limit``, ``includeText`` and ``sinceEventId`` are checked by the page's
observations, which know the page size and the ring. Every refusal is ``INVALID_ARGUMENT``
naming the field (issue 13). Pure model.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from browsermesh.errors import invalid_argument
from browsermesh.model.matchers import Glob, one_of, parse_glob, parse_method, parse_status

__all__ = [
    "FILTER_FIELDS",
    "RESOURCE_TYPES",
    "NetworkFilter",
    "ObserveQuery",
    "parse_query",
]

RESOURCE_TYPES: Final = (
    "document",
    "stylesheet",
    "image",
    "media",
    "font",
    "script",
    "texttrack",
    "xhr",
    "fetch",
    "eventsource",
    "websocket",
    "manifest",
    "other",
)
"""Playwright's request resource types (``Request.resource_type``)."""

FILTER_FIELDS: Final = ("url", "method", "statusMin", "statusMax", "resourceType")
"""The filter arguments (sources ``network`` and ``requestFailed`` only)."""

_FILTER_SOURCES: Final = frozenset({"network", "requestFailed"})
_NOT_WITH_REQUEST_ID: Final = ("sinceEventId", "limit", "newestFirst", *FILTER_FIELDS)


@dataclass(frozen=True, slots=True)
class NetworkFilter:
    """Which network-ring events a read returns; every given part must match.

    ``url`` is a safe glob matched against the event's (sanitized) URL; a status bound matches
    only events that have a status (``response``), so it excludes ``request`` and
    ``request_failed`` events.
    """

    url: Glob | None = None
    method: str | None = None
    status_min: int | None = None
    status_max: int | None = None
    resource_type: str | None = None
    _urls: dict[str, bool] = field(default_factory=dict, compare=False, repr=False)

    def matches(self, event: Mapping[str, Any]) -> bool:
        if self.method is not None and event.get("method") != self.method:
            return False
        if self.resource_type is not None and event.get("resourceType") != self.resource_type:
            return False
        if self.status_min is not None or self.status_max is not None:
            status = event.get("status")
            if not isinstance(status, int):
                return False
            if self.status_min is not None and status < self.status_min:
                return False
            if self.status_max is not None and status > self.status_max:
                return False
        if self.url is not None:
            url = event.get("url")
            if not isinstance(url, str):
                return False
            known = self._urls.get(url)
            if known is None:  # a request's events share its URL: match each URL once
                known = self._urls[url] = self.url.fullmatch(url)
            return known
        return True


@dataclass(frozen=True, slots=True)
class ObserveQuery:
    """One ``browser_observe`` call: an event read, or (``request_id``) one request's detail."""

    source: object
    since_event_id: object = None
    limit: object = None
    include_text: object = False
    newest_first: bool = False
    filter: NetworkFilter | None = None
    request_id: str | None = None


def _given(args: Mapping[str, Any], name: str) -> bool:
    return args.get(name) is not None


def _filter(args: Mapping[str, Any]) -> NetworkFilter | None:
    if not any(_given(args, name) for name in FILTER_FIELDS):
        return None
    glob = parse_glob(args["url"], "url")[1] if _given(args, "url") else None
    method = parse_method(args["method"], "method") if _given(args, "method") else None
    low = parse_status(args["statusMin"], "statusMin") if _given(args, "statusMin") else None
    high = parse_status(args["statusMax"], "statusMax") if _given(args, "statusMax") else None
    if low is not None and high is not None and low > high:
        raise invalid_argument("statusMin", "at most statusMax")
    kind = args.get("resourceType")
    if kind is not None and (not isinstance(kind, str) or kind not in RESOURCE_TYPES):
        raise invalid_argument("resourceType", one_of(RESOURCE_TYPES))
    return NetworkFilter(glob, method, low, high, kind)


def parse_query(args: Mapping[str, Any]) -> ObserveQuery:
    """The query of ``args`` (the tool's arguments).

    Raises:
        BrowserMeshError: ``INVALID_ARGUMENT`` naming the field: a filter with a source other
            than ``network``/``requestFailed``; ``requestId`` with another source or together
            with ``sinceEventId``, ``limit``, ``newestFirst`` or a filter (the other field is
            named); a filter value out of its rule; ``newestFirst`` not a boolean.
    """
    source = args.get("source")
    newest_first = args.get("newestFirst", False)
    if newest_first is None:
        newest_first = False
    if not isinstance(newest_first, bool):
        raise invalid_argument("newestFirst", "boolean")
    if _given(args, "requestId"):
        request_id = args["requestId"]
        if source != "network":
            raise invalid_argument("requestId", "only with source network")
        for name in _NOT_WITH_REQUEST_ID:
            if _given(args, name) and args[name] is not False:  # newestFirst false is the default
                raise invalid_argument(name, "not with requestId")
        if args.get("includeText", False) is not False:
            raise invalid_argument("includeText", "not with requestId")
        if not isinstance(request_id, str):
            raise invalid_argument("requestId", "string")
        return ObserveQuery(source, request_id=request_id)
    if source not in _FILTER_SOURCES:
        for name in FILTER_FIELDS:
            if _given(args, name):
                raise invalid_argument(name, "only with source network or requestFailed")
    return ObserveQuery(
        source,
        args.get("sinceEventId"),
        args.get("limit"),
        args.get("includeText", False),
        newest_first,
        _filter(args) if source in _FILTER_SOURCES else None,
    )
