"""The context-settings catalogue (model/settings.py `CONTEXT_SETTINGS`, issue 32): every entry
carries what each layer needs (a parser, a keyword or a named engine rule, an export form),
every layer reads it (normalization, `engine.playwright_engine.context_kwargs`, the test
export), and no other table of the setting names is left in src/.

The expected values below are written by hand from the reference's settings table (§12) and
Playwright's `new_context` arguments, not computed by the code under test."""

from __future__ import annotations

import ast
import inspect
import typing
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser

from browsermesh.engine.playwright_engine import context_kwargs
from browsermesh.engine.protocol import ContextOptions
from browsermesh.errors import BrowserMeshError, ErrorCode
from browsermesh.model.context_setting import ContextRule, ContextSetting, ExportForm
from browsermesh.model.settings import CONTEXT_SETTINGS, FIELDS, normalize_context_settings
from browsermesh.model.test_export import SessionExport, export_pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "browsermesh"
NAMES = [setting.name for setting in CONTEXT_SETTINGS]

# One raw value per setting and its normalized form (reference §12): a new setting without a
# row here fails test_every_setting_is_parsed.
SAMPLES: dict[str, tuple[Any, Any]] = {
    "device": ("pixel 7", "Pixel 7"),
    "viewport": ({"width": 400, "height": 800.0}, {"width": 400, "height": 800}),
    "deviceScaleFactor": (1.5, 1.5),
    "isMobile": (False, False),
    "hasTouch": (True, True),
    "locale": ("EN-us", "en-US"),
    "timezoneId": ("etc/utc", "UTC"),
    "colorScheme": ("dark", "dark"),
    "reducedMotion": ("reduce", "reduce"),
    "userAgent": ("Agent/1", "Agent/1"),
    "geolocation": ({"latitude": 48.85, "longitude": 2.35}, {"latitude": 48.85, "longitude": 2.35}),
    "permissions": (
        [{"permission": "geolocation", "origin": "HTTPS://Shop.Test:443/"}],
        [{"permission": "geolocation", "origin": "https://shop.test"}],
    ),
    "blockResources": (["font", "image"], ["image", "font"]),
    "network": (
        {"offline": True, "extraHeaders": {"X-Team": "blue"}, "blockOrigins": ["https://ads.test"]},
        {"blockOrigins": ["https://ads.test"], "offline": True, "extraHeaders": {"X-Team": "blue"}},
    ),
    "proxy": ({"server": "HTTP://Proxy.Test:3128"}, {"server": "http://proxy.test:3128"}),
    "initScripts": (
        ("window.a = 1;", "\twindow.b = 'x\\n';\n"),
        ["window.a = 1;", "\twindow.b = 'x\\n';\n"],
    ),
}

EVERY = {name: raw for name, (raw, _) in SAMPLES.items()}
"""A settings dict with every setting (geolocation included, so permissions are allowed)."""


def _entry_ids() -> list[str]:
    return [setting.name for setting in CONTEXT_SETTINGS]


# ------------------------------------------------------------------------------ the entries


def test_names_are_unique_and_in_the_published_order() -> None:
    assert len(set(NAMES)) == len(NAMES)
    assert list(FIELDS) == NAMES
    assert NAMES[0] == "device"  # a device's descriptor comes first; explicit fields win


@pytest.mark.parametrize("setting", CONTEXT_SETTINGS, ids=_entry_ids())
def test_every_entry_has_a_rule_and_an_export_form(setting: ContextSetting) -> None:
    assert setting.rule in typing.get_args(ContextRule)
    assert setting.export in typing.get_args(ExportForm)
    assert callable(setting.parse)
    # A keyword exactly when the engine passes (and the export writes) the value under one.
    assert (setting.rule == "keyword") == (setting.keyword is not None)
    assert (setting.export == "keyword") == (setting.rule == "keyword")
    # The default is what the engine passes under the keyword: only a keyword setting has one.
    if setting.default is not None:
        assert setting.rule == "keyword"


