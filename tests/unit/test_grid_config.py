"""The Selenium Grid options (issue 22, config/grid.py): URL, contexts per browser, the
capabilities file and the header file; every problem names the variable and the rule, never
the value (the URL's userinfo and the header file's values are secrets)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from browsermesh.config import load_config
from tests.support.config_cli import SECRET, problems, serve


def test_the_grid_url_from_the_flag_or_the_variable() -> None:
    url = f"https://bm:{SECRET}@grid.example:4444/selenium"
    config = serve(["--selenium-grid", url, "--grid-contexts-per-browser", "3"])
    assert config.backend == "selenium-grid" and config.selenium_grid == url
    assert config.grid_contexts_per_browser == 3
    assert SECRET not in repr(config)  # the URL is never in the config's repr
    env = load_config({"BROWSERMESH_SELENIUM_GRID": "http://127.0.0.1:4444"})
    assert env.backend == "selenium-grid" and env.grid_contexts_per_browser == 1


@pytest.mark.parametrize(
    "url",
    [
        "ws://grid:4444",
        "grid:4444",
        "http://",
        "http://grid:99999",
        f"http://bm:{SECRET}@grid:4444/?token=x",
        "http://grid:4444/#frag",
        " http://grid:4444",
        "",
    ],
)
def test_bad_grid_urls_are_refused_without_echo(url: str) -> None:
    found = problems({"BROWSERMESH_SELENIUM_GRID": url})
    assert found == [("BROWSERMESH_SELENIUM_GRID", "must be an absolute http or https URL")]


@pytest.mark.parametrize("value", ["0", "51", "x", "-1"])
def test_contexts_per_browser_bounds(value: str) -> None:
    found = problems({"BROWSERMESH_GRID_CONTEXTS_PER_BROWSER": value})
    assert found == [("BROWSERMESH_GRID_CONTEXTS_PER_BROWSER", "must be an integer from 1 to 50")]


def test_one_backend_at_a_time() -> None:
    grid = {"BROWSERMESH_SELENIUM_GRID": "http://grid:4444"}
    found = problems({**grid, "BROWSERMESH_CDP_ENDPOINT": "http://127.0.0.1:9222"})
    assert found[-1][0] == "BROWSERMESH_SELENIUM_GRID" and "cannot be combined" in found[-1][1]
    found = problems(grid, ["--browser-endpoint", "ws://a:1"])
    assert found[-1][0] == "BROWSERMESH_SELENIUM_GRID"
    # A remote backend: the browser path is ignored, so not checked.
    assert load_config({**grid, "BROWSERMESH_BROWSER_PATH": "/nope"}).browser_path is None


def write(tmp_path: Path, name: str, text: str | bytes) -> str:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return str(path)


def test_capabilities_file_is_read_as_canonical_json(tmp_path: Path) -> None:
    caps = {
        "browserName": "chrome",
        "browserVersion": "156",
        "platformName": "linux",
        "goog:chromeOptions": {"args": ["--lang=de"]},
        "se:recordVideo": True,
    }
    path = write(tmp_path, "caps.json", json.dumps(caps))
    config = serve(["--grid-capabilities", path, "--selenium-grid", "http://g:4444"])
    assert json.loads(config.grid_capabilities) == caps


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("not json", "must hold a JSON object (W3C alwaysMatch capabilities)"),
        ("[1, 2]", "must hold a JSON object (W3C alwaysMatch capabilities)"),
        ('{"browserName": "firefox"}', "browserName must be chrome, chromium or MicrosoftEdge"),
        ('{"browsermesh:owner": "x"}', "must not set browsermesh:* capabilities"),
        ('{"browserVersion": 156}', "browserVersion must be a string"),
        ('{"goog:chromeOptions": []}', "goog:chromeOptions must be an object"),
        ('{"goog:chromeOptions": {"args": "--x"}}', "goog:chromeOptions.args must be a list"),
    ],
)
def test_bad_capabilities_name_the_rule(tmp_path: Path, text: str, rule: str) -> None:
    path = write(tmp_path, "caps.json", text)
    ((variable, message),) = problems({"BROWSERMESH_GRID_CAPABILITIES": path})
    assert variable == "BROWSERMESH_GRID_CAPABILITIES" and message.startswith(rule)


def test_unreadable_files(tmp_path: Path) -> None:
    for variable in ("BROWSERMESH_GRID_CAPABILITIES", "BROWSERMESH_GRID_HEADER_FILE"):
        assert problems({variable: str(tmp_path / "missing")}) == [(variable, "cannot be read")]
        assert problems({variable: str(tmp_path)}) == [(variable, "must name a regular file")]
        assert problems({variable: " "}) == [(variable, "must name a readable file")]
        big = write(tmp_path, "big", "x" * 70_000)
        assert problems({variable: big}) == [(variable, "is larger than 64 KiB")]
        bad = write(tmp_path, "bad", b"\xff\xfe\x00")
        assert problems({variable: bad}) == [(variable, "is not valid UTF-8")]


def test_header_file(tmp_path: Path) -> None:
    path = write(tmp_path, "h", f"# comment\n\nAuthorization: Bearer {SECRET}\nX-Team:  blue \n")
    config = load_config({"BROWSERMESH_GRID_HEADER_FILE": path})
    assert config.grid_headers == (("Authorization", f"Bearer {SECRET}"), ("X-Team", "blue"))
    assert SECRET not in repr(config)


VALUE_RULE = "the value must be 1 to 8192 visible ASCII characters or spaces (an HTTP field value)"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (f"no colon {SECRET}\n", "line 1: expected Name: value"),
        (f"# c\nBad Name: {SECRET}\n", "line 2: expected Name: value"),
        (
            "X-Empty:\n",
            f"line 1: {VALUE_RULE}",
        ),
        (
            f"X-Name: caf\u00e9 {SECRET}\n",
            f"line 1: {VALUE_RULE}",
        ),
        (
            f"X-Name: {SECRET} \u20ac\n",
            f"line 1: {VALUE_RULE}",
        ),
        (
            f"X-Name: {SECRET}\x7f\n",
            f"line 1: {VALUE_RULE}",
        ),
        ("# only comments\n", "contains no Name: value lines"),
        ("".join(f"X-{i}: v\n" for i in range(33)), "has more than 32 headers"),
    ],
)
def test_bad_header_files_name_the_line_never_the_value(
    tmp_path: Path, text: str, message: str
) -> None:
    path = write(tmp_path, "h", text)
    assert problems({"BROWSERMESH_GRID_HEADER_FILE": path}) == [
        ("BROWSERMESH_GRID_HEADER_FILE", message)
    ]
