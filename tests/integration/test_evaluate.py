"""browser_evaluate on real Chromium: value forms, bounds, budgets, and no stall of other sessions.

The value is converted to its JSON form inside the page (reference §10, forms decided in issue 12),
so a huge value costs the server a bounded payload, never the whole value.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from browsermesh.errors import BrowserMeshError, error_payload
from browsermesh.model.jsonvalue import MAX_JSON_DEPTH
from browsermesh.runtime.calls import PageCall
from browsermesh.runtime.runtime import LOCAL_PRINCIPAL, Runtime
from tests.fixtures.site import FixtureSite
from tests.support.clients import ToolClient
from tests.support.clients import open_page as client_page
from tests.support.servers import stdio_server

pytestmark = pytest.mark.anyio

HUGE_ARRAY = "Array.from({length: 3e6}, (_, i) => i)"


async def open_page(runtime: Runtime, site: FixtureSite, path: str = "/evaluate") -> dict[str, str]:
    _, view, page_id = await runtime.create_session(LOCAL_PRINCIPAL)
    addr = {"session_id": view["sessionId"], "page_id": page_id}
    await runtime.navigate(
        PageCall(principal=LOCAL_PRINCIPAL, session_id=addr["session_id"], page_id=addr["page_id"]),
        site.url(path),
    )
    return addr


async def evaluate(
    runtime: Runtime, addr: dict[str, str], expression: str, arg: Any = None, timeout_ms: int = 5000
) -> tuple[Any, bool]:
    _, (result, truncated) = await runtime.evaluate(
        PageCall(
            principal=LOCAL_PRINCIPAL,
            session_id=addr["session_id"],
            page_id=addr["page_id"],
            timeout_ms=timeout_ms,
        ),
        expression,
        arg,
    )
    return result, truncated


FORMS: list[tuple[str, Any]] = [
    ("undefined", None),
    ("[undefined, NaN, Infinity, -Infinity]", [None, None, None, None]),
    ("({a: undefined})", {"a": None}),
    ("-0", 0),
    ("[1, 2.5, true, 'x', null]", [1, 2.5, True, "x", None]),
    ("123n", "123n"),
    ("({big: 2n ** 64n})", {"big": "18446744073709551616n"}),
    ("new Map([['a', 1], [2, {b: 3n}]])", [["a", 1], [2, {"b": "3n"}]]),
    ("new Set([1, 'x', 1])", [1, "x"]),
    ("/a+/gi", "/a+/gi"),
    ("new Date(Date.UTC(2020, 1, 3, 4, 5, 6, 7))", "2020-02-03T04:05:06.007Z"),
    ("new Date(NaN)", None),
    (
        "({f: function foo() {}, g: () => 1, C: class Klass {}})",
        {
            "f": "[Function: foo]",
            "g": "[Function: g]",
            "C": "[Function: Klass]",
        },
    ),
    ("Symbol('s')", "Symbol(s)"),
    ("new TypeError('bad thing')", "TypeError: bad thing"),
    ("new Uint8Array([1, 2, 255])", [1, 2, 255]),
    ("new Float64Array([0.5, NaN])", [0.5, None]),
    ("new BigInt64Array([5n])", ["5n"]),
    ("new Uint8Array([7, 8]).buffer", [7, 8]),
    ("document.querySelector('h1')", "<h1>"),
    ("document.querySelector('[data-testid=evaluate]')", "<p>"),
    ("[...document.querySelectorAll('main, h1')]", ["<main>", "<h1>"]),
    ("document.querySelectorAll('h1')", ["<h1>"]),
    ("document", "#document"),
    (
        "(() => { const a = {n: 1}; a.self = a; a.list = [a]; return a; })()",
        {
            "n": 1,
            "self": "[Circular]",
            "list": ["[Circular]"],
        },
    ),
    ("(() => { const s = {v: 1}; return [s, s]; })()", [{"v": 1}, {"v": 1}]),
    ("[new Number(5), new String('s'), new Boolean(false)]", [5, "s", False]),
    ("new URL('http://example.test/a?b=1')", "http://example.test/a?b=1"),
    ("({get boom() { throw new Error('no'); }, ok: 1})", {"boom": None, "ok": 1}),
    (
        "({p: Promise.resolve(1), w: new WeakMap()})",
        {
            "p": "[object Promise]",
            "w": "[object WeakMap]",
        },
    ),
    ("Promise.resolve(new Map([[1, 2]]))", [[1, 2]]),
    ("answer", 42),
    ("function named() { return 7; }", 7),
    ("async () => 8", 8),
]


async def test_value_forms(runtime: Runtime, site: FixtureSite) -> None:
    addr = await open_page(runtime, site)
    for expression, expected in FORMS:
        result, truncated = await evaluate(runtime, addr, expression)
        assert (result, truncated) == (expected, False), expression


async def test_arg_nesting_and_depth(runtime: Runtime, site: FixtureSite) -> None:
    addr = await open_page(runtime, site)
    assert await evaluate(runtime, addr, "(a) => a.x + 1", {"x": 1}) == (2, False)
    deep, truncated = await evaluate(
        runtime, addr, "(() => { let v = 1; for (let i = 0; i < 300; i++) v = [v]; return v; })()"
    )
    depth = 0
    while isinstance(deep, list):
        deep, depth = deep[0], depth + 1
    # Cut at MAX_JSON_DEPTH levels and said so (issue 30; it was 200, silently).
    assert deep is None and depth == MAX_JSON_DEPTH + 1 and truncated
    shallow, truncated = await evaluate(
        runtime, addr, "(() => { let v = 1; for (let i = 0; i < 64; i++) v = [v]; return v; })()"
    )
    assert isinstance(shallow, list) and not truncated


async def test_a_deep_value_reaches_the_sdk_client_parsed_and_marked_truncated(
    tmp_path: Path, site: FixtureSite
) -> None:
    """Over stdio the MCP Python SDK's client fails to parse a message from about 198 levels:
    the bound keeps every result well below, and says it cut."""
    params = stdio_server(tmp_path, "--tools", "core,eval")
    async with Client(params) as sdk:
        client = await ToolClient.of(sdk)
        addr = await client_page(client, site.url("/evaluate"))
        nested = "(() => { let v = 1; for (let i = 0; i < 1000; i++) v = {a: [v]}; return v; })()"
        data = await client.ok("browser_evaluate", {**addr, "expression": nested})
    assert data["truncated"] is True
    value, depth = data["result"], 0
    while isinstance(value, dict | list):
        value, depth = (value["a"] if isinstance(value, dict) else value[0]), depth + 1
    assert value is None and depth == MAX_JSON_DEPTH + 1


async def test_large_values_are_cut_to_a_json_prefix(runtime: Runtime, site: FixtureSite) -> None:
    addr = await open_page(runtime, site)
    text, truncated = await evaluate(runtime, addr, "bigValue")
    assert truncated and isinstance(text, str)
    assert text.startswith('"xxx') and len(text.encode()) == 65_536
    multibyte, truncated = await evaluate(runtime, addr, "'é'.repeat(70000)")
    assert truncated and len(multibyte.encode()) <= 65_536 and multibyte.startswith('"éé')
    exact, truncated = await evaluate(runtime, addr, "'x'.repeat(65534)")
    assert exact == "x" * 65_534 and not truncated  # "x…x" with its quotes is 65,536 bytes
    keys, truncated = await evaluate(
        runtime,
        addr,
        "(() => { const o = {}; for (let i = 0; i < 5e5; i++) o['k' + i] = i; return o; })()",
    )
    assert truncated and keys.startswith('{"k0":0,"k1":1,')


async def test_failures_keep_their_codes(runtime: Runtime, site: FixtureSite) -> None:
    addr = await open_page(runtime, site)
    with pytest.raises(BrowserMeshError) as thrown:
        await evaluate(runtime, addr, "throwError()")
    assert thrown.value.code.value == "BROWSER_ERROR"
    assert "evaluate failure" not in str(error_payload(thrown.value))
    started = time.monotonic()
    with pytest.raises(BrowserMeshError) as never:
        await evaluate(runtime, addr, "never", timeout_ms=500)
    assert never.value.code.value == "OPERATION_TIMEOUT"
    assert time.monotonic() - started < 2
    # The conversion runs with the page's builtins: a page that breaks them gets an error,
    # never a malformed result.
    with pytest.raises(BrowserMeshError) as broken:
        await evaluate(runtime, addr, "JSON.stringify = () => '{'; 'x'")
    assert broken.value.code.value == "BROWSER_ERROR"


async def _poll_open_loop(
    runtime: Runtime, addr: dict[str, str], stop: asyncio.Event, every_s: float = 0.02
) -> list[float]:
    """B's get_url latencies, sent at a fixed rate (open loop): a stalled server delays every
    call that was due meanwhile, so a stall shows in the percentiles, not as one slow call."""
    latencies: list[float] = []

    async def one(due: float) -> None:
        await runtime.get_url(
            PageCall(
                principal=LOCAL_PRINCIPAL, session_id=addr["session_id"], page_id=addr["page_id"]
            )
        )
        latencies.append(time.monotonic() - due)

    async with asyncio.TaskGroup() as group:
        due = time.monotonic()
        while not stop.is_set():
            group.create_task(one(due))
            due += every_s
            await asyncio.sleep(max(0.0, due - time.monotonic()))
    return latencies


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]


async def test_a_huge_value_neither_stalls_other_sessions_nor_misses_its_budget(
    runtime: Runtime, site: FixtureSite
) -> None:
    a = await open_page(runtime, site)
    b = await open_page(runtime, site, "/?value=B")
    stop = asyncio.Event()
    poller = asyncio.create_task(_poll_open_loop(runtime, b, stop))
    started = time.monotonic()
    try:
        result, truncated = await evaluate(runtime, a, HUGE_ARRAY, timeout_ms=2000)
        elapsed = time.monotonic() - started
        follow_up = await evaluate(runtime, a, "answer")
    finally:
        stop.set()
        latencies = await poller
    assert elapsed < 3.5, elapsed
    assert truncated and result.startswith("[0,1,2,3,") and len(result.encode()) == 65_536
    assert follow_up == (42, False)
    assert _p95(latencies) < 1.0, (_p95(latencies), max(latencies))
