"""Context-settings validation and normalization (reference §12).

`normalize_context_settings` turns the `contextSettings` argument of `browser_session_create` into
the normalized wire-form dict shown in `SessionView.contextSettings`: only supplied fields appear
(in the reference's field order), `{}` when none. Every violation is `INVALID_ARGUMENT` whose
details name the field by JSON path (`contextSettings.viewport.width`,
`contextSettings.permissions[0].origin`) and the rule it broke (`at most 10000`), never the value
(integer range violations also carry a bound clause).

`CONTEXT_SETTINGS` (issue 32) is the catalogue of those fields, one `ContextSetting`
(model/context_setting.py) each: its parser, how the engine applies it
(`engine.playwright_engine.context_kwargs`) and how the test export reproduces it
(`model.test_export`), its default. No other list of the field names exists.

Normalization rules where the reference leaves room (documented decisions):

- **locale**: the input must be a well-formed BCP 47 tag (RFC 5646 syntax: hyphens only, so
  `en_US` or `en_US,fr` are rejected; the irregular grandfathered tags such as `i-klingon` are
  accepted), `langcodes.tag_is_valid` must accept it, and `langcodes.standardize_tag` must turn it
  into exactly one valid, well-formed tag with a determined primary language (not `und`, not a
  private-use-only `x-…` tag, no leftover extlang). That canonical tag is returned
  (`EN-us` → `en-US`, `iw` → `he`, `zh-cmn-Hans` → `zh-Hans`).
- **timezoneId**: zone names are matched case-insensitively against
  `zoneinfo.available_timezones()` (minus the non-IANA system entries `localtime`, `posixrules` and
  `Factory`) and returned in their IANA spelling. Every name of the UTC/GMT equivalence class
  (`UTC`, `Etc/UTC`, `Etc/UCT`, `UCT`, `Etc/Universal`, `Universal`, `Etc/Zulu`, `Zulu`, `GMT`,
  `Etc/GMT`, `Etc/GMT+0`, `Etc/GMT-0`, `Etc/GMT0`, `GMT+0`, `GMT-0`, `GMT0`, `Etc/Greenwich`,
  `Greenwich`) is returned as `UTC`, like ECMA-402 does; these are accepted even without tzdata.
  Other IANA links (e.g. `US/Eastern`) are kept as given, because `zoneinfo` exposes no link table.
- **origin**: absolute `http`/`https` URL; scheme and host lowercased; internationalized host
  names converted to their IDNA (punycode) form; default ports (80/443) dropped, other ports kept
  as decimal; `/` or empty path only; no credentials, query (even an empty `?`), fragment (even an
  empty `#`), whitespace, percent-escapes or `*` anywhere. A host ending in a number must be a
  dotted-quad IPv4 address; IPv6 literals are returned bracketed in compressed lowercase form.
- **blockResources** (issue 16): 1..11 distinct resource types from
  :data:`BLOCKABLE_RESOURCE_TYPES` (the observe filters' list without `document`, which would
  break navigation, and `websocket`, which context routing never sees); returned in that list's
  order, so equal sets read the same (`["font", "image"]` → `["image", "font"]`).
- **device** (issue 19): one of Playwright's device descriptors, matched case-insensitively and
  returned in Playwright's spelling; `isMobile` and `hasTouch` are booleans. Explicit fields win
  over the descriptor's when the context is made (model/devices.py has the merge rules).
- **initScripts** (issue 36): parsed by `model/init_scripts.py` (bounds, `eval` profile, view).
- **network**, **proxy** (issue 19): validated and normalized by `model/network.py`.
- **numbers**: booleans never count as numbers; `viewport` sizes accept integral floats (as JSON
  Schema does) and are returned as ints; other numbers are returned as given.

Size: the one catalogue of context settings (issue 32) with the parsers of its plain fields,
each beside the rules above; fields with rules of their own are parsed in their own modules
(model/devices.py, model/network.py, model/init_scripts.py).

Pure rules: no Playwright, no MCP, no file I/O of our own (`zoneinfo` reads its database).
"""

