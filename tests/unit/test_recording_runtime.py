"""The runtime's recording rules (issue 20) on the fake engine: what is recorded, in which
order across sessions, what is not (failures, reads, a session without the testing profile),
secrets as environment references, pause/resume/clear, and the export's argument checks."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from browsermesh.config import default_config
from browsermesh.errors import BrowserMeshError, ErrorCode
from browsermesh.model.recording import Action, FormFill, Navigate, PageClosed, PageOpened, Wait
from browsermesh.runtime.calls import PageCall
from browsermesh.runtime.runtime import LOCAL_PRINCIPAL, Runtime
from tests.fakes import FakeEngine

pytestmark = pytest.mark.anyio
TESTING = ("core", "files", "testing")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def runtime(tmp_path: Path) -> AsyncIterator[Runtime]:
    rt = Runtime(default_config(timeout_ms=2000, data_dir=tmp_path, tools=TESTING), FakeEngine())
    yield rt
    await rt.shutdown()


async def session(rt: Runtime, role: str) -> PageCall:
    _, view, page = await rt.create_session(name=role.title(), metadata={"role": role})
    return PageCall(principal=LOCAL_PRINCIPAL, session_id=view["sessionId"], page_id=page)


async def test_steps_are_recorded_in_accept_order_across_sessions(runtime: Runtime) -> None:
    buyer, admin = await session(runtime, "buyer"), await session(runtime, "admin")
    await runtime.navigate(buyer, "http://shop.test/")
    await runtime.navigate(admin, "http://shop.test/admin")
    name = {"strategy": "label", "value": "Name"}
    await runtime.element_action(buyer, "fill", {"locator": name}, "Ada")
    await runtime.element_action(buyer, "click", {"ref": "e5"}, None)
    await runtime.wait(admin, {"kind": "text", "text": "Ada", "state": "present"})
    log = {s: runtime.sessions_snapshot()[str(s.session_id)].recording for s in (buyer, admin)}
    buyer_steps, admin_steps = log[buyer].steps, log[admin].steps  # type: ignore[union-attr]
    assert [type(s) for s in buyer_steps] == [Navigate, Action, Action]
    assert [type(s) for s in admin_steps] == [Navigate, Wait]
    seqs = [s.seq for s in sorted([*buyer_steps, *admin_steps], key=lambda s: s.seq)]
    assert seqs == sorted(set(seqs))  # one counter, no two steps share a number
    assert buyer_steps[0].seq < admin_steps[0].seq < buyer_steps[1].seq < admin_steps[1].seq
    fill, click = buyer_steps[1], buyer_steps[2]
    assert isinstance(fill, Action) and fill.value is not None and fill.value.text == "Ada"
    assert isinstance(click, Action)
    assert click.locator == {"strategy": "testId", "value": "ref-e5"}  # the ref, described


async def test_failed_operations_and_reads_are_not_recorded(runtime: Runtime) -> None:
    buyer = await session(runtime, "buyer")
    await runtime.navigate(buyer, "http://shop.test/")
    await runtime.get_title(buyer)
    await runtime.snapshot(buyer, {})
    engine = runtime.engine
    assert isinstance(engine, FakeEngine)
    engine.fail_next_navigation = BrowserMeshError(ErrorCode.NAVIGATION_FAILED)
    with pytest.raises(BrowserMeshError):
        await runtime.navigate(buyer, "http://shop.test/broken")
    steps = runtime.sessions_snapshot()[str(buyer.session_id)].recording.steps  # type: ignore[union-attr]
    assert [type(s) for s in steps] == [Navigate]


async def test_passwords_and_marked_values_become_environment_references(
    runtime: Runtime,
) -> None:
    buyer = await session(runtime, "buyer")
    password = {"strategy": "label", "value": "Password"}
    await runtime.element_action(buyer, "fill", {"locator": password}, "hunter2")
    fields = [
        {"target": {"strategy": "label", "value": "Token"}, "value": "tok-1", "secret": True},
        {"target": {"strategy": "label", "value": "City"}, "value": "Oslo"},
        {"target": {"strategy": "label", "value": "Subscribe"}, "value": True},
    ]
    await runtime.fill_form(buyer, fields)
    steps = runtime.sessions_snapshot()[str(buyer.session_id)].recording.steps  # type: ignore[union-attr]
    fill, form = steps
    assert isinstance(fill, Action) and fill.value is not None
    assert fill.value.env == "BM_SECRET_BUYER_PASSWORD" and fill.value.text is None
    assert isinstance(form, FormFill)
    token, city, box = form.fields
    assert token.value is not None and token.value.env == "BM_SECRET_BUYER_TOKEN"
    assert city.value is not None and city.value.text == "Oslo"
    assert box.op == "check" and box.value is None
    assert "hunter2" not in repr(steps) and "tok-1" not in repr(steps)
    _, out = runtime.test_export(LOCAL_PRINCIPAL, [buyer.session_id])
    assert "hunter2" not in out["code"] and "tok-1" not in out["code"]
    assert out["secrets"] == ["BM_SECRET_BUYER_PASSWORD", "BM_SECRET_BUYER_TOKEN"]
    with pytest.raises(BrowserMeshError) as bad:
        await runtime.fill_form(buyer, [{**fields[1], "secret": "yes"}])
    assert bad.value.details["field"] == "fields[0].secret"


async def test_pause_resume_clear_and_pages(runtime: Runtime) -> None:
    buyer = await session(runtime, "buyer")
    sid = str(buyer.session_id)
    _, paused = runtime.set_recording(LOCAL_PRINCIPAL, sid, "pause")
    assert paused == {"sessionId": sid, "recording": False, "steps": 0, "truncated": False}
    await runtime.navigate(buyer, "http://shop.test/explore")
    runtime.set_recording(LOCAL_PRINCIPAL, sid, "resume")
    _, page = await runtime.create_page(LOCAL_PRINCIPAL, sid)
    await runtime.close_page(LOCAL_PRINCIPAL, sid, page["pageId"])
    steps = runtime.sessions_snapshot()[sid].recording.steps  # type: ignore[union-attr]
    assert [type(s) for s in steps] == [PageOpened, PageClosed]
    _, cleared = runtime.set_recording(LOCAL_PRINCIPAL, sid, "clear")
    assert cleared["steps"] == 0 and cleared["recording"] is True
    with pytest.raises(BrowserMeshError) as bad:
        runtime.set_recording(LOCAL_PRINCIPAL, sid, "stop")
    assert bad.value.details["field"] == "action"


async def test_export_arguments(runtime: Runtime, tmp_path: Path) -> None:
    buyer = await session(runtime, "buyer")
    sid = str(buyer.session_id)
    cases: list[tuple[object, ErrorCode]] = [
        ([], ErrorCode.INVALID_ARGUMENT),
        ("s1", ErrorCode.INVALID_ARGUMENT),
        ([sid, sid], ErrorCode.INVALID_ARGUMENT),
        ([sid] * 11, ErrorCode.LIMIT_EXCEEDED),
        (["s999"], ErrorCode.SESSION_NOT_FOUND),
    ]
    for ids, code in cases:
        with pytest.raises(BrowserMeshError) as bad:
            runtime.test_export(LOCAL_PRINCIPAL, ids)
        assert bad.value.code is code, ids
    with pytest.raises(BrowserMeshError) as other:
        runtime.test_export("mallory", [sid])
    assert other.value.code is ErrorCode.SESSION_NOT_FOUND
    plain = Runtime(default_config(data_dir=tmp_path / "plain"), FakeEngine())
    try:
        _, view, _ = await plain.create_session()
        with pytest.raises(BrowserMeshError) as off:
            plain.test_export(LOCAL_PRINCIPAL, [view["sessionId"]])
        assert off.value.code is ErrorCode.INVALID_ARGUMENT
        assert plain.sessions_snapshot()[view["sessionId"]].recording is None
    finally:
        await plain.shutdown()


async def test_a_closed_session_still_exports(runtime: Runtime) -> None:
    buyer = await session(runtime, "buyer")
    await runtime.navigate(buyer, "http://shop.test/")
    await runtime.close_session(LOCAL_PRINCIPAL, buyer.session_id)
    _, out = runtime.test_export(LOCAL_PRINCIPAL, [buyer.session_id])
    assert out["steps"] == 1 and "http://shop.test" in out["code"]