@pytest.mark.parametrize("setting", CONTEXT_SETTINGS, ids=_entry_ids())
def test_every_keyword_is_a_new_context_argument(setting: ContextSetting) -> None:
    parameters = inspect.signature(Browser.new_context).parameters
    if setting.keyword is not None:
        assert setting.keyword in parameters, setting.keyword


@pytest.mark.parametrize("setting", CONTEXT_SETTINGS, ids=_entry_ids())
def test_every_setting_is_parsed(setting: ContextSetting) -> None:
    assert setting.name in SAMPLES, f"add a sample for {setting.name}"
    raw, normalized = SAMPLES[setting.name]
    assert setting.parse(raw, setting.name) == normalized
    alone = {setting.name: raw}
    if setting.name == "permissions":
        alone["geolocation"] = EVERY["geolocation"]
    assert normalize_context_settings(alone)[setting.name] == normalized
    if setting.default is not None:
        assert setting.parse(setting.default, setting.name) == setting.default


@pytest.mark.parametrize("setting", CONTEXT_SETTINGS, ids=_entry_ids())
def test_every_parser_names_its_field(setting: ContextSetting) -> None:
    with pytest.raises(BrowserMeshError) as caught:
        normalize_context_settings({setting.name: object()})
    assert caught.value.code == ErrorCode.INVALID_ARGUMENT
    field = caught.value.details["field"]
    assert field == f"contextSettings.{setting.name}" or field.startswith(
        f"contextSettings.{setting.name}."
    ), field


def test_no_sample_for_a_setting_that_does_not_exist() -> None:
    assert set(SAMPLES) == set(NAMES)


# ------------------------------------------------------------------------------ every layer

EVERY_KWARGS: dict[str, Any] = {
    "viewport": {"width": 400, "height": 800},
    "screen": {"width": 412, "height": 915},  # Pixel 7's descriptor: no setting of its own
    "device_scale_factor": 1.5,
    "is_mobile": False,
    "has_touch": True,
    "locale": "en-US",
    "timezone_id": "UTC",
    "color_scheme": "dark",
    "reduced_motion": "reduce",
    "user_agent": "Agent/1",
    "geolocation": {"latitude": 48.85, "longitude": 2.35},
    "service_workers": "block",
    "offline": True,
    "extra_http_headers": {"X-Team": "blue"},
    "proxy": {"server": "http://proxy.test:3128"},
}


def test_every_setting_reaches_the_context() -> None:
    settings = normalize_context_settings(EVERY)
    assert list(settings) == NAMES
    assert context_kwargs(ContextOptions(settings=settings)) == EVERY_KWARGS
    state = {"cookies": [], "origins": []}
    with_state = context_kwargs(ContextOptions(settings=settings, storage_state=state))
    assert with_state == {**EVERY_KWARGS, "storage_state": state}


def test_the_defaults_reach_the_context() -> None:
    assert context_kwargs(ContextOptions()) == {"viewport": {"width": 1280, "height": 720}}
    phone = context_kwargs(ContextOptions(settings={"device": "Pixel 7"}))
    assert phone["viewport"] == {"width": 412, "height": 839}  # the descriptor's, not 1280x720
    assert phone["screen"] == {"width": 412, "height": 915}
    assert (phone["is_mobile"], phone["has_touch"], phone["device_scale_factor"]) == (
        True,
        True,
        2.625,
    )
    network_only = context_kwargs(
        ContextOptions(settings={"network": {}, "blockResources": ["image"]})
    )
    assert network_only == {"viewport": {"width": 1280, "height": 720}, "service_workers": "block"}


def _context_lines(settings: dict[str, Any], **extra: Any) -> list[str]:
    session = SessionExport(session_id="s1", label="Shop", settings=settings, **extra)
    text = export_pytest([session]).text
    body = text[text.index("# session 'Shop'") :].splitlines()
    return [line.strip() for line in body[: body.index("    shop_context.close()")]]