from __future__ import annotations

import functools
import ipaddress
import math
import re
import zoneinfo
from collections.abc import Mapping
from typing import Any, Final, NoReturn
from urllib.parse import urlsplit

from browsermesh.errors import Bound, invalid_argument
from browsermesh.model.context_setting import ContextSetting, Parser
from browsermesh.model.devices import canonical_device
from browsermesh.model.init_scripts import INIT_SCRIPTS, normalize_init_scripts
from browsermesh.model.network import normalize_network, normalize_proxy, public_settings
from browsermesh.model.observe_query import RESOURCE_TYPES
from browsermesh.model.text import CONTROL_RE, SURROGATE_RE

MAX_VIEWPORT_SIZE: Final = 10_000
MIN_DEVICE_SCALE_FACTOR: Final = 0.1
MAX_DEVICE_SCALE_FACTOR: Final = 10.0
MAX_LOCALE_CHARS: Final = 64
MAX_TIMEZONE_CHARS: Final = 128
MAX_USER_AGENT_CHARS: Final = 512
MAX_ORIGIN_CHARS: Final = 2_000
MAX_PERMISSIONS: Final = 100
MAX_ACCURACY_METRES: Final = 100_000
COLOR_SCHEMES: Final = ("light", "dark", "no-preference")
REDUCED_MOTION: Final = ("reduce", "no-preference")
PERMISSION_NAMES: Final = ("geolocation",)
UNBLOCKABLE_RESOURCE_TYPES: Final = frozenset({"document", "websocket"})
BLOCKABLE_RESOURCE_TYPES: Final = tuple(
    kind for kind in RESOURCE_TYPES if kind not in UNBLOCKABLE_RESOURCE_TYPES
)
"""What `blockResources` may name: documents stay (navigation needs them) and WebSockets are
not routed, so naming either would promise what the context cannot do."""

_PREFIX: Final = "contextSettings"

# RFC 5646 `langtag` / `privateuse` (case-insensitive). Grandfathered "regular" tags such as
# `art-lojban` or `zh-min-nan` already match `langtag`; the irregular ones are listed below.
_LANGTAG_RE: Final = re.compile(
    r"""
    (?:
      (?:[a-z]{2,3}(?:-[a-z]{3}){0,3}|[a-z]{4}|[a-z]{5,8})  # language (+ extlang)
      (?:-[a-z]{4})?                                         # script
      (?:-(?:[a-z]{2}|[0-9]{3}))?                            # region
      (?:-(?:[a-z0-9]{5,8}|[0-9][a-z0-9]{3}))*               # variants
      (?:-[0-9a-wyz](?:-[a-z0-9]{2,8})+)*                    # extensions
      (?:-x(?:-[a-z0-9]{1,8})+)?                             # private use
    |
      x(?:-[a-z0-9]{1,8})+                                   # private use only
    )
    """,
    re.IGNORECASE | re.VERBOSE | re.ASCII,
)
_IRREGULAR_GRANDFATHERED: Final = frozenset(
    {
        "en-gb-oed", "i-ami", "i-bnn", "i-default", "i-enochian", "i-hak", "i-klingon", "i-lux",
        "i-mingo", "i-navajo", "i-pwn", "i-tao", "i-tay", "i-tsu", "sgn-be-fr", "sgn-be-nl",
        "sgn-ch-de",
    }
)  # fmt: skip

UTC_ALIASES: Final = frozenset(
    {
        "UTC", "Etc/UTC", "Etc/UCT", "UCT", "Etc/Universal", "Universal", "Etc/Zulu", "Zulu",
        "GMT", "Etc/GMT", "Etc/GMT+0", "Etc/GMT-0", "Etc/GMT0", "GMT+0", "GMT-0", "GMT0",
        "Etc/Greenwich", "Greenwich",
    }
)  # fmt: skip
"""Names that canonicalize to `UTC` (IANA links to `Etc/UTC` or `Etc/GMT`)."""
_UTC_FOLDED: Final = frozenset(name.casefold() for name in UTC_ALIASES)
_NOT_ZONES: Final = frozenset({"localtime", "posixrules", "Factory"})

