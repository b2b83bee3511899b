"""The action-and-wait kind catalogue (model.action_kinds, issue 32): every entry has what each
layer reads from it (the published shapes, the parser, the engine's call, the recorded step, the
export), so a kind added to the catalogue that a layer cannot serve fails here (the engine's and
the export's dispatch are also checked by mypy: both end in ``assert_never``)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, get_args

import pytest
from playwright.async_api import ElementHandle as AsyncHandle
from playwright.async_api import Locator as AsyncLocator
from playwright.sync_api import Locator as SyncLocator

from browsermesh.config import default_config
from browsermesh.engine import actionability
from browsermesh.engine.waits import action_call
from browsermesh.errors import BrowserMeshError, ErrorCode
from browsermesh.mcp.server import all_tool_specs
from browsermesh.mcp.tools.waits import action_shapes
from browsermesh.model.action_kinds import (
    ACTION_KIND_NAMES,
    ACTION_KINDS,
    ActionKind,
    ActionKindEntry,
    action_kind,
)
from browsermesh.model.element_ops import ELEMENT_OPS
from browsermesh.model.export_python import Names, act_and_wait_call, step_lines
from browsermesh.model.matchers import ActionSpec, parse_action
from browsermesh.model.recording import ActAndWait, ExpectNavigation
from browsermesh.runtime.calls import PageCall
from browsermesh.runtime.runtime import LOCAL_PRINCIPAL, Runtime
from tests.fakes import FakeEngine

ENTRIES = list(ACTION_KINDS.values())
IDS = [entry.kind for entry in ENTRIES]
TARGET = {"strategy": "testId", "value": "menu"}
SHAPE = re.compile(r"\{kind:([a-z_|]+),target(?:,([a-zA-Z]+))?\}")


def raw_action(entry: ActionKindEntry, value: str = "Enter") -> dict[str, Any]:
    """A well-formed ``action`` of `entry`'s kind (its argument set to `value`)."""
    arg = entry.argument
    return {"kind": entry.kind, "target": TARGET, **({arg.field: value} if arg else {})}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_the_catalogue_is_total_and_in_publication_order() -> None:
    assert tuple(ACTION_KINDS) == get_args(ActionKind) == ACTION_KIND_NAMES
    for kind, entry in ACTION_KINDS.items():
        assert entry.kind == kind
        assert action_kind(kind) is entry
    assert action_kind("tap") is None and action_kind(None) is None and action_kind(1) is None


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_every_kind_performs_an_element_operation(entry: ActionKindEntry) -> None:
    assert entry.op in ELEMENT_OPS and entry.element.op == entry.op
    method = entry.playwright_method
    for api in (AsyncLocator, AsyncHandle, SyncLocator):
        assert callable(getattr(api, method, None)), (api, method)
    arg = entry.argument
    # ActionSpec and the recorded ActAndWait carry one optional string, `key`.
    assert arg is None or (arg.field == "key" and not arg.choice), arg
    # Acting through the pointer runs the element operation's actionability checks.
    assert actionability.checks(entry.op) == bool(entry.element.checks)


def test_every_kind_is_in_the_published_shapes() -> None:
    spec = {s.name: s for s in all_tool_specs()}["browser_action_and_wait"]
    description = spec.input_schema["properties"]["action"]["description"]
    assert description.startswith(action_shapes())
    published: dict[str, str | None] = {}
    for kinds, field in SHAPE.findall(description):
        for kind in kinds.split("|"):
            published[kind] = field or None
    assert list(published) != [] and set(published) == set(ACTION_KIND_NAMES)
    for entry in ENTRIES:
        assert published[entry.kind] == (entry.argument.field if entry.argument else None)


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_the_parser_accepts_each_kind_and_bounds_its_argument(entry: ActionKindEntry) -> None:
    spec = parse_action(raw_action(entry))
    assert spec.kind == entry.kind
    assert spec.target.wire()["value"] == "menu"
    arg = entry.argument
    if arg is None:
        assert spec.key is None
        refused = [({**raw_action(entry), "key": "Enter"}, "action")]
    else:
        assert spec.key == "Enter"
        assert parse_action(raw_action(entry, "x" * arg.max_chars)).key == "x" * arg.max_chars
        field = f"action.{arg.field}"
        missing = {k: v for k, v in raw_action(entry).items() if k != arg.field}
        refused = [(missing, field), (raw_action(entry, "x" * (arg.max_chars + 1)), field)]
        if arg.min_chars:
            refused.append((raw_action(entry, "x" * (arg.min_chars - 1)), field))
    for raw, field in refused:
        with pytest.raises(BrowserMeshError) as error:
            parse_action(raw)
        assert error.value.code is ErrorCode.INVALID_ARGUMENT
        assert error.value.details["field"] == field, raw


