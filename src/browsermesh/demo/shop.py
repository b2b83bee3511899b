"""The bundled demo shop (reference §20.3): a tiny loopback web shop with orders kept in memory.

Routes:
- ``/`` — "Demo shop": a labelled "Item" textbox, a labelled "Quantity" select (1-3) and a
  "Place order" submit button; the form is a GET to ``/order``.
- ``/order?item=…&quantity=…`` — records the order, then answers 303 to ``/orders/<n>``.
- ``/orders/<n>`` — the confirmation "Order #<n> received".
- ``/admin`` — "Admin": a table of all orders with the columns Order, Item and Quantity.

Standard library only: a ``ThreadingHTTPServer`` on ``127.0.0.1`` (ephemeral port) served from a
daemon thread, so a forgotten server never keeps the process alive.
"""

from __future__ import annotations

import html
import re
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from browsermesh.demo.loopback import LoopbackSite, QuietHTTPServer

__all__ = ["DemoShop"]

_HOST = "127.0.0.1"
_QUANTITIES = ("1", "2", "3")
_MAX_ITEM_CHARS = 200
_ORDER_PATH = re.compile(r"/orders/([1-9][0-9]{0,8})")


class _OrderBook:
    """Thread-safe in-memory order list; order numbers start at 1."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._orders: list[tuple[int, str, int]] = []

    def add(self, item: str, quantity: int) -> int:
        with self._lock:
            number = len(self._orders) + 1
            self._orders.append((number, item, quantity))
            return number

    def get(self, number: int) -> tuple[int, str, int] | None:
        with self._lock:
            if 1 <= number <= len(self._orders):
                return self._orders[number - 1]
            return None

    def snapshot(self) -> list[tuple[int, str, int]]:
        with self._lock:
            return list(self._orders)


class _ShopServer(QuietHTTPServer):
    def __init__(self, address: tuple[str, int], book: _OrderBook) -> None:
        self.book = book
        super().__init__(address, _ShopHandler)


def _page(title: str, body: str) -> str:
    return (
        "<!doctype html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title>"
        "<style>body{font-family:sans-serif;margin:2em}"
        "table{border-collapse:collapse}th,td{border:1px solid #999;padding:4px 8px}"
        "label{display:block;margin-top:0.8em}button{margin-top:1em}</style>"
        f"</head><body>\n{body}\n</body></html>\n"
    )


_SHOP_PAGE = _page(
    "Demo shop",
    """<main>
<h1>Demo shop</h1>
<form action="/order" method="get">
  <label for="item">Item</label>
  <input id="item" name="item" type="text" autocomplete="off">
  <label for="quantity">Quantity</label>
  <select id="quantity" name="quantity">
    <option value="1">1</option>
    <option value="2">2</option>
    <option value="3">3</option>
  </select>
  <button type="submit">Place order</button>
</form>
</main>""",
)


def _order_page(order: tuple[int, str, int]) -> str:
    number, item, quantity = order
    return _page(
        f"Order #{number}",
        f"""<main>
<h1>Order #{number} received</h1>
<p>{html.escape(item)} × {quantity}</p>
<p><a href="/">Back to the shop</a></p>
</main>""",
    )


def _admin_page(orders: list[tuple[int, str, int]]) -> str:
    rows = "\n".join(
        f"<tr><td>{number}</td><td>{html.escape(item)}</td><td>{quantity}</td></tr>"
        for number, item, quantity in orders
    )
    empty = "" if orders else "<p>No orders yet.</p>\n"
    return _page(
        "Admin",
        f"""<main>
<h1>Admin</h1>
<table>
<caption>Orders</caption>
<thead><tr><th>Order</th><th>Item</th><th>Quantity</th></tr></thead>
<tbody>
{rows}
</tbody>
</table>
{empty}</main>""",
    )


def _message_page(title: str, message: str) -> str:
    return _page(title, f"<main><h1>{html.escape(title)}</h1><p>{html.escape(message)}</p></main>")


class _ShopHandler(BaseHTTPRequestHandler):
    server_version = "BrowserMeshDemoShop"
    sys_version = ""
    timeout = 60

    def do_GET(self) -> None:
        assert isinstance(self.server, _ShopServer)
        book = self.server.book
        parts = urlsplit(self.path)
        path = parts.path
        query = {name: values[0] for name, values in parse_qs(parts.query).items()}
        if path == "/":
            self._send_html(HTTPStatus.OK, _SHOP_PAGE)
        elif path == "/order":
            self._place_order(book, query)
        elif path == "/admin":
            self._send_html(HTTPStatus.OK, _admin_page(book.snapshot()))
        elif (match := _ORDER_PATH.fullmatch(path)) is not None and (
            order := book.get(int(match.group(1)))
        ) is not None:
            self._send_html(HTTPStatus.OK, _order_page(order))
        else:
            self._send_html(HTTPStatus.NOT_FOUND, _message_page("Not found", "No such page."))

    def _place_order(self, book: _OrderBook, query: dict[str, str]) -> None:
        item = query.get("item", "").strip()
        quantity = query.get("quantity", "")
        if not item or len(item) > _MAX_ITEM_CHARS or quantity not in _QUANTITIES:
            message = f"An order needs an item (1-{_MAX_ITEM_CHARS} characters) and quantity 1-3."
            self._send_html(HTTPStatus.BAD_REQUEST, _message_page("Invalid order", message))
            return
        number = book.add(item, int(quantity))
        self.send_response(HTTPStatus.SEE_OTHER)
        self.send_header("Location", f"/orders/{number}")
        self.send_header("Content-Length", "0")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()

    def _send_html(self, status: HTTPStatus, text: str) -> None:
        body = text.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Stay quiet: the demo prints its own step lines."""


class DemoShop(LoopbackSite):
    """The demo shop on ``127.0.0.1`` (ephemeral port); usable as a context manager."""

    def __init__(self) -> None:
        super().__init__(_HOST, name="browsermesh-demo-shop")
        self._book = _OrderBook()

    def _make_server(self, address: tuple[str, int]) -> ThreadingHTTPServer:
        return _ShopServer(address, self._book)

    @property
    def orders(self) -> list[tuple[int, str, int]]:
        """A copy of all orders as ``(number, item, quantity)``, oldest first."""
        return self._book.snapshot()
