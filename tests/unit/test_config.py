"""Configuration loading, validation, CLI parsing, Chromium lookup (reference §19, §18, §14.1)."""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from browsermesh import config as cfg
from browsermesh.config import (
    ALL_PROFILES,
    DEFAULT_PROFILES,
    Config,
    ConfigError,
    DemoInvocation,
    DoctorInvocation,
    HelpInvocation,
    InstallBrowserInvocation,
    ServeInvocation,
    UsageError,
    VersionInvocation,
    chromium,
    default_config,
    derive_allowed_hosts,
    derive_allowed_origins,
    find_chromium,
    help_text,
    is_loopback_host,
    is_wildcard_host,
    load_config,
    locate_chromium,
    parse_invocation,
    system_chromium_candidates,
    usage_summary,
)

HOME = "/home/tester"
GOOD_TOKEN = "a" * 16
OTHER_TOKEN = "b" * 32


def env(**values: str) -> dict[str, str]:
    return {"HOME": HOME, **values}


def load(**values: str) -> Config:
    return load_config(env(**values))


def problems_of(environ: Mapping[str, str], argv: list[str] | None = None) -> list[tuple[str, str]]:
    with pytest.raises(ConfigError) as info:
        if argv is None:
            load_config(environ)
        else:
            parse_invocation(argv, environ)
    return info.value.problems


def serve_config(argv: list[str], environ: Mapping[str, str] | None = None) -> Config:
    invocation = parse_invocation(argv, env() if environ is None else environ)
    assert isinstance(invocation, ServeInvocation)
    return invocation.config


def usage_error(argv: list[str], environ: Mapping[str, str] | None = None) -> str:
    with pytest.raises(UsageError) as info:
        parse_invocation(argv, env() if environ is None else environ)
    return str(info.value)


@pytest.fixture
def token_file(tmp_path: Path) -> Path:
    path = tmp_path / "tokens"
    path.write_text(f"# principals\n\nalice:{GOOD_TOKEN}\nbob: {OTHER_TOKEN} \n", "utf-8")
    path.chmod(0o600)
    return path


@pytest.fixture
def executable(tmp_path: Path) -> Path:
    path = tmp_path / "bin" / "my-chrome"
    path.parent.mkdir()
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


# ------------------------------------------------------------------------------------------
# Defaults
# ------------------------------------------------------------------------------------------

DEFAULTS: list[tuple[str, Any]] = [
    ("timeout_ms", 10_000),
    ("data_dir", Path(HOME) / ".browsermesh"),
    ("log_level", "info"),
    ("max_sessions", 50),
    ("max_pages", 20),
    ("tools", ("core", "observability", "persistence", "files")),
    ("persistence", True),
    ("headless", False),
    ("schema_refs", True),
    ("auto_install", True),
    ("agent_guidelines", True),
    ("no_sandbox", False),
    ("browser_path", None),
    ("cdp_endpoint", None),
    ("browser_endpoints", ()),
    ("selenium_grid", None),
    ("grid_contexts_per_browser", 1),
    ("grid_capabilities", ""),
    ("grid_headers", ()),
    ("transport", "stdio"),
    ("http_host", "127.0.0.1"),
    ("http_port", 7331),
    ("http_path", "/mcp"),
    ("auth_token_file", None),
    ("auth_tokens", ()),
    ("allowed_hosts", ("127.0.0.1:7331", "localhost:7331", "[::1]:7331")),
    (
        "allowed_origins",
        ("http://127.0.0.1:7331", "http://localhost:7331", "http://[::1]:7331"),
    ),
    ("session_idle_ms", 1_800_000),
    ("hold_drop_ms", 30_000),
    ("max_mcp_sessions_per_principal", 32),
    ("observability_events", 200),
    ("observability_string_chars", 2048),
    ("observability_page_size", 100),
    ("observability_response_bytes", 65_536),
    ("screenshot_max_dimension", 10_000),
    ("screenshot_max_pixels", 40_000_000),
    ("screenshot_max_bytes", 16_777_216),
    ("visible_text_max_chars", 20_000),
    ("visible_text_max_bytes", 65_536),
    ("max_saved_states", 100),
    ("max_state_bytes", 1_048_576),
    ("max_state_total_bytes", 16_777_216),
    ("max_state_origins", 50),
    ("shutdown_grace_ms", 5_000),
    ("ref_ttl_ms", 30_000),
    ("actionability_settle_ms", 1_000),
    ("settle_ms", 500),
    ("max_artifacts", 100),
    ("max_artifact_session_bytes", 104_857_600),
    ("max_artifact_principal_bytes", 268_435_456),
    ("max_artifact_total_bytes", 1_073_741_824),
    ("upload_root", None),
    ("max_sessions_per_principal", None),
    ("token_file_world_readable", False),
    ("view", True),
    ("trace_sessions", "off"),
    ("secrets_file", None),
    ("webmcp", True),
    ("fleet_redis", None),
    ("replica_id", None),
    ("fleet_lease_ms", 15_000),
    ("fleet_token", None),
    ("fleet_advertise", None),
]


@pytest.mark.parametrize(("field", "expected"), DEFAULTS, ids=[d[0] for d in DEFAULTS])
def test_default_of_every_variable(field: str, expected: Any) -> None:
    assert getattr(load(), field) == expected


def test_defaults_cover_every_field() -> None:
    import dataclasses

    assert {f.name for f in dataclasses.fields(Config)} == {name for name, _ in DEFAULTS}


def test_default_config_matches_loaded_defaults() -> None:
    loaded = load()
    built = default_config(data_dir=loaded.data_dir)
    assert built == loaded
    assert built.backend == "local"


def test_default_config_overrides_and_rederives_allowlists(tmp_path: Path) -> None:
    built = default_config(data_dir=str(tmp_path / "d"), http_host="example.org", http_port=9000)
    assert built.data_dir == tmp_path / "d"
    assert built.allowed_hosts == ("example.org:9000",)
    assert built.allowed_origins == ("http://example.org:9000", "https://example.org:9000")
    assert default_config().data_dir.is_absolute()


def test_empty_environment_and_unknown_variables_are_fine() -> None:
    config = load(BROWSERMESH_NOT_A_THING="whatever", BROWSERMESH_TIMEOUTMS="x", OTHER="1")
    assert config == load()


def test_config_is_frozen_and_replace_works() -> None:
    config = load()
    with pytest.raises(AttributeError):
        config.timeout_ms = 5  # type: ignore[misc]
    changed = config.replace(timeout_ms=5)
    assert changed.timeout_ms == 5
    assert config.timeout_ms == 10_000


# ------------------------------------------------------------------------------------------
# Integers
# ------------------------------------------------------------------------------------------

