"""Context settings normalization (reference §12)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from browsermesh.errors import BrowserMeshError, ErrorCode
from browsermesh.model.observe_query import RESOURCE_TYPES
from browsermesh.model.settings import (
    BLOCKABLE_RESOURCE_TYPES,
    geolocation_grant_origins,
    normalize_context_settings,
)

GEO = {"latitude": 52.52, "longitude": 13.405}


def _invalid(raw: object, field: str | None = None) -> BrowserMeshError:
    with pytest.raises(BrowserMeshError) as info:
        normalize_context_settings(raw)
    error = info.value
    assert error.code is ErrorCode.INVALID_ARGUMENT
    assert error.internal["field"].startswith("contextSettings")
    assert isinstance(error.internal["requirement"], str) and error.internal["requirement"]
    if field is not None:
        assert error.internal["field"] == field
    return error


def _one(key: str, value: Any) -> Any:
    return normalize_context_settings({key: value})[key]


def _origin(origin: str) -> str:
    out = normalize_context_settings(
        {"geolocation": GEO, "permissions": [{"permission": "geolocation", "origin": origin}]}
    )
    return str(out["permissions"][0]["origin"])


# --- general ------------------------------------------------------------------------------------


def test_absent_and_empty() -> None:
    assert normalize_context_settings(None) == {}
    assert normalize_context_settings({}) == {}


def test_only_supplied_fields_appear() -> None:
    assert normalize_context_settings({"colorScheme": "dark"}) == {"colorScheme": "dark"}


def test_full_example_in_contract_order() -> None:
    raw = {
        "permissions": [{"permission": "geolocation", "origin": "HTTPS://EXAMPLE.COM:443/"}],
        "geolocation": {"latitude": 1, "longitude": 2.5, "accuracy": 10},
        "userAgent": "Agent/1.0",
        "reducedMotion": "reduce",
        "colorScheme": "no-preference",
        "timezoneId": "Etc/UTC",
        "locale": "EN-us",
        "deviceScaleFactor": 2,
        "viewport": {"height": 720, "width": 1280},
    }
    out = normalize_context_settings(raw)
    assert out == {
        "viewport": {"width": 1280, "height": 720},
        "deviceScaleFactor": 2,
        "locale": "en-US",
        "timezoneId": "UTC",
        "colorScheme": "no-preference",
        "reducedMotion": "reduce",
        "userAgent": "Agent/1.0",
        "geolocation": {"latitude": 1, "longitude": 2.5, "accuracy": 10},
        "permissions": [{"permission": "geolocation", "origin": "https://example.com"}],
    }
    assert list(out) == [
        "viewport", "deviceScaleFactor", "locale", "timezoneId", "colorScheme", "reducedMotion",
        "userAgent", "geolocation", "permissions",
    ]  # fmt: skip
    assert geolocation_grant_origins(out) == ["https://example.com"]


def test_input_is_not_mutated_or_aliased() -> None:
    viewport = {"width": 10, "height": 20}
    raw = {"viewport": viewport}
    out = normalize_context_settings(raw)
    out["viewport"]["width"] = 99
    assert viewport == {"width": 10, "height": 20}


@pytest.mark.parametrize("raw", ["x", 1, [], True, ["viewport"]])
def test_not_an_object(raw: object) -> None:
    _invalid(raw, "contextSettings")


def test_unknown_keys_rejected() -> None:
    _invalid({"storageState": {}}, "contextSettings")
    _invalid({"viewport": {"width": 1, "height": 1, "depth": 1}}, "contextSettings.viewport")
    _invalid({"geolocation": {**GEO, "altitude": 3}}, "contextSettings.geolocation")


@pytest.mark.parametrize(
    "key",
    ["viewport", "deviceScaleFactor", "locale", "timezoneId", "colorScheme", "reducedMotion",
     "userAgent", "geolocation", "permissions", "blockResources"],
)  # fmt: skip
def test_null_is_never_accepted(key: str) -> None:
    _invalid({key: None})


# --- viewport / deviceScaleFactor ---------------------------------------------------------------


def test_viewport_boundaries() -> None:
    assert _one("viewport", {"width": 1, "height": 10_000}) == {"width": 1, "height": 10_000}
    _invalid({"viewport": {"width": 0, "height": 10}}, "contextSettings.viewport.width")
    error = _invalid(
        {"viewport": {"width": 10, "height": 10_001}}, "contextSettings.viewport.height"
    )
    assert error.message.endswith("Bound: viewport.height <= 10000.")


def test_viewport_integral_float_becomes_int_but_fractions_fail() -> None:
    out = _one("viewport", {"width": 800.0, "height": 600})
    assert out == {"width": 800, "height": 600}
    assert type(out["width"]) is int
    _invalid({"viewport": {"width": 800.5, "height": 600}}, "contextSettings.viewport.width")


@pytest.mark.parametrize("bad", [True, False, "800", None, math.nan, math.inf, [800]])
def test_viewport_bad_types(bad: object) -> None:
    _invalid({"viewport": {"width": bad, "height": 600}}, "contextSettings.viewport.width")


def test_viewport_missing_dimension() -> None:
    _invalid({"viewport": {"width": 800}}, "contextSettings.viewport.height")
    _invalid({"viewport": [800, 600]}, "contextSettings.viewport")


def test_device_scale_factor() -> None:
    assert _one("deviceScaleFactor", 0.1) == 0.1
    assert _one("deviceScaleFactor", 10) == 10
    assert _one("deviceScaleFactor", 1.5) == 1.5
    for bad in (0.09, 10.01, 0, -1, math.nan, math.inf, -math.inf, True, "2", 10**400):
        _invalid({"deviceScaleFactor": bad}, "contextSettings.deviceScaleFactor")


# --- locale -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        ("EN-us", "en-US"),
        ("en", "en"),
        ("en-US", "en-US"),
        ("de-de", "de-DE"),
        ("zh-hant-tw", "zh-Hant-TW"),
        ("es-419", "es-419"),
        ("iw", "he"),
        ("sr-latn-rs", "sr-Latn-RS"),
        ("de-DE-u-co-phonebk", "de-DE-u-co-phonebk"),
    ],
)
def test_locale_canonicalization(raw: str, canonical: str) -> None:
    assert _one("locale", raw) == canonical


@pytest.mark.parametrize(
    "bad",
    ["en_US,fr", "!!", "en_US", "en,fr", "en US", " en", "en-", "-en", "C", "C.UTF-8", "zzz",
     "en-USA", "und", "x-private", "en-US-u", "", "e" * 65, "en\x00", "jp", 42, True],
)  # fmt: skip
def test_locale_rejected(bad: object) -> None:
    _invalid({"locale": bad}, "contextSettings.locale")


# --- time zone ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        ("Etc/UTC", "UTC"),
        ("UTC", "UTC"),
        ("utc", "UTC"),
        ("Etc/UCT", "UTC"),
        ("Zulu", "UTC"),
        ("Etc/Universal", "UTC"),
        ("Etc/GMT", "UTC"),
        ("Etc/GMT+0", "UTC"),
        ("GMT", "UTC"),
        ("Europe/Berlin", "Europe/Berlin"),
        ("america/new_york", "America/New_York"),
        ("Etc/GMT+5", "Etc/GMT+5"),
        ("Asia/Kolkata", "Asia/Kolkata"),
    ],
)
def test_timezone_canonical(raw: str, canonical: str) -> None:
    assert _one("timezoneId", raw) == canonical


@pytest.mark.parametrize(
    "bad",
    ["Mars/Olympus", "localtime", "posixrules", "Europe/../Berlin", "/etc/passwd",
     "Europe/Berlin ", "", "Z" * 129, "UTC\x00", 0, False],
)  # fmt: skip
def test_timezone_rejected(bad: object) -> None:
    _invalid({"timezoneId": bad}, "contextSettings.timezoneId")


# --- enums and user agent -----------------------------------------------------------------------


def test_enums() -> None:
    for value in ("light", "dark", "no-preference"):
        assert _one("colorScheme", value) == value
    for value in ("reduce", "no-preference"):
        assert _one("reducedMotion", value) == value
    bad: object
    for bad in ("Dark", "", "reduce", 1):
        _invalid({"colorScheme": bad}, "contextSettings.colorScheme")
    for bad in ("light", "Reduce", None):
        _invalid({"reducedMotion": bad}, "contextSettings.reducedMotion")


def test_user_agent() -> None:
    assert _one("userAgent", "u" * 512) == "u" * 512
    error = _invalid({"userAgent": "u" * 513}, "contextSettings.userAgent")
    assert error.message.endswith("Bound: userAgent <= 512.")
    for bad in ("", "agent\n", "agent\x7f", "agent\x9f", 5):
        _invalid({"userAgent": bad}, "contextSettings.userAgent")


# --- geolocation --------------------------------------------------------------------------------


def test_geolocation_ranges() -> None:
    edge = {"latitude": -90, "longitude": 180, "accuracy": 100_000}
    assert _one("geolocation", edge) == edge
    assert _one("geolocation", {"latitude": 90, "longitude": -180, "accuracy": 0}) == {
        "latitude": 90,
        "longitude": -180,
        "accuracy": 0,
    }
    assert _one("geolocation", GEO) == GEO
    cases: list[tuple[dict[str, Any], str]] = [
        ({"latitude": 90.0001, "longitude": 0}, "latitude"),
        ({"latitude": -91, "longitude": 0}, "latitude"),
        ({"latitude": 0, "longitude": 180.5}, "longitude"),
        ({"latitude": 0, "longitude": 0, "accuracy": -1}, "accuracy"),
        ({"latitude": 0, "longitude": 0, "accuracy": 100_001}, "accuracy"),
        ({"latitude": math.nan, "longitude": 0}, "latitude"),
        ({"latitude": 0, "longitude": math.inf}, "longitude"),
        ({"latitude": True, "longitude": 0}, "latitude"),
        ({"latitude": "1", "longitude": 0}, "latitude"),
        ({"longitude": 0}, "latitude"),
        ({"latitude": 0}, "longitude"),
    ]
    for geo, field in cases:
        _invalid({"geolocation": geo}, f"contextSettings.geolocation.{field}")


def test_geolocation_without_permissions_is_allowed() -> None:
    out = normalize_context_settings({"geolocation": GEO})
    assert out == {"geolocation": GEO}
    assert geolocation_grant_origins(out) == []


# --- permissions and origins --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        ("HTTPS://EXAMPLE.COM:443/", "https://example.com"),
        ("https://example.com", "https://example.com"),
        ("https://example.com/", "https://example.com"),
        ("http://example.com:80", "http://example.com"),
        ("http://example.com:443", "http://example.com:443"),
        ("https://example.com:80/", "https://example.com:80"),
        ("https://Sub.Example.com:8443", "https://sub.example.com:8443"),
        ("http://127.0.0.1:3000/", "http://127.0.0.1:3000"),
        ("http://[::1]:8080/", "http://[::1]:8080"),
        ("http://[0:0:0:0:0:0:0:1]", "http://[::1]"),
        ("https://bücher.de", "https://xn--bcher-kva.de"),
        ("https://example.com:", "https://example.com"),
        ("http://localhost:8000", "http://localhost:8000"),
    ],
)
def test_origin_canonicalization(raw: str, canonical: str) -> None:
    assert _origin(raw) == canonical


@pytest.mark.parametrize(
    "bad",
    [
        "https://*.example.com",
        "*",
        "https://example.com:*",
        "http://*",
        "https://example.com/path",
        "https://example.com/?",
        "https://example.com?q=1",
        "https://example.com/#",
        "https://example.com#frag",
        "https://user:pass@example.com",
        "https://user@example.com",
        "ftp://example.com",
        "file:///etc/passwd",
        "example.com",
        "//example.com",
        "https:example.com",
        "https://",
        "https://:443",
        "https://example.com:99999",
        "https://example.com:-1",
        "https://example.com:8a",
        "https://exa mple.com",
        " https://example.com",
        "https://example.com\\",
        "https://ex%41mple.com",
        "https://a..b",
        "http://[::1",
        "http://[fe80::1%25eth0]",
        "http://127.1",
        "http://0x7f.0.0.1",
        "javascript:alert(1)",
        "",
        "https://e" + "x" * 2000 + ".com",
        "https://example.com\x00",
    ],
)
def test_origin_rejected(bad: str) -> None:
    raw = {"geolocation": GEO, "permissions": [{"permission": "geolocation", "origin": bad}]}
    _invalid(raw, "contextSettings.permissions[0].origin")


def test_origin_wrong_type() -> None:
    raw = {"geolocation": GEO, "permissions": [{"permission": "geolocation", "origin": 5}]}
    _invalid(raw, "contextSettings.permissions[0].origin")


@pytest.mark.parametrize("name", ["notifications", "camera", "clipboard-read", "Geolocation", ""])
def test_other_permission_names_rejected(name: str) -> None:
    raw = {"geolocation": GEO, "permissions": [{"permission": name, "origin": "https://a.com"}]}
    _invalid(raw, "contextSettings.permissions[0].permission")


def test_permission_entry_shape() -> None:
    base: dict[str, Any] = {"geolocation": GEO}
    _invalid({**base, "permissions": "geolocation"}, "contextSettings.permissions")
    _invalid({**base, "permissions": {"permission": "geolocation"}}, "contextSettings.permissions")
    _invalid({**base, "permissions": ["geolocation"]}, "contextSettings.permissions[0]")
    _invalid(
        {**base, "permissions": [{"origin": "https://a.com"}]},
        "contextSettings.permissions[0].permission",
    )
    _invalid(
        {**base, "permissions": [{"permission": "geolocation"}]},
        "contextSettings.permissions[0].origin",
    )
    extra = {"permission": "geolocation", "origin": "https://a.com", "scope": "x"}
    _invalid({**base, "permissions": [extra]}, "contextSettings.permissions[0]")


def test_permissions_require_geolocation() -> None:
    raw = {"permissions": [{"permission": "geolocation", "origin": "https://a.com"}]}
    _invalid(raw, "contextSettings.permissions")


def test_empty_permissions_without_geolocation_is_fine() -> None:
    assert normalize_context_settings({"permissions": []}) == {"permissions": []}


def test_duplicate_origins_after_canonicalization() -> None:
    raw = {
        "geolocation": GEO,
        "permissions": [
            {"permission": "geolocation", "origin": "https://example.com"},
            {"permission": "geolocation", "origin": "HTTPS://EXAMPLE.COM:443/"},
        ],
    }
    _invalid(raw, "contextSettings.permissions[1].origin")


def test_permissions_count_boundary() -> None:
    entries = [{"permission": "geolocation", "origin": f"https://h{i}.example"} for i in range(100)]
    out = normalize_context_settings({"geolocation": GEO, "permissions": entries})
    assert len(out["permissions"]) == 100
    assert geolocation_grant_origins(out) == [f"https://h{i}.example" for i in range(100)]
    entries.append({"permission": "geolocation", "origin": "https://h100.example"})
    error = _invalid({"geolocation": GEO, "permissions": entries}, "contextSettings.permissions")
    assert error.message.endswith("Bound: permissions <= 100.")


def test_grant_origins_of_empty_settings() -> None:
    assert geolocation_grant_origins({}) == []
    assert geolocation_grant_origins({"permissions": []}) == []


# --- blockResources (issue 16) ------------------------------------------------------------------


def test_block_resources_normalized_in_the_resource_type_order() -> None:
    assert _one("blockResources", ["font", "image", "media"]) == ["image", "media", "font"]
    assert _one("blockResources", ("other",)) == ["other"]
    every = list(BLOCKABLE_RESOURCE_TYPES)
    assert _one("blockResources", every[::-1]) == every
    assert len(every) == 11 and "document" not in every and "websocket" not in every
    assert set(every) | {"document", "websocket"} == set(RESOURCE_TYPES)  # one list, reused
    out = normalize_context_settings({"blockResources": ["image"], "colorScheme": "dark"})
    assert list(out) == ["colorScheme", "blockResources"]


@pytest.mark.parametrize(
    ("value", "field", "rule"),
    [
        ([], "contextSettings.blockResources", "at least 1 entry"),
        ("image", "contextSettings.blockResources", "array"),
        ({"image": True}, "contextSettings.blockResources", "array"),
        (["image", "document"], "contextSettings.blockResources[1]", "one of: stylesheet, image"),
        (["websocket"], "contextSettings.blockResources[0]", "one of: stylesheet, image"),
        (
            ["image", "font", "image"],
            "contextSettings.blockResources[2]",
            "each resource type once",
        ),
        (["Image"], "contextSettings.blockResources[0]", "one of: stylesheet, image"),
        ([None], "contextSettings.blockResources[0]", "one of: stylesheet, image"),
        ([["image"]], "contextSettings.blockResources[0]", "one of: stylesheet, image"),
    ],
)
def test_block_resources_rejected(value: object, field: str, rule: str) -> None:
    error = _invalid({"blockResources": value}, field)
    assert error.internal["requirement"].startswith(rule)


def test_block_resources_count_bounds() -> None:
    error = _invalid({"blockResources": []}, "contextSettings.blockResources")
    assert error.message.endswith("Bound: blockResources >= 1.")
    twelve = [*BLOCKABLE_RESOURCE_TYPES, "image"]
    error = _invalid({"blockResources": twelve}, "contextSettings.blockResources")
    assert error.message.endswith("Bound: blockResources <= 11.")
