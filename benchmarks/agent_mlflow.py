"""Agent tasks on a single-page app, the MLflow tracking UI (issue 31), for both servers.

Three tasks on ``benchmarks.mlflow_app``'s server (one experiment, five runs with params and
metrics), run after the Django admin's tasks in the same BrowserMesh session / peer process,
each verified against MLflow's own REST API:

10. search and filter runs: type ``params.model = "forest"`` into the runs page's search box,
    submit, read how many runs match ("2 matching runs");
11. open one run ("forest-8", a link of that list) and read a metric (``rmse``) from its
    metrics table;
12. compare two runs: back to the filtered list, select all (the two), "Compare", read a value
    for each run in the compare view (``max_depth`` of the Parameters table, mapped to the runs
    by the "Run Name" row).

The client knows the runs page's URL (``/#/experiments/<id>/runs?workflowType=machine_learning``:
without ``workflowType`` MLflow 3 opens an experiment on its GenAI overview) and nothing of the
page: both read it once (BrowserMesh ``browser_snapshot`` ``format:"actions"``, the peer
``browser_snapshot``) to learn the search box's name (its placeholder). BrowserMesh submits the
search with ``browser_action_and_wait`` (press Enter, wait for the ``runs/search`` response: an
SPA does not navigate) and reads with ``browser_find`` when the server lists it, else
``browser_visible_text``; the peer's lean client reads with its ``browser_find``.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from benchmarks.agent_reads import ReadError
from benchmarks.mlflow_app import MlflowApp, metric, param

MLFLOW_TASKS: tuple[tuple[str, str], ...] = (
    ("mlflow_search", "10. MLflow (SPA): filter runs by a param in the search box, read the count"),
    ("mlflow_run_metric", "11. MLflow: open one run, read a metric from its table"),
    ("mlflow_compare", "12. MLflow: compare two runs, read a value for each"),
)
FILTER = 'params.model = "forest"'
SEARCH_HINT = "metrics."  # the search box's placeholder: 'metrics.rmse < 1 and params.model = ...'
RUN = "forest-8"
METRIC = "rmse"
PARAM = "max_depth"
SELECT_ALL = "Select all runs"
COMPARE = "Compare"
COUNT_TEXT = "matching runs"
# "2 matching runs" (visible text, a find's line) or the peer's YAML, where the number is its
# own node: 'strong: "2"' then '- text: matching runs'.
_COUNT = re.compile(r'\b(\d+)"?\s*(?:-\s*text:\s*)?matching runs?\b')
_NUMBER = r"(-?\d+(?:\.\d+)?)"

Body = Callable[[], Awaitable[tuple[bool, str, str | None]]]
Call = Callable[[str, str, dict[str, Any]], Awaitable[Any]]
T = TypeVar("T")
# An SPA answers "Loading..." for a moment after it was opened: a client that does not find
# what it reads for reads again, after about one model turn. Every read is counted.
READ_ATTEMPTS = 6
TURN_S = 1.5


async def reread(read: Callable[[], Awaitable[str]], parse: Callable[[str], T]) -> T:
    """``parse(await read())``, read again (up to READ_ATTEMPTS) while the answer lacks it."""
    for attempt in range(1, READ_ATTEMPTS + 1):
        text = await read()
        try:
            return parse(text)
        except ReadError:
            if attempt == READ_ATTEMPTS:
                raise
        await asyncio.sleep(TURN_S)
    raise AssertionError("unreachable")


def runs_path(app: MlflowApp) -> str:
    return f"/#/experiments/{app.experiment_id}/runs?workflowType=machine_learning"


def count_in(text: str) -> int:
    m = _COUNT.search(text)
    if not m:
        raise ReadError("no 'N matching runs' in the answer")
    return int(m.group(1))


def metric_in(text: str, key: str) -> float:
    """The number right after ``key`` (a metrics-table row: "rmse | 0.55", "rmse\\n0.55")."""
    m = re.search(re.escape(key) + r'["\s|:]+' + _NUMBER, text)
    if not m:  # the peer's YAML: 'link "rmse"', its /url, then the row's 'cell "0.55"'
        m = re.search(re.escape(f'"{key}"') + r'.*?cell "' + _NUMBER + '"', text, re.S)
    if not m:
        raise ReadError(f"no value of {key!r} in the answer")
    return float(m.group(1))


def compare_in(text: str, names: list[str], key: str) -> dict[str, str]:
    """``{run name: value}`` from the compare view: the runs' order is the "Run Name" row's,
    the values are the ``key`` row's cells (on one line)."""
    at = text.find("Run Name")
    if at < 0:
        raise ReadError("no 'Run Name' row in the answer")
    order = sorted((text.find(n, at), n) for n in names if text.find(n, at) >= 0)
    cell = r'([^\s\[|"-][^\s|"]*)'  # a value on the key's line: "12", not "[ref=..]" or "-"
    m = re.search(re.escape(key) + r'[ \t|"]+' + cell + r"[ \t|]+" + cell, text[at:])
    if not m:  # the peer's YAML: 'rowheader "max_depth"', then one 'cell "12"' per run
        m = re.search(
            re.escape(f'"{key}"') + r'.*?cell "([^"]*)".*?cell "([^"]*)"', text[at:], re.S
        )
    if len(order) != 2 or not m:
        raise ReadError(f"no {key!r} row for both runs in the answer")
    return {order[0][1]: m.group(1), order[1][1]: m.group(2)}


