"""The element-operation catalogue (model.element_ops, issue 32): every entry has what each layer
reads from it, and each layer's behaviour follows the entry, so an operation added to the
catalogue that a layer cannot serve fails here (the engine's Playwright call is also checked by
mypy: `element_call` ends in ``assert_never``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, get_args

import pytest
from playwright.async_api import ElementHandle as AsyncHandle
from playwright.async_api import Locator as AsyncLocator
from playwright.sync_api import Locator as SyncLocator

from browsermesh.config import default_config
from browsermesh.engine import actionability
from browsermesh.engine.elements import element_call
from browsermesh.errors import OPERATIONS, BrowserMeshError, ErrorCode, clean_details
from browsermesh.mcp.server import all_tool_specs
from browsermesh.model.arguments import action_argument
from browsermesh.model.element_ops import (
    ELEMENT_OPERATIONS,
    ELEMENT_OPS,
    FORM_OPS,
    OTHER_OPERATIONS,
    ElementOp,
    ElementOpEntry,
    element_op,
    operation_detail,
)
from browsermesh.model.export_python import Names, step_lines
from browsermesh.model.forms import FieldKind, field_operation
from browsermesh.model.options import OptionChoice
from browsermesh.model.recording import Action, Value
from browsermesh.runtime.calls import PageCall
from browsermesh.runtime.runtime import LOCAL_PRINCIPAL, Runtime
from tests.fakes import FakeEngine

ENTRIES = list(ELEMENT_OPERATIONS.values())
IDS = [entry.op for entry in ENTRIES]
# The arguments a tool call of each operation needs (a choice for select_option).
CALL_ARGS: dict[ElementOp, dict[str, Any]] = {
    "fill": {"value": "Ada"},
    "press": {"key": "Enter"},
    "select_option": {"label": "Blue"},
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_the_catalogue_is_total_and_in_publication_order() -> None:
    assert tuple(ELEMENT_OPERATIONS) == get_args(ElementOp) == ELEMENT_OPS
    for op, entry in ELEMENT_OPERATIONS.items():
        assert entry.op == op
        assert element_op(op) is entry
    assert element_op("drag") is None and element_op("fill_form") is None
    details = [entry.detail for entry in ENTRIES]
    assert len(set(details)) == len(details)  # an error names one operation
    assert not set(OTHER_OPERATIONS) & set(ELEMENT_OPS)


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_every_operation_is_published_as_its_tool(entry: ElementOpEntry) -> None:
    spec = {s.name: s for s in all_tool_specs()}[entry.tool]
    assert entry.tool == f"browser_{entry.op}"
    assert (spec.title, spec.profile) == (entry.title, "core")
    assert spec.description.startswith(entry.description)
    assert spec.hints == entry.hints and entry.hints.open_world
    props, required = spec.input_schema["properties"], spec.input_schema["required"]
    assert {"locator", "ref", "snapshot"} <= props.keys()
    extras = props.keys() - {"sessionId", "pageId", "locator", "ref", "snapshot", "timeoutMs"}
    arg = entry.argument
    if arg is None:
        assert not extras
    elif arg.choice:
        assert extras == {"value", "label", "index"} and "value" not in required
        assert entry.chooses
        assert spec.output_schema.get("required") == ["selected"]
    else:
        assert extras == {arg.field} and arg.field in required
        bounds = {"minLength": arg.min_chars, "maxLength": arg.max_chars}
        shown = {k: v for k, v in props[arg.field].items() if k in bounds}
        assert shown == (bounds if arg.published else {})


def test_one_tool_documents_the_locator() -> None:
    assert [e.op for e in ENTRIES if e.documents_locator] == ["click"]


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_the_argument_is_bounded_before_any_work(entry: ElementOpEntry) -> None:
    arg = entry.argument
    if arg is None:
        assert action_argument(entry.op, "anything") is None
        return
    assert action_argument(entry.op, "x" * arg.max_chars) == "x" * arg.max_chars
    for bad in ("x" * (arg.max_chars + 1), None, *(["x" * (arg.min_chars - 1)] * arg.min_chars)):
        with pytest.raises(BrowserMeshError) as refused:
            action_argument(entry.op, bad)
        assert refused.value.code is ErrorCode.INVALID_ARGUMENT
        assert refused.value.internal["field"] == arg.field


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_the_error_detail_passes_the_allowlist(entry: ElementOpEntry) -> None:
    assert operation_detail(entry.op) == entry.detail
    assert entry.detail in OPERATIONS
    kept = clean_details(ErrorCode.ELEMENT_NOT_FOUND, {"operation": entry.detail})
    assert kept["operation"] == entry.detail
    for op, detail in OTHER_OPERATIONS.items():
        assert operation_detail(op) == detail and detail in OPERATIONS


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_the_actionability_checks_follow_the_entry(entry: ElementOpEntry) -> None:
    op, wanted = entry.op, entry.checks
    assert actionability.checks(op) == bool(wanted)
    assert actionability.pointer(op) == ("pointer" in wanted)
    if "pointer" in wanted:
        assert "visible" in wanted  # a hit test of an element that is not shown means nothing
    base = {"tag": "input", "type": "text", "visible": True, "disabled": False}
    states = {
        "hidden": ({**base, "visible": False}, "visible"),
        "disabled": ({**base, "disabled": True}, "enabled"),
        "not_editable": ({**base, "readonly": True}, "editable"),
        "file_input": ({**base, "type": "file"}, "editable"),
        "covered": ({**base, "coveredBy": {"role": "dialog", "name": ""}}, "pointer"),
    }
    for reason, (state, check) in states.items():
        reading = actionability.Reading(1, {"readonly": False, "coveredBy": None, **state})
        expected = reason if check in wanted else None
        if reason == "file_input" and "visible" in wanted and "editable" not in wanted:
            expected = None  # a visible file input is still a visible element
        assert reading.blocker(op, late=True) == expected, reason
    assert (
        actionability.Reading(1, {**base, "readonly": False, "coveredBy": None}).blocker(op) is None
    )


class _Element:
    """A stand-in for a Playwright Locator / ElementHandle that notes which method ran."""

    def __init__(self) -> None:
        self.called: list[str] = []

    def __getattr__(self, name: str) -> Any:
        async def method(*args: Any, **kwargs: Any) -> Any:
            self.called.append(name)
            return ["blue"] if name == "select_option" else None

        return method


@pytest.mark.anyio
@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
async def test_the_engine_and_the_export_call_the_same_playwright_method(
    entry: ElementOpEntry,
) -> None:
    method = entry.playwright_method
    for api in (AsyncLocator, AsyncHandle, SyncLocator):
        assert callable(getattr(api, method, None)), (api, method)
    el = _Element()
    arg: str | OptionChoice | None = "Ada" if entry.records == "text" else None
    if entry.records == "option":
        arg = OptionChoice("label", ("Blue",))
    await element_call(entry.op, arg)(el, 100)
    assert el.called[0] == method


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_the_recorded_step_exports_its_call(entry: ElementOpEntry) -> None:
    arg = entry.argument
    assert entry.records == ("target" if arg is None else "option" if arg.choice else "text")
    value = Value.literal("Ada") if entry.records == "text" else None
    option = OptionChoice("label", ("Blue",)) if entry.records == "option" else None
    step = Action(
        seq=1,
        session_id="s1",
        page_id="p1",
        op=entry.op,
        locator={"strategy": "testId", "value": "it"},
        value=value,
        option=option,
    )
    line = step_lines(step, Names(None, {"s1": "buyer_context"}))[-1]
    head = f"buyer_page.get_by_test_id({'it'!r}).{entry.playwright_method}("
    assert line.startswith(head), line
    expected = {"target": "", "text": "'Ada'", "option": "label='Blue'"}[entry.records]
    assert line == f"{head}{expected})"
    compile(line, "<export>", "exec")


def test_form_fields_take_exactly_the_form_operations() -> None:
    taken: set[str] = set()
    for kind in get_args(FieldKind):
        for value in (True, False, "Ada"):
            try:
                taken.add(field_operation(kind, value)[0])
            except BrowserMeshError:
                continue  # a value that does not fit the kind
    assert taken == set(FORM_OPS)
    assert all(ELEMENT_OPERATIONS[op].checks for op in FORM_OPS)  # the pick runs with checks


@pytest.fixture
async def runtime(tmp_path: Path) -> AsyncIterator[Runtime]:
    config = default_config(timeout_ms=2000, data_dir=tmp_path, tools=("core", "testing"))
    rt = Runtime(config, FakeEngine())
    yield rt
    await rt.shutdown()


@pytest.mark.anyio
async def test_every_operation_runs_records_and_exports(runtime: Runtime) -> None:
    _, view, page = await runtime.create_session(name="Buyer")
    call = PageCall(principal=LOCAL_PRINCIPAL, session_id=view["sessionId"], page_id=page)
    for entry in ENTRIES:
        args = {"locator": {"strategy": "testId", "value": entry.op}, **CALL_ARGS.get(entry.op, {})}
        arg = (
            args.get(entry.argument.field) if entry.argument and not entry.argument.choice else None
        )
        await runtime.element_action(call, entry.op, args, arg)
    _, export = runtime.test_export(LOCAL_PRINCIPAL, [view["sessionId"]])
    assert export["steps"] == len(ENTRIES)
    code = export["code"]
    compile(code, "<export>", "exec")
    for entry in ENTRIES:
        assert f".{entry.playwright_method}(" in code, entry.op
