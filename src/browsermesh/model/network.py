"""`contextSettings.network` and `contextSettings.proxy` (issue 19): parsing, origin matching and
the public form shown in session views.

`network` is the session's network policy: `allowOrigins` / `blockOrigins` (origin patterns),
`offline` and `extraHeaders`. `proxy` is where the session's traffic goes. Both are validated
field by field before any browser resource exists: every violation is `INVALID_ARGUMENT` naming
the field by JSON path (`contextSettings.network.allowOrigins[2]`,
`contextSettings.proxy.server`; `network.…` for `browser_session_update`) and the rule it broke,
never the value.

Rules where the issue leaves room (documented decisions: docs/decisions.md, "Network policy and
proxy"):

- **origin pattern**: `scheme://host[:port]` with scheme `http` or `https`, the host rules of
  `settings.canonical_origin` (lowercase, IDNA, dotted-quad IPv4, bracketed compressed IPv6),
  no path beyond `/`, no credentials, query or fragment. A missing port means the scheme's
  default port (an origin, not "any port"). `*.` may open the host (`https://*.example.com`):
  it matches every subdomain at any depth but not `example.com` itself (as in CSP); a wildcard
  is refused anywhere else, on IP addresses and as a bare `*`. A trailing dot is dropped
  (`example.com.` is `example.com`, so a block list cannot be side-stepped by it). Returned in
  canonical form; the same pattern twice in one list is refused.
- **matching**: a URL is blocked when it matches a `blockOrigins` pattern, or when
  `allowOrigins` is set and it matches none of them (block wins over allow). `ws:` is matched
  as `http:` and `wss:` as `https:` (a WebSocket belongs to the origin it would be fetched
  from). URLs of other schemes (`data:`, `blob:`, `about:`) never leave the browser and are
  not governed. An IP address is judged in one spelling (`address_host`, issue 30): IPv4 in
  any form the URL standard reads is dotted-quad, an IPv4-mapped IPv6 address is its IPv4
  address, and the unspecified addresses `0.0.0.0` / `[::]` are `127.0.0.1` / `[::1]` (where a
  connection to them goes); names stay names.
- **lists**: 1..100 patterns each at creation (`[]` is refused there: omit the field for no
  list, so an empty computed allow list can never silently mean "everything"); in
  `browser_session_update`, `[]` removes the list.
- **extraHeaders**: 1..32 names (RFC 7230 tokens of 1..128 characters, each name once ignoring
  case), values of 0..2,048 printable ASCII characters, at most 8,192 bytes in all; `Host`,
  `Cookie`, `Content-Length` and the hop-by-hop headers (`Connection`, `Keep-Alive`, `Proxy-*`,
  `TE`, `Trailer`, `Transfer-Encoding`, `Upgrade`) are refused. In `browser_session_update` the
  given object replaces every header (`{}` removes them all).
- **proxy**: `server` is `http|https|socks5://host:port` (the port is required: proxies have no
  common default), host rules as above, no credentials, path, query or fragment; `bypass` is
  Chromium's comma-separated bypass list (1..100 entries of printable ASCII without spaces,
  returned joined by `,`); `username` (1..256) and `password` (0..256, only with `username`)
  have no control characters and are refused with `socks5` (Chromium cannot authenticate to a
  SOCKS5 proxy).
- **views**: `public_settings` shows header names with the value `[redacted]` and proxy
  credentials as `"username": "[redacted]"` / `"password": "[redacted]"`; the real values stay
  in the session record for the engine only.

Pure rules: no Playwright, no MCP, no I/O.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, NoReturn
from urllib.parse import unquote, urlsplit

from browsermesh.errors import Bound, BrowserMeshError, invalid_argument
from browsermesh.model.addresses import address_host
from browsermesh.model.text import CONTROL_RE, SURROGATE_RE

NETWORK_FIELDS: Final = ("allowOrigins", "blockOrigins", "offline", "extraHeaders")
"""The fields of `network`, in the order they appear in the normalized result."""
PROXY_FIELDS: Final = ("server", "bypass", "username", "password")
MAX_ORIGIN_PATTERNS: Final = 100
MAX_PATTERN_CHARS: Final = 2_000
MAX_EXTRA_HEADERS: Final = 32
MAX_HEADER_NAME_CHARS: Final = 128
MAX_HEADER_VALUE_CHARS: Final = 2_048
MAX_HEADER_BYTES: Final = 8_192
MAX_PROXY_SERVER_CHARS: Final = 2_000
MAX_BYPASS_CHARS: Final = 2_000
MAX_BYPASS_ENTRIES: Final = 100
MAX_CREDENTIAL_CHARS: Final = 256
PROXY_SCHEMES: Final = ("http", "https", "socks5")
REDACTED: Final = "[redacted]"
REFUSED_HEADERS: Final = frozenset(
    {
        "host",
        "cookie",
        "content-length",
        "connection",
        "keep-alive",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    }
)
"""Header names `extraHeaders` may not set (plus every `Proxy-*` name): the browser owns them."""

_TOKEN_RE: Final = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_PRINTABLE_RE: Final = re.compile(r"[\x20-\x7e]*")
_BYPASS_ENTRY_RE: Final = re.compile(r"[\x21-\x2b\x2d-\x7e]+")  # printable, no space or comma
_SCHEME_RE: Final = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")
_DEFAULT_PORTS: Final = {"http": 80, "https": 443}
_WS_SCHEMES: Final = {"ws": "http", "wss": "https"}
_HEADER_RULE: Final = (
    "not Host, Cookie, Content-Length or a hop-by-hop header (Connection, Keep-Alive, Proxy-*, "
    "TE, Trailer, Transfer-Encoding, Upgrade)"
)


def _fail(field: str, rule: str, bound: Bound | None = None) -> NoReturn:
    raise invalid_argument(field, rule, bound=bound)


def _mapping(value: object, field: str, allowed: tuple[str, ...]) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        _fail(field, "object")
    for key in value:
        if not isinstance(key, str) or key not in allowed:
            _fail(field, f"only the keys {', '.join(allowed)}")
    return value


def _text(value: object, field: str, low: int, high: int) -> str:
    """A string of low..high code points without control characters or lone surrogates."""
    if not isinstance(value, str):
        _fail(field, "string")
    if len(value) < low:
        _fail(field, f"at least {low} character{'s' if low != 1 else ''}")
    if len(value) > high:
        _fail(field, f"at most {high} characters", Bound(_short(field), "<=", high))
    if CONTROL_RE.search(value):
        _fail(field, "no control characters")
    if SURROGATE_RE.search(value):
        _fail(field, "valid Unicode (no lone surrogates)")
    return value


def _short(field: str) -> str:
    """The bound clause's name: the field without the `contextSettings.` prefix."""
    return field.removeprefix("contextSettings.")