INTS: list[tuple[str, str, int, int]] = [
    ("BROWSERMESH_TIMEOUT_MS", "timeout_ms", 1, 300_000),
    ("BROWSERMESH_MAX_SESSIONS", "max_sessions", 1, 1_000),
    ("BROWSERMESH_MAX_PAGES", "max_pages", 1, 100),
    ("BROWSERMESH_HTTP_PORT", "http_port", 0, 65_535),
    ("BROWSERMESH_SESSION_IDLE_MS", "session_idle_ms", 1_000, 604_800_000),
    (
        "BROWSERMESH_MAX_MCP_SESSIONS_PER_PRINCIPAL",
        "max_mcp_sessions_per_principal",
        1,
        10_000,
    ),
    ("BROWSERMESH_OBSERVABILITY_EVENTS", "observability_events", 1, 1_000),
    ("BROWSERMESH_OBSERVABILITY_STRING_CHARS", "observability_string_chars", 128, 8_192),
    ("BROWSERMESH_OBSERVABILITY_PAGE_SIZE", "observability_page_size", 1, 200),
    ("BROWSERMESH_OBSERVABILITY_RESPONSE_BYTES", "observability_response_bytes", 1_024, 262_144),
    ("BROWSERMESH_SCREENSHOT_MAX_DIMENSION", "screenshot_max_dimension", 256, 32_768),
    ("BROWSERMESH_SCREENSHOT_MAX_PIXELS", "screenshot_max_pixels", 65_536, 268_435_456),
    ("BROWSERMESH_SCREENSHOT_MAX_BYTES", "screenshot_max_bytes", 1_024, 67_108_864),
    ("BROWSERMESH_VISIBLE_TEXT_MAX_CHARS", "visible_text_max_chars", 128, 1_000_000),
    ("BROWSERMESH_VISIBLE_TEXT_MAX_BYTES", "visible_text_max_bytes", 512, 4_194_304),
    ("BROWSERMESH_MAX_SAVED_STATES", "max_saved_states", 1, 10_000),
    ("BROWSERMESH_MAX_STATE_BYTES", "max_state_bytes", 1_024, 67_108_864),
    ("BROWSERMESH_MAX_STATE_TOTAL_BYTES", "max_state_total_bytes", 1_024, 1_073_741_824),
    ("BROWSERMESH_MAX_STATE_ORIGINS", "max_state_origins", 1, 1_000),
    ("BROWSERMESH_SHUTDOWN_GRACE_MS", "shutdown_grace_ms", 0, 300_000),
    ("BROWSERMESH_REF_TTL_MS", "ref_ttl_ms", 1_000, 1_800_000),
    ("BROWSERMESH_ACTIONABILITY_SETTLE_MS", "actionability_settle_ms", 0, 30_000),
    ("BROWSERMESH_SETTLE_MS", "settle_ms", 0, 10_000),
    ("BROWSERMESH_HOLD_DROP_MS", "hold_drop_ms", 1_000, 600_000),
    ("BROWSERMESH_MAX_ARTIFACTS", "max_artifacts", 1, 10_000),
    ("BROWSERMESH_MAX_ARTIFACT_SESSION_BYTES", "max_artifact_session_bytes", 1_024, 10_737_418_240),
    (
        "BROWSERMESH_MAX_ARTIFACT_PRINCIPAL_BYTES",
        "max_artifact_principal_bytes",
        1_024,
        10_737_418_240,
    ),
    ("BROWSERMESH_MAX_ARTIFACT_TOTAL_BYTES", "max_artifact_total_bytes", 1_024, 10_737_418_240),
    ("BROWSERMESH_MAX_SESSIONS_PER_PRINCIPAL", "max_sessions_per_principal", 1, 1_000),
]


@pytest.mark.parametrize(("variable", "field", "low", "high"), INTS, ids=[i[0] for i in INTS])
def test_integer_bounds_are_accepted(variable: str, field: str, low: int, high: int) -> None:
    assert getattr(load(**{variable: str(low)}), field) == low
    assert getattr(load(**{variable: str(high)}), field) == high


@pytest.mark.parametrize(("variable", "field", "low", "high"), INTS, ids=[i[0] for i in INTS])
@pytest.mark.parametrize("kind", ["below", "above", "text", "empty", "float", "spaces", "hex"])
def test_integer_invalid_values(variable: str, field: str, low: int, high: int, kind: str) -> None:
    value = {
        "below": str(low - 1),
        "above": str(high + 1),
        "text": "abc",
        "empty": "",
        "float": f"{low}.5",
        "spaces": f" {low}",
        "hex": "0x10",
    }[kind]
    problems = problems_of(env(**{variable: value}))
    assert [name for name, _ in problems] == [variable]
    assert str(low) in problems[0][1] and str(high) in problems[0][1]


def test_session_idle_accepts_zero_but_not_small_values() -> None:
    assert load(BROWSERMESH_SESSION_IDLE_MS="0").session_idle_ms == 0
    message = problems_of(env(BROWSERMESH_SESSION_IDLE_MS="999"))[0][1]
    assert message == "must be 0 or an integer from 1000 to 604800000"


def test_integers_accept_leading_zeros() -> None:
    assert load(BROWSERMESH_TIMEOUT_MS="0050").timeout_ms == 50


# ------------------------------------------------------------------------------------------
# Booleans and enumerations
# ------------------------------------------------------------------------------------------

BOOLS = [
    ("BROWSERMESH_PERSISTENCE", "persistence"),
    ("BROWSERMESH_HEADLESS", "headless"),
    ("BROWSERMESH_SCHEMA_REFS", "schema_refs"),
    ("BROWSERMESH_AUTO_INSTALL", "auto_install"),
    ("BROWSERMESH_AGENT_GUIDELINES", "agent_guidelines"),
    ("BROWSERMESH_NO_SANDBOX", "no_sandbox"),
    ("BROWSERMESH_VIEW", "view"),
]


@pytest.mark.parametrize(("variable", "field"), BOOLS)
def test_booleans_accept_exactly_true_and_false(variable: str, field: str) -> None:
    assert getattr(load(**{variable: "true"}), field) is True
    assert getattr(load(**{variable: "false"}), field) is False


@pytest.mark.parametrize(("variable", "field"), BOOLS)
@pytest.mark.parametrize("value", ["TRUE", "False", "1", "0", "yes", "", " true"])
def test_booleans_reject_anything_else(variable: str, field: str, value: str) -> None:
    assert problems_of(env(**{variable: value})) == [(variable, "must be true or false")]


@pytest.mark.parametrize("level", ["debug", "info", "warn", "error", "silent"])
def test_log_levels(level: str) -> None:
    assert load(BROWSERMESH_LOG_LEVEL=level).log_level == level


@pytest.mark.parametrize("level", ["warning", "INFO", "", "trace"])
def test_invalid_log_level(level: str) -> None:
    problems = problems_of(env(BROWSERMESH_LOG_LEVEL=level))
    assert problems == [
        ("BROWSERMESH_LOG_LEVEL", "must be one of debug, info, warn, error, silent")
    ]


@pytest.mark.parametrize("when", ["off", "on", "retain-on-failure"])
def test_trace_sessions(when: str) -> None:
    assert load(BROWSERMESH_TRACE_SESSIONS=when).trace_sessions == when


@pytest.mark.parametrize(("value", "expected"), [("on", True), ("off", False)])
def test_webmcp(value: str, expected: bool) -> None:
    assert load(BROWSERMESH_WEBMCP=value).webmcp is expected
    invocation = parse_invocation(["--webmcp", value], env())
    assert isinstance(invocation, ServeInvocation) and invocation.config.webmcp is expected


@pytest.mark.parametrize("value", ["true", "ON", "", "1"])
def test_invalid_webmcp(value: str) -> None:
    assert problems_of(env(BROWSERMESH_WEBMCP=value)) == [
        ("BROWSERMESH_WEBMCP", "must be one of on, off")
    ]


@pytest.mark.parametrize("when", ["always", "ON", "", "failure"])
def test_invalid_trace_sessions(when: str) -> None:
    problems = problems_of(env(BROWSERMESH_TRACE_SESSIONS=when))
    assert problems == [("BROWSERMESH_TRACE_SESSIONS", "must be one of off, on, retain-on-failure")]


@pytest.mark.parametrize("value", ["stdio", "http"])
def test_transport_values(value: str) -> None:
    assert load(BROWSERMESH_TRANSPORT=value).transport == value


@pytest.mark.parametrize("value", ["HTTP", "sse", ""])
def test_invalid_transport(value: str) -> None:
    assert problems_of(env(BROWSERMESH_TRANSPORT=value)) == [
        ("BROWSERMESH_TRANSPORT", "must be stdio or http")
    ]


# ------------------------------------------------------------------------------------------
# Tool profiles (§3.1)
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("", DEFAULT_PROFILES),
        (" , ,", DEFAULT_PROFILES),
        ("core", ("core",)),
        ("eval,core", ("core", "eval")),
        (" persistence , core ,, core ", ("core", "persistence")),
        ("eval", ("eval",)),
        ("eval,files,persistence,observability,core", ALL_PROFILES[:-3]),
        ("webmcp,vision,testing,eval,files,persistence,observability,core", ALL_PROFILES),
    ],
)
def test_tools_are_normalized(value: str, expected: tuple[str, ...]) -> None:
    assert load(BROWSERMESH_TOOLS=value).tools == expected


