"""The one host / authority / origin parser (issue 18), shared by the configuration and the
HTTP transport: allowlist entries and request headers are normalized the same way."""

from __future__ import annotations

import pytest

from browsermesh.config.hosts import (
    authority_host,
    normalize_host,
    parse_host_entry,
    parse_origin_entry,
    split_authority,
    split_origin,
)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("Example.Test.", "example.test"),
        ("[0:0::1]", "::1"),
        ("::1", "::1"),
        ("127.0.0.1", "127.0.0.1"),
        ("[127.0.0.1]", None),
        ("my_host", None),
        ("-bad.test", None),
        ("a..b", None),
        (" x", None),
        ("", None),
    ],
)
def test_normalize_host(value: str, expected: str | None) -> None:
    assert normalize_host(value) == expected


def test_authority_host_brackets_ipv6_only() -> None:
    assert authority_host("::1") == "[::1]"
    assert authority_host("127.0.0.1") == "127.0.0.1"
    assert authority_host("example.test") == "example.test"


def test_entries_keep_the_port_as_written() -> None:
    assert parse_host_entry("EXAMPLE.test:00080") == "example.test:00080"
    assert parse_host_entry("[0::1]:*") == "[::1]:*"
    assert parse_host_entry("h:65536") is None
    assert parse_origin_entry("HTTP://[::1]:*") == "http://[::1]:*"
    assert parse_origin_entry("https://Example.TEST.:443/") == "https://example.test:443"
    assert parse_origin_entry("ws://h") is None  # allowlists name http(s) origins only


def test_headers_and_entries_agree() -> None:
    assert split_authority(" [0::1]:80 ", wildcard_port=False) == ("::1", 80)
    assert split_authority("localhost:*", wildcard_port=True) == ("localhost", None)
    assert split_authority("localhost:*", wildcard_port=False) is None
    assert split_authority("localhost", wildcard_port=False) == ("localhost", None)
    assert split_origin("HTTP://H.test:080/", wildcard_port=False) == ("http", "h.test", 80)
    assert split_origin("null", wildcard_port=False) is None
    for bad in ["http://u@h", "http://h?x", "http://h#x", "http://h//", "http://h/p"]:
        assert split_origin(bad, wildcard_port=False) is None, bad


@pytest.mark.parametrize("port", ["\u0667\u0663\u0663\u0661", "\u00b2", "+80", " 80", "x"])
def test_ports_are_ascii_digits(port: str) -> None:
    # str.isdigit() accepts other scripts' digits (and int() rejects some of them, "²"): a Host
    # header with one is malformed, never a port number.
    assert split_authority(f"127.0.0.1:{port}", wildcard_port=False) is None