def _origin(value: str, field: str) -> str:
    """`settings.canonical_origin` (the one origin parser), its failure re-addressed to `field`."""
    from browsermesh.model.settings import canonical_origin  # settings imports this module

    try:
        return canonical_origin(value, "origin")
    except BrowserMeshError as err:
        rule = str(err.internal.get("requirement") or "an origin")
        raise invalid_argument(field, rule) from None


# --- origin patterns ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OriginPattern:
    """One `allowOrigins`/`blockOrigins` entry: `text` is its canonical form."""

    text: str
    scheme: str
    host: str  # as `address_host` spells it (IPv6 without brackets); the suffix for a wildcard
    port: int
    wildcard: bool

    def matches(self, scheme: str, host: str, port: int) -> bool:
        if scheme != self.scheme or port != self.port:
            return False
        if self.wildcard:
            return host.endswith("." + self.host)
        return host == self.host


def parse_origin_pattern(value: object, field: str) -> OriginPattern:
    """An origin pattern (`https://example.com`, `http://127.0.0.1:8080`,
    `https://*.example.com`) in canonical form; see the module doc for the rules."""
    raw = _text(value, field, 1, MAX_PATTERN_CHARS)
    wildcard = False
    candidate = raw
    scheme_match = _SCHEME_RE.match(raw)
    if scheme_match is not None and raw[scheme_match.end() :].startswith("*."):
        wildcard = True
        candidate = scheme_match.group(0) + raw[scheme_match.end() + 2 :]
    if "*" in candidate:
        _fail(field, "a wildcard only as a leading *. of the host, e.g. https://*.example.com")
    canonical = _origin(candidate, field)
    scheme, _, netloc = canonical.partition("://")
    host, port = _split_netloc(netloc, scheme)
    if host.endswith("."):
        host = host.rstrip(".")
        if not host:
            _fail(field, "a valid host name")
    bare = host[1:-1] if host.startswith("[") else host
    if wildcard and _is_ip(bare):
        _fail(field, "a host name after *. (not an IP address)")
    shown_port = "" if port == _DEFAULT_PORTS[scheme] else f":{port}"
    text = f"{scheme}://{'*.' if wildcard else ''}{host}{shown_port}"
    return OriginPattern(text, scheme, address_host(bare), port, wildcard)


