"""A small loopback shop for the benchmarks: sign-in, a product, a per-user cart, an admin page.

Standard library only: a ``ThreadingHTTPServer`` on ``127.0.0.1`` and an ephemeral port, served
from a daemon thread. State lives in memory, per user, for as long as the ``ShopApp`` runs.

Routes:

- ``GET /login`` — a form (``Username``, ``Password``, ``Sign in``). ``POST /login`` checks the
  password (:data:`PASSWORD` for every user), sets the ``sid`` cookie and answers 303 → ``/``.
- ``GET /`` — "Signed in as <user>" (or a link to ``/login``).
- ``GET /product/1`` — the product page with an ``Add to cart`` button (a form posting to
  ``/cart/add``; 303 back to ``/product/<id>?added=1``). Signed-out users are sent to ``/login``.
- ``GET /cart`` — the signed-in user's cart: ``<ul data-testid="cart-items">`` with one ``<li>``
  per line (``<name> × <qty>``) and ``<p data-testid="cart-total">``.
- ``GET /admin`` — every user and the size of their cart; user ``admin`` only (403 otherwise).
- With ``ShopApp(assets=True)`` (issue 16, the ``blockResources`` benchmark) every page's heading
  uses a web font (``GET /static/shop-sans.woff2``, a 40 KB byte stand-in that Chromium fetches
  and then fails to decode) and the product page shows a photo (``GET /static/teapot.png``, a real
  200×150 PNG of about 65 KB). Off by default, so the other benchmarks' pages stay as they were.

:meth:`ShopApp.served` counts the requests answered and the response body bytes sent
(:meth:`ShopApp.served_paths` per method and path).

Typical use::

    with ShopApp() as app:
        page.goto(app.url("/login"))
        ...
        assert app.cart("alice") == {1: 1}
"""

from __future__ import annotations

import html
import random
import re
import secrets
import struct
import threading
import zlib
from collections import Counter
from collections.abc import Mapping
from http import HTTPStatus
from http.cookies import SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from browsermesh.demo.loopback import LoopbackSite, QuietHTTPServer

__all__ = ["FONT_PATH", "IMAGE_PATH", "PASSWORD", "PRODUCTS", "ShopApp"]

PASSWORD = "correct-horse"
PRODUCTS: dict[int, tuple[str, int]] = {
    1: ("Blue teapot", 2400),
    2: ("Green mug", 900),
}
_USERNAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")
_PRODUCT_PATH = re.compile(r"/product/([0-9]{1,6})")
_STYLE = (
    "body{font-family:sans-serif;margin:24px;max-width:720px}"
    "header{display:flex;gap:16px;border-bottom:1px solid #ccc;padding-bottom:8px}"
    "label{display:block;margin-top:8px}button{margin-top:12px;padding:6px 14px}"
    ".price{font-size:1.4em;color:#070}"
)


IMAGE_PATH = "/static/teapot.png"
FONT_PATH = "/static/shop-sans.woff2"
_FONT_STYLE = (
    f'@font-face{{font-family:"Shop Sans";src:url("{FONT_PATH}") format("woff2")}}'
    'h1{font-family:"Shop Sans",sans-serif}'
)


def _photo(width: int = 200, height: int = 150, noise: int = 3) -> bytes:
    """A deterministic RGB PNG (a gradient with noise, so it compresses like a photo)."""
    rng = random.Random(16)
    raw = bytearray()
    for y in range(height):
        raw.append(0)  # filter: none
        for x in range(width):
            for value in (x * 200 // width + 20, y * 200 // height + 20, 128):
                raw.append(value + rng.randrange(-noise, noise + 1))

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = struct.pack(">I", zlib.crc32(kind + data))
        return struct.pack(">I", len(data)) + kind + data + crc

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(bytes(raw), 9))
        + chunk(b"IEND", b"")
    )


class _Assets:
    """The optional product photo and web font (made once per app)."""

    def __init__(self) -> None:
        self.photo = _photo()
        self.font = b"wOF2" + random.Random(17).randbytes(40_956)


