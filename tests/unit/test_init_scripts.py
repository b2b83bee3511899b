"""`contextSettings.initScripts` (issue 36 item 4) without a browser: the parser's bounds, each
refusal naming the script by index; the `eval` profile rule at the one entry of every creation
and fork (`runtime.lifecycle.session_args`); the session view's count instead of the text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from browsermesh.config import default_config
from browsermesh.errors import BrowserMeshError, ErrorCode
from browsermesh.log import EventLog
from browsermesh.model.settings import normalize_context_settings, settings_view
from browsermesh.runtime.runtime import LOCAL_PRINCIPAL, Runtime
from tests.fakes import FakeEngine

pytestmark = pytest.mark.anyio

WITH_EVAL = ("core", "eval")
WITHOUT_EVAL = ("core", "observability", "persistence", "files", "testing")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def refusal(scripts: object) -> dict[str, Any]:
    with pytest.raises(BrowserMeshError) as caught:
        normalize_context_settings({"initScripts": scripts})
    assert caught.value.code is ErrorCode.INVALID_ARGUMENT
    return dict(caught.value.details)


def test_scripts_are_kept_as_given_in_order() -> None:
    scripts = ["window.a = 1;", "// two\n\twindow.b = 2;\r\n", "x" * 65_536]
    assert normalize_context_settings({"initScripts": scripts}) == {"initScripts": scripts}
    ten = [f"window.s{i} = {i};" for i in range(10)]
    assert normalize_context_settings({"initScripts": ten})["initScripts"] == ten
    # four of the longest scripts are exactly the total bound
    assert len(normalize_context_settings({"initScripts": ["y" * 65_536] * 4})["initScripts"]) == 4


@pytest.mark.parametrize(
    ("scripts", "field", "rule"),
    [
        ("window.a = 1", "contextSettings.initScripts", "array"),
        ([], "contextSettings.initScripts", "at least 1 entry (omit the field for none)"),
        (["1;"] * 11, "contextSettings.initScripts", "at most 10 entries"),
        (["1;", ""], "contextSettings.initScripts[1]", "at least 1 character"),
        (["1;", "2;", 3], "contextSettings.initScripts[2]", "string"),
        (["x" * 65_537], "contextSettings.initScripts[0]", "at most 65536 characters"),
        (["1;", "\ud800"], "contextSettings.initScripts[1]", "valid Unicode (no lone surrogates)"),
        (
            ["y" * 65_536] * 4 + ["z"],
            "contextSettings.initScripts",
            "at most 262144 characters in all",
        ),
    ],
)
def test_bounds_name_the_field_and_the_rule(scripts: object, field: str, rule: str) -> None:
    assert refusal(scripts) == {"field": field, "rule": rule}


def test_the_view_shows_the_count_never_the_text() -> None:
    settings = normalize_context_settings(
        {"initScripts": ["window.secret = 'abc';", "2;"], "colorScheme": "dark"}
    )
    assert settings_view(settings) == {"colorScheme": "dark", "initScripts": 2}
    assert settings["initScripts"] == ["window.secret = 'abc';", "2;"]  # the record keeps them
    assert settings_view({}) == {}


async def created(tools: tuple[str, ...], tmp_path: Path, **kwargs: Any) -> Any:
    config = default_config(timeout_ms=2000, data_dir=tmp_path, tools=tools)
    runtime = Runtime(config, FakeEngine(), EventLog("silent"))
    try:
        return await runtime.create_sessions(LOCAL_PRINCIPAL, **kwargs)
    finally:
        await runtime.shutdown()


async def test_only_with_the_eval_profile(tmp_path: Path) -> None:
    settings = {"initScripts": ["window.a = 1;"]}
    src = {"from_session_id": "s0nope"}
    for extra in ({}, {"count": 2}, src):
        with pytest.raises(BrowserMeshError) as caught:
            await created(WITHOUT_EVAL, tmp_path, context_settings=settings, **extra)
        assert caught.value.code is ErrorCode.INVALID_ARGUMENT
        assert caught.value.details == {
            "field": "contextSettings.initScripts",
            "rule": "only when the server publishes the eval profile (it runs arbitrary "
            "JavaScript)",
        }
    _, made = await created(WITH_EVAL, tmp_path, context_settings=settings)
    assert made[0][0]["contextSettings"] == {"initScripts": 1}
    # a bound is checked first: the value is wrong whatever the profiles
    with pytest.raises(BrowserMeshError) as caught:
        await created(WITHOUT_EVAL, tmp_path, context_settings={"initScripts": []})
    assert caught.value.details["field"] == "contextSettings.initScripts"
    assert caught.value.details["rule"].startswith("at least 1 entry")
