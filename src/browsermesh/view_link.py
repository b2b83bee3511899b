"""``browsermesh view-link``: print a one-time link to a running server's live view (issue 21).

The command asks the running ``browsermesh --transport http`` for a link: it POSTs to
``/view/link`` on the configured host and port with the principal's bearer token from the
token file (``--principal`` picks one; default: the file's first), so the code is made and kept
by the server that will redeem it. It prints the link on stdout; the token never leaves the
``Authorization`` header. Without a token file the answer is the plain ``/view/`` address.
Standard library only, like the rest of the command line.
"""

from __future__ import annotations

import json
import sys
import urllib.error
import urllib.request
from typing import Final

from browsermesh.config import Config

__all__ = ["link_endpoint", "print_view_link"]

_TIMEOUT_S: Final = 10.0
_WILDCARDS: Final = {"0.0.0.0": "127.0.0.1", "::": "::1"}


def link_endpoint(config: Config) -> str:
    """The ``/view/link`` URL of the server `config` describes (a wildcard bind is reached on
    loopback)."""
    host = _WILDCARDS.get(config.http_host, config.http_host)
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{config.http_port}/view/link"


def _fail(message: str) -> int:
    print(f"browsermesh: view-link: {message}", file=sys.stderr, flush=True)
    return 1


def print_view_link(config: Config, principal: str | None) -> int:
    """Ask the running server for a link and print it; the exit code."""
    if config.http_port == 0:
        return _fail("the server's port is needed (--port or BROWSERMESH_HTTP_PORT)")
    headers = {"Accept": "application/json"}
    if config.auth_tokens:
        tokens = dict(config.auth_tokens)
        name = principal if principal is not None else config.auth_tokens[0][0]
        if name not in tokens:
            return _fail("no such principal in the token file")
        headers["Authorization"] = f"Bearer {tokens[name]}"
    elif principal is not None and principal != "local":
        return _fail("without a token file the only principal is local")
    request = urllib.request.Request(link_endpoint(config), data=b"", headers=headers)
    # Straight to the server: a configured HTTP proxy must never see the bearer token.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=_TIMEOUT_S) as response:
            answer = json.loads(response.read().decode("utf-8"))
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return _fail("the server does not serve the live view (started with --no-view?)")
        if exc.code == 503:  # a fleet's directory (reference §37.9)
            return _fail("the fleet's directory does not answer; try again shortly")
        return _fail(f"the server refused the request (HTTP {exc.code})")
    except (OSError, ValueError):
        return _fail(f"no BrowserMesh HTTP server answered at {link_endpoint(config)}")
    url = answer.get("url") if isinstance(answer, dict) else None
    if not isinstance(url, str):
        return _fail("the server gave no link")
    print(url, flush=True)
    return 0
