"""`contextSettings.network` / `contextSettings.proxy` (issue 19, model/network.py): origin
patterns and matching, extra headers, proxy settings, merging for browser_session_update, the
public view, and that no error ever carries the value it refused."""

from __future__ import annotations

import json
from typing import Any

import pytest

from browsermesh.errors import BrowserMeshError, ErrorCode, error_payload
from browsermesh.model.addresses import address_host
from browsermesh.model.network import (
    REDACTED,
    merge_network,
    normalize_network,
    normalize_proxy,
    origin_policy,
    parse_origin_pattern,
    public_settings,
    url_origin,
)
from browsermesh.model.settings import normalize_context_settings

SECRET = "s3cr3t-canary-91f2"


def refused(call: Any, *args: Any) -> BrowserMeshError:
    with pytest.raises(BrowserMeshError) as info:
        call(*args)
    error = info.value
    assert error.code is ErrorCode.INVALID_ARGUMENT
    return error


def field_of(call: Any, *args: Any) -> tuple[str, str]:
    error = refused(call, *args)
    return error.details["field"], error.details["rule"]


def pattern(text: str) -> str:
    return parse_origin_pattern(text, "p").text


# --- origin patterns ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "canonical"),
    [
        ("HTTPS://Example.COM:443/", "https://example.com"),
        ("http://example.com:80", "http://example.com"),
        ("http://example.com:8080", "http://example.com:8080"),
        ("https://*.Example.com", "https://*.example.com"),
        ("https://*.example.com:8443/", "https://*.example.com:8443"),
        ("https://example.com.", "https://example.com"),
        ("http://[0:0::1]:8080", "http://[::1]:8080"),
        ("http://127.0.0.1:4000", "http://127.0.0.1:4000"),
        ("https://bücher.example", "https://xn--bcher-kva.example"),
    ],
)
def test_patterns_are_canonical(given: str, canonical: str) -> None:
    assert pattern(given) == canonical


@pytest.mark.parametrize(
    ("given", "rule"),
    [
        ("example.com", "an absolute http(s) origin"),
        ("ftp://example.com", "an absolute http(s) origin"),
        ("ws://example.com", "an absolute http(s) origin"),
        ("*", "a wildcard only as a leading *."),
        ("https://*", "a wildcard only as a leading *."),
        ("https://*.", "an origin with a host"),
        ("https://a.*.example.com", "a wildcard only as a leading *."),
        ("https://*.*.example.com", "a wildcard only as a leading *."),
        ("https://example.*", "a wildcard only as a leading *."),
        ("*://example.com", "a wildcard only as a leading *."),
        ("https://example.com:*", "a wildcard only as a leading *."),
        ("https://*.127.0.0.1", "a host name after *."),
        ("https://*.[::1]", "a host name after *."),
        ("https://example.com/path", "an origin: no path beyond /"),
        ("https://user:pw@example.com", "no credentials"),
        ("https://example.com?q", "no query"),
        ("https://example.com#f", "no fragment"),
        ("https://example.com:99999", "a decimal port"),
        ("http://[::1", "an absolute http(s) origin"),
        ("https://exa mple.com", "no whitespace"),
        ("", "at least 1 character"),
        ("https://" + "a" * 2_000, "at most 2000 characters"),
    ],
)
def test_bad_patterns_name_the_rule(given: str, rule: str) -> None:
    field, got = field_of(parse_origin_pattern, given, "contextSettings.network.allowOrigins[2]")
    assert field == "contextSettings.network.allowOrigins[2]"
    assert got.startswith(rule), got


def test_a_pattern_must_be_a_string() -> None:
    assert field_of(parse_origin_pattern, 7, "f") == ("f", "string")


def blocks(url: str, **network: Any) -> bool:
    found = origin_policy(network)
    assert found is not None
    return found.blocks(url)


@pytest.mark.parametrize(
    ("url", "blocked"),
    [
        ("https://a.example.com/x", True),
        ("https://a.b.c.example.com/x?q=1", True),  # any depth
        ("https://example.com/", False),  # the apex is not a subdomain
        ("https://badexample.com/", False),  # a suffix is not a subdomain
        ("https://A.EXAMPLE.COM/", True),
        ("https://a.example.com./", True),  # a trailing dot does not side-step the list
        ("http://a.example.com/", False),  # another scheme is another origin
        ("https://a.example.com:444/", False),  # another port too
        ("https://a.example.com:443/", True),  # the default port, spelled out
        ("wss://a.example.com/socket", True),  # WebSockets count as their https origin
        ("ws://a.example.com/socket", False),
        ("https://user:pw@a.example.com/", True),  # credentials change no origin
    ],
)
def test_wildcard_matching(url: str, blocked: bool) -> None:
    assert blocks(url, blockOrigins=["https://*.example.com"]) is blocked