def _split_netloc(netloc: str, scheme: str) -> tuple[str, int]:
    """`host[:port]` of a canonical origin → (host as written, effective port)."""
    if netloc.startswith("["):
        end = netloc.index("]")
        host, rest = netloc[: end + 1], netloc[end + 1 :]
    else:
        host, _, port_text = netloc.partition(":")
        rest = f":{port_text}" if port_text else ""
    port = int(rest[1:]) if rest else _DEFAULT_PORTS[scheme]
    return host, port


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def url_origin(url: str) -> tuple[str, str, int] | None:
    """`(scheme, host, port)` of an `http(s)`/`ws(s)` URL as the policy compares it (`ws` as
    `http`, `wss` as `https`; host lowercase without a trailing dot, an IP address in the one
    spelling `address_host` gives it; the effective port). None for a URL the policy does not
    govern (`data:`, `blob:`, `about:`, …). A governed URL whose host or port cannot be read
    yields an empty host, which no pattern matches."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    scheme = _WS_SCHEMES.get(scheme, scheme)
    if scheme not in _DEFAULT_PORTS:
        return None
    try:
        port = parts.port
    except ValueError:
        return (scheme, "", 0)
    # Chromium decodes percent-escapes in a host before it reads it (`127.0.0.%31`).
    host = unquote(parts.hostname or "").rstrip(".")
    if ":" in host:
        try:
            host = ipaddress.IPv6Address(host.split("%", 1)[0]).compressed
        except ValueError:
            return (scheme, "", 0)
    elif host and not host.isascii():
        try:
            host = host.encode("idna").decode("ascii").lower()
        except UnicodeError:
            return (scheme, "", 0)
    return (scheme, address_host(host), port if port is not None else _DEFAULT_PORTS[scheme])


@dataclass(frozen=True, slots=True)
class OriginPolicy:
    """A session's origin lists; `allow` None means no allow list."""

    allow: tuple[OriginPattern, ...] | None
    block: tuple[OriginPattern, ...]

    def blocks(self, url: str) -> bool:
        """Whether a request to `url` must not leave the browser (block wins over allow)."""
        origin = url_origin(url)
        if origin is None:
            return False
        if any(p.matches(*origin) for p in self.block):
            return True
        return self.allow is not None and not any(p.matches(*origin) for p in self.allow)


def origin_policy(network: Mapping[str, Any] | None) -> OriginPolicy | None:
    """The policy of a normalized `network` setting; None when it has no origin list."""
    if not network:
        return None
    allow, block = network.get("allowOrigins"), network.get("blockOrigins")
    if not allow and not block:
        return None
    parse = parse_origin_pattern
    return OriginPolicy(
        allow=None if not allow else tuple(parse(p, "allowOrigins") for p in allow),
        block=tuple(parse(p, "blockOrigins") for p in block or ()),
    )


# --- network ------------------------------------------------------------------------------------


def _patterns(value: object, field: str, *, allow_empty: bool) -> list[str]:
    if not isinstance(value, list | tuple):
        _fail(field, "array")
    if not value and not allow_empty:
        _fail(
            field,
            "at least 1 entry (omit the field for no list)",
            Bound(_short(field), ">=", 1),
        )
    if len(value) > MAX_ORIGIN_PATTERNS:
        _fail(
            field,
            f"at most {MAX_ORIGIN_PATTERNS} entries",
            Bound(_short(field), "<=", MAX_ORIGIN_PATTERNS),
        )
    out: list[str] = []
    for index, item in enumerate(value):
        text = parse_origin_pattern(item, f"{field}[{index}]").text
        if text in out:
            _fail(f"{field}[{index}]", "each origin pattern once (after canonicalization)")
        out.append(text)
    return out


