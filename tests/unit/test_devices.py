"""Device emulation rules (issue 19 #3): device names, mobile/touch flags, the merge under
explicit settings, the Playwright arguments they become, and the compact runtime_info list."""

from __future__ import annotations

from typing import Any

import pytest

from browsermesh.engine.playwright_engine import context_kwargs
from browsermesh.engine.protocol import ContextOptions
from browsermesh.errors import BrowserMeshError, ErrorCode, error_payload
from browsermesh.model.device_table import DESCRIPTORS, USER_AGENTS
from browsermesh.model.devices import (
    DEVICE_RULE,
    canonical_device,
    device_summaries,
    devices,
    emulated,
)
from browsermesh.model.settings import normalize_context_settings


def _invalid(raw: Any) -> dict[str, Any]:
    with pytest.raises(BrowserMeshError) as info:
        normalize_context_settings(raw)
    assert info.value.code is ErrorCode.INVALID_ARGUMENT
    payload: dict[str, Any] = error_payload(info.value)["error"]
    return payload


def test_the_table_is_consistent() -> None:
    assert len(DESCRIPTORS) > 100
    assert len({name.casefold() for name in DESCRIPTORS}) == len(DESCRIPTORS)
    assert all(0 <= row[0] < len(USER_AGENTS) for row in DESCRIPTORS.values())
    assert all(0.1 <= row[5] <= 10 and min(row[1], row[2]) >= 1 for row in DESCRIPTORS.values())
    iphone = devices()["iPhone 15"]
    assert (iphone.viewport, iphone.screen, iphone.device_scale_factor) == (
        (393, 659),
        (393, 852),
        3,
    )
    assert (iphone.is_mobile, iphone.has_touch, iphone.default_browser_type) == (
        True,
        True,
        "webkit",
    )
    assert devices()["Galaxy S24"].screen is None  # some descriptors have no screen


@pytest.mark.parametrize(
    ("raw", "name"),
    [("iPhone 15", "iPhone 15"), ("IPHONE 15", "iPhone 15"), ("pixel 7", "Pixel 7"),
     ("desktop chrome hidpi", "Desktop Chrome HiDPI"), ("Galaxy S9+", "Galaxy S9+")],
)  # fmt: skip
def test_names_match_case_insensitively(raw: str, name: str) -> None:
    assert canonical_device(raw) == name
    assert normalize_context_settings({"device": raw}) == {"device": name}


@pytest.mark.parametrize(
    "bad", ["", "iPhone15", " iPhone 15", "iPhone 15 ", "iPhone 99", "x" * 10_000, "iPhone\n15"]
)
def test_unknown_devices_name_the_rule_and_never_the_value(bad: str) -> None:
    error = _invalid({"device": bad})
    assert error["details"] == {"field": "contextSettings.device", "rule": DEVICE_RULE}
    if bad.strip():
        assert bad not in str(error)


@pytest.mark.parametrize("bad", [None, 15, True, ["iPhone 15"], {"name": "iPhone 15"}])
def test_device_must_be_a_string(bad: object) -> None:
    error = _invalid({"device": bad})
    assert error["details"] == {"field": "contextSettings.device", "rule": "string"}


@pytest.mark.parametrize("key", ["isMobile", "hasTouch"])
def test_mobile_and_touch_are_booleans(key: str) -> None:
    assert normalize_context_settings({key: True}) == {key: True}
    assert normalize_context_settings({key: False}) == {key: False}
    for bad in (None, 1, 0, "true"):
        error = _invalid({key: bad})
        assert error["details"] == {"field": f"contextSettings.{key}", "rule": "boolean"}


def test_device_comes_first_in_the_normalized_order() -> None:
    out = normalize_context_settings(
        {"hasTouch": False, "viewport": {"width": 5, "height": 6}, "device": "pixel 7",
         "isMobile": True, "deviceScaleFactor": 1}
    )  # fmt: skip
    assert list(out) == ["device", "viewport", "deviceScaleFactor", "isMobile", "hasTouch"]


def test_merge_explicit_fields_win_one_by_one() -> None:
    pixel = devices()["Pixel 7"]
    assert emulated({"device": "Pixel 7"}) == pixel.settings()
    merged = emulated(
        {"device": "Pixel 7", "viewport": {"width": 600, "height": 800}, "hasTouch": False,
         "userAgent": "Mine/1", "locale": "de-DE"}
    )  # fmt: skip
    assert merged == {
        "viewport": {"width": 600, "height": 800},
        "screen": {"width": 412, "height": 915},
        "deviceScaleFactor": pixel.device_scale_factor,
        "isMobile": True,
        "hasTouch": False,
        "userAgent": "Mine/1",
        "locale": "de-DE",
    }
    assert emulated({"locale": "de-DE"}) == {"locale": "de-DE"}  # no device: unchanged
    assert "screen" not in emulated({"device": "Galaxy S24"})


def test_playwright_arguments() -> None:
    iphone = devices()["iPhone 15"]
    kwargs = context_kwargs(ContextOptions(settings={"device": "iPhone 15", "locale": "fr-FR"}))
    assert kwargs == {
        "viewport": {"width": 393, "height": 659},
        "screen": {"width": 393, "height": 852},
        "device_scale_factor": 3,
        "is_mobile": True,
        "has_touch": True,
        "user_agent": iphone.user_agent,
        "locale": "fr-FR",
    }
    plain = context_kwargs(ContextOptions(settings={"hasTouch": True}))
    assert plain == {"viewport": {"width": 1280, "height": 720}, "has_touch": True}
    assert "default_browser_type" not in kwargs  # Chromium is the only browser


def test_runtime_info_summaries_are_compact() -> None:
    summaries = device_summaries()
    assert list(summaries) == list(DESCRIPTORS)
    assert summaries["iPhone 15"] == "393x659 mobile"
    assert summaries["Desktop Firefox"] == "1280x720"
    assert all(len(v) <= 20 for v in summaries.values())