@pytest.mark.parametrize(
    ("url", "blocked"),
    [
        ("http://[::1]:8080/x", False),
        ("http://[0:0:0:0:0:0:0:1]:8080/x", False),  # the same address, longhand
        ("http://[::1]:8081/x", True),
        ("http://[::2]:8080/x", True),
        ("http://127.0.0.1:4000/", False),
        ("http://127.0.0.1:4001/", True),
        ("http://localhost:4000/", True),  # a name is not its address
        ("http://127.0.0.1:99999/", True),  # an unreadable port matches nothing
        ("data:text/html,hi", False),  # never leaves the browser: not governed
        ("blob:http://evil.test/1234", False),
        ("about:blank", False),
        ("chrome-error://chromewebdata/", False),
    ],
)
def test_allow_list_matching_with_ports_and_ipv6(url: str, blocked: bool) -> None:
    assert blocks(url, allowOrigins=["http://[::1]:8080", "http://127.0.0.1:4000"]) is blocked


def test_block_wins_over_allow() -> None:
    network = {
        "allowOrigins": ["https://*.example.com"],
        "blockOrigins": ["https://ads.example.com"],
    }
    assert blocks("https://ads.example.com/x", **network)
    assert not blocks("https://shop.example.com/x", **network)
    assert blocks("https://other.test/x", **network)


def test_url_origin() -> None:
    assert url_origin("HTTPS://Example.com/x") == ("https", "example.com", 443)
    assert url_origin("ws://h:81/") == ("http", "h", 81)
    assert url_origin("http://[::FFFF:1.2.3.4]/") == ("http", "1.2.3.4", 80)  # mapped: IPv4
    assert url_origin("http://bücher.example/") == ("http", "xn--bcher-kva.example", 80)
    assert url_origin("mailto:a@b") is None
    assert url_origin("http://[zz]/") is None  # unparsable: not a URL at all


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:4000/",
        "http://[::ffff:127.0.0.1]:4000/",  # IPv4-mapped IPv6: the same IPv4 address
        "http://[::ffff:7f00:1]:4000/",  # the same, as Chromium spells it
        "http://0.0.0.0:4000/",  # the unspecified address: a connection reaches 127.0.0.1
        "http://[::ffff:0.0.0.0]:4000/",
        "http://0:4000/",
        "http://2130706433:4000/",  # IPv4 forms a redirect's Location may spell
        "http://0x7f.1:4000/",
        "http://0177.0.0.1:4000/",
        "http://127.1:4000/",
        "http://127.0.0.%31:4000/",  # a percent-escape in the host
    ],
)
def test_an_address_is_judged_in_one_spelling(url: str) -> None:
    assert blocks(url, blockOrigins=["http://127.0.0.1:4000"])
    assert not blocks(url, allowOrigins=["http://127.0.0.1:4000"])
    assert blocks(url, allowOrigins=["http://127.0.0.2:4000"])


def test_unspecified_ipv6_is_judged_as_its_loopback() -> None:
    assert blocks("http://[::]:4000/", blockOrigins=["http://[::1]:4000"])
    assert blocks("http://[0::0]:4000/", blockOrigins=["http://[::1]:4000"])
    assert not blocks("http://[::]:4000/", blockOrigins=["http://127.0.0.1:4000"])
    # A pattern spelled as a mapped address is its IPv4 address too.
    assert blocks("http://127.0.0.1:4000/", blockOrigins=["http://[::ffff:127.0.0.1]:4000"])


@pytest.mark.parametrize(
    ("host", "spelled"),
    [
        ("10.0.0.1", "10.0.0.1"),
        ("4294967295", "255.255.255.255"),
        ("4294967296", "4294967296"),  # too large: not an address (Chromium refuses the URL)
        ("1.2.3.4.5", "1.2.3.4.5"),
        ("08", "08"),  # not octal: no address
        ("example.com", "example.com"),
        ("1.256", "1.0.1.0"),
        ("256.1", "256.1"),
        ("::ffff:10.1.2.3", "10.1.2.3"),
        ("2001:db8::1", "2001:db8::1"),
    ],
)
def test_address_host(host: str, spelled: str) -> None:
    assert address_host(host) == spelled


