"""The live view's codes and cookies (transports/view_auth.py) and the `view-link` command line:
one-time, short-lived codes; bounded tables; the cookie's attributes; principals."""

from __future__ import annotations

from pathlib import Path

import pytest

from browsermesh.cli import main
from browsermesh.cli_options import (
    ServeInvocation,
    UsageError,
    ViewLinkInvocation,
    parse_invocation,
)
from browsermesh.config import ConfigError, default_config
from browsermesh.transports.access import AccessPolicy
from browsermesh.transports.view_auth import (
    CODE_TTL_S,
    MAX_CODES_PER_PRINCIPAL,
    MAX_VIEW_SESSIONS,
    MAX_VIEW_SESSIONS_PER_PRINCIPAL,
    SESSION_TTL_S,
    ViewAuth,
    cookie_value,
)
from browsermesh.view_link import link_endpoint, print_view_link
from tests.support.ports import closed_port

TOKENS = [("alice", "alice-token-0123456789"), ("bob", "bob-token-9876543210ab")]


class Now:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def auth(now: Now) -> ViewAuth:
    return ViewAuth(AccessPolicy(["*"], ["*"], TOKENS), now=now)


@pytest.mark.anyio
async def test_a_code_works_once_and_only_within_its_lifetime() -> None:
    now = Now()
    view = auth(now)
    assert view.required
    code = await view.issue_code("alice")
    assert len(code) >= 32 and "alice" not in code
    assert await view.redeem(code) == "alice"
    assert await view.redeem(code) is None  # used up
    late = await view.issue_code("bob")
    now.t += CODE_TTL_S
    assert await view.redeem(late) is None  # expired
    assert await view.redeem("") is None and await view.redeem("guess") is None


@pytest.mark.anyio
async def test_sessions_expire_and_the_tables_are_bounded() -> None:
    now = Now()
    view = auth(now)
    cookie = await view.open_session("bob")
    header = f"other=1; bm_view={cookie}; x=y".encode()
    assert await view.principal_of(header) == "bob"
    assert await view.principal_of(header) == "bob"  # a session is not used up
    assert await view.principal_of(None) is None
    assert await view.principal_of(b"bm_view=nope") is None
    now.t += SESSION_TTL_S
    assert await view.principal_of(header) is None
    codes = [await view.issue_code("alice") for _ in range(300)]
    assert len(view._codes) == MAX_CODES_PER_PRINCIPAL  # the oldest went
    assert await view.redeem(codes[0]) is None and await view.redeem(codes[-1]) == "alice"


@pytest.mark.anyio
async def test_the_bounds_are_per_principal() -> None:
    """Issue 30 #6: one principal's flood evicts only its own entries, oldest first."""
    now = Now()
    view = auth(now)
    bob = await view.open_session("bob")
    bobs_code = await view.issue_code("bob")
    alice = []
    for _ in range(MAX_VIEW_SESSIONS_PER_PRINCIPAL + 200):
        now.t += 0.1  # oldest first, all within a code's lifetime
        alice.append(await view.open_session("alice"))
        await view.issue_code("alice")
    assert await view.principal_of(f"bm_view={bob}".encode()) == "bob"
    assert await view.peek(bobs_code) == "bob"
    kept = MAX_VIEW_SESSIONS_PER_PRINCIPAL
    newest = [await view.principal_of(f"bm_view={c}".encode()) for c in alice[-kept:]]
    assert newest == ["alice"] * kept
    assert await view.principal_of(f"bm_view={alice[-kept - 1]}".encode()) is None
    assert view._sessions.count("alice") == kept and view._sessions.count("bob") == 1