def test_every_setting_is_exported_or_named_as_not_reproduced() -> None:
    assert _context_lines(normalize_context_settings(EVERY)) == [
        "# session 'Shop' ('s1')",
        "# not reproduced: blockResources, proxy, network origin lists",
        "shop_options = {**playwright.devices['Pixel 7'], "
        "'viewport': {'width': 400, 'height': 800}, 'device_scale_factor': 1.5, "
        "'is_mobile': False, 'has_touch': True, 'locale': 'en-US', 'timezone_id': 'UTC', "
        "'color_scheme': 'dark', 'reduced_motion': 'reduce', 'user_agent': 'Agent/1', "
        "'geolocation': {'latitude': 48.85, 'longitude': 2.35}, 'service_workers': 'block', "
        "'offline': True, "
        "'extra_http_headers': {'X-Team': secret('BM_SECRET_SHOP_HEADER_X_TEAM')}}",
        "shop_context = browser.new_context(**shop_options)",
        "shop_context.add_init_script(script='window.a = 1;')",
        "shop_context.add_init_script(script=\"\\twindow.b = 'x\\\\n';\\n\")",
        "shop_context.set_default_timeout(TIMEOUT_MS)",
        "shop_context.grant_permissions(['geolocation'], origin='https://shop.test')",
    ]


def test_the_export_writes_the_default_viewport_only_without_a_device() -> None:
    assert _context_lines({}, storage_state_path="/x/state.json") == [
        "# session 'Shop' ('s1')",
        "shop_context = browser.new_context(viewport={'width': 1280, 'height': 720}, "
        "storage_state=SHOP_STATE)",
        "shop_context.set_default_timeout(TIMEOUT_MS)",
    ]
    assert _context_lines({"device": "Pixel 7", "locale": "fr-FR"})[1] == (
        "shop_options = {**playwright.devices['Pixel 7'], 'locale': 'fr-FR'}"
    )
    assert _context_lines({"colorScheme": "dark", "blockResources": ["image"]})[1:3] == [
        "# not reproduced: blockResources",
        "shop_context = browser.new_context(viewport={'width': 1280, 'height': 720}, "
        "color_scheme='dark')",
    ]


# ------------------------------------------------------------------------------ one table


def _name_tables(path: Path) -> list[int]:
    """Lines of a literal tuple, list, set or dict holding three or more setting names, outside
    `CONTEXT_SETTINGS` itself (a `Literal[...]` vocabulary, such as the export forms, is not
    such a table)."""
    tree = ast.parse(path.read_text())
    vocabulary = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.Subscript) and ast.unparse(node.value).endswith("Literal")
        for inner in ast.walk(node.slice)
    }
    catalogue = {  # the one table
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.AnnAssign | ast.Assign) and node.value is not None
        if "CONTEXT_SETTINGS" in ast.unparse(node).split("=")[0]
        for inner in ast.walk(node.value)
    }
    names = set(NAMES)
    found: list[int] = []
    for node in ast.walk(tree):
        if id(node) in vocabulary or id(node) in catalogue:
            continue
        if not isinstance(node, ast.Tuple | ast.List | ast.Set | ast.Dict):
            continue
        # Nested too: a table of pairs, ("locale", "locale"), ("timezoneId", "timezone_id")...
        hits = {
            inner.value
            for inner in ast.walk(node)
            if isinstance(inner, ast.Constant) and inner.value in names
        }
        if len(hits) >= 3:
            found.append(node.lineno)
    return found


def test_no_other_table_of_the_setting_names() -> None:
    tables = {
        path.relative_to(SRC).as_posix(): lines
        for path in SRC.rglob("*.py")
        if (lines := _name_tables(path))
    }
    assert tables == {}, "read model.settings.CONTEXT_SETTINGS instead"
