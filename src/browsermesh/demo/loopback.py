"""A small loopback web server run from a daemon thread: the one base for every local site we serve.

Used by the bundled demo shop, the test suite's fixture site and the benchmark app. Standard
library only. A subclass builds its ``ThreadingHTTPServer`` (usually a :class:`QuietHTTPServer`)
in :meth:`LoopbackSite._make_server`; this class owns binding, the serving thread, the URLs and an
idempotent stop, and is a context manager.
"""

from __future__ import annotations

import socketserver
import sys
import threading
from http.server import ThreadingHTTPServer
from types import TracebackType
from typing import Self

__all__ = ["LoopbackSite", "QuietHTTPServer"]


class QuietHTTPServer(ThreadingHTTPServer):
    """A threading HTTP server that binds without a DNS lookup and ignores dropped connections."""

    daemon_threads = True
    # Stress tests open many connections at once; a short backlog would cost SYN retries.
    request_queue_size = 128

    def server_bind(self) -> None:
        # HTTPServer.server_bind resolves the host name (getfqdn), which can stall on DNS.
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name = str(host)
        self.server_port = int(port)

    def handle_error(self, request: object, client_address: object) -> None:
        """A browser going away mid-response (page closed, navigation) is normal; stay quiet."""
        if not isinstance(sys.exc_info()[1], ConnectionError | TimeoutError):
            super().handle_error(request, client_address)  # type: ignore[arg-type]


class LoopbackSite:
    """Serves one HTTP server on ``host`` at an ephemeral port from a daemon thread.

    A forgotten site never keeps the process alive. Subclasses implement :meth:`_make_server` and
    may hook :meth:`_before_start` / :meth:`_before_stop`.
    """

    def __init__(self, host: str = "127.0.0.1", *, name: str = "loopback-site") -> None:
        self._host = host
        self._name = name
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def _make_server(self, address: tuple[str, int]) -> ThreadingHTTPServer:
        """Build (and bind) the server for ``address``; called by :meth:`start`."""
        raise NotImplementedError

    def _before_start(self) -> None:
        """Called by :meth:`start` before the server is built (e.g. to renew state)."""

    def _before_stop(self) -> None:
        """Called by :meth:`stop` before shutdown, while the server still runs (e.g. to release
        requests parked on a barrier, which would otherwise hold ``shutdown`` up)."""

    def start(self) -> Self:
        """Bind an ephemeral port and serve from a daemon thread; returns ``self``."""
        if self._server is not None:
            raise RuntimeError(f"{self._name} is already running")
        self._before_start()
        server = self._make_server((self._host, 0))
        thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=self._name,
            daemon=True,
        )
        thread.start()
        self._server, self._thread = server, thread
        return self

    def stop(self) -> None:
        """Stop serving and close the socket; safe to call more than once."""
        server, thread = self._server, self._thread
        self._server, self._thread = None, None
        if server is None:
            return
        self._before_stop()
        server.shutdown()
        server.server_close()
        if thread is not None:
            thread.join(timeout=5)

    @property
    def port(self) -> int:
        """The bound port; raises ``RuntimeError`` when the site is not running."""
        if self._server is None:
            raise RuntimeError(f"{self._name} is not running")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://<host>:<port>``, e.g. ``http://127.0.0.1:43121`` (no trailing slash)."""
        return f"http://{self._host}:{self.port}"

    def url(self, path: str) -> str:
        """``base_url + path``; ``path`` should start with ``/``."""
        return self.base_url + path

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