def test_eval_is_off_by_default() -> None:
    assert "eval" not in load().tools
    assert not load().eval_enabled
    assert load(BROWSERMESH_TOOLS="core,eval").eval_enabled


@pytest.mark.parametrize("value", ["core,bogus", "Core", "all", "evaluate"])
def test_unknown_profile_lists_the_four_profiles(value: str) -> None:
    [(variable, message)] = problems_of(env(BROWSERMESH_TOOLS=value))
    assert variable == "BROWSERMESH_TOOLS"
    for profile in ALL_PROFILES:
        assert profile in message
    assert "bogus" not in message


def test_unknown_profile_on_the_command_line() -> None:
    [(variable, message)] = problems_of(env(), ["--tools", "core,nope"])
    assert variable == "BROWSERMESH_TOOLS"
    assert "core, observability, persistence, files, eval" in message
    assert "--tools" in message


# ------------------------------------------------------------------------------------------
# Paths
# ------------------------------------------------------------------------------------------


def test_data_dir_expands_tilde_from_environ_home() -> None:
    assert load(BROWSERMESH_DATA_DIR="~/x/y").data_dir == Path(HOME, "x", "y")
    assert load(BROWSERMESH_DATA_DIR="~").data_dir == Path(HOME)


def test_data_dir_is_made_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert load(BROWSERMESH_DATA_DIR="rel/dir").data_dir == tmp_path / "rel" / "dir"
    assert load(BROWSERMESH_DATA_DIR="/abs/dir").data_dir == Path("/abs/dir")


@pytest.mark.parametrize("value", ["", "   "])
def test_data_dir_must_not_be_empty(value: str) -> None:
    assert problems_of(env(BROWSERMESH_DATA_DIR=value)) == [
        ("BROWSERMESH_DATA_DIR", "must not be empty")
    ]


def test_browser_path_must_be_an_existing_executable(executable: Path, tmp_path: Path) -> None:
    assert load(BROWSERMESH_BROWSER_PATH=str(executable)).browser_path == str(executable)
    plain = tmp_path / "plain"
    plain.write_text("x")
    plain.chmod(0o644)
    for value in [str(plain), str(tmp_path / "missing"), str(tmp_path), ""]:
        assert problems_of(env(BROWSERMESH_BROWSER_PATH=value)) == [
            ("BROWSERMESH_BROWSER_PATH", "must name an existing executable file")
        ]


def test_upload_root_must_be_an_existing_directory(tmp_path: Path) -> None:
    real = tmp_path / "uploads"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    assert load(BROWSERMESH_UPLOAD_ROOT=str(real)).upload_root == Path(os.path.realpath(real))
    assert load(BROWSERMESH_UPLOAD_ROOT=str(link)).upload_root == Path(os.path.realpath(real))
    (tmp_path / "file").write_text("x")
    for bad in (str(tmp_path / "missing"), str(tmp_path / "file"), "", " ", "a\0b"):
        assert problems_of(env(BROWSERMESH_UPLOAD_ROOT=bad)) == [
            ("BROWSERMESH_UPLOAD_ROOT", "must name an existing directory")
        ]
    config = serve_config(["--upload-root", str(real)])
    assert config.upload_root == Path(os.path.realpath(real))
    assert problems_of(env(), ["--upload-root", str(tmp_path / "missing")]) == [
        ("BROWSERMESH_UPLOAD_ROOT", "must name an existing directory (from --upload-root)")
    ]


def test_browser_path_is_ignored_with_a_remote_backend(tmp_path: Path) -> None:
    config = load(
        BROWSERMESH_BROWSER_PATH=str(tmp_path / "missing"),
        BROWSERMESH_CDP_ENDPOINT="http://127.0.0.1:9222",
    )
    assert config.browser_path is None
    assert config.backend == "cdp"


# ------------------------------------------------------------------------------------------
# Backends (§14)
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:9222",
        "https://chrome.internal:9222/",
        "ws://localhost:9222/devtools/browser/abc",
        "wss://[::1]:9222/x",
        "HTTP://EXAMPLE.org",
    ],
)
def test_valid_cdp_endpoints(url: str) -> None:
    config = load(BROWSERMESH_CDP_ENDPOINT=url)
    assert config.cdp_endpoint == url
    assert config.backend == "cdp"


@pytest.mark.parametrize(
    "url",
    [
        "",
        "localhost:9222",
        "ftp://host",
        "http://",
        "http://host:99999",
        "/json/version",
        "ws:// x",
    ],
)
def test_invalid_cdp_endpoints(url: str) -> None:
    assert problems_of(env(BROWSERMESH_CDP_ENDPOINT=url)) == [
        ("BROWSERMESH_CDP_ENDPOINT", "must be an absolute http, https, ws or wss URL")
    ]


def test_browser_endpoints_list() -> None:
    config = load(BROWSERMESH_BROWSER_ENDPOINTS=" ws://a:1/x , wss://b:2/y ,")
    assert config.browser_endpoints == ("ws://a:1/x", "wss://b:2/y")
    assert config.backend == "browser-server"


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ("", "must list 1 to 16"),
        (" , ", "must list 1 to 16"),
        ("http://a:1", "entry 1 is not an absolute ws:// or wss:// URL"),
        ("ws://a:1,nope", "entry 2 is not an absolute ws:// or wss:// URL"),
        ("ws://a:1,ws://a:1", "entries must be distinct"),
        (",".join(f"ws://h{i}:1" for i in range(17)), "more than 16"),
    ],
)
def test_invalid_browser_endpoints(value: str, fragment: str) -> None:
    problems = problems_of(env(BROWSERMESH_BROWSER_ENDPOINTS=value))
    assert [name for name, _ in problems] == ["BROWSERMESH_BROWSER_ENDPOINTS"]
    assert fragment in problems[0][1]


def test_sixteen_endpoints_are_allowed() -> None:
    value = ",".join(f"ws://h{i}:1" for i in range(16))
    assert len(load(BROWSERMESH_BROWSER_ENDPOINTS=value).browser_endpoints) == 16


def test_cdp_and_browser_endpoints_are_mutually_exclusive() -> None:
    both = env(
        BROWSERMESH_CDP_ENDPOINT="http://127.0.0.1:9222",
        BROWSERMESH_BROWSER_ENDPOINTS="ws://a:1",
    )
    [(variable, message)] = problems_of(both)
    assert variable == "BROWSERMESH_CDP_ENDPOINT"
    assert "BROWSERMESH_BROWSER_ENDPOINTS" in message
    # Environment CDP + command-line browser endpoint, and both on the command line.
    cdp_env = env(BROWSERMESH_CDP_ENDPOINT="http://127.0.0.1:9222")
    assert problems_of(cdp_env, ["--browser-endpoint", "ws://a:1"])[0][0] == (
        "BROWSERMESH_CDP_ENDPOINT"
    )
    argv = ["--cdp-endpoint", "ws://x:1", "--browser-endpoint", "ws://a:1"]
    assert problems_of(env(), argv)[0][0] == "BROWSERMESH_CDP_ENDPOINT"


def test_cli_browser_endpoints_accumulate_and_replace_the_environment() -> None:
    environ = env(BROWSERMESH_BROWSER_ENDPOINTS="ws://env-a:1,ws://env-b:1")
    assert serve_config([], environ).browser_endpoints == ("ws://env-a:1", "ws://env-b:1")
    argv = ["--browser-endpoint", "ws://cli-a:1", "--browser-endpoint=ws://cli-b:1"]
    assert serve_config(argv, environ).browser_endpoints == ("ws://cli-a:1", "ws://cli-b:1")
    # The replaced environment list is not validated.
    bad_env = env(BROWSERMESH_BROWSER_ENDPOINTS="not a url")
    assert serve_config(["--browser-endpoint", "ws://x:1"], bad_env).browser_endpoints == (
        "ws://x:1",
    )


