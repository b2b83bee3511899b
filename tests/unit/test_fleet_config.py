"""The fleet's settings (issue 37, config/fleet.py): the directory URL, the replica id and the
lease; a problem names the variable and the rule, never the value (the URL's password)."""

from __future__ import annotations

import os
import re

import pytest

from browsermesh import cli
from browsermesh.config import load_config
from browsermesh.config.fleet import replica_name, show_fleet_url
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
