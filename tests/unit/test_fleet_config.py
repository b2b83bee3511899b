"""The fleet's settings (issue 37, config/fleet.py): the directory URL, the replica id and the
lease; a problem names the variable and the rule, never the value (the URL's password)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from browsermesh import cli
from browsermesh.config import load_config
from browsermesh.config.fleet import derived_advertise, replica_name, show_fleet_url
from tests.support.config_cli import SECRET, problems, serve

URL_RULE = "must be a redis://, rediss:// or unix:// URL"


@pytest.mark.parametrize(
    "url",
    [
        f"redis://:{SECRET}@127.0.0.1:6379/0",
        f"redis://bm:{SECRET}@redis.internal",
        f"rediss://default:{SECRET}@redis.example:6380/3",
        "unix:///run/redis/redis.sock",
        f"unix://:{SECRET}@/run/redis.sock?db=2",
    ],
)
def test_the_fleet_url_from_the_flag_or_the_variable(url: str) -> None:
    config = serve(["--fleet-redis", url, "--replica-id", "web-1"])
    assert config.fleet_redis == url and config.replica_id == "web-1"
    assert config.fleet_lease_ms == 15_000
    assert SECRET not in repr(config)
    assert SECRET not in show_fleet_url(url)
    assert load_config({"BROWSERMESH_FLEET_REDIS": url}).fleet_redis == url


def test_the_url_is_shown_without_its_password_or_query() -> None:
    assert show_fleet_url(f"redis://bm:{SECRET}@h:6379/1") == "redis://h:6379/1"
    assert show_fleet_url(f"rediss://h/0?password={SECRET}") == "rediss://h/0"
    assert show_fleet_url(f"unix://:{SECRET}@/run/r.sock?db=1") == "unix:///run/r.sock"


@pytest.mark.parametrize(
    "url",
    [
        f"http://:{SECRET}@127.0.0.1:6379",
        f"redis://:{SECRET}@127.0.0.1:99999",
        f"redis://:{SECRET}@/0",
        f"redis://:{SECRET}@h:6379/zero",
        f"redis://:{SECRET}@h:6379/0#x",
        f" redis://:{SECRET}@h",
        f"{SECRET}",
        "unix://",
        "",
    ],
)
def test_bad_fleet_urls_are_refused_without_echo(url: str) -> None:
    assert problems({"BROWSERMESH_FLEET_REDIS": url}) == [("BROWSERMESH_FLEET_REDIS", URL_RULE)]
    found = problems({}, ["--fleet-redis", url])
    assert found == [("BROWSERMESH_FLEET_REDIS", URL_RULE + " (from --fleet-redis)")]


def test_a_bad_url_exits_2_and_never_prints_the_password(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["--fleet-redis", f"http://:{SECRET}@h:6379"]) == 2
    out, err = capsys.readouterr()
    assert SECRET not in out + err and "BROWSERMESH_FLEET_REDIS" in err


@pytest.mark.parametrize("value", ["Web-1", "", "a" * 65, "web_1", "web 1", "wéb"])
def test_bad_replica_ids_are_refused(value: str) -> None:
    assert problems({"BROWSERMESH_REPLICA_ID": value}) == [
        ("BROWSERMESH_REPLICA_ID", "must be 1 to 64 characters of a-z, 0-9 and -")
    ]


def test_the_default_replica_id_is_the_cleaned_host_and_pid() -> None:
    name = replica_name(None)
    assert re.fullmatch(r"[a-z0-9-]{1,64}", name)
    assert name.endswith(f"-{os.getpid()}")
    assert replica_name("web-1") == "web-1"


@pytest.mark.parametrize(("raw", "ok"), [("3000", True), ("300000", True), ("2999", False)])
def test_the_lease_bounds(raw: str, ok: bool) -> None:
    if ok:
        assert load_config({"BROWSERMESH_FLEET_LEASE_MS": raw}).fleet_lease_ms == int(raw)
    else:
        assert problems({"BROWSERMESH_FLEET_LEASE_MS": raw}) == [
            ("BROWSERMESH_FLEET_LEASE_MS", "must be an integer from 3000 to 300000")
        ]


# ------------------------------------------------------------------------------------------
# The fleet token and the advertised address (reference §37.6)
# ------------------------------------------------------------------------------------------

FLEET = "redis://127.0.0.1:6379/0"
TOKEN = SECRET + "-" + "t" * 40


def _token_file(tmp_path: Path, text: str = TOKEN + "\n", mode: int = 0o600) -> Path:
    path = tmp_path / "fleet-token"
    path.write_text(text)
    path.chmod(mode)
    return path


def test_the_fleet_token_and_address_are_read(tmp_path: Path) -> None:
    path = _token_file(tmp_path)
    config = serve(
        [
            "--fleet-redis",
            FLEET,
            "--fleet-token-file",
            str(path),
            "--fleet-advertise",
            "http://10.1.2.3:7331/",
        ]
    )
    assert config.fleet_token == TOKEN and config.fleet_advertise == "http://10.1.2.3:7331"
    assert SECRET not in repr(config)
    environ = {
        "BROWSERMESH_FLEET_REDIS": FLEET,
        "BROWSERMESH_FLEET_TOKEN_FILE": str(path),
        "BROWSERMESH_FLEET_ADVERTISE": "http://bm-0.bm.svc:7331",
    }
    assert load_config(environ).fleet_advertise == "http://bm-0.bm.svc:7331"


@pytest.mark.parametrize(
    ("text", "mode", "rule"),
    [
        (TOKEN, 0o644, "the file is readable or writable by group or others (chmod 600 it)"),
        ("short-" + SECRET, 0o600, "the file must hold one token of 32 to 256 printable"),
        (TOKEN + " " + TOKEN, 0o600, "the file must hold one token of 32 to 256 printable"),
    ],
)
def test_an_untrusted_or_malformed_token_file_is_refused(
    tmp_path: Path, text: str, mode: int, rule: str
) -> None:
    path = _token_file(tmp_path, text, mode)
    environ = {"BROWSERMESH_FLEET_REDIS": FLEET, "BROWSERMESH_FLEET_TOKEN_FILE": str(path)}
    [(variable, message)] = problems(environ)
    assert variable == "BROWSERMESH_FLEET_TOKEN_FILE" and message.startswith(rule)


def test_the_channel_settings_need_the_fleet(tmp_path: Path) -> None:
    path = _token_file(tmp_path)
    [(variable, message)] = problems({"BROWSERMESH_FLEET_TOKEN_FILE": str(path)})
    assert variable == "BROWSERMESH_FLEET_TOKEN_FILE" and "BROWSERMESH_FLEET_REDIS" in message
    missing = {"BROWSERMESH_FLEET_REDIS": FLEET, "BROWSERMESH_FLEET_TOKEN_FILE": "/nonexistent"}
    assert problems(missing) == [("BROWSERMESH_FLEET_TOKEN_FILE", "must name an existing file")]


@pytest.mark.parametrize(
    "url",
    [
        "http://8.8.8.8:7331",  # a public address: the channel is for private networks
        "https://10.0.0.1:7331",
        "http://10.0.0.1",
        f"http://u:{SECRET}@10.0.0.1:7331",
        "http://10.0.0.1:7331/mcp",
        "http://10.0.0.1:7331?x=1",
    ],
)
def test_an_advertised_address_outside_the_rule_is_refused(url: str) -> None:
    environ = {"BROWSERMESH_FLEET_REDIS": FLEET, "BROWSERMESH_FLEET_ADVERTISE": url}
    [(variable, message)] = problems(environ)
    assert variable == "BROWSERMESH_FLEET_ADVERTISE" and message.startswith("must be http://")


def test_the_address_is_derived_only_from_a_private_bind_address() -> None:
    assert derived_advertise("127.0.0.1", 7331) == "http://127.0.0.1:7331"
    assert derived_advertise("10.2.0.7", 80) == "http://10.2.0.7:80"
    assert derived_advertise("::1", 9) == "http://[::1]:9"
    assert derived_advertise("0.0.0.0", 7331) is None
    assert derived_advertise("::", 7331) is None
    assert derived_advertise("8.8.4.4", 7331) is None