def test_cli_duplicate_browser_endpoints_are_rejected() -> None:
    problems = problems_of(
        env(), ["--browser-endpoint", "ws://a:1", "--browser-endpoint", "ws://a:1"]
    )
    assert problems == [
        ("BROWSERMESH_BROWSER_ENDPOINTS", "entries must be distinct (from --browser-endpoint)")
    ]


# ------------------------------------------------------------------------------------------
# HTTP options (§18)
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("127.0.0.1", "127.0.0.1"),
        ("localhost", "localhost"),
        ("My-Host.example.ORG", "my-host.example.org"),
        ("::1", "::1"),
        ("[::1]", "::1"),
        ("10.0.0.5", "10.0.0.5"),
    ],
)
def test_valid_hosts(value: str, expected: str) -> None:
    assert load(BROWSERMESH_HTTP_HOST=value).http_host == expected


@pytest.mark.parametrize(
    "value", ["", "host name", "-bad", "bad-", "a..b", "[127.0.0.1]", "http://x", "x:80", "é.com"]
)
def test_invalid_hosts(value: str) -> None:
    assert problems_of(env(BROWSERMESH_HTTP_HOST=value)) == [
        ("BROWSERMESH_HTTP_HOST", "must be a host name or IP address")
    ]


@pytest.mark.parametrize("value", ["/", "/mcp", "/a/b_c.d-e", "/" + "x" * 127])
def test_valid_http_paths(value: str) -> None:
    assert load(BROWSERMESH_HTTP_PATH=value).http_path == value


@pytest.mark.parametrize("value", ["", "mcp", "/" + "x" * 128, "/a b", "/a?b", "/ü", "/a%20"])
def test_invalid_http_paths(value: str) -> None:
    problems = problems_of(env(BROWSERMESH_HTTP_PATH=value))
    assert [name for name, _ in problems] == ["BROWSERMESH_HTTP_PATH"]


def test_http_variables_are_validated_but_inert_under_stdio() -> None:
    config = load(BROWSERMESH_HTTP_HOST="0.0.0.0", BROWSERMESH_HTTP_PORT="8080")
    assert config.transport == "stdio"
    assert config.http_host == "0.0.0.0"
    assert config.allowed_hosts == ()
    assert problems_of(env(BROWSERMESH_HTTP_PORT="x"))[0][0] == "BROWSERMESH_HTTP_PORT"


# ---- Host / Origin defaults (§18.5) -------------------------------------------------------


def test_loopback_defaults() -> None:
    assert derive_allowed_hosts("127.0.0.1", 8000) == (
        "127.0.0.1:8000",
        "localhost:8000",
        "[::1]:8000",
    )
    assert derive_allowed_origins("localhost", 8000) == (
        "http://127.0.0.1:8000",
        "http://localhost:8000",
        "http://[::1]:8000",
    )
    for host in ["127.0.0.1", "127.1.2.3", "::1", "localhost", "LOCALHOST"]:
        assert is_loopback_host(host)
        assert derive_allowed_hosts(host, 1)[0] == "127.0.0.1:1"


def test_specific_host_defaults() -> None:
    assert derive_allowed_hosts("10.1.2.3", 7331) == ("10.1.2.3:7331",)
    assert derive_allowed_origins("10.1.2.3", 7331) == (
        "http://10.1.2.3:7331",
        "https://10.1.2.3:7331",
    )
    assert derive_allowed_hosts("fd00::5", 80) == ("[fd00::5]:80",)
    assert derive_allowed_origins("mesh.example", 80) == (
        "http://mesh.example:80",
        "https://mesh.example:80",
    )
    assert not is_loopback_host("mesh.example")


def test_wildcard_defaults_are_empty() -> None:
    for host in ["0.0.0.0", "::"]:
        assert is_wildcard_host(host)
        assert derive_allowed_hosts(host, 7331) == ()
        assert derive_allowed_origins(host, 7331) == ()
    assert not is_wildcard_host("127.0.0.1")


def test_port_zero_defaults_match_any_port() -> None:
    assert derive_allowed_hosts("127.0.0.1", 0) == ("127.0.0.1:*", "localhost:*", "[::1]:*")
    assert derive_allowed_origins("h.example", 0) == ("http://h.example:*", "https://h.example:*")


def test_defaults_follow_cli_host_and_port(token_file: Path) -> None:
    argv = ["--transport", "http", "--host", "10.0.0.7", "--port", "9000"]
    config = serve_config([*argv, "--auth-token-file", str(token_file)])
    assert config.allowed_hosts == ("10.0.0.7:9000",)
    assert config.allowed_origins == ("http://10.0.0.7:9000", "https://10.0.0.7:9000")


def test_explicit_allowlists_are_parsed_and_normalized() -> None:
    config = load(
        BROWSERMESH_ALLOWED_HOSTS=" Example.COM , a.b:8080 ,[::1]:*,127.0.0.1:*,a.b:8080",
        BROWSERMESH_ALLOWED_ORIGINS="https://App.Example:8443,http://localhost:*/",
    )
    assert config.allowed_hosts == ("example.com", "a.b:8080", "[::1]:*", "127.0.0.1:*")
    assert config.allowed_origins == ("https://app.example:8443", "http://localhost:*")
    star = load(BROWSERMESH_ALLOWED_HOSTS="*", BROWSERMESH_ALLOWED_ORIGINS=" * ")
    assert star.allowed_hosts == ("*",)
    assert star.allowed_origins == ("*",)


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("BROWSERMESH_ALLOWED_HOSTS", ""),
        ("BROWSERMESH_ALLOWED_HOSTS", "a,*"),
        ("BROWSERMESH_ALLOWED_HOSTS", "http://a"),
        ("BROWSERMESH_ALLOWED_HOSTS", "a:99999"),
        ("BROWSERMESH_ALLOWED_HOSTS", "a b"),
        ("BROWSERMESH_ALLOWED_ORIGINS", "a.example"),
        ("BROWSERMESH_ALLOWED_ORIGINS", "ftp://a.example"),
        ("BROWSERMESH_ALLOWED_ORIGINS", "http://a.example/path"),
        ("BROWSERMESH_ALLOWED_ORIGINS", "*,http://a"),
        ("BROWSERMESH_ALLOWED_ORIGINS", ","),
    ],
)
def test_invalid_allowlists(variable: str, value: str) -> None:
    assert [name for name, _ in problems_of(env(**{variable: value}))] == [variable]


def test_non_loopback_http_bind_requires_a_token_file(token_file: Path) -> None:
    problems = problems_of(env(), ["--transport", "http", "--host", "10.0.0.1"])
    assert problems == [
        (
            "BROWSERMESH_HTTP_HOST",
            "a non-loopback host requires BROWSERMESH_AUTH_TOKEN_FILE or --auth-token-file"
            " (from --host)",
        )
    ]
    config = serve_config(
        ["--transport", "http", "--host", "10.0.0.1", "--auth-token-file", str(token_file)]
    )
    assert config.http_host == "10.0.0.1"
    # Loopback binds need no token file.
    for host in ["127.0.0.1", "localhost", "::1", "127.0.0.2"]:
        assert serve_config(["--transport", "http", "--host", host]).transport == "http"


def test_wildcard_bind_requires_allowed_hosts(token_file: Path) -> None:
    base = ["--transport=http", "--host=0.0.0.0", f"--auth-token-file={token_file}"]
    problems = problems_of(env(), base)
    assert [name for name, _ in problems] == ["BROWSERMESH_ALLOWED_HOSTS"]
    config = serve_config([*base, "--allowed-hosts", "mesh.example"])
    assert config.allowed_hosts == ("mesh.example",)
    assert config.allowed_origins == ()
    # Without a token file both problems are reported at once.
    problems = problems_of(env(), ["--transport", "http", "--host", "::"])
    assert [name for name, _ in problems] == ["BROWSERMESH_HTTP_HOST", "BROWSERMESH_ALLOWED_HOSTS"]