# ------------------------------------------------------------------------- API checks


def check_search(app: MlflowApp, read: int) -> tuple[bool, str]:
    n = len(app.search_runs(FILTER))
    return read == n and n > 0, f"runs/search {FILTER!r}: {n} runs"


def check_metric(app: MlflowApp, read: float) -> tuple[bool, str]:
    value = metric(app.run_by_name(RUN), METRIC)
    return value is not None and abs(read - value) < 1e-9, f"{RUN} {METRIC} = {value} (API)"


def check_compare(app: MlflowApp, read: dict[str, str]) -> tuple[bool, str]:
    runs = app.search_runs(FILTER)
    want = {str(r["info"].get("run_name")): param(r, PARAM) for r in runs}
    return len(want) == 2 and read == want, f"{PARAM} per run (API): {want}"


# ------------------------------------------------------------------------------ BrowserMesh

_MESH_LINE = re.compile(r'^\[(?P<ref>[^\]]+)\] (?P<role>[\w-]+) "(?P<name>(?:[^"\\]|\\.)*)"')


def search_box(snapshot: str) -> str:
    """The name of the runs search box (its placeholder) in an action table."""
    for line in snapshot.splitlines():
        m = _MESH_LINE.match(line)
        if m and m["role"] == "combobox":
            name = str(json.loads(f'"{m["name"]}"'))
            if SEARCH_HINT in name:
                return name
    raise ReadError("no search box in the runs page's table")