class _State:
    """Users' sessions and carts, guarded by one lock."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.sessions: dict[str, str] = {}  # sid -> username
        self.carts: dict[str, dict[int, int]] = {}  # username -> product id -> quantity
        self.logins = 0
        self.requests = 0
        self.body_bytes = 0
        self.paths: Counter[str] = Counter()

    def count(self, path: str, body_bytes: int) -> None:
        with self.lock:
            self.requests += 1
            self.body_bytes += body_bytes
            self.paths[path] += 1

    def sign_in(self, username: str) -> str:
        sid = secrets.token_urlsafe(18)
        with self.lock:
            self.sessions[sid] = username
            self.carts.setdefault(username, {})
            self.logins += 1
        return sid

    def user(self, sid: str | None) -> str | None:
        if sid is None:
            return None
        with self.lock:
            return self.sessions.get(sid)

    def add(self, username: str, product: int) -> None:
        with self.lock:
            cart = self.carts.setdefault(username, {})
            cart[product] = cart.get(product, 0) + 1

    def cart(self, username: str) -> dict[int, int]:
        with self.lock:
            return dict(self.carts.get(username, {}))

    def users(self) -> list[tuple[str, int]]:
        with self.lock:
            return sorted((u, sum(c.values())) for u, c in self.carts.items())


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


def _money(cents: int) -> str:
    return f"${cents // 100}.{cents % 100:02d}"


def _document(title: str, body: str, user: str | None, assets: bool = False) -> bytes:
    who = f"Signed in as {_esc(user)}" if user else '<a href="/login">Sign in</a>'
    nav = (
        '<header><a href="/">Home</a><a href="/product/1">Products</a>'
        f'<a href="/cart">Cart</a><span data-testid="who">{who}</span></header>'
    )
    return (
        "<!doctype html>\n"
        f'<html lang="en"><head><meta charset="utf-8"><title>{_esc(title)}</title>'
        f"<style>{_STYLE}{_FONT_STYLE if assets else ''}</style></head>\n"
        f"<body>\n{nav}\n<main>\n{body}\n</main>\n</body></html>\n"
    ).encode()


_LOGIN_FORM = """<h1>Sign in</h1>
{error}<form method="post" action="/login">
<label for="username">Username</label><input id="username" name="username" type="text"
 autocomplete="username">
<label for="password">Password</label><input id="password" name="password" type="password"
 autocomplete="current-password">
<button type="submit">Sign in</button>
</form>"""


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    # ------------------------------------------------------------------ plumbing

    def _sid(self) -> str | None:
        raw = self.headers.get("Cookie")
        if not raw:
            return None
        jar: SimpleCookie = SimpleCookie()
        try:
            jar.load(raw)
        except Exception:
            return None
        morsel = jar.get("sid")
        return morsel.value if morsel is not None else None

    def _send(
        self,
        status: int,
        body: bytes = b"",
        headers: Mapping[str, str] | None = None,
        content_type: str = "text/html; charset=utf-8",
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Cache-Control", "no-store")
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        sent = len(body) if self.command != "HEAD" else 0
        self.server.state.count(f"{self.command} {urlsplit(self.path).path}", sent)
        if body and self.command != "HEAD":
            self.wfile.write(body)

    def _page(self, status: int, title: str, body: str, user: str | None) -> None:
        self._send(status, _document(title, body, user, self.server.assets is not None))

    def _redirect(self, location: str, headers: Mapping[str, str] | None = None) -> None:
        self._send(HTTPStatus.SEE_OTHER, headers={"Location": location, **(headers or {})})

    def _form(self) -> dict[str, str]:
        try:
            length = min(int(self.headers.get("Content-Length") or 0), 16_384)
        except ValueError:
            length = 0
        raw = self.rfile.read(length).decode("utf-8", "replace") if length else ""
        return {k: v[0] for k, v in parse_qs(raw, keep_blank_values=True).items()}

    def log_message(self, format: str, *args: object) -> None:
        """Stay quiet."""

    # -------------------------------------------------------------------- routes

    def do_GET(self) -> None:
        state = self.server.state
        path = urlsplit(self.path).path
        query = parse_qs(urlsplit(self.path).query)
        user = state.user(self._sid())
        if path == "/login":
            self._page(200, "Sign in", _LOGIN_FORM.format(error=""), user)
        elif path == "/":
            body = "<h1>Shop</h1>\n" + (
                f'<p data-testid="welcome">Welcome back, {_esc(user)}.</p>'
                if user
                else '<p>Please <a href="/login">sign in</a>.</p>'
            )
            self._page(200, "Shop", body, user)
        elif (match := _PRODUCT_PATH.fullmatch(path)) is not None:
            self._product(int(match.group(1)), user, "added" in query)
        elif path == "/cart":
            self._cart(user)
        elif path == "/admin":
            self._admin(user)
        elif path == "/favicon.ico":
            self._send(204, content_type="image/x-icon")
        elif path == IMAGE_PATH and self.server.assets is not None:
            self._send(200, self.server.assets.photo, content_type="image/png")
        elif path == FONT_PATH and self.server.assets is not None:
            self._send(200, self.server.assets.font, content_type="font/woff2")
        else:
            self._page(404, "Not found", "<h1>Not found</h1>", user)

    def do_POST(self) -> None:
        state = self.server.state
        path = urlsplit(self.path).path
        form = self._form()
        if path == "/login":
            username = form.get("username", "")
            if _USERNAME.fullmatch(username) is None or form.get("password") != PASSWORD:
                error = '<p role="alert" data-testid="error">Wrong username or password.</p>\n'
                self._page(401, "Sign in", _LOGIN_FORM.format(error=error), None)
                return
            sid = state.sign_in(username)
            self._redirect("/", {"Set-Cookie": f"sid={sid}; Path=/; HttpOnly; SameSite=Lax"})
        elif path == "/cart/add":
            user = state.user(self._sid())
            if user is None:
                self._redirect("/login")
                return
            try:
                product = int(form.get("product", ""))
            except ValueError:
                product = 0
            if product not in PRODUCTS:
                self._page(400, "Bad request", "<h1>Unknown product</h1>", user)
                return
            state.add(user, product)
            self._redirect(f"/product/{product}?added=1")
        else:
            self._page(404, "Not found", "<h1>Not found</h1>", None)

    def _product(self, product: int, user: str | None, added: bool) -> None:
        if product not in PRODUCTS:
            self._page(404, "Not found", "<h1>No such product</h1>", user)
            return
        if user is None:
            self._redirect("/login")
            return
        name, price = PRODUCTS[product]
        status = '<p role="status" data-testid="added">Added to your cart.</p>' if added else ""
        photo = (
            f'<img src="{IMAGE_PATH}" width="200" height="150" alt="{_esc(name)}">\n'
            if self.server.assets is not None
            else ""
        )
        body = f"""<h1>{_esc(name)}</h1>
{photo}<p class="price" data-testid="price">{_money(price)}</p>
<p>A sturdy, everyday {_esc(name.lower())}. Ships in two days.</p>
<form method="post" action="/cart/add">
<input type="hidden" name="product" value="{product}">
<button type="submit">Add to cart</button>
</form>
{status}"""
        self._page(200, name, body, user)

    def _cart(self, user: str | None) -> None:
        if user is None:
            self._redirect("/login")
            return
        cart = self.server.state.cart(user)
        lines = "\n".join(f"<li>{_esc(PRODUCTS[p][0])} × {q}</li>" for p, q in sorted(cart.items()))
        total = sum(PRODUCTS[p][1] * q for p, q in cart.items())
        body = f"""<h1>Your cart</h1>