def test_http_security_rules_from_the_environment(token_file: Path) -> None:
    environ = env(BROWSERMESH_TRANSPORT="http", BROWSERMESH_HTTP_HOST="192.168.1.2")
    assert problems_of(environ)[0][0] == "BROWSERMESH_HTTP_HOST"
    environ["BROWSERMESH_AUTH_TOKEN_FILE"] = str(token_file)
    assert load_config(environ).auth_tokens == (("alice", GOOD_TOKEN), ("bob", OTHER_TOKEN))


# ---- Token files (§18.3) -----------------------------------------------------------------


def write_tokens(tmp_path: Path, text: str, mode: int = 0o600) -> Path:
    path = tmp_path / "tokens.txt"
    path.write_bytes(text.encode("utf-8"))
    path.chmod(mode)
    return path


def test_good_token_file(token_file: Path) -> None:
    config = load(BROWSERMESH_AUTH_TOKEN_FILE=str(token_file))
    assert config.auth_token_file == token_file
    assert config.auth_tokens == (("alice", GOOD_TOKEN), ("bob", OTHER_TOKEN))
    assert config.token_file_world_readable is False
    assert GOOD_TOKEN not in repr(config)


def test_token_file_lines_and_characters(tmp_path: Path) -> None:
    token = "!#$%&'()*+,-./0123456789:;<=>?@AZaz[\\]^_`{|}~"
    text = f"\ufeff# comment\r\n   \r\n  # indented comment\r\nsvc_1-a:{token}\r\nz:{'c' * 512}\n"
    config = load(BROWSERMESH_AUTH_TOKEN_FILE=str(write_tokens(tmp_path, text)))
    assert config.auth_tokens == (("svc_1-a", token), ("z", "c" * 512))


def test_token_file_world_readable_flag(tmp_path: Path) -> None:
    path = write_tokens(tmp_path, f"alice:{GOOD_TOKEN}\n", 0o644)
    assert load(BROWSERMESH_AUTH_TOKEN_FILE=str(path)).token_file_world_readable is True


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        (f"alice:{GOOD_TOKEN}\nalice:{OTHER_TOKEN}\n", "line 2: duplicate principal name"),
        (f"alice:{GOOD_TOKEN}\nbob:{GOOD_TOKEN}\n", "line 2: duplicate token"),
        ("no colon here\n", "line 1: expected name:token"),
        ("alice:short\n", "line 1: token must be 16 to 512 printable ASCII"),
        (f"alice:{'x' * 513}\n", "line 1: token must be 16 to 512"),
        ("alice:aaaaaaaa bbbbbbbbbb\n", "line 1: token must be"),
        ("alice:aaaaaaaaaaaaaaaaé\n", "line 1: token must be"),
        (f"Alice:{GOOD_TOKEN}\n", "line 1: principal name must match"),
        (f"_svc:{GOOD_TOKEN}\n", "line 1: principal name must match"),
        (f"{'a' * 65}:{GOOD_TOKEN}\n", "line 1: principal name must match"),
        (f":{GOOD_TOKEN}\n", "line 1: principal name must match"),
        ("# only comments\n\n", "contains no name:token lines"),
    ],
)
def test_bad_token_files(tmp_path: Path, text: str, fragment: str) -> None:
    path = write_tokens(tmp_path, text)
    problems = problems_of(env(BROWSERMESH_AUTH_TOKEN_FILE=str(path)))
    assert all(name == "BROWSERMESH_AUTH_TOKEN_FILE" for name, _ in problems)
    assert any(fragment in message for _, message in problems), problems
    joined = " ".join(message for _, message in problems)
    for secret in [GOOD_TOKEN, OTHER_TOKEN, "short", "alice", str(path)]:
        assert secret not in joined


def test_token_file_reports_every_bad_line(tmp_path: Path) -> None:
    path = write_tokens(tmp_path, f"bad\nalice:{GOOD_TOKEN}\nbob:tiny\n")
    problems = problems_of(env(BROWSERMESH_AUTH_TOKEN_FILE=str(path)))
    assert [message.split(":")[0] for _, message in problems] == ["line 1", "line 3"]


def test_token_file_problem_count_is_bounded(tmp_path: Path) -> None:
    path = write_tokens(tmp_path, "bad\n" * 50)
    problems = problems_of(env(BROWSERMESH_AUTH_TOKEN_FILE=str(path)))
    assert len(problems) == 21
    assert problems[-1][1] == "... and 30 more problems"


def test_unreadable_token_files(tmp_path: Path) -> None:
    cases = {
        str(tmp_path / "missing"): "cannot be read",
        str(tmp_path): "must name a regular file",
        "": "must name a readable file",
    }
    binary = tmp_path / "binary"
    binary.write_bytes(b"alice:\xff\xfe" + b"a" * 20)
    cases[str(binary)] = "is not valid UTF-8"
    big = tmp_path / "big"
    big.write_bytes(b"#" * (1024 * 1024 + 1))
    cases[str(big)] = "is larger than 1 MiB"
    for value, message in cases.items():
        assert problems_of(env(BROWSERMESH_AUTH_TOKEN_FILE=value)) == [
            ("BROWSERMESH_AUTH_TOKEN_FILE", message)
        ]


def test_token_file_without_read_permission(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Permission bits do not stop root (CI runs as root), so make the read itself fail.
    path = write_tokens(tmp_path, f"alice:{GOOD_TOKEN}\n", 0o000)

    def refuse(self: Path) -> bytes:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "read_bytes", refuse)
    assert problems_of(env(BROWSERMESH_AUTH_TOKEN_FILE=str(path))) == [
        ("BROWSERMESH_AUTH_TOKEN_FILE", "cannot be read")
    ]


# ------------------------------------------------------------------------------------------
# Problem collection and value secrecy
# ------------------------------------------------------------------------------------------

SECRET = "SECRETVALUE"


def test_all_problems_are_collected_and_values_never_echoed(tmp_path: Path) -> None:
    variables = [name for name, *_ in INTS] + [name for name, _ in BOOLS]
    variables += [
        "BROWSERMESH_LOG_LEVEL",
        "BROWSERMESH_TOOLS",
        "BROWSERMESH_BROWSER_PATH",
        "BROWSERMESH_TRANSPORT",
        "BROWSERMESH_HTTP_PATH",
        "BROWSERMESH_AUTH_TOKEN_FILE",
    ]
    environ = env(**{name: SECRET for name in variables})
    environ["BROWSERMESH_ALLOWED_HOSTS"] = f"{SECRET} x"
    environ["BROWSERMESH_ALLOWED_ORIGINS"] = SECRET
    problems = problems_of(environ)
    reported = {name for name, _ in problems}
    assert reported == set(variables) | {"BROWSERMESH_ALLOWED_HOSTS", "BROWSERMESH_ALLOWED_ORIGINS"}
    text = str(ConfigError(problems)).lower()
    assert SECRET.lower() not in text
    for variable in ["BROWSERMESH_CDP_ENDPOINT", "BROWSERMESH_BROWSER_ENDPOINTS"]:
        assert SECRET not in str(problems_of(env(**{variable: SECRET})))


def test_token_values_are_never_echoed(tmp_path: Path) -> None:
    path = write_tokens(tmp_path, f"alice:{SECRET}\nbob:{SECRET}{SECRET}\ncarol:{SECRET}{SECRET}\n")
    problems = problems_of(env(BROWSERMESH_AUTH_TOKEN_FILE=str(path)))
    assert SECRET not in str(problems)


def test_problems_from_the_command_line_name_the_flag() -> None:
    assert problems_of(env(), ["--timeout", "abc"]) == [
        ("BROWSERMESH_TIMEOUT_MS", "must be an integer from 1 to 300000 (from --timeout)")
    ]
    assert problems_of(env(), ["--data-dir="]) == [
        ("BROWSERMESH_DATA_DIR", "must not be empty (from --data-dir)")
    ]


