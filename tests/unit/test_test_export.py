"""The pytest-playwright export (model/test_export.py, model/export_python.py, issue 20): the
module's structure, every step kind, escaping of hostile text, the base URL, the bounds."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from browsermesh.model.matchers import UrlMatcher, parse_condition
from browsermesh.model.mouse import MouseGesture
from browsermesh.model.recording import (
    ActAndWait,
    Action,
    Drag,
    ExpectDialog,
    ExpectDownload,
    ExpectFileChooser,
    ExpectNavigation,
    ExpectPopup,
    ExpectResponse,
    FormField,
    FormFill,
    History,
    Mouse,
    Navigate,
    PageClosed,
    PageOpened,
    Scroll,
    Step,
    Upload,
    UploadFile,
    Value,
    Wait,
)
from browsermesh.model.test_export import SessionExport, export_pytest

BASE = "http://127.0.0.1:8000"
S = {"session_id": "s1", "page_id": "p1"}
BUTTON = {"strategy": "role", "value": "button", "name": "Go", "exact": True}


def session(steps: list[Step], **kw: Any) -> SessionExport:
    return SessionExport(session_id="s1", label=kw.pop("label", "buyer"), steps=steps, **kw)


def constants(text: str) -> set[object]:
    return {n.value for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Constant)}


def every_kind() -> list[Step]:
    files = (UploadFile(name="a.txt", mime_type="text/plain", data=b"\x00hi"),)
    glob = UrlMatcher("glob", BASE + "/items/*")
    return [
        Navigate(seq=1, **S, url=BASE + "/start"),
        History(seq=2, **S, step="back"),
        History(seq=3, **S, step="forward"),
        History(seq=4, **S, step="reload"),
        *(
            Action(seq=5 + n, **S, op=op, locator=BUTTON)
            for n, op in enumerate(
                ["click", "double_click", "hover", "focus", "check", "uncheck", "scroll_into_view"]
            )
        ),
        Action(seq=20, **S, op="press", locator=BUTTON, value=Value.literal("Enter")),
        Action(
            seq=21,
            **S,
            op="select_option",
            locator={"strategy": "label", "value": "Country", "exact": False},
            value=Value.literal("de"),
        ),
        FormFill(
            seq=22,
            **S,
            fields=(
                FormField(
                    locator={"strategy": "placeholder", "value": "Name"},
                    op="fill",
                    value=Value.literal("Ada"),
                ),
                FormField(locator={"strategy": "testId", "value": "agree"}, op="uncheck"),
            ),
        ),
        Upload(seq=23, **S, locator={"strategy": "css", "value": "#f"}, files=files),
        Upload(seq=24, **S, locator=BUTTON, files=files, via="chooser"),
        Scroll(seq=25, **S, dx=0, dy=300),
        Drag(seq=26, **S, source={"strategy": "text", "value": "A"}, target=BUTTON),
        *(
            Wait(seq=30 + n, **S, condition=parse_condition(c))
            for n, c in enumerate(
                [
                    {"kind": "url", "matcher": {"kind": "exact", "value": BASE + "/done"}},
                    {"kind": "url", "matcher": {"kind": "glob", "value": "**/done?x=*"}},
                    {"kind": "load", "state": "domcontentloaded"},
                    {"kind": "text", "text": "Bye", "state": "absent"},
                    *(
                        {"kind": "locator", "locator": BUTTON, "state": state}
                        for state in (
                            "visible",
                            "hidden",
                            "attached",
                            "detached",
                            "enabled",
                            "disabled",
                        )
                    ),
                ]
            )
        ),
        *(
            Mouse(seq=42 + n, **S, gesture=gesture)
            for n, gesture in enumerate(
                [
                    MouseGesture(action="move", x=1, y=2),
                    MouseGesture(action="click", x=140, y=130.5),
                    MouseGesture(action="double_click", x=3, y=4, button="right"),
                    MouseGesture(action="down", x=5, y=6, button="middle"),
                    MouseGesture(action="up", x=7, y=8),
                    MouseGesture(action="drag", x=10, y=20, to=(30, 40)),
                    MouseGesture(action="wheel", x=9, y=9, delta_y=-120),
                ]
            )
        ),
        ActAndWait(seq=50, **S, op="click", locator=BUTTON, expect=ExpectNavigation()),
        ActAndWait(
            seq=51,
            **S,
            op="press",
            key="Enter",
            locator=BUTTON,
            expect=ExpectNavigation(matcher=glob, load_state="domcontentloaded"),
        ),
        ActAndWait(
            seq=52,
            **S,
            op="click",
            locator=BUTTON,
            expect=ExpectResponse(matcher=glob, method="POST", status=201),
        ),
        ActAndWait(
            seq=53,
            **S,
            op="click",
            locator=BUTTON,
            expect=ExpectDialog(dialog_type="prompt", accept=True, prompt_text=Value.literal("y")),
        ),
        ActAndWait(
            seq=54,
            **S,
            op="click",
            locator=BUTTON,
            expect=ExpectDialog(dialog_type="confirm", accept=False),
        ),
        ActAndWait(seq=55, **S, op="click", locator=BUTTON, expect=ExpectFileChooser(files=files)),
        ActAndWait(
            seq=56,
            **S,
            op="click",
            locator=BUTTON,
            expect=ExpectDownload(suggested_filename="r.csv"),
        ),
        ActAndWait(seq=57, **S, op="click", locator=BUTTON, expect=ExpectPopup(page_id="p2")),
        Navigate(seq=58, session_id="s1", page_id="p2", url="https://other.test/x"),
        PageOpened(seq=59, session_id="s1", page_id="p3"),
        PageClosed(seq=60, session_id="s1", page_id="p3"),
        PageClosed(seq=61, session_id="s1", page_id="p2"),
    ]


def test_every_step_kind_renders_as_valid_lint_clean_python(tmp_path: Path) -> None:
    export = export_pytest([session(every_kind())])
    text = export.text
    compile(text, "exported.py", "exec")
    lint = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--isolated", "--stdin-filename", "t.py", "-"],
        input=text,
        capture_output=True,
        text=True,
        check=False,
    )
    assert lint.returncode == 0, lint.stdout
    assert not export.truncated and export.steps == len(every_kind())
    for call in [
        "buyer_page = buyer_context.new_page()",
        "buyer_page.goto(BASE_URL + '/start')",
        "buyer_page.go_back()",
        "buyer_page.get_by_role('button', name=exact('Go')).dblclick()",
        ".scroll_into_view_if_needed()",
        "buyer_page.get_by_label('Country').select_option('de')",
        "buyer_page.get_by_placeholder(exact('Name')).fill('Ada')",
        "buyer_page.get_by_test_id('agree').uncheck()",
        "buyer_page.locator('#f').set_input_files([fixture_file(tmp_path, 'a.txt', b'\\x00hi')])",
        "chooser_info.value.set_files(",
        "buyer_page.mouse.wheel(0, 300)",
        "buyer_page.get_by_text(exact('A')).drag_to(",
        "buyer_page.mouse.move(1, 2)",
        "buyer_page.mouse.click(140, 130.5)",
        "buyer_page.mouse.dblclick(3, 4, button='right')",
        "buyer_page.mouse.move(5, 6)\n    buyer_page.mouse.down(button='middle')",
        "buyer_page.mouse.move(7, 8)\n    buyer_page.mouse.up()",
        "buyer_page.mouse.down()\n    buyer_page.mouse.move(30, 40, steps=5)",
        "buyer_page.mouse.move(9, 9)\n    buyer_page.mouse.wheel(0, -120)",
        "expect(buyer_page).to_have_url(BASE_URL + '/done')",
        "expect(buyer_page).to_have_url(url_glob('**/done?x=*'))",
        "buyer_page.wait_for_load_state('domcontentloaded')",
        "not_to_contain_text('Bye', use_inner_text=True, ignore_case=True)",
        ".to_be_attached(attached=False)",
        ".to_be_disabled()",
        "with buyer_page.expect_navigation(wait_until='load'):",
        "expect_navigation(url=url_glob(BASE_URL + '/items/*'), wait_until='domcontentloaded')",
        ".press('Enter')",
        "assert response_info.value.request.method == 'POST'",
        "assert response_info.value.status == 201",
        "lambda dialog: dialog.accept('y')",
        "lambda dialog: dialog.dismiss()",
        "assert dialog_info.value.type == 'confirm'",
        "assert download_info.value.suggested_filename == 'r.csv'",
        "buyer_page_2 = popup_info.value",
        "buyer_page_2.goto('https://other.test/x')",
        "buyer_page_3 = buyer_context.new_page()",
        "buyer_page_3.close()",
        "buyer_context.close()",
    ]:
        assert call in text, call


def test_sessions_interleave_by_seq_each_in_its_own_context() -> None:
    buyer = SessionExport(
        session_id="s1",
        label="buyer",
        steps=[Navigate(seq=1, **S, url=BASE + "/a"), Navigate(seq=3, **S, url=BASE + "/c")],
    )
    admin = SessionExport(
        session_id="s2",
        label="buyer",  # the same label twice still gets two contexts
        steps=[Navigate(seq=2, session_id="s2", page_id="p1", url=BASE + "/b")],
    )
    text = export_pytest([buyer, admin]).text
    order = [text.index(f"goto(BASE_URL + '/{x}')") for x in "abc"]
    assert order == sorted(order)
    assert "buyer_context = browser.new_context(" in text
    assert "buyer_2_context = browser.new_context(" in text
    assert "buyer_2_page.goto(BASE_URL + '/b')" in text  # same page id, other session


def test_a_step_of_another_session_is_refused() -> None:
    stray = Navigate(seq=1, session_id="elsewhere", page_id="p1", url=BASE)
    with pytest.raises(ValueError, match="its session"):
        export_pytest([session([stray])])


def test_the_base_url_is_the_most_common_origin_and_overridable() -> None:
    steps: list[Step] = [
        Navigate(seq=1, **S, url="http://a.test:80/x"),
        Navigate(seq=2, **S, url="http://a.test:8080/y"),
        Navigate(seq=3, **S, url="http://a.test:80"),
        Navigate(seq=4, **S, url="http://a.test:80?q=1"),
        Navigate(seq=5, **S, url="about:blank"),
    ]
    text = export_pytest([session(steps)]).text
    assert "BASE_URL = os.environ.get('BM_BASE_URL', 'http://a.test:80')" in text
    assert "goto(BASE_URL + '/x')" in text and "goto(BASE_URL)" in text
    assert "goto('http://a.test:8080/y')" in text  # a longer port is another origin
    assert "goto(BASE_URL + '?q=1')" in text and "goto('about:blank')" in text
    assert "BASE_URL = os.environ.get('BM_BASE_URL', '')" in export_pytest([session([])]).text


def test_context_settings_are_reproduced() -> None:
    settings_ = {
        "device": "Pixel 7",
        "locale": "de-DE",
        "timezoneId": "Europe/Berlin",
        "geolocation": {"latitude": 52.5, "longitude": 13.4},
        "permissions": [{"name": "geolocation", "origin": BASE}],
        "network": {"offline": True, "extraHeaders": {"Authorization": "Bearer hunter2"}},
        "proxy": {"server": "http://proxy.test:3128"},
        "blockResources": ["image"],
    }
    steps: list[Step] = [Navigate(seq=1, **S, url=BASE + "/")]
    export = export_pytest(
        [session(steps, settings=settings_, storage_state_path="/data/states/buyer.json")]
    )
    text = export.text
    compile(text, "exported.py", "exec")
    assert "hunter2" not in text
    assert "buyer_options = {**playwright.devices['Pixel 7'], 'locale': 'de-DE'" in text
    assert "'timezone_id': 'Europe/Berlin'" in text and "'offline': True" in text
    assert "'Authorization': secret('BM_SECRET_BUYER_HEADER_AUTHORIZATION')" in text
    assert "buyer_context.grant_permissions(['geolocation'], origin=BASE_URL)" in text
    assert "BUYER_STATE = os.environ.get('BM_STATE_BUYER', '/data/states/buyer.json')" in text
    assert "'storage_state': BUYER_STATE" in text
    assert "# not reproduced: blockResources, proxy" in text
    assert export.secrets == ("BM_SECRET_BUYER_HEADER_AUTHORIZATION",)
    plain = export_pytest([session(steps, settings={"colorScheme": "dark"})]).text
    assert (
        "buyer_context = browser.new_context(viewport={'width': 1280, 'height': 720}, "
        "color_scheme='dark')"
    ) in plain


HOSTILE = st.text(min_size=1, max_size=40) | st.sampled_from(
    ['"""', "'''", "\\", "\n# x\n", "')\nimport os #", '\\"', "\r\u2028\x00", "{0}}"]
)


