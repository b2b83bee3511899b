"""Every numeric bound an input schema publishes is the runtime's own (issue 13).

For each `minimum`/`maximum`/`minLength`/`maxLength`/`minItems`/`maxItems`/`minProperties`/
`maxProperties` in a published input schema (read from `tools/list`, so a change to a schema is
tested as clients see it), a call with the bound value passes the schema and the runtime's
argument checks, and a call one step beyond it is refused by both. The runtime side calls the
tool's handler directly, skipping schema validation, so a runtime check that is stricter or
looser than the schema fails here. A bound with no row in `ROWS`, or a row whose bound is no
longer published, fails too.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from mcp import Client

from browsermesh.config import Config, default_config
from browsermesh.errors import BrowserMeshError, ErrorCode
from browsermesh.factory import create_states
from browsermesh.mcp.compaction import dereference
from browsermesh.mcp.registry import ToolCall
from browsermesh.mcp.server import all_tool_specs, create_server
from browsermesh.runtime.runtime import Runtime
from tests.fakes import FakeEngine

pytestmark = pytest.mark.anyio

KEYWORDS = (
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
)
REFUSALS = (ErrorCode.INVALID_ARGUMENT, ErrorCode.LIMIT_EXCEEDED)
ALL_TOOLS = ("core", "observability", "persistence", "files", "eval")
CSS = {"strategy": "css", "value": "main"}


def text(n: int) -> str:
    return "a" * n


def url(n: int) -> str:
    head = "http://a.test/"
    return head + "p" * (n - len(head)) if n > len(head) else text(n)


def cursor(n: int) -> str:
    # `<snapshotId>.<offset>` is well-formed from 3 characters on (a stale one, not invalid)
    return "s" * (n - 2) + ".1" if n >= 3 else "s" * n


@dataclass(frozen=True)
class Row:
    """How to call `tool` with the bounded field at `n`: `args(n)` are the tool's own arguments
    (sessionId/pageId are added). `token`: the field is an opaque server-issued token, so a value
    of the bound's length is refused anyway, for its format; then the refusal at the bound must
    differ from the refusal beyond it. `unreachable`: no valid value of the bound's length exists
    (a 1-character http(s) URL), so only the refusal beyond the bound is checked."""

    args: Callable[[int], dict[str, Any]]
    token: bool = False
    unreachable: tuple[str, ...] = ()


def action(**extra: Any) -> Callable[[int], dict[str, Any]]:
    return lambda n: {"locator": CSS, **{k: v(n) for k, v in extra.items()}}


# (tool, path) -> how to call it; a path names properties, `*` = additionalProperties,
# `{}` = propertyNames, `[]` = items.
ROWS: dict[tuple[str, str], Row] = {
    ("browser_session_create", "name"): Row(lambda n: {"name": text(n)}),
    ("browser_session_create", "metadata"): Row(
        lambda n: {"metadata": {f"k{i}": "v" for i in range(n)}}
    ),
    ("browser_session_create", "metadata.{}"): Row(lambda n: {"metadata": {text(n): "v"}}),
    ("browser_session_create", "metadata.*"): Row(lambda n: {"metadata": {"k": text(n)}}),
    ("browser_session_create", "stateId"): Row(lambda n: {"stateId": text(n)}),
    ("browser_navigate", "url"): Row(lambda n: {"url": url(n)}, unreachable=("minLength",)),
    ("browser_snapshot", "maxDepth"): Row(lambda n: {"maxDepth": n}),
    ("browser_snapshot", "maxChars"): Row(lambda n: {"maxChars": n}),
    ("browser_snapshot", "maxBytes"): Row(lambda n: {"maxBytes": n}),
    ("browser_snapshot", "maxRefs"): Row(lambda n: {"includeRefs": True, "maxRefs": n}),
    ("browser_snapshot", "maxChildren"): Row(lambda n: {"maxChildren": n}),
    ("browser_snapshot", "cursor"): Row(lambda n: {"cursor": cursor(n)}),
    ("browser_press", "key"): Row(action(key=text)),
    ("browser_fill_form", "fields"): Row(lambda n: {"fields": [{"target": CSS, "value": "x"}] * n}),
    ("browser_observe", "sinceEventId"): Row(
        lambda n: {"source": "console", "sinceEventId": text(n)}, token=True
    ),
    ("browser_observe", "limit"): Row(lambda n: {"source": "console", "limit": n}),
    ("browser_state_save", "stateId"): Row(lambda n: {"stateId": text(n)}),
    ("browser_state_remove", "stateId"): Row(lambda n: {"stateId": text(n)}),
    ("browser_evaluate", "expression"): Row(lambda n: {"expression": ("1" + " " * (n - 1))[:n]}),
    ("browser_downloads", "limit"): Row(lambda n: {"limit": n}),
    ("browser_downloads", "offset"): Row(lambda n: {"offset": n}),
    # No artifact exists, so the call is refused at the bound for its artifactId: the refusal
    # beyond the bound must be the bound's own.
    ("browser_artifact_read", "offset"): Row(
        lambda n: {"artifactId": "artifact_0", "offset": n}, token=True
    ),
    ("browser_artifact_read", "maxBytes"): Row(
        lambda n: {"artifactId": "artifact_0", "maxBytes": n}, token=True
    ),
}


def bounds_of(schema: dict[str, Any], path: str = "") -> dict[tuple[str, str], int]:
    """`(path, keyword) -> value` of every numeric bound under `schema`'s properties."""
    found: dict[tuple[str, str], int] = {}
    if path:
        found.update({(path, k): schema[k] for k in KEYWORDS if k in schema})
    for member in (*schema.get("oneOf", ()), *schema.get("anyOf", ()), *schema.get("allOf", ())):
        found.update(bounds_of(member, path))
    children = dict(schema.get("properties", {}))
    for key, name in (("additionalProperties", "*"), ("propertyNames", "{}"), ("items", "[]")):
        if isinstance(schema.get(key), dict):
            children[name] = schema[key]
    for name, child in children.items():
        found.update(bounds_of(child, f"{path}.{name}" if path else name))
    return found