def test_config_error_message() -> None:
    error = ConfigError([("A", "bad"), ("B", "worse")])
    assert error.problems == [("A", "bad"), ("B", "worse")]
    assert str(error) == "configuration is invalid: A: bad; B: worse"


# ------------------------------------------------------------------------------------------
# Command-line parsing (§19.2)
# ------------------------------------------------------------------------------------------


def test_no_arguments_serves_with_the_environment() -> None:
    assert parse_invocation([], env()) == ServeInvocation(load())


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["-h"],
        ["--bogus", "--help"],
        ["--timeout", "abc", "-h"],
        ["--version", "--help"],
        ["demo", "--help"],
        ["--install-browser", "--doctor", "-h"],
        ["--timeout", "--help"],
    ],
)
def test_help_anywhere_wins(argv: list[str]) -> None:
    assert parse_invocation(argv, env(BROWSERMESH_TIMEOUT_MS="bad")) == HelpInvocation()


@pytest.mark.parametrize(
    "argv",
    [["--version"], ["-v"], ["--bogus", "-v"], ["--timeout=abc", "--version"], ["demo", "-v"]],
)
def test_version_wins_after_help(argv: list[str]) -> None:
    assert parse_invocation(argv, env(BROWSERMESH_TIMEOUT_MS="bad")) == VersionInvocation()


FLAG_CASES: list[tuple[list[str], str, Any]] = [
    (["--timeout", "1234"], "timeout_ms", 1234),
    (["--data-dir", "/data/bm"], "data_dir", Path("/data/bm")),
    (["--log-level", "debug"], "log_level", "debug"),
    (["--max-sessions", "7"], "max_sessions", 7),
    (["--max-pages", "3"], "max_pages", 3),
    (["--tools", "core,eval"], "tools", ("core", "eval")),
    (["--no-persistence"], "persistence", False),
    (["--headless"], "headless", True),
    (["--no-schema-refs"], "schema_refs", False),
    (["--no-auto-install"], "auto_install", False),
    (["--no-agent-guidelines"], "agent_guidelines", False),
    (["--no-sandbox"], "no_sandbox", True),
    (["--cdp-endpoint", "ws://127.0.0.1:9222/x"], "cdp_endpoint", "ws://127.0.0.1:9222/x"),
    (["--browser-endpoint", "ws://a:1"], "browser_endpoints", ("ws://a:1",)),
    (["--transport", "http"], "transport", "http"),
    (["--max-sessions-per-principal", "4"], "max_sessions_per_principal", 4),
    (["--transport", "http", "--port", "0"], "http_port", 0),
    (["--transport", "http", "--path", "/x"], "http_path", "/x"),
    (["--transport", "http", "--session-idle-ms", "0"], "session_idle_ms", 0),
    (["--transport", "http", "--allowed-hosts", "*"], "allowed_hosts", ("*",)),
    (["--transport", "http", "--allowed-origins", "*"], "allowed_origins", ("*",)),
    (["--transport", "http", "--host", "localhost"], "http_host", "localhost"),
]


@pytest.mark.parametrize(("argv", "field", "expected"), FLAG_CASES, ids=lambda v: str(v))
def test_every_flag_sets_its_field(argv: list[str], field: str, expected: Any) -> None:
    assert getattr(serve_config(argv), field) == expected
    joined: list[str] = []  # the same command line in --opt=value form
    index = 0
    while index < len(argv):
        if index + 1 < len(argv) and not argv[index + 1].startswith("--"):
            joined.append(f"{argv[index]}={argv[index + 1]}")
            index += 2
        else:
            joined.append(argv[index])
            index += 1
    assert getattr(serve_config(joined), field) == expected


def test_browser_path_and_auth_token_file_flags(executable: Path, token_file: Path) -> None:
    assert serve_config(["--browser-path", str(executable)]).browser_path == str(executable)
    config = serve_config(["--transport", "http", "--auth-token-file", str(token_file)])
    assert config.auth_tokens[0] == ("alice", GOOD_TOKEN)


def test_cli_overrides_the_environment() -> None:
    environ = env(
        BROWSERMESH_TIMEOUT_MS="5000",
        BROWSERMESH_HEADLESS="true",
        BROWSERMESH_PERSISTENCE="true",
        BROWSERMESH_TOOLS="core",
        BROWSERMESH_LOG_LEVEL="error",
    )
    config = serve_config(["--timeout", "42", "--headed", "--no-persistence", "--tools="], environ)
    assert (config.timeout_ms, config.headless, config.persistence) == (42, False, False)
    assert config.tools == DEFAULT_PROFILES
    assert config.log_level == "error"


def test_cli_override_hides_an_invalid_environment_value() -> None:
    assert serve_config(["--timeout", "7"], env(BROWSERMESH_TIMEOUT_MS="bad")).timeout_ms == 7


def test_later_occurrences_win() -> None:
    config = serve_config(["--timeout", "1", "--timeout=2", "--headless", "--headed"])
    assert (config.timeout_ms, config.headless) == (2, False)
    assert serve_config(["--headed", "--headless"]).headless is True


def test_values_may_start_with_a_single_dash() -> None:
    # "-5" is taken as the value (and then fails validation), not as an option.
    assert problems_of(env(), ["--timeout", "-5"])[0][0] == "BROWSERMESH_TIMEOUT_MS"
    assert serve_config(["--data-dir", "-dir"]).data_dir.name == "-dir"


@pytest.mark.parametrize(
    ("argv", "reason"),
    [
        (["--bogus"], "unknown option --bogus"),
        (["--bogus=SECRET"], "unknown option --bogus"),
        (["-x"], "unknown option -x"),
        (["--"], "unknown option --"),
        (["--timeout"], "option --timeout requires a value"),
        (["--timeout", "--headless"], "option --timeout requires a value"),
        (["--browser-endpoint", "--x"], "option --browser-endpoint requires a value"),
        (["--headless=true"], "option --headless does not take a value"),
        (["--no-persistence="], "option --no-persistence does not take a value"),
        (["--doctor=yes"], "option --doctor does not take a value"),
        (["serve"], "unexpected argument 'serve'"),
        (["some secret/value!"], "unexpected argument"),
        (["demo", "extra"], "unexpected argument 'extra'"),
        (["--install-browser", "--doctor"], "--install-browser cannot be combined with --doctor"),
        (["--json"], "--json requires --doctor"),
        (["--install-browser", "--json"], "--json requires --doctor"),
        (["demo", "--headless"], "demo accepts only --headed, not --headless"),
        (["demo", "--timeout", "5"], "demo accepts only --headed, not --timeout"),
        (["--doctor", "demo"], "demo accepts only --headed, not --doctor"),
        (["demo", "--install-browser"], "demo accepts only --headed, not --install-browser"),
    ],
)
def test_usage_errors(argv: list[str], reason: str) -> None:
    assert usage_error(argv) == reason


def test_unknown_option_reason_never_contains_its_value() -> None:
    assert SECRET not in usage_error([f"--token={SECRET}"])


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["--host", "0.0.0.0"], "--host"),
        (["--port", "8080"], "--port"),
        (["--path=/x"], "--path"),
        (["--auth-token-file", "/nope"], "--auth-token-file"),
        (["--allowed-hosts", "*"], "--allowed-hosts"),
        (["--allowed-origins", "*"], "--allowed-origins"),
        (["--session-idle-ms", "0"], "--session-idle-ms"),
        (["--max-mcp-sessions-per-principal", "4"], "--max-mcp-sessions-per-principal"),
        (["--transport", "stdio", "--port", "1"], "--port"),
        (["--transport", "http", "--transport", "stdio", "--port", "1"], "--port"),
        (["--doctor", "--port", "1"], "--port"),
    ],
)
def test_http_only_options_need_http_transport(argv: list[str], flag: str) -> None:
    assert usage_error(argv) == f"option {flag} requires --transport http"