<ul data-testid="cart-items">
{lines or "<li>Your cart is empty.</li>"}
</ul>
<p data-testid="cart-total">Total: {_money(total)}</p>"""
        self._page(200, "Cart", body, user)

    def _admin(self, user: str | None) -> None:
        if user != "admin":
            self._page(403, "Forbidden", "<h1>Admins only</h1>", user)
            return
        rows = "\n".join(
            f"<tr><td>{_esc(u)}</td><td>{n}</td></tr>" for u, n in self.server.state.users()
        )
        body = f"""<h1>Admin</h1>
<table data-testid="users"><thead><tr><th>User</th><th>Items in cart</th></tr></thead>
<tbody>
{rows}
</tbody></table>"""
        self._page(200, "Admin", body, user)


class _Server(QuietHTTPServer):
    def __init__(self, address: tuple[str, int], state: _State, assets: _Assets | None) -> None:
        super().__init__(address, _Handler)
        self.state = state
        self.assets = assets


class ShopApp(LoopbackSite):
    """The loopback shop; a context manager (``start``/``stop`` also work)."""

    def __init__(self, host: str = "127.0.0.1", *, assets: bool = False) -> None:
        super().__init__(host, name="shop")
        self._state = _State()
        self._assets = _Assets() if assets else None

    def _make_server(self, address: tuple[str, int]) -> ThreadingHTTPServer:
        return _Server(address, self._state, self._assets)

    def served(self) -> tuple[int, int]:
        """(requests answered, response body bytes sent) so far."""
        with self._state.lock:
            return self._state.requests, self._state.body_bytes

    def served_paths(self) -> Counter[str]:
        """Requests answered so far per method and path (`GET /cart`)."""
        with self._state.lock:
            return Counter(self._state.paths)

    def cart(self, username: str) -> dict[int, int]:
        """The user's cart as product id -> quantity."""
        return self._state.cart(username)

    @property
    def logins(self) -> int:
        return self._state.logins

    def signed_in(self) -> set[str]:
        """Every user who has signed in (a form POST with the right password) so far."""
        return {user for user, _items in self._state.users()}


if __name__ == "__main__":  # manual check: python -m benchmarks.app
    import time

    with ShopApp() as shop:
        print(f"shop at {shop.url('/login')} (password {PASSWORD!r}); Ctrl-C to stop")
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
