"""Checked by mypy (tests/unit/test_fake_engine.py), never run: FakeEngine is an Engine."""

from __future__ import annotations

from typing import Any

from tests.fakes import FakeContext, FakeEngine, FakePage

from browsermesh.engine.protocol import Engine

typed: Engine[FakeContext, FakePage] = FakeEngine()
erased: Engine[Any, Any] = FakeEngine()