def test_http_only_options_with_transport_from_the_environment() -> None:
    config = serve_config(["--port", "8123"], env(BROWSERMESH_TRANSPORT="http"))
    assert config.http_port == 8123
    assert config.allowed_hosts[0] == "127.0.0.1:8123"
    assert usage_error(["--port", "1"], env(BROWSERMESH_TRANSPORT="stdio")).startswith("option")
    assert usage_error(["--transport", "stdio", "--port", "1"], env(BROWSERMESH_TRANSPORT="http"))


def test_invalid_transport_with_http_options_is_a_configuration_error() -> None:
    problems = problems_of(env(BROWSERMESH_TRANSPORT="bogus"), ["--port", "1"])
    assert problems == [("BROWSERMESH_TRANSPORT", "must be stdio or http")]


def test_demo_invocations() -> None:
    bad = env(BROWSERMESH_TIMEOUT_MS="bad")
    assert parse_invocation(["demo"], bad) == DemoInvocation(headed=False)
    assert parse_invocation(["demo", "--headed"], bad) == DemoInvocation(headed=True)
    assert parse_invocation(["--headed", "demo"], bad) == DemoInvocation(headed=True)


def test_install_browser_ignores_other_options() -> None:
    bad = env(BROWSERMESH_TIMEOUT_MS="bad")
    argv = ["--install-browser", "--timeout", "x", "--port", "1", "--tools", "nope"]
    assert parse_invocation(argv, bad) == InstallBrowserInvocation()
    # Syntax is still checked.
    assert usage_error(["--install-browser", "--bogus"]) == "unknown option --bogus"


def test_doctor_honours_other_options() -> None:
    invocation = parse_invocation(["--doctor", "--timeout", "99"], env())
    assert isinstance(invocation, DoctorInvocation)
    assert invocation.config.timeout_ms == 99
    assert invocation.as_json is False
    invocation = parse_invocation(["--json", "--doctor"], env())
    assert invocation == DoctorInvocation(load(), as_json=True)
    assert problems_of(env(BROWSERMESH_MAX_PAGES="0"), ["--doctor"])[0][0] == (
        "BROWSERMESH_MAX_PAGES"
    )


# ------------------------------------------------------------------------------------------
# Help text (§19.2)
# ------------------------------------------------------------------------------------------


def test_help_text_structure() -> None:
    text = help_text()
    lines = text.splitlines()
    assert text.endswith("\n")
    assert lines[0].startswith("BrowserMesh ")
    assert usage_summary() in text
    options_at = lines.index("Options:")
    option_lines = [line for line in lines[options_at + 1 :] if line.startswith("  --")]
    flags = {line.split()[0].rstrip(",") for line in option_lines}
    expected = {
        "--timeout",
        "--data-dir",
        "--upload-root",
        "--log-level",
        "--max-sessions",
        "--max-pages",
        "--tools",
        "--no-persistence",
        "--headless",
        "--headed",
        "--no-schema-refs",
        "--no-auto-install",
        "--no-agent-guidelines",
        "--no-sandbox",
        "--browser-path",
        "--cdp-endpoint",
        "--browser-endpoint",
        "--selenium-grid",
        "--grid-contexts-per-browser",
        "--grid-capabilities",
        "--grid-header-file",
        "--transport",
        "--host",
        "--port",
        "--path",
        "--auth-token-file",
        "--allowed-hosts",
        "--allowed-origins",
        "--session-idle-ms",
        "--max-mcp-sessions-per-principal",
        "--no-view",
        "--principal",
        "--trace-sessions",
        "--secrets-file",
        "--webmcp",
        "--fleet-redis",
        "--replica-id",
        "--fleet-token-file",
        "--fleet-advertise",
        "--max-sessions-per-principal",
        "--doctor",
        "--json",
        "--install-browser",
        "--help",
        "--version",
    }
    assert flags == expected
    for line in option_lines:
        label = line[2:34].rstrip()
        if len(label) < 32:
            assert line[34] != " " and line[33] == " ", line
    tools = next(line for line in option_lines if line.startswith("  --tools"))
    for profile in ALL_PROFILES:
        assert profile in tools
    assert "(eval, testing, vision, webmcp opt-in)" in tools
    assert "BROWSERMESH_*" in text
    assert "precedence" in text
    assert text.isascii()


def test_usage_summary_lists_every_invocation_form() -> None:
    summary = usage_summary()
    for form in [
        "browsermesh [options]",
        "browsermesh demo [--headed]",
        "browsermesh --install-browser",
        "browsermesh --doctor [--json] [options]",
        "browsermesh --help|-h",
        "browsermesh --version|-v",
    ]:
        assert form in summary


# ------------------------------------------------------------------------------------------
# Chromium lookup (§14.1)
# ------------------------------------------------------------------------------------------


def make_executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def current_revision() -> str:
    revision = chromium._playwright_revision(chromium._playwright_package_dir())
    return revision if revision is not None else "1234"


@pytest.fixture
def lookup_env(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "empty-bin").mkdir()
    (tmp_path / "pw").mkdir()
    return {
        "HOME": str(tmp_path / "home"),
        "PATH": str(tmp_path / "empty-bin"),
        "PLAYWRIGHT_BROWSERS_PATH": str(tmp_path / "pw"),
    }


def test_nothing_found(lookup_env: dict[str, str]) -> None:
    assert find_chromium(default_config(), lookup_env, platform="linux") is None


def test_configured_path_wins(lookup_env: dict[str, str], executable: Path) -> None:
    config = default_config(browser_path=str(executable))
    make_executable(Path(lookup_env["PATH"]) / "chromium")
    location = locate_chromium(config, lookup_env, platform="linux")
    assert location == cfg.ChromiumLocation(str(executable), "configured")


def test_playwright_managed_chromium(lookup_env: dict[str, str]) -> None:
    registry = Path(lookup_env["PLAYWRIGHT_BROWSERS_PATH"])
    chrome = make_executable(
        registry / f"chromium-{current_revision()}" / "chrome-linux64" / "chrome"
    )
    make_executable(Path(lookup_env["PATH"]) / "chromium")
    location = locate_chromium(default_config(), lookup_env, platform="linux")
    assert location == cfg.ChromiumLocation(str(chrome), "playwright")


def test_playwright_older_layout_and_stale_revisions(lookup_env: dict[str, str]) -> None:
    if chromium._playwright_revision(chromium._playwright_package_dir()) is None:
        pytest.skip("the installed Playwright does not name its Chromium revision")
    registry = Path(lookup_env["PLAYWRIGHT_BROWSERS_PATH"])
    make_executable(registry / "chromium-1" / "chrome-linux64" / "chrome")
    # A leftover from another Playwright version is not what Playwright would launch.
    assert find_chromium(default_config(), lookup_env, platform="linux") is None
    chrome = make_executable(
        registry / f"chromium-{current_revision()}" / "chrome-linux" / "chrome"
    )
    assert find_chromium(default_config(), lookup_env, platform="linux") == str(chrome)


