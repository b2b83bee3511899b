"""The live view over plain HTTP (issue 21, reference §30), as a browser uses it: a one-time link
from ``POST /view/link`` (`new_link`), the two steps of signing in with it (`sign_in`), and the
view's Server-Sent Events read one by one (`view_events`).

A `server` is anything with a `base` (``http://127.0.0.1:<port>``): a single server of the live
view's tests, or one replica of a fleet (tests/support/fleet_cluster.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncGenerator
from typing import Any, Protocol

import httpx2

from tests.support.http_transport import TOKENS


class HasBase(Protocol):
    """A server of the live view: where it is reached."""

    @property
    def base(self) -> str: ...


async def new_link(server: HasBase, principal: str) -> str:
    """A one-time link for `principal` (`POST /view/link` with its bearer token), checked: it
    names the principal, lives a minute and never carries the token."""
    async with httpx2.AsyncClient(trust_env=False) as http:
        answer = await http.post(
            server.base + "/view/link", headers={"Authorization": f"Bearer {TOKENS[principal]}"}
        )
    assert answer.status_code == 200, answer.text
    data = answer.json()
    assert data["principal"] == principal and data["expiresInS"] == 60
    url: str = data["url"]
    assert TOKENS[principal] not in url and re.search(r"/view/login\?code=[\w-]{20,}$", url)
    return url


async def sign_in(http: httpx2.AsyncClient, server: HasBase, link: str) -> httpx2.Response:
    """What a browser does with a link: open its page (which names the principal and sets no
    cookie), then press Continue (a same-origin form POST); the answer to the POST."""
    page = await http.get(link)
    assert page.status_code == 200 and "set-cookie" not in page.headers, page.text
    code = link.split("code=", 1)[1]
    return await http.post(
        server.base + "/view/login",
        data={"code": code},
        headers={"Origin": server.base, "Sec-Fetch-Site": "same-origin"},
    )


async def view_events(
    http: httpx2.AsyncClient, server: HasBase, cookie: str
) -> AsyncGenerator[tuple[str, dict[str, Any]], None]:
    """`GET /view/events` with the view's `cookie` (``bm_view=...``): each event as it arrives,
    `(kind, data)` (``state``: the grid; ``frame``: one page's picture), comments and the
    ``retry`` field left out. Fails when the stream is not answered 200 as an event stream."""
    headers = {"Cookie": cookie}
    async with http.stream("GET", server.base + "/view/events", headers=headers) as stream:
        assert stream.status_code == 200, f"/view/events on {server.base}: {stream.status_code}"
        assert stream.headers["content-type"].startswith("text/event-stream")
        kind, data = "message", ""
        async for line in stream.aiter_lines():
            if line.startswith("event: "):
                kind = line.removeprefix("event: ")
            elif line.startswith("data: "):
                data += line.removeprefix("data: ")
            elif not line and data:  # a blank line ends an event
                yield kind, json.loads(data)
                kind, data = "message", ""
            elif not line:
                kind = "message"