async def published(config: Config) -> dict[str, dict[str, Any]]:
    """The expanded input schema of every tool, as `tools/list` publishes it for `config`."""
    runtime = Runtime(config, FakeEngine())
    async with Client(create_server(runtime)) as client:
        tools = (await client.list_tools()).tools
    await runtime.shutdown()
    return {t.name: dereference(t.input_schema) for t in tools}


# Configurations whose publication is checked (the observe `limit` follows
# BROWSERMESH_OBSERVABILITY_PAGE_SIZE).
CONFIGS: list[dict[str, Any]] = [
    {},
    {"observability_page_size": 7},
    {"observability_page_size": 200},
]


def config_for(tmp_path: Path, overrides: dict[str, Any]) -> Config:
    return default_config(data_dir=tmp_path / "data", tools=ALL_TOOLS, **overrides)


@asynccontextmanager
async def runtime_for(config: Config) -> AsyncIterator[Runtime]:
    runtime = Runtime(config, FakeEngine(), states=create_states(config))
    try:
        yield runtime
    finally:
        await runtime.shutdown()


@pytest.mark.parametrize("overrides", CONFIGS)
async def test_every_published_bound_has_a_row(tmp_path: Path, overrides: dict[str, Any]) -> None:
    schemas = await published(config_for(tmp_path, overrides))
    rows = {(tool, path) for tool, schema in schemas.items() for path, _ in bounds_of(schema)}
    assert rows == set(ROWS)


async def outcome(runtime: Runtime, tool: str, args: dict[str, Any]) -> BrowserMeshError | None:
    """The argument refusal the runtime answers for `args` (schema skipped), or None."""
    spec = {s.name: s for s in all_tool_specs()}[tool]
    try:
        await spec.handler(ToolCall(runtime, "local", args))
    except BrowserMeshError as err:
        return err if err.code in REFUSALS else None
    except Exception:  # the fake engine lacks what comes after validation (e.g. clicks)
        return None
    return None


@pytest.mark.parametrize("overrides", CONFIGS)
@pytest.mark.parametrize(("tool", "path"), list(ROWS), ids=[f"{t}:{p}" for t, p in ROWS])
async def test_schema_and_runtime_agree_on_the_bound(
    tmp_path: Path, tool: str, path: str, overrides: dict[str, Any]
) -> None:
    config = config_for(tmp_path, overrides)
    schema = (await published(config))[tool]
    async with runtime_for(config) as runtime:
        assert await check_row(runtime, schema, tool, path) > 0, "the bound is no longer published"


@pytest.mark.parametrize("page_size", [1, 7, 200])
async def test_observe_limit_follows_the_configured_page_size(
    tmp_path: Path, page_size: int
) -> None:
    from browsermesh.mcp.tools import observe

    config = config_for(tmp_path, {"observability_page_size": page_size})
    (spec,) = observe.specs(page_size)
    schema = spec.full_input_schema()
    assert schema["properties"]["limit"]["maximum"] == page_size
    async with runtime_for(config) as runtime:
        assert await check_row(runtime, schema, "browser_observe", "limit") == 2


async def check_row(runtime: Runtime, schema: dict[str, Any], tool: str, path: str) -> int:
    """Check every bound `schema` publishes at `path` against the runtime; how many there were."""
    row = ROWS[(tool, path)]
    validator = Draft202012Validator(schema)
    _, view, page_id = await runtime.create_session()
    ids = {"sessionId": view["sessionId"], "pageId": page_id}
    address = {k: v for k, v in ids.items() if k in schema["properties"]}
    checked = 0
    for (where, keyword), bound in bounds_of(schema).items():
        if where != path:
            continue
        checked += 1
        beyond = bound + 1 if keyword.startswith("max") else bound - 1
        at_args = {**address, **row.args(bound)}
        beyond_args = {**address, **row.args(beyond)}
        assert validator.is_valid(at_args), (keyword, bound)
        assert not validator.is_valid(beyond_args), (keyword, beyond)
        refused = await outcome(runtime, tool, beyond_args)
        assert refused is not None, f"runtime accepts {path}={beyond} beyond {keyword} {bound}"
        if keyword in row.unreachable:
            continue
        at_bound = await outcome(runtime, tool, at_args)
        if row.token:
            assert at_bound is None or at_bound.internal != refused.internal, (keyword, bound)
        else:
            assert at_bound is None, f"runtime refuses {path}={bound} ({keyword} {bound})"
    return checked
