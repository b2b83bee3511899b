"""`BROWSERMESH_REF_TTL_MS` (issue 13): parsed like its integer neighbours, handed to the engine,
reported by `browser_runtime_info`."""

from __future__ import annotations

import pytest

from browsermesh.config import ConfigError, default_config, load_config
from browsermesh.runtime.runtime import Runtime
from tests.fakes import FakeEngine

VARIABLE = "BROWSERMESH_REF_TTL_MS"
MESSAGE = "must be an integer from 1000 to 1800000"


def load(value: str | None = None) -> int:
    environ = {"HOME": "/home/tester"}
    if value is not None:
        environ[VARIABLE] = value
    return load_config(environ).ref_ttl_ms


def test_default_is_the_contract_30_seconds() -> None:
    assert load() == 30_000
    assert default_config().ref_ttl_ms == 30_000


@pytest.mark.parametrize(
    ("raw", "expected"), [("1000", 1_000), ("1800000", 1_800_000), ("0045000", 45_000)]
)
def test_bounds_are_accepted(raw: str, expected: int) -> None:
    assert load(raw) == expected


@pytest.mark.parametrize(
    "raw", ["999", "1800001", "0", "-1000", "", "abc", "1000.5", " 1000", "0x3e8"]
)
def test_invalid_values_name_the_variable_and_its_range(raw: str) -> None:
    with pytest.raises(ConfigError) as info:
        load(raw)
    assert info.value.problems == [(VARIABLE, MESSAGE)]


def test_runtime_info_reports_the_ttl() -> None:
    assert Runtime(default_config(), FakeEngine()).info()["refTtlMs"] == 30_000
    assert Runtime(default_config(ref_ttl_ms=1_500), FakeEngine()).info()["refTtlMs"] == 1_500


@pytest.mark.parametrize(("ttl_ms", "ttl_s"), [(None, 30.0), (1_500, 1.5), (1_800_000, 1_800.0)])
def test_the_engine_gets_the_configured_ttl(ttl_ms: int | None, ttl_s: float) -> None:
    from browsermesh.engine.playwright_engine import PlaywrightEngine
    from browsermesh.factory import create_engine

    # A CDP backend connects only on first use, so nothing is launched here.
    overrides = {} if ttl_ms is None else {"ref_ttl_ms": ttl_ms}
    engine = create_engine(default_config(cdp_endpoint="http://127.0.0.1:9/", **overrides))
    assert isinstance(engine, PlaywrightEngine)
    assert engine.ref_ttl_s == ttl_s