class MeshMlflow:
    def __init__(self, call: Call, app: MlflowApp, has_find: bool) -> None:
        self.call = call
        self.app = app
        self.has_find = has_find

    async def _json(self, step: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = json.loads((await self.call(step, tool, args)).text)
        return out

    async def read(
        self, addr: dict[str, str], find: tuple[str, bool, int], fallback: dict[str, Any]
    ) -> str:
        """``browser_find`` (text, regex, limit) when listed, else the visible text of
        ``fallback``."""
        if self.has_find:
            text, regex, limit = find
            args: dict[str, Any] = {**addr, "text": text, "limit": limit}
            if regex:
                args["regex"] = True
            got = await self._json("read", "browser_find", args)
            return "\n".join(str(m.get("text", "")) for m in got.get("matches", []))
        got = await self._json("read", "browser_visible_text", {**addr, "locator": fallback})
        return str(got.get("text", ""))

    def bodies(self, addr: dict[str, str]) -> dict[str, Body]:
        app = self.app

        async def mlflow_search() -> tuple[bool, str, str | None]:
            url = app.url(runs_path(app))
            await self.call("navigate", "browser_navigate", {**addr, "url": url})

            async def table() -> str:
                args = {**addr, "format": "actions"}
                got = await self._json("read page", "browser_snapshot", args)
                return str(got.get("snapshot", ""))

            name = await reread(table, search_box)
            box = {"strategy": "role", "value": "combobox", "name": name}
            await self.call("fill", "browser_fill", {**addr, "locator": box, "value": FILTER})
            wait = {"kind": "response", "matcher": {"kind": "glob", "value": "**/runs/search"}}
            await self.call(
                "submit",
                "browser_action_and_wait",
                {**addr, "action": {"kind": "press", "target": box, "key": "Enter"}, "wait": wait},
            )
            spot = {"strategy": "text", "value": "matching runs", "exact": False}
            n = await reread(lambda: self.read(addr, (COUNT_TEXT, False, 1), spot), count_in)
            return (*check_search(app, n), str(n))

        async def mlflow_run_metric() -> tuple[bool, str, str | None]:
            link = {"strategy": "role", "value": "link", "name": RUN}
            got = await self._json("open run", "browser_click", {**addr, "locator": link})
            if not got.get("changes", {}).get("url"):
                raise ReadError(f"clicking {RUN!r} did not open its page")
            row = {"strategy": "role", "value": "row", "name": METRIC, "exact": False}
            value = await reread(
                lambda: self.read(addr, (METRIC, False, 3), row), lambda t: metric_in(t, METRIC)
            )
            return (*check_metric(app, value), str(value))

        async def mlflow_compare() -> tuple[bool, str, str | None]:
            await self.call("back", "browser_back", {**addr})
            box = {"strategy": "role", "value": "checkbox", "name": SELECT_ALL}
            await self.call("select runs", "browser_check", {**addr, "locator": box})
            button = {"strategy": "role", "value": "button", "name": COMPARE}
            await self.call("compare", "browser_click", {**addr, "locator": button})
            body = {"strategy": "css", "value": "body"}
            names = [r for r, p, _ in _runs_with(FILTER)]
            read = await reread(
                lambda: self.read(addr, (f"Run Name|{PARAM}", True, 10), body),
                lambda t: compare_in(t, names, PARAM),
            )
            return (*check_compare(app, read), json.dumps(read))

        return {
            "mlflow_search": mlflow_search,
            "mlflow_run_metric": mlflow_run_metric,
            "mlflow_compare": mlflow_compare,
        }


def _runs_with(filter_string: str) -> list[tuple[str, dict[str, str], dict[str, float]]]:
    """The seeded runs a ``params.model = "x"`` filter keeps (the names the client has seen in
    the filtered list: it reads them there)."""
    from benchmarks.mlflow_app import RUNS

    model = filter_string.split('"')[1]
    return [r for r in RUNS if r[1].get("model") == model]


# ------------------------------------------------------------------------------- the peer

_PEER_REF = re.compile(
    r'- (?P<role>[\w-]+) "(?P<name>(?:[^"\\]|\\.)*)"[^\n]*?\[ref=(?P<ref>[^\]]+)\]'
)


def peer_ref(text: str, role: str, name: str, contains: bool = False) -> str:
    for m in _PEER_REF.finditer(text):
        shown = m["name"].replace('\\"', '"')
        if m["role"] == role and (name in shown if contains else shown == name):
            return m["ref"]
    raise ReadError(f'no {role} "{name}" in the answer')


class PeerMlflow:
    def __init__(self, app: MlflowApp, lean: bool) -> None:
        self.app = app
        self.lean = lean
        self.last = ""  # the non-lean client's last snapshot (its refs are the live ones)

    async def locate(self, call: Call, role: str, name: str) -> str:
        async def look() -> str:
            if self.lean:
                args = {"regex": f'{role} "{re.escape(name)}"'}
                return str((await call("find", "browser_find", args)).text)
            return str((await call("read page", "browser_snapshot", {})).text)

        return await reread(look, lambda t: peer_ref(t, role, name))

    async def read(self, call: Call, find: dict[str, str], parse: Callable[[str], T]) -> T:
        async def look() -> str:
            if self.lean:
                return str((await call("read result", "browser_find", find)).text)
            text = str((await call("read result", "browser_snapshot", {})).text)
            self.last = text
            return text

        return await reread(look, parse)

    async def click(self, call: Call, step: str, role: str, name: str, ref: str) -> None:
        """Click a ref; when the SPA re-rendered since it was read ("Ref ... not found"), read
        the page again (a snapshot) and click the new ref, as the peer's error asks."""
        args = {"element": f"{name} {role}"}
        try:
            await call(step, "browser_click", {**args, "target": ref})
        except RuntimeError as exc:  # agent_tasks.ToolError: the error text is its payload
            if "not found" not in str(getattr(exc, "payload", "")):
                raise
            fresh = await reread(lambda: self._snapshot(call), lambda t: peer_ref(t, role, name))
            await call(step, "browser_click", {**args, "target": fresh})

    async def _snapshot(self, call: Call) -> str:
        self.last = str((await call("read page", "browser_snapshot", {})).text)
        return self.last

    def bodies(self, call: Call) -> dict[str, Body]:
        app = self.app

        async def page() -> str:
            return str((await call("read page", "browser_snapshot", {})).text)

        async def mlflow_search() -> tuple[bool, str, str | None]:
            await call("navigate", "browser_navigate", {"url": app.url(runs_path(app))})
            ref = await reread(page, lambda t: peer_ref(t, "combobox", SEARCH_HINT, contains=True))
            await call(
                "fill",
                "browser_type",
                {"element": "runs search box", "target": ref, "text": FILTER, "submit": True},
            )
            n = await self.read(call, {"text": COUNT_TEXT}, count_in)
            return (*check_search(app, n), str(n))

        async def mlflow_run_metric() -> tuple[bool, str, str | None]:
            # The non-lean client's last snapshot (the filtered list) has the run's link.
            if self.lean:
                ref = await self.locate(call, "link", RUN)
            else:
                ref = peer_ref(self.last, "link", RUN)
            await self.click(call, "open run", "link", RUN, ref)
            value = await self.read(call, {"text": METRIC}, lambda t: metric_in(t, METRIC))
            return (*check_metric(app, value), str(value))

        async def mlflow_compare() -> tuple[bool, str, str | None]:
            await call("back", "browser_navigate_back", {})
            ref = await self.locate(call, "checkbox", SELECT_ALL)
            await self.click(call, "select runs", "checkbox", SELECT_ALL, ref)
            ref = await self.locate(call, "button", COMPARE)
            await self.click(call, "compare", "button", COMPARE, ref)
            names = [r for r, p, _ in _runs_with(FILTER)]
            read = await self.read(
                call, {"regex": f"Run Name|{PARAM}"}, lambda t: compare_in(t, names, PARAM)
            )
            return (*check_compare(app, read), json.dumps(read))

        return {
            "mlflow_search": mlflow_search,
            "mlflow_run_metric": mlflow_run_metric,
            "mlflow_compare": mlflow_compare,
        }