def test_no_policy_without_origin_lists() -> None:
    assert origin_policy(None) is None
    assert origin_policy({}) is None
    assert origin_policy({"offline": True, "extraHeaders": {"X": "1"}}) is None
    assert origin_policy({"allowOrigins": [], "blockOrigins": []}) is None


# --- network ------------------------------------------------------------------------------------


def test_network_normalized_in_field_order() -> None:
    raw = {
        "extraHeaders": {"X-Trace": "abc", "Accept-Language": "de-DE"},
        "offline": False,
        "blockOrigins": ["HTTP://B.TEST:81"],
        "allowOrigins": ["https://*.Shop.test", "http://127.0.0.1:4000/"],
    }
    out = normalize_network(raw)
    assert list(out) == ["allowOrigins", "blockOrigins", "offline", "extraHeaders"]
    assert out["allowOrigins"] == ["https://*.shop.test", "http://127.0.0.1:4000"]
    assert out["blockOrigins"] == ["http://b.test:81"]
    assert out["extraHeaders"] == {"X-Trace": "abc", "Accept-Language": "de-DE"}
    assert normalize_network({}) == {}


@pytest.mark.parametrize(
    ("raw", "field", "rule"),
    [
        ([], "contextSettings.network", "object"),
        ({"proxy": {}}, "contextSettings.network", "only the keys allowOrigins"),
        ({"allowOrigins": "https://a.test"}, "contextSettings.network.allowOrigins", "array"),
        ({"allowOrigins": []}, "contextSettings.network.allowOrigins", "at least 1 entry"),
        ({"blockOrigins": ["https://a.test"] * 101}, "contextSettings.network.blockOrigins",
         "at most 100 entries"),
        ({"allowOrigins": ["https://a.test", "https://b.test", "nope"]},
         "contextSettings.network.allowOrigins[2]", "an absolute http(s) origin"),
        ({"allowOrigins": ["https://a.test", "HTTPS://A.TEST:443/"]},
         "contextSettings.network.allowOrigins[1]", "each origin pattern once"),
        ({"offline": "yes"}, "contextSettings.network.offline", "boolean"),
        ({"offline": 1}, "contextSettings.network.offline", "boolean"),
        ({"extraHeaders": []}, "contextSettings.network.extraHeaders", "object"),
        ({"extraHeaders": {}}, "contextSettings.network.extraHeaders", "at least 1 header"),
    ],
)  # fmt: skip
def test_bad_network_names_the_field(raw: Any, field: str, rule: str) -> None:
    got_field, got_rule = field_of(normalize_network, raw)
    assert got_field == field
    assert got_rule.startswith(rule), got_rule


def test_list_bounds_carry_a_bound_clause() -> None:
    empty = refused(normalize_network, {"allowOrigins": []})
    assert empty.message == "Invalid argument. Bound: network.allowOrigins >= 1."
    many = refused(normalize_network, {"blockOrigins": [f"https://h{i}.test" for i in range(101)]})
    assert many.message == "Invalid argument. Bound: network.blockOrigins <= 100."


HEADER_RULE = "not Host, Cookie, Content-Length or a hop-by-hop header"


@pytest.mark.parametrize(
    ("name", "rule"),
    [
        ("Host", HEADER_RULE),
        ("cookie", HEADER_RULE),
        ("Content-Length", HEADER_RULE),
        ("Connection", HEADER_RULE),
        ("keep-alive", HEADER_RULE),
        ("Proxy-Authorization", HEADER_RULE),
        ("proxy-connection", HEADER_RULE),
        ("TE", HEADER_RULE),
        ("Trailer", HEADER_RULE),
        ("Transfer-Encoding", HEADER_RULE),
        ("Upgrade", HEADER_RULE),
        ("X Bad", "an HTTP token"),
        ("X-Bad:", "an HTTP token"),
        ("X-Ünïcode", "an HTTP token"),
        ("X-Line\r\nInjected", "an HTTP token"),
        ("", "1..128 characters"),
        ("X" * 129, "1..128 characters"),
    ],
)
def test_refused_header_names(name: str, rule: str) -> None:
    raw = {"extraHeaders": {"X-Fine": "1", name: SECRET}}
    field, got = field_of(normalize_network, raw)
    assert field == "contextSettings.network.extraHeaders[1].name"
    assert got.startswith(rule), got