def _headers(value: object, field: str, *, allow_empty: bool) -> dict[str, str]:
    if not isinstance(value, Mapping):
        _fail(field, "object")
    if not value and not allow_empty:
        _fail(field, "at least 1 header (omit the field for none)", Bound(_short(field), ">=", 1))
    if len(value) > MAX_EXTRA_HEADERS:
        _fail(
            field,
            f"at most {MAX_EXTRA_HEADERS} headers",
            Bound(_short(field), "<=", MAX_EXTRA_HEADERS),
        )
    out: dict[str, str] = {}
    seen: set[str] = set()
    size = 0
    for name, header_value in value.items():
        # A name is the caller's text too: the path never carries it, only its position.
        path = f"{field}[{len(out)}]"
        if not isinstance(name, str) or not 1 <= len(name) <= MAX_HEADER_NAME_CHARS:
            _fail(f"{path}.name", f"1..{MAX_HEADER_NAME_CHARS} characters")
        if not _TOKEN_RE.fullmatch(name):
            _fail(f"{path}.name", "an HTTP token (letters, digits and !#$%&'*+-.^_`|~)")
        folded = name.lower()
        if folded in REFUSED_HEADERS or folded.startswith("proxy-"):
            _fail(f"{path}.name", _HEADER_RULE)
        if folded in seen:
            _fail(f"{path}.name", "each header name once (ignoring case)")
        seen.add(folded)
        if not isinstance(header_value, str):
            _fail(f"{path}.value", "string")
        if len(header_value) > MAX_HEADER_VALUE_CHARS:
            _fail(
                f"{path}.value",
                f"at most {MAX_HEADER_VALUE_CHARS} characters",
                Bound(_short(f"{path}.value"), "<=", MAX_HEADER_VALUE_CHARS),
            )
        if not _PRINTABLE_RE.fullmatch(header_value):
            _fail(f"{path}.value", "printable ASCII only (no control or non-ASCII characters)")
        size += len(name) + len(header_value)
        if size > MAX_HEADER_BYTES:
            _fail(
                field,
                f"at most {MAX_HEADER_BYTES} bytes of names and values",
                Bound(_short(field) + " bytes", "<=", MAX_HEADER_BYTES),
            )
        out[name] = header_value
    return out


def _network(raw: object, prefix: str, *, update: bool) -> dict[str, Any]:
    """The given `network` fields, validated (in NETWORK_FIELDS order)."""
    network = _mapping(raw, prefix, NETWORK_FIELDS)
    out: dict[str, Any] = {}
    for key in NETWORK_FIELDS:
        if key not in network:
            continue
        value, field = network[key], f"{prefix}.{key}"
        if key in ("allowOrigins", "blockOrigins"):
            out[key] = _patterns(value, field, allow_empty=update)
        elif key == "offline":
            if not isinstance(value, bool):
                _fail(field, "boolean")
            out[key] = value
        else:
            out[key] = _headers(value, field, allow_empty=update)
    return out


def normalize_network(raw: object, prefix: str = "contextSettings.network") -> dict[str, Any]:
    """`contextSettings.network` validated and normalized; only given fields appear (`{}` is
    valid: a session that may get a policy later)."""
    return _network(raw, prefix, update=False)


def merge_network(
    current: Mapping[str, Any], raw: object, prefix: str = "network"
) -> dict[str, Any]:
    """The session's `network` after `browser_session_update`: each given field replaces the
    current one (an empty list or `{}` removes it), omitted fields stay."""
    given = _network(raw, prefix, update=True)
    merged = {**current, **given}
    return {
        key: merged[key]
        for key in NETWORK_FIELDS
        if key in merged and (key == "offline" or merged[key])
    }


# --- proxy --------------------------------------------------------------------------------------


