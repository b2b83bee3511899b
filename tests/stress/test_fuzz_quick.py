"""Bounded fuzzing of every published tool (issue 8): schema-shaped and malformed arguments.

Every call must come back as a valid success or a BrowserMesh error with a known code other than
INTERNAL_ERROR (schema failures too: INVALID_ARGUMENT since issue 31); never a hang or a dead
server.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client

from browsermesh.errors import ErrorCode
from browsermesh.mcp.server import create_server
from tests.fixtures.site import FixtureSite
from tests.support.clients import ToolClient
from tests.support.runtimes import real_runtime

CODES = {c.value for c in ErrorCode} - {"INTERNAL_ERROR", "OPERATION_CANCELLED"}
BAD_URLS = [
    "file:///etc/passwd",
    "javascript:alert(1)",
    "chrome://version",
    "data:text/html,x",
    "about:blank",
    "http://",
    "ht!tp://x",
]
PATHS = ["../x", "/etc/passwd", "a/b", ".hidden", "x" * 129, ""]
NASTY = st.one_of(
    st.sampled_from([*BAD_URLS, *PATHS, "A" * 100_000, "\x00\x07\x1b\u2028", "s1e1", "@"]),
    st.integers(min_value=-(2**63), max_value=2**63),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
    st.recursive(st.none(), lambda inner: st.lists(inner, max_size=2), max_leaves=50).map(
        lambda v: [[[[[[v]]]]]]
    ),
    st.dictionaries(
        st.sampled_from(["kind", "strategy", "value", "ref", "bogus"]),
        st.text(max_size=10),
        max_size=3,
    ),
)
SKIP_ON_LIVE = {"browser_session_close", "browser_page_close"}


def value_for(schema: dict[str, Any], live: dict[str, str]) -> st.SearchStrategy[Any]:
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if "const" in schema:
        return st.just(schema["const"])
    kind = schema.get("type")
    if kind == "string":
        return st.one_of(st.text(max_size=30), st.sampled_from(list(live.values())))
    if kind == "integer":
        return st.integers(schema.get("minimum", -10), schema.get("maximum", 10_000))
    if kind == "boolean":
        return st.booleans()
    if kind == "object":
        return st.one_of(
            st.just({"strategy": "css", "value": "body"}),
            st.just({"kind": "text", "text": "x", "state": "absent"}),
            st.just({"kind": "click", "target": {"ref": "s1e1"}}),
            st.just({"kind": "popup"}),
            st.just({"kind": "fullPage"}),
            st.dictionaries(st.text(max_size=8), st.text(max_size=8), max_size=3),
        )
    return NASTY


@st.composite
def arguments(draw: st.DrawFn, tool: Any, live: dict[str, str]) -> dict[str, Any]:
    props: dict[str, Any] = tool.input_schema.get("properties", {})
    args: dict[str, Any] = {}
    for name, sub in props.items():
        if name in ("sessionId", "pageId") and draw(st.integers(0, 3)) > 0:
            args[name] = live["sessionId" if name == "sessionId" else "pageId"]
        elif name == "timeoutMs":
            if draw(st.booleans()):
                args[name] = draw(st.integers(1, 1500))
        elif draw(st.booleans()):
            args[name] = draw(
                st.one_of(value_for(sub, live), NASTY)
                if draw(st.integers(0, 4)) == 0
                else value_for(sub, live)
            )
    if draw(st.integers(0, 9)) == 0:
        args["unknownField"] = draw(NASTY)
    return args


def check(result: Any) -> str:
    """The outcome kind: `success` or the BrowserMesh error code."""
    text = result.content[-1].text if result.content else ""
    if not result.is_error:
        return "success"  # the SDK client already validated structuredContent
    assert result.structured_content is None
    payload = json.loads(text)
    assert payload["ok"] is False and payload["error"]["code"] in CODES, text[:300]
    return str(payload["error"]["code"])


SETUP_TIMEOUT_MS = 30_000
SETUP_ATTEMPTS = 3
HOSTILE_SECRET = "FUZZ-CANARY-51c2"
# A page built to leak: a button named by a password field, a label that copies it, popups.
HOSTILE_PAGE = f"""<!doctype html><title>Hostile</title>
<label>Password <input type=password id=p value="{HOSTILE_SECRET}"></label>
<span id=l>Sign in with</span><button aria-labelledby="l p">Go</button>
<div id=copy></div><a href="#" onclick="window.open('about:blank'); return false">Open</a>
<script>copy.textContent = p.value; console.log('loaded');</script>"""


async def _fuzz(tmp_path: Path, start_url: str, examples: int) -> tuple[dict[str, int], list[str]]:
    """Run `examples` fuzzed calls over every tool on a live session at `start_url`."""
    texts: list[str] = []
    async with (
        real_runtime(tmp_path, timeout_ms=2000) as runtime,
        Client(create_server(runtime)) as client,
    ):
        c = await ToolClient.of(client)
        tools = list(c.tools.values())
        # The test's own set-up and last checks are not fuzzed: they get a budget that holds on
        # a loaded machine (the runtime's 2 s default keeps the fuzzed calls short).
        setup = {"timeoutMs": SETUP_TIMEOUT_MS}
        s, p = await c.session(tries=SETUP_ATTEMPTS)
        await c.ok("browser_navigate", {"sessionId": s, "pageId": p, "url": start_url, **setup})
        live = {"sessionId": s, "pageId": p}
        calls: list[tuple[str, dict[str, Any]]] = []

        @settings(
            max_examples=examples,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(st.data())
        def collect(data: st.DataObject) -> None:
            tool = data.draw(st.sampled_from(tools))
            args = data.draw(arguments(tool, live))
            if tool.name in SKIP_ON_LIVE and args.get("sessionId") == live["sessionId"]:
                return
            calls.append((tool.name, args))

        collect()
        assert len(calls) > examples // 3
        outcomes: dict[str, int] = {}
        for name, args in calls:
            with anyio.fail_after(30):
                result = await client.call_tool(name, args)
            kind = check(result)
            texts.extend(c.text for c in result.content if c.type == "text")
            outcomes[kind] = outcomes.get(kind, 0) + 1
        info = await c.ok("browser_runtime_info")
        assert info["activeSessions"] >= 1
        s2, p2 = await c.session(tries=SETUP_ATTEMPTS)  # the server still serves new work
        ok = await c.ok(
            "browser_navigate", {"sessionId": s2, "pageId": p2, "url": start_url, **setup}
        )
        assert ok["url"] == start_url
        return outcomes, texts


@pytest.mark.anyio
async def test_every_tool_survives_fuzzed_arguments(tmp_path: Path, site: FixtureSite) -> None:
    outcomes, _texts = await _fuzz(tmp_path, site.url("/interactions"), 150)
    # the mix reached the browser, the runtime's checks and the schema channel alike
    assert outcomes.get("success", 0) >= 5, outcomes
    assert outcomes.get("INVALID_ARGUMENT", 0) >= 5, outcomes
    assert sum(v for k, v in outcomes.items() if k in CODES) >= 5, outcomes


@pytest.mark.anyio
async def test_fuzzed_calls_on_a_hostile_page_never_leak_its_password(
    tmp_path: Path, site: FixtureSite
) -> None:
    site.pages["/fuzz/hostile"] = HOSTILE_PAGE
    # As many examples as the test above: with 80, a run of random draws could reach the page
    # only twice (2 successes among 76 refusals, seen once); with 150, 13-27 in six runs.
    outcomes, texts = await _fuzz(tmp_path, site.url("/fuzz/hostile"), 150)
    assert outcomes.get("success", 0) >= 3, outcomes
    assert not [t for t in texts if HOSTILE_SECRET in t]