def test_an_unknown_kind_names_every_kind() -> None:
    with pytest.raises(BrowserMeshError) as error:
        parse_action({"kind": "tap", "target": TARGET})
    assert error.value.details["field"] == "action.kind"
    assert error.value.details["rule"] == "one of: " + ", ".join(ACTION_KIND_NAMES)


class _Element:
    """A stand-in for a Playwright Locator / ElementHandle that notes each call."""

    def __init__(self) -> None:
        self.called: list[tuple[str, tuple[Any, ...]]] = []

    def __getattr__(self, name: str) -> Any:
        async def method(*args: Any, **kwargs: Any) -> None:
            self.called.append((name, args))

        return method


@pytest.mark.anyio
@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
async def test_the_engine_calls_the_entrys_method(entry: ActionKindEntry) -> None:
    spec = parse_action(raw_action(entry))
    op, call = action_call(spec)
    assert op == entry.op
    el = _Element()
    await call(el, 100)
    assert el.called == [(entry.playwright_method, ("Enter",) if entry.argument else ())]


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_the_recorded_step_exports_its_call(entry: ActionKindEntry) -> None:
    spec: ActionSpec = parse_action(raw_action(entry))
    step = ActAndWait(
        seq=1,
        session_id="s1",
        page_id="p1",
        op=spec.kind,
        locator=TARGET,
        key=spec.key,
        expect=ExpectNavigation(),
    )
    target = f"buyer_page.get_by_test_id({'menu'!r})"
    expected = f"{target}.{entry.playwright_method}({repr('Enter') if entry.argument else ''})"
    assert act_and_wait_call(target, step) == expected
    lines = step_lines(step, Names(None, {"s1": "buyer_context"}))
    assert lines[-2:] == [
        "with buyer_page.expect_navigation(wait_until='load'):",
        f"    {expected}",
    ]
    compile("\n".join(lines[-2:]), "<export>", "exec")


@pytest.fixture
async def fake_runtime(tmp_path: Path) -> AsyncIterator[Runtime]:
    """A runtime over the fake engine (not named `runtime`: that one starts Chromium)."""
    config = default_config(timeout_ms=2000, data_dir=tmp_path, tools=("core", "testing"))
    rt = Runtime(config, FakeEngine())
    yield rt
    await rt.shutdown()


@pytest.mark.anyio
async def test_every_kind_runs_records_and_exports(fake_runtime: Runtime) -> None:
    runtime = fake_runtime
    _, view, page = await runtime.create_session(name="Buyer")
    call = PageCall(principal=LOCAL_PRINCIPAL, session_id=view["sessionId"], page_id=page)
    for entry in ENTRIES:
        _, data = await runtime.action_and_wait(call, raw_action(entry), {"kind": "navigation"})
        assert data["event"]["kind"] == "navigation"
    _, export = runtime.test_export(LOCAL_PRINCIPAL, [view["sessionId"]])
    assert export["steps"] == len(ENTRIES)
    code = export["code"]
    compile(code, "<export>", "exec")
    for entry in ENTRIES:
        assert f".{entry.playwright_method}(" in code, entry.kind