def _proxy_server(value: object, field: str) -> str:
    raw = _text(value, field, 1, MAX_PROXY_SERVER_CHARS)
    match = _SCHEME_RE.match(raw)
    scheme = match.group(1).lower() if match is not None else ""
    if match is None or scheme not in PROXY_SCHEMES:
        _fail(
            field, "http://, https:// or socks5:// then host:port, e.g. http://proxy.example:3128"
        )
    assert match is not None
    rest = raw[match.end() :]
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0]
    if "@" in authority:
        _fail(field, "no credentials in the server (use proxy.username and proxy.password)")
    if authority.startswith("["):
        end = authority.find("]")
        port_text = (
            authority[end + 2 :] if end != -1 and authority[end + 1 : end + 2] == ":" else ""
        )
    else:
        port_text = authority.rpartition(":")[2] if ":" in authority else ""
    if not port_text:
        _fail(field, "an explicit port, e.g. http://proxy.example:3128")
    if not port_text.isascii() or not port_text.isdigit() or not 1 <= int(port_text) <= 65_535:
        _fail(field, "a port of 1..65535")
    # The host, path, query and fragment rules are the origin's (`http` only for parsing).
    canonical = _origin("http://" + rest, field)
    host, _ = _split_netloc(canonical.partition("://")[2], "http")
    return f"{scheme}://{host}:{int(port_text)}"


def _bypass(value: object, field: str) -> str:
    raw = _text(value, field, 1, MAX_BYPASS_CHARS)
    entries = [entry.strip() for entry in raw.split(",")]
    if len(entries) > MAX_BYPASS_ENTRIES:
        _fail(
            field,
            f"at most {MAX_BYPASS_ENTRIES} entries",
            Bound(_short(field), "<=", MAX_BYPASS_ENTRIES),
        )
    for index, entry in enumerate(entries):
        if not _BYPASS_ENTRY_RE.fullmatch(entry):
            _fail(
                f"{field}[{index}]",
                "a comma-separated list of hosts (e.g. .internal.example, 10.0.0.0/8, <local>)",
            )
    return ",".join(entries)


def normalize_proxy(raw: object, prefix: str = "contextSettings.proxy") -> dict[str, str]:
    """`contextSettings.proxy` validated and normalized (see the module doc)."""
    proxy = _mapping(raw, prefix, PROXY_FIELDS)
    if "server" not in proxy:
        _fail(f"{prefix}.server", "required")
    out = {"server": _proxy_server(proxy["server"], f"{prefix}.server")}
    if "bypass" in proxy:
        out["bypass"] = _bypass(proxy["bypass"], f"{prefix}.bypass")
    if "username" in proxy:
        out["username"] = _text(proxy["username"], f"{prefix}.username", 1, MAX_CREDENTIAL_CHARS)
    if "password" in proxy:
        if "username" not in proxy:
            _fail(f"{prefix}.password", "only together with proxy.username")
        out["password"] = _text(proxy["password"], f"{prefix}.password", 0, MAX_CREDENTIAL_CHARS)
    if "username" in out and out["server"].startswith("socks5:"):
        _fail(
            f"{prefix}.username",
            "no credentials with socks5 (Chromium cannot authenticate to a SOCKS5 proxy)",
        )
    return out


# --- views --------------------------------------------------------------------------------------


def public_settings(settings: Mapping[str, Any]) -> dict[str, Any]:
    """Normalized context settings as a session view shows them: header values and proxy
    credentials replaced by `[redacted]`, everything else as it is."""
    out = dict(settings)
    network = out.get("network")
    if isinstance(network, Mapping) and "extraHeaders" in network:
        out["network"] = {
            **network,
            "extraHeaders": dict.fromkeys(network["extraHeaders"], REDACTED),
        }
    proxy = out.get("proxy")
    if isinstance(proxy, Mapping):
        out["proxy"] = {
            key: REDACTED if key in ("username", "password") else value
            for key, value in proxy.items()
        }
    return out


def origin_of(url: str) -> str | None:
    """`scheme://host[:port]` of an http(s) URL as `location.origin` spells it (Chromium's URLs
    are already canonical: lower-case host, no default port); None for any other URL."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"
