"""Device emulation (issue 19 #3): `contextSettings.device` names one of Playwright's device
descriptors, and settings given explicitly win over the descriptor's.

The descriptors come from `model.device_table` (generated from the pinned Playwright by
scripts/update_devices.py and checked against it by tests/integration/test_devices.py), so a
name is validated, and the list published by `browser_runtime_info`, without starting the driver
or a browser.

Decisions (docs/decisions.md, "Device emulation"):

- **Names** match case-insensitively and are returned in Playwright's spelling
  (`iphone 15` → `iPhone 15`); anything else is `INVALID_ARGUMENT` at `contextSettings.device`
  with the rule "a device name from browser_runtime_info devices" (never the value).
- **Merge**: the descriptor gives `viewport`, `screen`, `deviceScaleFactor`, `isMobile`,
  `hasTouch` and `userAgent`; each of those given explicitly replaces the descriptor's value,
  field by field (Playwright's `{**device, **explicit}` spread). `screen` has no explicit
  setting and stays the descriptor's even under an explicit viewport, as it does in Playwright.
- **Chromium only**: descriptors whose `defaultBrowserType` is `webkit` or `firefox` (every
  iPhone and iPad) still apply their viewport, screen, scale, mobile and touch flags and user
  agent to Chromium; the engine stays Blink (feature detection, CSS support and client hints are
  Chromium's). `defaultBrowserType` is not applied and not published.
- The session view keeps only what the caller supplied (`device` plus explicit fields), like
  every other setting; the descriptor's values are applied when the context is created.

Pure data and rules: no Playwright, no I/O.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from browsermesh.errors import invalid_argument
from browsermesh.model.device_table import DESCRIPTORS, USER_AGENTS

DEVICE_RULE: Final = "a device name from browser_runtime_info devices"
MAX_DEVICE_NAME_CHARS: Final = 64


@dataclass(frozen=True, slots=True)
class Device:
    """One descriptor, as Playwright's `devices[name]` has it."""

    name: str
    user_agent: str
    viewport: tuple[int, int]
    screen: tuple[int, int] | None
    device_scale_factor: float
    is_mobile: bool
    has_touch: bool
    default_browser_type: str

    def settings(self) -> dict[str, Any]:
        """The descriptor as wire-form context settings (the catalogue's names, model/settings.py,
        and `screen`, which only a descriptor sets): what `emulated` merges under the explicit
        ones."""
        out: dict[str, Any] = {"viewport": {"width": self.viewport[0], "height": self.viewport[1]}}
        if self.screen is not None:
            out["screen"] = {"width": self.screen[0], "height": self.screen[1]}
        out["deviceScaleFactor"] = self.device_scale_factor
        out["isMobile"] = self.is_mobile
        out["hasTouch"] = self.has_touch
        out["userAgent"] = self.user_agent
        return out

    def summary(self) -> str:
        """`393x659 mobile` (viewport, and `mobile` when isMobile), for browser_runtime_info."""
        width, height = self.viewport
        return f"{width}x{height}{' mobile' if self.is_mobile else ''}"


@functools.cache
def devices() -> Mapping[str, Device]:
    """Every descriptor by its Playwright name, in Playwright's order."""
    out: dict[str, Device] = {}
    for name, row in DESCRIPTORS.items():
        agent, vw, vh, sw, sh, scale, mobile, touch, browser = row
        out[name] = Device(
            name,
            USER_AGENTS[agent],
            (vw, vh),
            (sw, sh) if sw and sh else None,
            scale,
            mobile,
            touch,
            browser,
        )
    return out


@functools.cache
def _folded() -> Mapping[str, str]:
    return {name.casefold(): name for name in devices()}


def canonical_device(value: object, path: str = "contextSettings.device") -> str:
    """The Playwright spelling of a device name, matched case-insensitively."""
    if not isinstance(value, str):
        raise invalid_argument(path, "string")
    found = _folded().get(value.casefold()) if len(value) <= MAX_DEVICE_NAME_CHARS else None
    if found is None:
        raise invalid_argument(path, DEVICE_RULE)
    return found


def emulated(settings: Mapping[str, Any]) -> dict[str, Any]:
    """Normalized settings with the named device's descriptor merged under them: explicit
    fields win, `device` itself is dropped. Without `device`, a copy of `settings`."""
    explicit = {key: value for key, value in settings.items() if key != "device"}
    name = settings.get("device")
    if name is None:
        return explicit
    return {**devices()[name].settings(), **explicit}


@functools.cache
def device_summaries() -> dict[str, str]:
    """name → `WxH[ mobile]` for every descriptor (browser_runtime_info `devices`)."""
    return {name: device.summary() for name, device in devices().items()}