@settings(max_examples=60, deadline=None)
@given(text=HOSTILE, label=st.text(max_size=20))
def test_hostile_text_stays_inside_its_literals(text: str, label: str) -> None:
    where = {"session_id": text, "page_id": text}
    locator = {"strategy": "role", "value": "button", "name": text, "exact": True}
    files = (UploadFile(name=text, mime_type="x/y", data=text.encode("utf-8", "surrogatepass")),)
    prompt = ExpectDialog(dialog_type="prompt", accept=True, prompt_text=Value.literal(text))
    css = {"strategy": "css", "value": text}
    # A text wait refuses whitespace only (it would match every page): wrap such a text.
    wait_text = text if text.strip() else f"[{text}]"
    present = parse_condition({"kind": "text", "text": wait_text, "state": "present"})
    steps: list[Step] = [
        Navigate(seq=1, **where, url=BASE + "/" + text),
        Action(seq=2, **where, op="fill", locator=css, value=Value.literal(text)),
        Action(seq=3, **where, op="click", locator=locator),
        Upload(seq=4, **where, locator=locator, files=files),
        ActAndWait(
            seq=5,
            **where,
            op="click",
            locator=locator,
            expect=ExpectDownload(suggested_filename=text),
        ),
        ActAndWait(seq=6, **where, op="click", locator=locator, expect=prompt),
        Wait(seq=7, **where, condition=present),
    ]
    export = export_pytest(
        [SessionExport(session_id=text, label=label, steps=[*steps], settings={"locale": text})]
    )
    found = constants(export.text)  # parses, and every value is one whole literal
    assert text in found and "/" + text in found
    assert f"# session {label!r} ({text!r})\n" in export.text  # one comment line, escaped


