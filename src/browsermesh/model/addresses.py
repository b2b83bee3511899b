"""The one spelling the network policy judges an IP address by (issue 30 item 4).

The policy judges names, not addresses (a name is never resolved), but an address written
another way is the same host and must be judged as that host: see `address_host`. Pure rules:
no I/O.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Final

__all__ = ["address_host"]

_NUMBER_RE: Final = re.compile(r"0x[0-9a-f]*|0[0-7]*|[1-9][0-9]*")


def address_host(host: str) -> str:
    """The one spelling the policy judges an address by (docs/decisions.md, issue 30 item 4): a host
    that is an IP address under another spelling is judged as the address a connection to it
    reaches. `host` is lowercase, without brackets or a trailing dot; a name is returned as it
    is.

    - IPv4 in any form the URL standard reads (`2130706433`, `0x7f.1`, `0177.0.0.1`, `127.1`)
      is dotted-quad: Chromium canonicalizes the URLs it requests, but a redirect's
      `Location` is judged as written.
    - An IPv4-mapped IPv6 address (`::ffff:127.0.0.1`) is its IPv4 address: the socket
      connects to exactly that address.
    - The unspecified addresses mean "this host": a connection to `0.0.0.0` reaches
      `127.0.0.1`, one to `::` reaches `::1` (Linux and macOS), so they are judged as those.
    """
    if ":" in host:
        try:
            v6 = ipaddress.IPv6Address(host)
        except ValueError:
            return host
        if v6.ipv4_mapped is not None:
            return _loopback_if_unspecified(str(v6.ipv4_mapped))
        return "::1" if v6.is_unspecified else v6.compressed
    v4 = _whatwg_ipv4(host)
    return host if v4 is None else _loopback_if_unspecified(v4)


def _loopback_if_unspecified(v4: str) -> str:
    return "127.0.0.1" if v4 == "0.0.0.0" else v4


def _whatwg_ipv4(host: str) -> str | None:
    """The URL standard's IPv4 parser: a host whose last label is a number is an address of
    1..4 parts, each decimal, `0x` hex or `0`-prefixed octal, the last filling the remaining
    bytes. None for a name (or a number that is no valid address: Chromium refuses it)."""
    labels = host.split(".")
    if labels and labels[-1] == "":
        labels.pop()
    if not labels or len(labels) > 4 or not _NUMBER_RE.fullmatch(labels[-1]):
        return None
    numbers: list[int] = []
    for label in labels:
        if not _NUMBER_RE.fullmatch(label):
            return None
        if label[:2] == "0x":
            numbers.append(int(label[2:] or "0", 16))
        elif len(label) > 1 and label[0] == "0":
            numbers.append(int(label[1:], 8))
        else:
            numbers.append(int(label))
    *head, last = numbers
    if any(n > 255 for n in head) or last >= 256 ** (5 - len(numbers)):
        return None
    value = last
    for index, n in enumerate(head):
        value += n << (8 * (3 - index))
    return str(ipaddress.IPv4Address(value))