_ORIGIN_RULE: Final = "an absolute http(s) origin, e.g. https://example.com"
_HOST_RE: Final = re.compile(r"[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?", re.ASCII)
_DEFAULT_PORTS: Final = {"http": 80, "https": 443}


def _fail(path: str, rule: str, bound: Bound | None = None) -> NoReturn:
    """`INVALID_ARGUMENT` at `contextSettings.<path>` (details.field) with `rule`; never the
    value. The bound clause keeps its short name (`viewport.width <= 10000`)."""
    raise invalid_argument(f"{_PREFIX}.{path}" if path else _PREFIX, rule, bound=bound)


def _mapping(value: object, path: str, allowed: frozenset[str]) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        _fail(path, "object")
    for key in value:
        if not isinstance(key, str) or key not in allowed:
            _fail(path, f"only the keys {', '.join(sorted(allowed))}")
    return value


def _number(value: object, path: str) -> int | float:
    """A finite JSON number; booleans are rejected."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        _fail(path, "number")
    if isinstance(value, float) and not math.isfinite(value):
        _fail(path, "finite number")
    return value


def _number_in(value: object, path: str, low: float, high: float) -> int | float:
    number = _number(value, path)
    if number < low:
        _fail(path, f"at least {low:g}")
    if number > high:
        _fail(path, f"at most {high:g}")
    return number


def _integer_in(value: object, path: str, low: int, high: int) -> int:
    number = _number(value, path)
    if isinstance(number, float):
        if not number.is_integer():
            _fail(path, "integer")
        number = int(number)
    if number < low:
        _fail(path, f"at least {low}", Bound(path, ">=", low))
    if number > high:
        _fail(path, f"at most {high}", Bound(path, "<=", high))
    return number


def _text(value: object, path: str, max_chars: int) -> str:
    """A string of 1..max_chars code points without control characters or lone surrogates."""
    if not isinstance(value, str):
        _fail(path, "string")
    if value == "":
        _fail(path, "at least 1 character")
    if len(value) > max_chars:
        _fail(path, f"at most {max_chars} characters", Bound(path, "<=", max_chars))
    if CONTROL_RE.search(value):
        _fail(path, "no control characters")
    if SURROGATE_RE.search(value):
        _fail(path, "valid Unicode (no lone surrogates)")
    return value


def _boolean(value: object, path: str) -> bool:
    if not isinstance(value, bool):
        _fail(path, "boolean")
    return value


def _enum(value: object, path: str, allowed: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in allowed:
        _fail(path, f"one of: {', '.join(allowed)}")
    return value


# --- individual fields -------------------------------------------------------------------------


def _viewport(value: object, path: str) -> dict[str, int]:
    viewport = _mapping(value, path, frozenset({"width", "height"}))
    out: dict[str, int] = {}
    for key in ("width", "height"):
        if key not in viewport:
            _fail(f"{path}.{key}", "required")
        out[key] = _integer_in(viewport[key], f"{path}.{key}", 1, MAX_VIEWPORT_SIZE)
    return out


def canonical_locale(value: object, path: str = "locale") -> str:
    """The canonical BCP 47 form of one locale tag (`EN-us` → `en-US`); see the module doc."""
    # Imported here: langcodes takes a tenth of a second to load, and the engine and the doctor
    # read this module's catalogue without ever parsing a locale.
    import langcodes

    tag = _text(value, path, MAX_LOCALE_CHARS)
    requirement = "exactly one valid BCP 47 language tag, e.g. en-US"
    if not (_LANGTAG_RE.fullmatch(tag) or tag.lower() in _IRREGULAR_GRANDFATHERED):
        _fail(path, requirement)
    if not langcodes.tag_is_valid(tag):
        _fail(path, requirement)
    try:
        canonical = str(langcodes.standardize_tag(tag))
        parsed = langcodes.Language.get(canonical)
    except (ValueError, LookupError):  # LanguageTagError is a ValueError
        _fail(path, requirement)
    if (
        not _LANGTAG_RE.fullmatch(canonical)
        or not langcodes.tag_is_valid(canonical)
        or not parsed.language
        or parsed.language.startswith("x")
        or parsed.extlangs
    ):
        _fail(path, requirement)
    return canonical


@functools.lru_cache(maxsize=1)
def _zone_index() -> Mapping[str, str]:
    """casefolded zone name → IANA spelling, for every zone the interpreter knows."""
    return {
        name.casefold(): name for name in zoneinfo.available_timezones() if name not in _NOT_ZONES
    }


def canonical_timezone(value: object, path: str = "timezoneId") -> str:
    """A valid IANA zone name in canonical form (`Etc/UTC` → `UTC`); see the module doc."""
    name = _text(value, path, MAX_TIMEZONE_CHARS)
    folded = name.casefold()
    if folded in _UTC_FOLDED:
        return "UTC"
    found = _zone_index().get(folded)
    if found is None:
        _fail(path, "a valid IANA time zone name, e.g. Europe/Paris or UTC")
    return found


def _geolocation(value: object, path: str) -> dict[str, int | float]:
    geo = _mapping(value, path, frozenset({"latitude", "longitude", "accuracy"}))
    out: dict[str, int | float] = {}
    for key, low, high in (("latitude", -90, 90), ("longitude", -180, 180)):
        if key not in geo:
            _fail(f"{path}.{key}", "required")
        out[key] = _number_in(geo[key], f"{path}.{key}", low, high)
    if "accuracy" in geo:
        out["accuracy"] = _number_in(geo["accuracy"], f"{path}.accuracy", 0, MAX_ACCURACY_METRES)
    return out


def _canonical_host(host: str, path: str) -> str:
    if host.startswith("["):
        if not host.endswith("]"):
            _fail(path, "a valid bracketed IPv6 host")
        try:
            address = ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            _fail(path, "a valid bracketed IPv6 host")
        if address.scope_id is not None:
            _fail(path, "no IPv6 zone identifier")
        return f"[{address.compressed}]"
    if host == "":
        _fail(path, "an origin with a host")
    try:
        ascii_host = host.lower().encode("idna").decode("ascii").lower()
    except UnicodeError:
        _fail(path, "a valid host name")
    if not _HOST_RE.fullmatch(ascii_host):
        _fail(path, "a valid host name")
    last_label = ascii_host.rstrip(".").rsplit(".", 1)[-1]
    if last_label.isdigit() or last_label.startswith("0x"):
        # WHATWG treats such hosts as IPv4; only the plain dotted-quad form is accepted.
        try:
            return str(ipaddress.IPv4Address(ascii_host))
        except ValueError:
            _fail(path, "a dotted-quad IPv4 address (the host ends in a number)")
    return ascii_host


def canonical_origin(value: object, path: str = "origin") -> str:
    """`HTTPS://EXAMPLE.COM:443/` → `https://example.com`; see the module doc for the rules."""
    raw = _text(value, path, MAX_ORIGIN_CHARS)
    if any(ch.isspace() for ch in raw):
        _fail(path, "no whitespace")
    if "*" in raw:
        _fail(path, "no wildcards (*)")
    if "?" in raw:
        _fail(path, "no query (?)")
    if "#" in raw:
        _fail(path, "no fragment (#)")
    if "%" in raw:
        _fail(path, "no percent-escapes")
    try:
        parts = urlsplit(raw)
    except ValueError:
        _fail(path, _ORIGIN_RULE)
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not raw[len(scheme) :].startswith("://"):
        _fail(path, _ORIGIN_RULE)
    if parts.path not in ("", "/"):
        _fail(path, "an origin: no path beyond /")
    netloc = parts.netloc
    if "@" in netloc:
        _fail(path, "no credentials (user:password@)")
    if netloc.startswith("["):
        end = netloc.find("]")
        host, rest = netloc[: end + 1], netloc[end + 1 :]
        if rest and not rest.startswith(":"):
            _fail(path, "a decimal port of 0..65535")
        port_text = rest[1:]
    else:
        host, _, port_text = netloc.partition(":")
    port: int | None = None
    if port_text:
        if not port_text.isdigit() or not port_text.isascii():
            _fail(path, "a decimal port of 0..65535")
        port = int(port_text)
        if port > 65_535:
            _fail(path, "a decimal port of 0..65535")
    canonical_host = _canonical_host(host, path)
    if port is None or port == _DEFAULT_PORTS[scheme]:
        return f"{scheme}://{canonical_host}"
    return f"{scheme}://{canonical_host}:{port}"


def _permissions(value: object, path: str) -> list[dict[str, str]]:
    if not isinstance(value, list | tuple):
        _fail(path, "array")
    if len(value) > MAX_PERMISSIONS:
        _fail(path, f"at most {MAX_PERMISSIONS} entries", Bound(path, "<=", MAX_PERMISSIONS))
    out: list[dict[str, str]] = []
    seen: set[str] = set()
    for index, item in enumerate(value):
        at = f"{path}[{index}]"
        entry = _mapping(item, at, frozenset({"permission", "origin"}))
        if "permission" not in entry:
            _fail(f"{at}.permission", "required")
        permission = _enum(entry["permission"], f"{at}.permission", PERMISSION_NAMES)
        if "origin" not in entry:
            _fail(f"{at}.origin", "required")
        origin = canonical_origin(entry["origin"], f"{at}.origin")
        if origin in seen:
            _fail(f"{at}.origin", "each origin once (after canonicalization)")
        seen.add(origin)
        out.append({"permission": permission, "origin": origin})
    return out


def _block_resources(value: object, path: str) -> list[str]:
    """1..11 distinct blockable resource types, returned in :data:`BLOCKABLE_RESOURCE_TYPES`
    order."""
    most = len(BLOCKABLE_RESOURCE_TYPES)
    if not isinstance(value, list | tuple):
        _fail(path, "array")
    if not value:
        _fail(path, "at least 1 entry", Bound(path, ">=", 1))
    if len(value) > most:
        _fail(path, f"at most {most} entries", Bound(path, "<=", most))
    rule = f"one of: {', '.join(BLOCKABLE_RESOURCE_TYPES)} (never document or websocket)"
    seen: set[str] = set()
    for index, item in enumerate(value):
        if not isinstance(item, str) or item not in BLOCKABLE_RESOURCE_TYPES:
            _fail(f"{path}[{index}]", rule)
        kind = item
        if kind in seen:
            _fail(f"{path}[{index}]", "each resource type once")
        seen.add(kind)
    return [kind for kind in BLOCKABLE_RESOURCE_TYPES if kind in seen]


# --- the catalogue ---------------------------------------------------------------------------


def _device(value: object, path: str) -> str:
    return canonical_device(value, f"{_PREFIX}.{path}")


def _network(value: object, path: str) -> dict[str, Any]:
    return normalize_network(value, f"{_PREFIX}.{path}")


def _proxy(value: object, path: str) -> dict[str, str]:
    return normalize_proxy(value, f"{_PREFIX}.{path}")


def _init_scripts(value: object, path: str) -> list[str]:
    return normalize_init_scripts(value, f"{_PREFIX}.{path}")


def _scale(value: object, path: str) -> int | float:
    return _number_in(value, path, MIN_DEVICE_SCALE_FACTOR, MAX_DEVICE_SCALE_FACTOR)


def _user_agent(value: object, path: str) -> str:
    return _text(value, path, MAX_USER_AGENT_CHARS)


def _one_of(allowed: tuple[str, ...]) -> Parser:
    return lambda value, path: _enum(value, path, allowed)


DEFAULT_VIEWPORT: Final = {"width": 1280, "height": 720}
"""The viewport of a context without `viewport` or `device` (Playwright's default too)."""


def _keyword(name: str, parse: Parser, keyword: str, default: Any = None) -> ContextSetting:
    """A setting the context takes (and the export writes) as one `new_context` argument."""
    return ContextSetting(
        name=name, parse=parse, rule="keyword", keyword=keyword, export="keyword", default=default
    )


CONTEXT_SETTINGS: Final[tuple[ContextSetting, ...]] = (
    # issue 19: a Playwright descriptor; explicit fields win over it (model/devices.py).
    ContextSetting(name="device", parse=_device, rule="descriptor", keyword=None, export="device"),
    _keyword("viewport", _viewport, "viewport", DEFAULT_VIEWPORT),
    _keyword("deviceScaleFactor", _scale, "device_scale_factor"),
    _keyword("isMobile", _boolean, "is_mobile"),
    _keyword("hasTouch", _boolean, "has_touch"),
    _keyword("locale", canonical_locale, "locale"),
    _keyword("timezoneId", canonical_timezone, "timezone_id"),
    _keyword("colorScheme", _one_of(COLOR_SCHEMES), "color_scheme"),
    _keyword("reducedMotion", _one_of(REDUCED_MOTION), "reduced_motion"),
    _keyword("userAgent", _user_agent, "user_agent"),
    _keyword("geolocation", _geolocation, "geolocation"),
    ContextSetting(
        name="permissions",
        parse=_permissions,
        rule="grant",
        keyword=None,
        export="permissions",
    ),
    # issue 16: the context's route aborts them (engine/policy.py); an export has no route.
    ContextSetting(
        name="blockResources",
        parse=_block_resources,
        rule="route",
        keyword=None,
        export="not reproduced",
    ),
    # issue 19: both parsed by model/network.py. An export replays network's service workers,
    # offline and headers, but neither its origin lists nor a proxy (its comment names them).
    ContextSetting(name="network", parse=_network, rule="policy", keyword=None, export="network"),
    ContextSetting(
        name="proxy", parse=_proxy, rule="policy", keyword=None, export="not reproduced"
    ),
    # issue 36: caller JavaScript before every document's own scripts (`eval` profile only).
    ContextSetting(
        name=INIT_SCRIPTS,
        parse=_init_scripts,
        rule="init script",
        keyword=None,
        export="init scripts",
    ),
)
"""Every `contextSettings` field, in the normalized result's order (reference §12)."""

FIELDS: Final = tuple(setting.name for setting in CONTEXT_SETTINGS)
"""The supported fields, in the order they appear in the normalized result."""


# --- entry points -------------------------------------------------------------------------------


def normalize_context_settings(raw: object) -> dict[str, Any]:
    """Validate `contextSettings` (§12) and return its normalized wire form.

    `None` (not supplied) and `{}` give `{}`. Unknown keys, `null` values, booleans posing as
    numbers and every bound violation raise `BrowserMeshError(INVALID_ARGUMENT)` with
    `details.field` (`contextSettings.<path>`) and `details.rule`.
    """
    if raw is None:
        return {}
    settings = _mapping(raw, "", frozenset(FIELDS))
    out: dict[str, Any] = {
        setting.name: setting.parse(settings[setting.name], setting.name)
        for setting in CONTEXT_SETTINGS
        if setting.name in settings
    }
    if out.get("permissions") and "geolocation" not in out:
        _fail("permissions", "non-empty only together with contextSettings.geolocation")
    return out


def geolocation_grant_origins(normalized: Mapping[str, Any]) -> list[str]:
    """The origins to grant `geolocation` to, in order, from an already normalized settings dict."""
    permissions = normalized.get("permissions") or []
    return [entry["origin"] for entry in permissions if entry.get("permission") == "geolocation"]


def settings_view(normalized: Mapping[str, Any]) -> dict[str, Any]:
    """Normalized settings as a session view shows them: `network`'s and `proxy`'s secrets
    redacted (`model.network.public_settings`), `initScripts` as their count, never their text
    (model/init_scripts.py)."""
    out = public_settings(normalized)
    if INIT_SCRIPTS in out:
        out[INIT_SCRIPTS] = len(out[INIT_SCRIPTS])
    return out
