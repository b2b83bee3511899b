"""Read tasks of the agent-task benchmark (issue 31) on the stock Django admin.

Four tasks that only read, run after ``benchmarks.agent_tasks``' five in the same servers and
sessions, each verified in the application's database when it ran:

6. filter the product list by the sidebar's "Status: Draft" link and read the count;
7. search the product list for "set" and read the count;
8. read one value from one row of the list: the price of "Cordless drill";
9. as ``editor`` (staff without any permission on categories) open a category's change page
   and notice that it answered 403 Forbidden.

How each client reads (the same information for both servers; the client knows the task, the
admin's URL conventions, the names it read in the earlier tasks):

- BrowserMesh: ``browser_find`` when the server lists it (``tools/list``): a regular
  expression for a count (``\\d+ products?``), the row's text for a row (the match is the whole
  row, cells joined); without it ``browser_visible_text`` (``main`` for a count, the row by
  ``role row`` + its text for a row). The 403 is in ``browser_navigate``'s ``status``. A click
  that navigated and answers ``keys`` (the header lines of the new page) is read from them
  with no further call.
- The peer: refs from a ``browser_snapshot`` of each page it acts on, and the count or the row
  read from a ``browser_snapshot``; the lean client locates known controls and reads with the
  peer's own ``browser_find`` instead. The 403 is in ``browser_navigate``'s text
  ("HTTP status: 403 Forbidden").
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from typing import Any

from tests.fixtures.apps import EDITOR, AdminApp

READ_TASKS: tuple[tuple[str, str], ...] = (
    ("read_filter_count", "6. read: filter the list (Status: Draft), read the count"),
    ("read_search_count", "7. read: search the list for 'set', read the count"),
    ("read_row_value", "8. read: one row's price in the list (Cordless drill)"),
    ("notice_403", "9. read: as editor open a category's change page, notice the 403"),
)
LIST_PATH = "/admin/shop/product/"
FILTER_LINK = "Draft"  # the sidebar's "By status" choice
FILTER_STATUS = "draft"
SEARCH = "set"
ROW_PRODUCT = "Cordless drill"
FORBIDDEN_PATH = "/admin/shop/category/1/change/"
COUNT_REGEX = r"\d+ products?\b"
_COUNT = re.compile(r"\b(\d+) (?:results?|products?)\b")
_PRICE = re.compile(r"\b(\d+\.\d{2})\b")

Body = Callable[[], Awaitable[tuple[bool, str, str | None]]]
Call = Callable[[str, str, dict[str, Any]], Awaitable[Any]]


class ReadError(RuntimeError):
    """The client could not find what it needed in the answer (a ClientError of the caller)."""


def count_in(text: str) -> int:
    """The first "N results" / "N products" of a text (the admin's paginator, its search line)."""
    m = _COUNT.search(text)
    if not m:
        raise ReadError("no result count in the answer")
    return int(m.group(1))


def price_after(text: str, name: str) -> str:
    """The first price shown after ``name`` (a row's cells follow its name)."""
    at = text.find(name)
    m = _PRICE.search(text, at) if at >= 0 else None
    if not m:
        raise ReadError(f"no price after {name!r} in the answer")
    return m.group(1)


# ------------------------------------------------------------------------- database checks


def check_filter(app: AdminApp, read: int) -> tuple[bool, str]:
    rows = app.query("SELECT COUNT(*) FROM shop_product WHERE status = ?", (FILTER_STATUS,))
    n = int(rows[0][0])
    return read == n and n > 0, f"{n} products with status {FILTER_STATUS!r}"


def check_search(app: AdminApp, read: int) -> tuple[bool, str]:
    rows = app.query("SELECT COUNT(*) FROM shop_product WHERE name LIKE ?", (f"%{SEARCH}%",))
    n = int(rows[0][0])
    return read == n and n > 0, f"{n} products whose name contains {SEARCH!r}"


def check_row(app: AdminApp, read: str) -> tuple[bool, str]:
    rows = app.query("SELECT price FROM shop_product WHERE name = ?", (ROW_PRODUCT,))
    if len(rows) != 1:
        return False, f"{len(rows)} rows named {ROW_PRODUCT!r}"
    price = f"{float(rows[0][0]):.2f}"
    return read == price, f"shop_product.price of {ROW_PRODUCT!r}: {price}"


def check_forbidden(app: AdminApp, read: int) -> tuple[bool, str]:
    """The editor is not a superuser and holds no permission on categories: Django answers 403."""
    rows = app.query(
        "SELECT u.is_superuser, (SELECT COUNT(*) FROM auth_user_user_permissions up "
        "JOIN auth_permission p ON p.id = up.permission_id WHERE up.user_id = u.id "
        "AND p.codename IN ('view_category', 'change_category')) FROM auth_user u "
        "WHERE u.username = ?",
        (EDITOR.username,),
    )
    superuser, perms = (int(rows[0][0]), int(rows[0][1])) if rows else (1, 1)
    return (
        read == 403 and not superuser and perms == 0,
        f"{EDITOR.username}: is_superuser {superuser}, category permissions {perms}",
    )


# ------------------------------------------------------------------------------ BrowserMesh


class MeshReads:
    """BrowserMesh's side. ``call`` is the recorded caller; ``has_find``: the server lists
    ``browser_find``; ``names`` are the controls the client read in earlier tasks."""

    def __init__(self, call: Call, app: AdminApp, has_find: bool) -> None:
        self.call = call
        self.app = app
        self.has_find = has_find

    async def _json(self, step: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        reply = await self.call(step, tool, args)
        out: dict[str, Any] = json.loads(reply.text)
        return out

    async def find(self, addr: dict[str, str], text: str, regex: bool, limit: int) -> str:
        args: dict[str, Any] = {**addr, "text": text, "limit": limit}
        if regex:
            args["regex"] = True
        got = await self._json("read", "browser_find", args)
        return "\n".join(str(m.get("text", "")) for m in got.get("matches", []))

    async def read_count(self, addr: dict[str, str], landed: dict[str, Any]) -> int:
        keys = "\n".join(str(k) for k in landed.get("keys", []))
        if _COUNT.search(keys):
            return count_in(keys)  # the navigation result said it: no read
        if self.has_find:
            return count_in(await self.find(addr, COUNT_REGEX, regex=True, limit=3))
        main = {"strategy": "css", "value": "main"}
        got = await self._json("read", "browser_visible_text", {**addr, "locator": main})
        return count_in(str(got.get("text", "")))

    async def navigate(self, addr: dict[str, str], path: str) -> dict[str, Any]:
        return await self._json("navigate", "browser_navigate", {**addr, "url": self.app.url(path)})

    def bodies(self, admin: dict[str, str], editor: dict[str, str]) -> dict[str, Body]:
        app = self.app

        async def read_filter_count() -> tuple[bool, str, str | None]:
            await self.navigate(admin, LIST_PATH)
            link = {"strategy": "role", "value": "link", "name": FILTER_LINK}
            got = await self._json("filter", "browser_click", {**admin, "locator": link})
            if not got.get("changes", {}).get("navigated"):
                raise ReadError("the filter link did not load a page")
            n = await self.read_count(admin, got["changes"])
            return (*check_filter(app, n), str(n))

        async def read_search_count() -> tuple[bool, str, str | None]:
            await self.navigate(admin, LIST_PATH)
            box = {"strategy": "role", "value": "textbox", "name": "Search"}
            await self.call("fill", "browser_fill", {**admin, "locator": box, "value": SEARCH})
            got = await self._json(
                "submit", "browser_press", {**admin, "locator": box, "key": "Enter"}
            )
            n = await self.read_count(admin, got.get("changes", {}))
            return (*check_search(app, n), str(n))

        async def read_row_value() -> tuple[bool, str, str | None]:
            await self.navigate(admin, LIST_PATH)
            if self.has_find:
                text = await self.find(admin, ROW_PRODUCT, regex=False, limit=1)
            else:
                row = {"strategy": "role", "value": "row", "name": ROW_PRODUCT, "exact": False}
                got = await self._json("read", "browser_visible_text", {**admin, "locator": row})
                text = str(got.get("text", ""))
            price = price_after(text, ROW_PRODUCT)
            return (*check_row(app, price), price)

        async def notice_403() -> tuple[bool, str, str | None]:
            got = await self.navigate(editor, FORBIDDEN_PATH)
            status = int(got.get("status", 0))
            return (*check_forbidden(app, status), str(status))

        return {
            "read_filter_count": read_filter_count,
            "read_search_count": read_search_count,
            "read_row_value": read_row_value,
            "notice_403": notice_403,
        }


# ------------------------------------------------------------------------------- the peer

_PEER_REF = re.compile(r'- (?P<role>[\w-]+) "(?P<name>[^"]*)"[^\n]*?\[ref=(?P<ref>[^\]]+)\]')
_STATUS = re.compile(r"HTTP status: (\d{3})")


def peer_ref(text: str, role: str, name: str) -> str:
    for m in _PEER_REF.finditer(text):
        if m["role"] == role and m["name"].rstrip(":") == name:
            return m["ref"]
    raise ReadError(f'no {role} "{name}" in the answer')


class PeerReads:
    """The peer's side (``lean``: its ``browser_find`` instead of whole snapshots)."""

    def __init__(self, app: AdminApp, lean: bool) -> None:
        self.app = app
        self.lean = lean

    async def locate(self, call: Call, role: str, name: str) -> str:
        """The ref of one control of the page just loaded (refs die on navigation)."""
        if self.lean:
            pattern = f'{re.escape(role)} "{re.escape(name)}"'
            reply = await call("find", "browser_find", {"regex": pattern})
        else:
            reply = await call("read page", "browser_snapshot", {})
        return peer_ref(reply.text, role, name)

    async def read(self, call: Call, text: str | None = None, regex: str | None = None) -> str:
        if self.lean:
            args = {"text": text} if text is not None else {"regex": regex}
            reply = await call("read result", "browser_find", args)
        else:
            reply = await call("read result", "browser_snapshot", {})
        return str(reply.text)

    def admin_bodies(self, call: Call) -> dict[str, Body]:
        app = self.app

        async def read_filter_count() -> tuple[bool, str, str | None]:
            await call("navigate", "browser_navigate", {"url": app.url(LIST_PATH)})
            ref = await self.locate(call, "link", FILTER_LINK)
            await call("filter", "browser_click", {"element": f"{FILTER_LINK} link", "target": ref})
            n = count_in(await self.read(call, regex=COUNT_REGEX))
            return (*check_filter(app, n), str(n))

        async def read_search_count() -> tuple[bool, str, str | None]:
            await call("navigate", "browser_navigate", {"url": app.url(LIST_PATH)})
            ref = await self.locate(call, "textbox", "Search")
            await call(
                "fill",
                "browser_type",
                {"element": "Search textbox", "target": ref, "text": SEARCH, "submit": True},
            )
            n = count_in(await self.read(call, regex=COUNT_REGEX))
            return (*check_search(app, n), str(n))

        async def read_row_value() -> tuple[bool, str, str | None]:
            await call("navigate", "browser_navigate", {"url": app.url(LIST_PATH)})
            price = price_after(await self.read(call, text=ROW_PRODUCT), ROW_PRODUCT)
            return (*check_row(app, price), price)

        return {
            "read_filter_count": read_filter_count,
            "read_search_count": read_search_count,
            "read_row_value": read_row_value,
        }

    def editor_bodies(self, call: Call) -> dict[str, Body]:
        app = self.app

        async def notice_403() -> tuple[bool, str, str | None]:
            reply = await call("navigate", "browser_navigate", {"url": app.url(FORBIDDEN_PATH)})
            m = _STATUS.search(reply.text)
            if not m:
                raise ReadError("no HTTP status in the navigation result")
            status = int(m.group(1))
            return (*check_forbidden(app, status), str(status))

        return {"notice_403": notice_403}
