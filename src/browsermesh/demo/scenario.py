"""``browsermesh demo [--headed]`` (reference §20.3): an end-to-end proof through the real protocol.

The demo starts the bundled :class:`~browsermesh.demo.shop.DemoShop`, spawns
``python -m browsermesh --no-persistence --log-level warn --headless|--headed`` over stdio with the
current interpreter and the full current environment, and drives two isolated sessions as an MCP
client would: a *buyer* orders two blue teapots and an *admin* sees the order in the shop's admin
table. Every tool call prints one numbered step line; the demo ends with the ``PASS`` line (exit 0)
or with the failing tool's error code and ``nextStep`` (exit 1). It is bounded by 120 s, never
touches the data directory (the server runs with ``--no-persistence``) and never prints a traceback.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable, Coroutine, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from mcp import Client, MCPError, StdioServerParameters

from browsermesh.config import process_environ
from browsermesh.demo.shop import DemoShop
from browsermesh.model.action_table import table_refs
from browsermesh.model.tasks import TaskOwner, all_settled

__all__ = [
    "DEMO_TIMEOUT_SECONDS",
    "PASS_LINE",
    "DemoFailure",
    "ToolFailure",
    "format_step",
    "pick_ref",
    "run_demo",
    "server_command",
    "table_has_order",
]

DEMO_TIMEOUT_SECONDS: Final = 120.0
# The scenario itself must end this long before the hard bound, so that closing the sessions and
# stopping the server still fit inside the 120 s.
_CLEANUP_RESERVE_SECONDS: Final = 15.0
_ITEM: Final = "Blue teapot"
_QUANTITY: Final = "2"
PASS_LINE: Final = f"PASS: admin sees the buyer's order ({_ITEM} × {_QUANTITY})"
_REQUIRED_TOOL: Final = "browser_session_create"
_NO_SESSION: Final = "-"
_MAX_OUTCOME_CHARS: Final = 160


class DemoFailure(Exception):
    """A demo failure whose message is already written for the user."""


class ToolFailure(DemoFailure):
    """A tool answered ``isError``; carries the BrowserMesh error code and ``nextStep``."""

    def __init__(self, role: str, tool: str, code: str, message: str, next_step: str) -> None:
        super().__init__(f"{tool} ({role}) failed with {code}: {message}")
        self.role = role
        self.tool = tool
        self.code = code
        self.message = message
        self.next_step = next_step


def format_step(number: int, role: str, session_id: str | None, tool: str, outcome: str) -> str:
    """One step line: ``[NN] <role> <sessionId> <tool> → <short outcome>``.

    A step without a session id yet (a failed ``browser_session_create``) shows ``-``; the outcome
    is flattened to one line and cut to a short length.
    """
    flat = " ".join(outcome.split())
    if len(flat) > _MAX_OUTCOME_CHARS:
        flat = flat[: _MAX_OUTCOME_CHARS - 1] + "…"
    return f"[{number:02d}] {role} {session_id or _NO_SESSION} {tool} → {flat}"


def server_command(headed: bool) -> list[str]:
    """The argument vector the demo spawns the server with (after the interpreter)."""
    return [
        "-m",
        "browsermesh",
        "--no-persistence",
        "--log-level",
        "warn",
        "--headed" if headed else "--headless",
        # stdio regardless of a BROWSERMESH_TRANSPORT in the user's environment
        "--transport",
        "stdio",
    ]


def pick_ref(refs: Sequence[Mapping[str, Any]], roles: Sequence[str], name: str) -> str:
    """The ref of the one action-table entry with one of ``roles`` and accessible name ``name``.

    Refs are opaque and change with every capture, so the demo never hard-codes them.
    """
    matches = [
        str(entry["ref"])
        for entry in refs
        if entry.get("role") in roles and entry.get("name") == name and "ref" in entry
    ]
    if len(matches) != 1:
        wanted = " or ".join(roles)
        raise DemoFailure(
            f"the action table has {len(matches)} {wanted} elements named {json.dumps(name)}, "
            "expected exactly one"
        )
    return matches[0]


def table_has_order(text: str, item: str, quantity: str) -> bool:
    """Whether the visible text of the orders table has a row with ``item`` and ``quantity``."""
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.split("\t")]
        if item in cells and quantity in cells:
            return True
    return False


def _emit(line: str) -> None:
    """Print one line and flush it (so every step appears as it happens, even through a pipe)."""
    try:
        try:
            print(line, flush=True)
        except UnicodeEncodeError:
            encoding = getattr(sys.stdout, "encoding", None) or "ascii"
            print(line.encode(encoding, "replace").decode(encoding), flush=True)
    except (BrokenPipeError, ValueError, OSError):
        pass  # stdout is gone (e.g. piped into `head`); the exit code still tells the result


@dataclass
class _Role:
    name: str
    session_id: str | None = None
    page_id: str | None = None
    closed: bool = False

    def page(self) -> dict[str, Any]:
        return {"sessionId": self.session_id, "pageId": self.page_id}


def _describe_refs(refs: Sequence[Mapping[str, Any]]) -> str:
    listed = ", ".join(
        f"[{entry['ref']}] {entry['role']} {json.dumps(entry.get('name', ''))}" for entry in refs
    )
    return f"action table, {len(refs)} refs: {listed}"


def _error_payload(result: Any) -> tuple[str, str, str]:
    """``(code, message, nextStep)`` of an ``isError`` result (BrowserMesh JSON or schema text)."""
    text = ""
    for block in getattr(result, "content", None) or []:
        if getattr(block, "type", None) == "text":
            text = str(block.text)
            break
    try:
        payload = json.loads(text)
        error = payload["error"]
        return str(error["code"]), str(error["message"]), str(error["nextStep"])
    except (ValueError, TypeError, KeyError):
        # Not BrowserMesh's JSON (every failure is, schema failures too since issue 31 item 7).
        first = text.strip().splitlines()[0] if text.strip() else "no error text"
        return "INPUT_VALIDATION", first, "re-read the tool's inputSchema (tools/list)"


class _Scenario:
    def __init__(self, client: Client, shop: DemoShop) -> None:
        self.client = client
        self.shop = shop
        self.steps = 0
        self.buyer = _Role("buyer")
        self.admin = _Role("admin")
        self.order_placed = asyncio.Event()

    def step(self, role: _Role, tool: str, outcome: str) -> None:
        self.steps += 1
        _emit(format_step(self.steps, role.name, role.session_id, tool, outcome))

    async def call(
        self,
        role: _Role,
        tool: str,
        arguments: dict[str, Any],
        outcome: Callable[[dict[str, Any]], str],
    ) -> dict[str, Any]:
        result = await self.client.call_tool(tool, arguments)
        if result.is_error:
            code, message, next_step = _error_payload(result)
            self.step(role, tool, f"error {code}")
            raise ToolFailure(role.name, tool, code, message, next_step)
        data = result.structured_content
        if not isinstance(data, dict):
            self.step(role, tool, "error: no structured result")
            raise DemoFailure(f"{tool} ({role.name}) returned no structured result")
        self.step(role, tool, outcome(data))
        return data

    # -- steps -----------------------------------------------------------------------------

    async def create(self, role: _Role) -> None:
        def outcome(data: dict[str, Any]) -> str:
            session = data["session"]
            role.session_id = str(session["sessionId"])
            role.page_id = str(data["initialPage"]["pageId"])
            return f"{session['status']}, name {json.dumps(role.name)}, metadata role={role.name}"

        await self.call(
            role,
            "browser_session_create",
            {"name": role.name, "metadata": {"role": role.name}},
            outcome,
        )

    async def close(self, role: _Role) -> None:
        if role.session_id is None or role.closed:
            return
        role.closed = True
        await self.call(
            role,
            "browser_session_close",
            {"sessionId": role.session_id},
            lambda data: str(data["session"]["status"]),
        )

    async def buyer_flow(self) -> None:
        buyer = self.buyer
        await self.call(
            buyer,
            "browser_navigate",
            {**buyer.page(), "url": f"{self.shop.base_url}/"},
            lambda data: str(data["url"]),
        )
        table = await self.call(
            buyer,
            "browser_snapshot",
            {**buyer.page(), "format": "actions"},
            lambda data: _describe_refs(table_refs(data["snapshot"])),
        )
        refs: list[dict[str, Any]] = list(table_refs(table["snapshot"]))
        item = pick_ref(refs, ("textbox",), "Item")
        quantity = pick_ref(refs, ("combobox", "listbox"), "Quantity")
        place_order = pick_ref(refs, ("button",), "Place order")
        await self.call(
            buyer,
            "browser_fill",
            {**buyer.page(), "ref": item, "value": _ITEM},
            lambda _: f'filled [{item}] "Item" with {json.dumps(_ITEM)}',
        )
        await self.call(
            buyer,
            "browser_select_option",
            {**buyer.page(), "ref": quantity, "value": _QUANTITY},
            lambda _: f'selected {json.dumps(_QUANTITY)} in [{quantity}] "Quantity"',
        )
        await self.call(
            buyer,
            "browser_action_and_wait",
            {
                **buyer.page(),
                "action": {"kind": "click", "target": {"ref": place_order}},
                "wait": {"kind": "navigation", "matcher": {"kind": "glob", "value": "**/orders/*"}},
            },
            lambda data: (
                f'clicked [{place_order}] "Place order", {data["event"]["kind"]} '
                f"to {data['event'].get('url', '?')}"
            ),
        )
        self.order_placed.set()

    async def admin_flow(self) -> None:
        admin = self.admin
        await self.call(
            admin,
            "browser_navigate",
            {**admin.page(), "url": f"{self.shop.base_url}/admin"},
            lambda data: str(data["url"]),
        )
        # The admin page is rendered once per request: it can show the order only when it is
        # loaded after the order exists. So the admin opens it while the buyer shops, then waits
        # (client side) for the buyer's confirmation and reloads before waiting for the text.
        await self.order_placed.wait()
        await self.call(admin, "browser_reload", admin.page(), lambda data: str(data["url"]))
        await self.call(
            admin,
            "browser_wait",
            {**admin.page(), "condition": {"kind": "text", "text": _ITEM, "state": "present"}},
            lambda _: f"text {json.dumps(_ITEM)} present",
        )
        data = await self.call(
            admin,
            "browser_visible_text",
            {**admin.page(), "locator": {"strategy": "css", "value": "table"}},
            lambda data: "orders table: " + " | ".join(str(data["text"]).splitlines()),
        )
        if not table_has_order(str(data["text"]), _ITEM, _QUANTITY):
            raise DemoFailure(
                f"the admin's orders table has no row with {json.dumps(_ITEM)} and quantity "
                f"{_QUANTITY}: {json.dumps(data['text'])}"
            )

    async def run(self) -> None:
        """Both sessions, then both roles side by side, then both closes."""
        # Create both sessions concurrently; let both finish so that every session that was
        # created gets closed, even when the other creation failed.
        created = await all_settled(self.create(self.buyer), self.create(self.admin))
        failures = [outcome for outcome in created if isinstance(outcome, BaseException)]
        if failures:
            raise _group(failures)
        # Run the roles concurrently. The buyer's steps are ordered within its session; the
        # admin opens /admin in parallel, then waits on an in-process event the buyer sets once
        # the order is confirmed, so its text wait never depends on timing. A failure in one role
        # cancels the other.
        await _run_concurrently(self.buyer_flow(), self.admin_flow())
        closes = await all_settled(self.close(self.buyer), self.close(self.admin))
        failures = [outcome for outcome in closes if isinstance(outcome, BaseException)]
        if failures:
            raise _group(failures)

    async def cleanup(self) -> None:
        """After a failure: close what is still open, reporting (not raising) close errors."""
        results = await all_settled(self.close(self.buyer), self.close(self.admin))
        for outcome in results:
            if isinstance(outcome, Exception):
                _report_failure(outcome)


async def _run_concurrently(*steps: Coroutine[Any, Any, None]) -> None:
    """Run ``steps`` as tasks; the first failure cancels the others and is raised.

    (Not ``asyncio.TaskGroup``: on Python 3.11 a child failing while the group is already
    exiting leaves a stray cancellation request on the parent task, which then breaks the
    MCP client's own task group on shutdown.)
    """
    owner = TaskOwner()
    tasks = [owner.spawn(step) for step in steps]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    finally:
        await owner.aclose()
    failures = [
        error for task in tasks if not task.cancelled() and (error := task.exception()) is not None
    ]
    if failures:
        raise _group(failures)


def _group(failures: list[BaseException]) -> BaseException:
    if len(failures) == 1:
        return failures[0]
    exceptions = [f for f in failures if isinstance(f, Exception)]
    if len(exceptions) != len(failures):
        return next(f for f in failures if not isinstance(f, Exception))
    return ExceptionGroup("demo failures", exceptions)


def _leaves(error: BaseException) -> Iterator[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            yield from _leaves(inner)
    else:
        yield error


def _describe(error: BaseException) -> str:
    text = error.error.message if isinstance(error, MCPError) else str(error)
    text = " ".join(text.split())
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _report_failure(error: BaseException) -> None:
    """Print each distinct failure once; a tool error names its code and ``nextStep``."""
    tool_failures: dict[tuple[str, str, str, str], list[str]] = {}
    others: list[str] = []
    for leaf in _leaves(error):
        if isinstance(leaf, ToolFailure):
            key = (leaf.tool, leaf.code, leaf.message, leaf.next_step)
            tool_failures.setdefault(key, []).append(leaf.role)
        else:
            if isinstance(leaf, DemoFailure):
                text = f"FAIL: {leaf}"
            elif isinstance(leaf, MCPError):
                text = (
                    f"FAIL: the MCP exchange with the server failed ({_describe(leaf)}); "
                    "the server's own messages, if any, are on stderr"
                )
            else:
                text = f"FAIL: unexpected error ({_describe(leaf)})"
            if text not in others:
                others.append(text)
    for (tool, code, message, next_step), roles in tool_failures.items():
        _emit(f"FAIL: {tool} ({', '.join(roles)}) returned {code}: {message}")
        _emit(f"  code: {code}")
        _emit(f"  nextStep: {next_step}")
    for text in others:
        _emit(text)


def _display_missing(headed: bool, environ: Mapping[str, str]) -> bool:
    return (
        headed
        and sys.platform.startswith("linux")
        and not environ.get("DISPLAY")
        and not environ.get("WAYLAND_DISPLAY")
    )


async def _run_with_server(headed: bool, scenario_deadline: float) -> int:
    environ = dict(process_environ())
    mode = "headed" if headed else "headless"
    with DemoShop() as shop:
        _emit(f"BrowserMesh demo: shop at {shop.base_url}")
        parameters = StdioServerParameters(
            command=sys.executable, args=server_command(headed), env=environ
        )
        async with Client(parameters) as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            if _REQUIRED_TOOL not in tools:
                _emit(f"FAIL: the server does not list {_REQUIRED_TOOL}")
                return 1
            info = client.server_info
            server = f"{info.name} {info.version}" if info is not None else "browsermesh"
            _emit(
                f"Server: {server} over stdio ({mode}, protocol {client.protocol_version}), "
                f"{len(tools)} tools, {_REQUIRED_TOOL} listed"
            )
            scenario = _Scenario(client, shop)
            try:
                async with asyncio.timeout_at(scenario_deadline):
                    await scenario.run()
            except TimeoutError:
                _emit(f"FAIL: the demo did not finish within {DEMO_TIMEOUT_SECONDS:.0f} s")
                await scenario.cleanup()
                return 1
            except Exception as error:
                _report_failure(error)
                if _display_missing(headed, environ):
                    _emit(
                        "  hint: --headed needs a display, but neither DISPLAY nor "
                        "WAYLAND_DISPLAY is set; run 'browsermesh demo' without --headed "
                        "(or under xvfb-run)"
                    )
                await scenario.cleanup()
                return 1
    return 0


async def _run(headed: bool) -> int:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + DEMO_TIMEOUT_SECONDS
    try:
        async with asyncio.timeout_at(deadline):
            status = await _run_with_server(headed, deadline - _CLEANUP_RESERVE_SECONDS)
    except TimeoutError:
        _emit(f"FAIL: the demo did not finish within {DEMO_TIMEOUT_SECONDS:.0f} s")
        return 1
    if status == 0:
        _emit(PASS_LINE)
    return status


def run_demo(headed: bool) -> int:
    """Run the demo (reference §20.3); returns the exit code: 0 passed, 1 failed."""
    try:
        return asyncio.run(_run(headed))
    except Exception as error:  # startup or transport failures: one clear line, no traceback
        _report_failure(error)
        return 1