def test_a_long_export_ends_with_a_comment_never_a_half_statement() -> None:
    steps: list[Step] = [Navigate(seq=n, **S, url=f"{BASE}/{n}") for n in range(1, 400)]
    full = export_pytest([session(steps)])
    cut = export_pytest([session(steps)], max_chars=len(full.text) // 2)
    assert cut.truncated and 0 < cut.steps < len(steps)
    assert len(cut.text) <= len(full.text) // 2
    compile(cut.text, "exported.py", "exec")
    assert f"# export truncated at {len(full.text) // 2} characters" in cut.text
    assert f"{len(steps) - cut.steps} more steps are not shown" in cut.text
    assert cut.text.rstrip().endswith("buyer_context.close()")


def test_a_truncated_recording_says_so_at_the_top() -> None:
    text = export_pytest([session([], truncated=True)]).text
    assert "# NOTE: the recording of session 'buyer' reached its bound" in text
    assert export_pytest([session([], truncated=True)]).truncated


def helpers() -> dict[str, Any]:
    namespace: dict[str, Any] = {}
    exec(compile(export_pytest([]).text, "exported.py", "exec"), namespace)
    return namespace


def test_the_secret_helper_fails_the_test_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    secret = helpers()["secret"]
    monkeypatch.delenv("BM_SECRET_X_Y", raising=False)
    with pytest.raises(pytest.fail.Exception, match="BM_SECRET_X_Y"):
        secret("BM_SECRET_X_Y")
    monkeypatch.setenv("BM_SECRET_X_Y", "pw")
    assert secret("BM_SECRET_X_Y") == "pw"


def test_the_matching_helpers_match_as_browsermesh_does(tmp_path: Path) -> None:
    ns = helpers()
    assert ns["exact"]("Username").match("  Username:\n")
    assert not ns["exact"]("Username").match("Username2")
    assert not ns["exact"]("a.b").match("axb")
    glob = ns["url_glob"](BASE + "/items/*")
    assert glob.match(BASE + "/items/7") and not glob.match(BASE + "/items/7/edit")
    assert ns["url_glob"]("**/x").match("http://h/a/b/x")
    assert ns["url_exact"]("http://h/?a=1").match("http://h/?a=1")
    assert not ns["url_exact"]("http://h/?a=1").match("http://h/?a=12")
    for name, want in [("../../evil.txt", "evil.txt"), ("..", "upload"), ("a.txt", "a.txt")]:
        path = ns["fixture_file"](tmp_path, name, b"data")
        assert path == tmp_path / "fixtures" / want and path.read_bytes() == b"data"
