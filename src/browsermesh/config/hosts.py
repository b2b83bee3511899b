"""The one parser of host names, ``host[:port]`` authorities and origins (reference §18.3, §18.5).

The configuration uses it to validate ``BROWSERMESH_HTTP_HOST``, endpoint URLs and the
``Host``/``Origin`` allowlists and to derive the default allowlists; the HTTP transport uses it
to read the ``Host`` and ``Origin`` headers of each request, so an allowlist entry and a header
are always normalized the same way.

A normalized host is a lower-case host name without its trailing dot, or an IP literal in its
compressed form; IPv6 literals are kept without brackets here and bracketed in authorities
(:func:`authority_host`). Ports are 1 to 5 ASCII digits up to 65535; ``*`` (any port) is
accepted where the caller allows it.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Final
from urllib.parse import urlsplit

__all__ = [
    "authority_host",
    "derive_allowed_hosts",
    "derive_allowed_origins",
    "is_loopback_host",
    "is_wildcard_host",
    "normalize_host",
    "parse_authority",
    "parse_host_entry",
    "parse_origin",
    "parse_origin_entry",
    "split_authority",
    "split_origin",
]

_HOST_LABEL_RE: Final = re.compile(r"^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$")
_PORT_RE: Final = re.compile(r"[0-9]{1,5}|\*")
_ORIGIN_RE: Final = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://(?P<authority>.*?)/?")
_MAX_PORT: Final = 65_535


def normalize_host(value: str) -> str | None:
    """Return the canonical form of a host name or IP literal, or None when invalid.

    IPv6 literals may be given with or without brackets and are returned without them.
    Host names are lower-cased.
    """
    if not value or value != value.strip():
        return None
    bracketed = value.startswith("[") and value.endswith("]")
    inner = value[1:-1] if bracketed else value
    try:
        address = ipaddress.ip_address(inner)
    except ValueError:
        address = None
    if address is not None:
        if bracketed and address.version != 6:
            return None
        return address.compressed
    if bracketed:
        return None
    name = inner[:-1] if inner.endswith(".") else inner
    if not name or len(name) > 253:
        return None
    if not all(_HOST_LABEL_RE.match(label) for label in name.split(".")):
        return None
    return name.lower()


def _ip(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def is_loopback_host(host: str) -> bool:
    """True for ``localhost``, any 127.0.0.0/8 address and ``::1`` (§18.3)."""
    if host.lower().rstrip(".") == "localhost":
        return True
    address = _ip(host)
    return address is not None and address.is_loopback


def is_wildcard_host(host: str) -> bool:
    """True for the wildcard bind addresses ``0.0.0.0`` and ``::`` (§18.5)."""
    address = _ip(host)
    return address is not None and address.is_unspecified


def authority_host(host: str) -> str:
    """``host`` as written in an authority: IPv6 literals bracketed, anything else unchanged."""
    address = _ip(host)
    if address is not None and address.version == 6:
        return f"[{address.compressed}]"
    return host


# ------------------------------------------------------------------------- authorities, origins


def parse_authority(text: str) -> tuple[str, str | None] | None:
    """``host[:port]`` or ``[v6][:port]`` → (normalized host, port text or None), else None.

    The port text is kept as written (``080`` stays ``080``); it may be ``*``.
    """
    if text.startswith("["):
        end = text.find("]")
        if end < 0:
            return None
        host_text, rest = text[: end + 1], text[end + 1 :]
    else:
        host_text, sep, port_text = text.partition(":")
        rest = f"{sep}{port_text}"
    host = normalize_host(host_text)
    if host is None:
        return None
    if not rest:
        return host, None
    port = rest[1:]
    if not rest.startswith(":") or not _PORT_RE.fullmatch(port):
        return None
    if port != "*" and int(port) > _MAX_PORT:
        return None
    return host, port


def parse_origin(text: str) -> tuple[str, str, str | None] | None:
    """``scheme://host[:port][/]`` → (lower-case scheme, normalized host, port text), else None."""
    match = _ORIGIN_RE.fullmatch(text)
    if match is None:
        return None
    parts = parse_authority(match["authority"])
    return None if parts is None else (match["scheme"].lower(), parts[0], parts[1])


def _port_number(port: str | None) -> int | None:
    return None if port is None or port == "*" else int(port)


def split_authority(text: str, *, wildcard_port: bool) -> tuple[str, int | None] | None:
    """``host[:port]`` → (normalized host, port or None); a ``*`` port is None if allowed.

    Surrounding whitespace is ignored (a header value).
    """
    parts = parse_authority(text.strip())
    if parts is None or (parts[1] == "*" and not wildcard_port):
        return None
    return parts[0], _port_number(parts[1])


def split_origin(text: str, *, wildcard_port: bool) -> tuple[str, str, int | None] | None:
    """``scheme://host[:port]`` → (scheme, normalized host, port or None), as
    :func:`split_authority`."""
    parts = parse_origin(text.strip())
    if parts is None or (parts[2] == "*" and not wildcard_port):
        return None
    return parts[0], parts[1], _port_number(parts[2])


def parse_host_entry(entry: str) -> str | None:
    """A ``BROWSERMESH_ALLOWED_HOSTS`` entry in its normalized form, or None when invalid."""
    parts = parse_authority(entry)
    if parts is None:
        return None
    host, port = authority_host(parts[0]), parts[1]
    return host if port is None else f"{host}:{port}"


def parse_origin_entry(entry: str) -> str | None:
    """A ``BROWSERMESH_ALLOWED_ORIGINS`` entry (http or https only) normalized, or None."""
    parts = parse_origin(entry)
    if parts is None or parts[0] not in ("http", "https"):
        return None
    scheme, host, port = parts[0], authority_host(parts[1]), parts[2]
    return f"{scheme}://{host}" if port is None else f"{scheme}://{host}:{port}"


# ------------------------------------------------------------------------- default allowlists


def _port_text(port: int) -> str:
    # Port 0 binds an ephemeral port that is unknown until the server listens: match any port.
    return "*" if port == 0 else str(port)


def derive_allowed_hosts(host: str, port: int) -> tuple[str, ...]:
    """Default ``Host`` allowlist for a bind address (§18.5); empty for a wildcard bind.

    For port 0 the entries use ``:*`` (any port), because the actual port is not known yet.
    """
    p = _port_text(port)
    if is_wildcard_host(host):
        return ()
    if is_loopback_host(host):
        return (f"127.0.0.1:{p}", f"localhost:{p}", f"[::1]:{p}")
    return (f"{authority_host(host)}:{p}",)


def derive_allowed_origins(host: str, port: int) -> tuple[str, ...]:
    """Default ``Origin`` allowlist for a bind address (§18.5); empty for a wildcard bind."""
    p = _port_text(port)
    if is_wildcard_host(host):
        return ()
    if is_loopback_host(host):
        return tuple(f"http://{entry}" for entry in derive_allowed_hosts(host, port))
    authority = f"{authority_host(host)}:{p}"
    return (f"http://{authority}", f"https://{authority}")


def is_endpoint_url(value: str, schemes: frozenset[str]) -> bool:
    """Whether `value` is an absolute URL of one of `schemes` with a valid host and port and no
    whitespace: a backend's endpoint (CDP, browser server, Selenium Grid)."""
    if not value or value != value.strip() or any(ch.isspace() for ch in value):
        return False
    try:
        parts = urlsplit(value)
        port = parts.port  # raises ValueError when out of range or not numeric
    except ValueError:
        return False
    del port
    if parts.scheme.lower() not in schemes or not parts.hostname:
        return False
    return normalize_host(parts.hostname) is not None