def test_playwright_lookup_without_a_known_revision(
    lookup_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(chromium, "_playwright_revision", lambda _package, _name="chromium": None)
    registry = Path(lookup_env["PLAYWRIGHT_BROWSERS_PATH"])
    make_executable(registry / "chromium-99" / "chrome-linux64" / "chrome")
    newest = make_executable(registry / "chromium-1000" / "chrome-linux64" / "chrome")
    make_executable(registry / "chromium_headless_shell-2000" / "chrome-linux64" / "chrome")
    assert find_chromium(default_config(), lookup_env, platform="linux") == str(newest)


def test_playwright_default_cache_locations(tmp_path: Path) -> None:
    revision = current_revision()
    home = tmp_path / "home"
    base = {"HOME": str(home), "PATH": str(tmp_path / "none")}
    chrome = make_executable(
        home / ".cache" / "ms-playwright" / f"chromium-{revision}" / "chrome-linux64" / "chrome"
    )
    assert find_chromium(default_config(), base, platform="linux") == str(chrome)
    xdg = tmp_path / "xdg"
    chrome = make_executable(
        xdg / "ms-playwright" / f"chromium-{revision}" / "chrome-linux64" / "chrome"
    )
    assert find_chromium(
        default_config(), {**base, "XDG_CACHE_HOME": str(xdg)}, platform="linux"
    ) == str(chrome)
    mac = make_executable(
        home
        / "Library"
        / "Caches"
        / "ms-playwright"
        / f"chromium-{revision}"
        / "chrome-mac-arm64"
        / "Google Chrome for Testing.app"
        / "Contents"
        / "MacOS"
        / "Google Chrome for Testing"
    )
    assert find_chromium(default_config(), base, platform="darwin") == str(mac)
    local = tmp_path / "local"
    win = make_executable(
        local / "ms-playwright" / f"chromium-{revision}" / "chrome-win64" / "chrome.exe"
    )
    assert find_chromium(
        default_config(), {**base, "LOCALAPPDATA": str(local)}, platform="win32"
    ) == str(win)


def test_system_chromium_on_path_in_order(lookup_env: dict[str, str], tmp_path: Path) -> None:
    first = tmp_path / "bin1"
    second = tmp_path / "bin2"
    make_executable(second / "google-chrome-stable")
    environ = {**lookup_env, "PATH": os.pathsep.join([str(first), str(second)])}
    location = locate_chromium(default_config(), environ, platform="linux")
    assert location == cfg.ChromiumLocation(str(second / "google-chrome-stable"), "system")
    make_executable(second / "chromium-browser")
    assert find_chromium(default_config(), environ, platform="linux") == str(
        second / "chromium-browser"
    )
    make_executable(first / "google-chrome")
    make_executable(second / "chromium")
    assert find_chromium(default_config(), environ, platform="linux") == str(second / "chromium")


def test_non_executable_files_on_path_are_skipped(lookup_env: dict[str, str]) -> None:
    fake = Path(lookup_env["PATH"]) / "chromium"
    fake.write_text("not executable")
    fake.chmod(stat.S_IRUSR | stat.S_IWUSR)
    assert find_chromium(default_config(), lookup_env, platform="linux") is None


def test_well_known_locations_on_macos_and_windows() -> None:
    mac = system_chromium_candidates({}, "darwin")
    assert mac == [
        "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
        "/Applications/Chromium.app/Contents/MacOS/Chromium",
    ]
    windows = system_chromium_candidates({"LOCALAPPDATA": r"C:\Users\u\AppData\Local"}, "win32")
    assert windows == [
        r"C:\Program Files\Google\Chrome\Application\chrome.exe",
        r"C:\Program Files (x86)\Google\Chrome\Application\chrome.exe",
        r"C:\Users\u\AppData\Local\Google\Chrome\Application\chrome.exe",
    ]
    assert system_chromium_candidates({}, "linux") == []


# Headless shell (issue 16): headless sessions prefer it, headed sessions never get it.

HEADLESS = default_config(headless=True)


def shell_revision() -> str:
    package_dir = chromium._playwright_package_dir()
    revision = chromium._playwright_revision(package_dir, "chromium-headless-shell")
    return revision if revision is not None else "1234"


def test_headless_prefers_playwrights_shell_then_a_system_one(lookup_env: dict[str, str]) -> None:
    registry = Path(lookup_env["PLAYWRIGHT_BROWSERS_PATH"])
    bin_dir = Path(lookup_env["PATH"])
    chrome = make_executable(bin_dir / "chromium")
    # Only the full browser: headless sessions use it too.
    assert locate_chromium(HEADLESS, lookup_env, platform="linux") == cfg.ChromiumLocation(
        str(chrome), "system", "chromium"
    )
    system_shell = make_executable(bin_dir / "chromium-headless-shell")
    assert locate_chromium(HEADLESS, lookup_env, platform="linux") == cfg.ChromiumLocation(
        str(system_shell), "system", "headless-shell"
    )
    managed = make_executable(
        registry
        / f"chromium_headless_shell-{shell_revision()}"
        / "chrome-headless-shell-linux64"
        / "chrome-headless-shell"
    )
    assert locate_chromium(HEADLESS, lookup_env, platform="linux") == cfg.ChromiumLocation(
        str(managed), "playwright", "headless-shell"
    )
    # Headed sessions get the full browser only.
    assert locate_chromium(default_config(), lookup_env, platform="linux") == cfg.ChromiumLocation(
        str(chrome), "system", "chromium"
    )


def test_headed_never_uses_a_headless_shell(lookup_env: dict[str, str]) -> None:
    make_executable(Path(lookup_env["PATH"]) / "chromium-headless-shell")
    assert find_chromium(default_config(), lookup_env, platform="linux") is None
    assert cfg.locate_headless_shell(lookup_env, platform="linux") is not None
    assert cfg.locate_full_chromium(lookup_env, platform="linux") is None


def test_debian_wrapper_resolves_to_the_real_shell(tmp_path: Path) -> None:
    # Debian's /usr/bin/chromium-headless-shell runs /usr/lib/chromium/... without exec.
    wrapper = make_executable(tmp_path / "usr" / "bin" / "chromium-headless-shell")
    environ = {"HOME": str(tmp_path / "home"), "PATH": str(wrapper.parent)}
    assert find_chromium(HEADLESS, environ, platform="linux") == str(wrapper)
    real = make_executable(tmp_path / "usr" / "lib" / "chromium" / "chromium-headless-shell")
    assert find_chromium(HEADLESS, environ, platform="linux") == str(real)


def test_configured_path_wins_for_both_modes(
    lookup_env: dict[str, str], executable: Path, tmp_path: Path
) -> None:
    make_executable(Path(lookup_env["PATH"]) / "chromium-headless-shell")
    for headless in (True, False):
        config = default_config(browser_path=str(executable), headless=headless)
        location = locate_chromium(config, lookup_env, platform="linux")
        assert location == cfg.ChromiumLocation(str(executable), "configured", "chromium")
    shell = make_executable(tmp_path / "opt" / "chrome-headless-shell")
    config = default_config(browser_path=str(shell))
    location = locate_chromium(config, lookup_env, platform="linux")
    assert location == cfg.ChromiumLocation(str(shell), "configured", "headless-shell")


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("chrome-headless-shell", "headless-shell"),
        ("chromium-headless-shell", "headless-shell"),
        ("headless_shell", "headless-shell"),
        ("chrome-headless-shell.exe", "headless-shell"),
        ("chromium", "chromium"),
        ("chrome", "chromium"),
        ("Google Chrome", "chromium"),
    ],
)
def test_binary_kind(name: str, kind: str) -> None:
    assert cfg.binary_kind(f"/x/{name}") == kind


def test_playwright_shell_layouts_on_macos_and_windows(tmp_path: Path) -> None:
    revision = shell_revision()
    home = tmp_path / "home"
    base = {"HOME": str(home), "PATH": str(tmp_path / "none")}
    mac = make_executable(
        home
        / "Library"
        / "Caches"
        / "ms-playwright"
        / f"chromium_headless_shell-{revision}"
        / "chrome-headless-shell-mac-arm64"
        / "chrome-headless-shell"
    )
    assert find_chromium(HEADLESS, base, platform="darwin") == str(mac)
    local = tmp_path / "local"
    win = make_executable(
        local
        / "ms-playwright"
        / f"chromium_headless_shell-{revision}"
        / "chrome-headless-shell-win64"
        / "chrome-headless-shell.exe"
    )
    assert find_chromium(HEADLESS, {**base, "LOCALAPPDATA": str(local)}, platform="win32") == str(
        win
    )


def test_config_module_stays_import_light() -> None:
    import subprocess

    code = (
        "import sys, browsermesh.config;"
        "heavy = [m for m in ('mcp', 'playwright', 'anyio', 'pydantic') if m in sys.modules];"
        "print(','.join(heavy))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == ""