@pytest.mark.parametrize(
    ("value", "rule"),
    [
        (f"{SECRET}\r\nX-Injected: 1", "printable ASCII only"),
        (f"{SECRET}\x00", "printable ASCII only"),
        (f"{SECRET}é", "printable ASCII only"),
        (f"{SECRET}\t", "printable ASCII only"),
        (7, "string"),
        (SECRET * 200, "at most 2048 characters"),
    ],
)
def test_refused_header_values_are_never_echoed(value: Any, rule: str) -> None:
    error = refused(normalize_network, {"extraHeaders": {"X-Token": value}})
    assert error.details["field"] == "contextSettings.network.extraHeaders[0].value"
    assert error.details["rule"].startswith(rule)
    blob = json.dumps(error_payload(error)) + repr(error.internal) + str(error)
    assert SECRET not in blob and "X-Token" not in blob


def test_header_names_are_unique_ignoring_case_and_bounded() -> None:
    assert field_of(normalize_network, {"extraHeaders": {"X-A": "1", "x-a": "2"}}) == (
        "contextSettings.network.extraHeaders[1].name",
        "each header name once (ignoring case)",
    )
    many = {f"X-{i}": "v" for i in range(33)}
    assert field_of(normalize_network, {"extraHeaders": many})[1] == "at most 32 headers"
    big = {f"X-{i}": "v" * 2_000 for i in range(5)}
    error = refused(normalize_network, {"extraHeaders": big})
    assert error.details["field"] == "contextSettings.network.extraHeaders"
    assert error.message.endswith("Bound: network.extraHeaders bytes <= 8192.")
    fine = {"Authorization": "Bearer x", "X-Empty": "", "If-None-Match": '"etag"'}
    assert normalize_network({"extraHeaders": fine})["extraHeaders"] == fine


# --- merging (browser_session_update) -----------------------------------------------------------


def test_merge_replaces_given_fields_and_keeps_the_others() -> None:
    current = normalize_network(
        {"allowOrigins": ["https://a.test"], "extraHeaders": {"X-A": "1"}, "offline": True}
    )
    assert merge_network(current, {"offline": False}) == {
        "allowOrigins": ["https://a.test"],
        "offline": False,
        "extraHeaders": {"X-A": "1"},
    }
    replaced = merge_network(
        current, {"allowOrigins": ["https://b.test"], "extraHeaders": {"X-B": "2"}}
    )
    assert replaced["allowOrigins"] == ["https://b.test"]
    assert replaced["extraHeaders"] == {"X-B": "2"}  # the headers are replaced as a whole
    cleared = merge_network(current, {"allowOrigins": [], "extraHeaders": {}})
    assert cleared == {"offline": True}
    assert merge_network({}, {}) == {}
    assert current["allowOrigins"] == ["https://a.test"]  # the current value is not touched


def test_merge_errors_name_the_update_argument() -> None:
    assert field_of(merge_network, {}, {"blockOrigins": ["x"]}) == (
        "network.blockOrigins[0]",
        "an absolute http(s) origin, e.g. https://example.com",
    )
    assert field_of(merge_network, {}, {"bogus": 1})[0] == "network"
    assert field_of(merge_network, {}, "offline")[0] == "network"


# --- proxy --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "server"),
    [
        ("http://Proxy.Example:3128", "http://proxy.example:3128"),
        ("https://proxy.example:443/", "https://proxy.example:443"),
        ("socks5://127.0.0.1:1080", "socks5://127.0.0.1:1080"),
        ("SOCKS5://[0::1]:1080", "socks5://[::1]:1080"),
        ("http://proxy.example:80", "http://proxy.example:80"),  # an explicit port stays
    ],
)
def test_proxy_server_is_canonical(given: str, server: str) -> None:
    assert normalize_proxy({"server": given}) == {"server": server}


