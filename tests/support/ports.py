"""Loopback ports for tests that need one nothing answers on."""

from __future__ import annotations

import socket


def closed_port() -> int:
    """A loopback port with nothing listening (a real 'connection refused')."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
