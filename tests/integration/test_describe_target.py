"""The element describer (engine/describe.py, issue 20) on real Chromium: a ref becomes the
first semantic locator that resolves to exactly its element, and that locator resolves back
to the same element through BrowserMesh's own locator code."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from browsermesh.engine import elements
from browsermesh.model.deadline import Deadline, OperationContext
from browsermesh.model.locators import RefTarget, parse_locator
from browsermesh.runtime.runtime import Runtime
from tests.fixtures.export_site import ExportSite
from tests.support.clients import ToolClient

pytestmark = pytest.mark.anyio
SAME = "(els, h) => els.length === 1 && els[0] === h"


@pytest.fixture(scope="module")
def export_site() -> Iterator[ExportSite]:
    with ExportSite() as site:
        yield site


def ctx() -> OperationContext:
    return OperationContext("o-describe", Deadline(10_000))


async def opened(client: ToolClient, runtime: Runtime, url: str) -> Any:
    """The engine page (PwPage) of a new session's first page at `url`."""
    session_id, page_id = await client.session()
    await client.ok("browser_navigate", {"sessionId": session_id, "pageId": page_id, "url": url})
    return runtime.sessions_snapshot()[session_id].pages[page_id].handle


async def describe(
    runtime: Runtime, pw: Any, selector: str, role: str | None = None, name: str | None = None
) -> tuple[dict[str, Any], Any]:
    """Describe the element `selector` finds (`>>>` enters the iframe) as a ref carrying
    `role` and `name`, as a capture would have registered it."""
    if ">>>" in selector:
        frame, inner = selector.split(">>>")
        handle = await pw.page.frame_locator(frame.strip()).locator(inner.strip()).element_handle()
    else:
        handle = await pw.page.locator(selector).element_handle()
    token = pw.refs.add(handle, role, name)
    return await runtime.engine.describe_target(pw, RefTarget(token), ctx()), handle


async def test_refs_become_the_first_unique_semantic_locator(
    client: ToolClient, runtime: Runtime, export_site: ExportSite
) -> None:
    pw = await opened(client, runtime, export_site.url("/describe"))
    expected: list[tuple[str, str | None, str | None, dict[str, Any]]] = [
        ("#save", "button", "Save", {"strategy": "role", "value": "button", "name": "Save"}),
        ("#edit2", "button", "Edit", {"strategy": "testId", "value": "edit-2"}),
        ("#secret", "textbox", "Elsewhere", {"strategy": "label", "value": "Secret"}),
        ("#find", None, None, {"strategy": "placeholder", "value": "Find"}),
        ("#note", None, None, {"strategy": "text", "value": "Just a note"}),
        ("#plain", None, None, {"strategy": "css", "value": "#plain"}),
        ("#box span:nth-of-type(2)", None, None, {"strategy": "css"}),
        ("#pick", "combobox", "Pick", {"strategy": "role", "value": "combobox"}),
        ("#agree", "checkbox", "Agree", {"strategy": "role", "value": "checkbox"}),
    ]
    for selector, role, name, want in expected:
        out, handle = await describe(runtime, pw, selector, role, name)
        locator = out["locator"]
        assert {k: locator.get(k) for k in want} == want, (selector, locator)
        assert out["resolved"] is True
        # The recorded locator is a valid BrowserMesh locator naming exactly this element.
        resolved = await elements.resolve(pw.page, parse_locator(locator), ctx(), "click")
        assert await resolved.evaluate_all(SAME, handle), (selector, locator)
    secret, _ = await describe(runtime, pw, "#secret")
    assert secret["isPassword"] is True and secret["kind"] == "text"
    assert (await describe(runtime, pw, "#pick"))[0]["kind"] == "select"
    assert (await describe(runtime, pw, "#agree"))[0]["kind"] == "checkbox"
    assert (await describe(runtime, pw, "#save"))[0]["isPassword"] is False


async def test_an_element_in_an_iframe_keeps_its_frame_chain(
    client: ToolClient, runtime: Runtime, export_site: ExportSite
) -> None:
    pw = await opened(client, runtime, export_site.url("/describe"))
    out, handle = await describe(runtime, pw, "#inner >>> button", "button", "Inside")
    assert out["locator"] == {
        "strategy": "role",
        "value": "button",
        "name": "Inside",
        "exact": True,
        "frame": {"kind": "iframe", "chain": [{"strategy": "css", "value": "#inner"}]},
    }
    resolved = await elements.resolve(pw.page, parse_locator(out["locator"]), ctx(), "click")
    assert await resolved.evaluate_all(SAME, handle)


async def test_locators_stay_as_given_and_stale_refs_describe_nothing(
    client: ToolClient, runtime: Runtime, export_site: ExportSite
) -> None:
    pw = await opened(client, runtime, export_site.url("/describe"))
    given = {"strategy": "label", "value": "Secret", "exact": True}
    out = await runtime.engine.describe_target(pw, parse_locator(given), ctx())
    assert out == {
        "locator": given,
        "isPassword": True,
        "kind": "text",
        "resolved": True,
        "secrets": [],
    }
    missing = {"strategy": "label", "value": "Not here", "exact": True}
    out = await runtime.engine.describe_target(pw, parse_locator(missing), ctx())
    assert out == {
        "locator": missing,
        "isPassword": False,
        "kind": None,
        "resolved": False,
        "secrets": [],
    }
    out = await runtime.engine.describe_target(pw, RefTarget("s99e1"), ctx())
    assert out["locator"] is None and out["resolved"] is False
    # No budget left: nothing is read, the action decides.
    spent = OperationContext("o-spent", Deadline(1))
    out = await runtime.engine.describe_target(pw, parse_locator(given), spent)
    assert out["resolved"] is False