@pytest.mark.parametrize(
    ("server", "rule"),
    [
        ("proxy.example:3128", "http://, https:// or socks5://"),
        ("socks4://proxy.example:1080", "http://, https:// or socks5://"),
        ("ftp://proxy.example:21", "http://, https:// or socks5://"),
        ("http://proxy.example", "an explicit port"),
        ("http://proxy.example:", "an explicit port"),
        ("http://[::1]", "an explicit port"),
        ("http://proxy.example:0", "a port of 1..65535"),
        ("http://proxy.example:65536", "a port of 1..65535"),
        ("http://proxy.example:8o", "a port of 1..65535"),
        (f"http://user:{SECRET}@proxy.example:3128", "no credentials in the server"),
        ("http://proxy.example:3128/path", "an origin: no path beyond /"),
        ("http://proxy.example:3128?x", "no query"),
        ("http://*.example:3128", "no wildcards"),
        ("http://:3128", "an origin with a host"),
        ("", "at least 1 character"),
    ],
)
def test_bad_proxy_servers_name_the_field(server: str, rule: str) -> None:
    error = refused(normalize_context_settings, {"proxy": {"server": server}})
    assert error.details["field"] == "contextSettings.proxy.server"
    assert error.details["rule"].startswith(rule), error.details["rule"]
    assert SECRET not in json.dumps(error_payload(error)) + repr(error.internal)


def test_proxy_bypass_and_credentials() -> None:
    out = normalize_proxy(
        {
            "server": "http://p.test:3128",
            "bypass": " .internal.test , 10.0.0.0/8,<local> ",
            "username": "buyer",
            "password": "",
        }
    )
    assert out == {
        "server": "http://p.test:3128",
        "bypass": ".internal.test,10.0.0.0/8,<local>",
        "username": "buyer",
        "password": "",
    }
    base = {"server": "http://p.test:3128"}
    cases: list[tuple[dict[str, Any], str, str]] = [
        ({}, "contextSettings.proxy.server", "required"),
        ({**base, "bypass": "a,,b"}, "contextSettings.proxy.bypass[1]", "a comma-separated"),
        ({**base, "bypass": "a b"}, "contextSettings.proxy.bypass[0]", "a comma-separated"),
        ({**base, "bypass": ",".join("h" for _ in range(101))}, "contextSettings.proxy.bypass",
         "at most 100 entries"),
        ({**base, "password": SECRET}, "contextSettings.proxy.password",
         "only together with proxy.username"),
        ({**base, "username": ""}, "contextSettings.proxy.username", "at least 1 character"),
        ({**base, "username": "u", "password": SECRET + "\n"}, "contextSettings.proxy.password",
         "no control characters"),
        ({**base, "username": "u" * 257}, "contextSettings.proxy.username", "at most 256"),
        ({"server": "socks5://p.test:1080", "username": SECRET, "password": SECRET},
         "contextSettings.proxy.username", "no credentials with socks5"),
        ({**base, "user": "u"}, "contextSettings.proxy", "only the keys server"),
    ]  # fmt: skip
    for raw, field, rule in cases:
        error = refused(normalize_proxy, raw)
        assert error.details["field"] == field, raw
        assert error.details["rule"].startswith(rule), (raw, error.details["rule"])
        assert SECRET not in json.dumps(error_payload(error)) + repr(error.internal)


# --- in context settings, and the view ----------------------------------------------------------


def test_network_and_proxy_come_last_in_context_settings() -> None:
    out = normalize_context_settings(
        {
            "proxy": {"server": "http://p.test:3128"},
            "network": {"offline": True},
            "colorScheme": "dark",
            "blockResources": ["image"],
        }
    )
    assert list(out) == ["colorScheme", "blockResources", "network", "proxy"]
    error = refused(normalize_context_settings, {"network": {"allowOrigins": ["a", "b", "c"]}})
    assert error.details["field"] == "contextSettings.network.allowOrigins[0]"


def test_public_settings_redact_header_values_and_credentials() -> None:
    settings = normalize_context_settings(
        {
            "network": {"extraHeaders": {"X-Api-Key": SECRET}, "offline": False},
            "proxy": {"server": "http://p.test:3128", "username": "buyer", "password": SECRET},
            "locale": "de-DE",
        }
    )
    view = public_settings(settings)
    assert view == {
        "locale": "de-DE",
        "network": {"offline": False, "extraHeaders": {"X-Api-Key": REDACTED}},
        "proxy": {"server": "http://p.test:3128", "username": REDACTED, "password": REDACTED},
    }
    assert SECRET not in json.dumps(view) and "buyer" not in json.dumps(view)
    assert settings["network"]["extraHeaders"]["X-Api-Key"] == SECRET  # the record keeps it
    assert public_settings({"network": {}}) == {"network": {}}
    assert public_settings({}) == {}