@pytest.mark.anyio
async def test_the_global_bound_takes_from_the_largest_principal() -> None:
    now = Now()
    view = auth(now)
    names = [f"p{n}" for n in range(MAX_VIEW_SESSIONS // MAX_VIEW_SESSIONS_PER_PRINCIPAL)]
    for name in names:
        for _ in range(MAX_VIEW_SESSIONS_PER_PRINCIPAL):
            await view.open_session(name)
    assert len(view._sessions) == MAX_VIEW_SESSIONS
    newcomer = await view.open_session("late")
    assert len(view._sessions) == MAX_VIEW_SESSIONS
    assert await view.principal_of(f"bm_view={newcomer}".encode()) == "late"
    assert sorted(view._sessions.count(n) for n in names)[0] == MAX_VIEW_SESSIONS_PER_PRINCIPAL - 1


@pytest.mark.anyio
async def test_peeking_at_a_code_does_not_use_it_up() -> None:
    now = Now()
    view = auth(now)
    code = await view.issue_code("bob")
    assert await view.peek(code) == "bob" and await view.peek(code) == "bob"
    assert await view.redeem(code) == "bob" and await view.peek(code) is None
    assert await view.peek("") is None and await view.peek("guess") is None
    late = await view.issue_code("bob")
    now.t += CODE_TTL_S
    assert await view.peek(late) is None


@pytest.mark.anyio
async def test_without_tokens_every_viewer_is_local() -> None:
    view = ViewAuth(AccessPolicy(["*"], ["*"]))
    assert not view.required and await view.principal_of(None) == "local"


def test_cookie_attributes_and_parsing() -> None:
    view = auth(Now())
    header = view.set_cookie("abc").decode()
    assert header == "bm_view=abc; Path=/view; HttpOnly; SameSite=Strict; Max-Age=43200"
    assert cookie_value(b'a=1; bm_view="q"') == "q"
    assert cookie_value(b"bm_view=") is None and cookie_value(b"") is None
    assert cookie_value(b"xbm_view=1") is None


def test_view_link_invocation_and_misuse(tmp_path: Path) -> None:
    env = {"BROWSERMESH_DATA_DIR": str(tmp_path)}
    parsed = parse_invocation(["view-link", "--port", "7400", "--principal", "bob"], env)
    assert isinstance(parsed, ViewLinkInvocation)
    assert parsed.principal == "bob" and parsed.config.http_port == 7400
    with pytest.raises(UsageError, match="view-link accepts"):
        parse_invocation(["view-link", "--headless"], env)
    with pytest.raises(UsageError, match="no arguments"):
        parse_invocation(["view-link", "extra"], env)
    with pytest.raises(UsageError, match="requires view-link"):
        parse_invocation(["--principal", "bob"], env)
    with pytest.raises(UsageError, match="requires --transport http"):
        parse_invocation(["--no-view"], env)
    served = parse_invocation(["--transport", "http", "--no-view"], env)
    assert isinstance(served, ServeInvocation) and served.config.view is False
    assert parse_invocation([], {**env, "BROWSERMESH_VIEW": "false"}).config.view is False  # type: ignore[union-attr]


def test_the_mcp_path_may_not_be_the_view(tmp_path: Path) -> None:
    env = {"BROWSERMESH_DATA_DIR": str(tmp_path)}
    for path in ("/view", "/view/mcp"):
        with pytest.raises(ConfigError) as caught:
            parse_invocation(["--transport", "http", "--path", path], env)
        assert caught.value.problems[0][0] == "BROWSERMESH_VIEW"
    served = parse_invocation(["--transport", "http", "--path", "/view", "--no-view"], env)
    assert isinstance(served, ServeInvocation)
    assert parse_invocation(["--transport", "http", "--path", "/viewer"], env)


def test_view_link_without_a_server(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    unused_port = closed_port()
    config = default_config(data_dir=tmp_path, http_port=unused_port, http_host="0.0.0.0")
    assert link_endpoint(config) == f"http://127.0.0.1:{unused_port}/view/link"
    assert print_view_link(config, None) == 1
    assert "no BrowserMesh HTTP server answered" in capsys.readouterr().err
    assert print_view_link(config.replace(http_port=0), None) == 1
    assert print_view_link(config, "bob") == 1  # no token file: only `local`
    with_tokens = config.replace(auth_tokens=tuple(TOKENS))
    assert print_view_link(with_tokens, "carol") == 1
    assert "no such principal" in capsys.readouterr().err
    assert main(["view-link", "--port", str(unused_port)]) == 1
