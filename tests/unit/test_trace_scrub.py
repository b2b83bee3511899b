"""`persistence.trace_scrub` on hand-made trace zips shaped like Playwright 1.65's (no browser).

The shapes copy a real trace: `trace.trace` JSON lines (`context-options` first, `before` /
`log` / `input` / `after` / `console` / `frame-snapshot` events; a snapshot tree node is a text,
`[tag, {attrs}, *children]` or a back-reference `[[snapshots back, post-order index]]`; the
element an action targets carries `__playwright_target__: ""` in that call's snapshots),
`trace.network` (`resource-snapshot` HAR entries), `trace.stacks`, `resources/<sha1>.<ext>`.
"""

from __future__ import annotations

import json
import os
import stat
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

import pytest

from browsermesh.errors import BrowserMeshError, ErrorCode
from browsermesh.persistence import trace_scrub
from browsermesh.persistence.trace_scrub import REDACTED, ScrubReport, scrub_trace

CANARY = 'Cx9 pass&word+"q"/é~*'
"""Symbols so that every escaped and encoded form differs from the raw one."""
SERVER = "Srv7-server-rendered"
JPEG = b"\xff\xd8\xff\xe0" + CANARY.encode() + b"\x00\xff\xd9"


def line(event: dict[str, Any]) -> bytes:
    """One line as Playwright writes it (JSON.stringify: compact, non-ASCII kept)."""
    return json.dumps(event, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def lines(*events: dict[str, Any]) -> bytes:
    return b"".join(line(event) for event in events)


def make_zip(path: Path, entries: list[tuple[str, bytes]]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries:
            archive.writestr(name, data)
    return path


def read_zip(path: Path) -> list[tuple[str, bytes]]:
    with zipfile.ZipFile(path) as archive:
        return [(info.filename, archive.read(info)) for info in archive.infolist()]


def events_of(data: bytes) -> list[dict[str, Any]]:
    return [json.loads(raw) for raw in data.splitlines() if raw.strip()]


def scrub(
    tmp_path: Path, entries: list[tuple[str, bytes]], secrets: tuple[str, ...] = ()
) -> tuple[dict[str, bytes], ScrubReport]:
    source = make_zip(tmp_path / "source.zip", entries)
    report = scrub_trace(source, tmp_path / "scrubbed.zip", secrets)
    return dict(read_zip(tmp_path / "scrubbed.zip")), report


def forms(value: str) -> Iterator[str]:
    """Every form of `value` that must not survive."""
    yield value
    yield json.dumps(value)[1:-1]
    yield json.dumps(value, ensure_ascii=False)[1:-1]
    yield quote(value)
    yield quote(value, safe="")
    yield quote_plus(value)


def assert_gone(entries: dict[str, bytes], *values: str) -> None:
    for name, data in entries.items():
        if name.endswith(".jpeg"):
            continue
        for value in values:
            for form in forms(value):
                assert form.encode() not in data, (name, value, form)


CONTEXT_OPTIONS = {
    "version": 10,
    "type": "context-options",
    "origin": "library",
    "browserName": "chromium",
    "playwrightVersion": "1.65.1",
    "options": {"viewport": {"width": 1280, "height": 720}},
    "platform": "linux",
    "wallTime": 1796563245981,
    "monotonicTime": 822.495,
    "sdkLanguage": "python",
    "testIdAttributeName": "data-testid",
}


def snapshot(call_id: str, phase: str, html: Any, frame: str = "frame@main") -> dict[str, Any]:
    return {
        "type": "frame-snapshot",
        "snapshot": {
            "callId": call_id,
            "phase": phase,
            "pageId": "page@1",
            "frameId": frame,
            "frameUrl": "http://127.0.0.1:8000/",
            "doctype": "html",
            "html": html,
            "viewport": {"width": 1280, "height": 720},
            "timestamp": 1227.166,
            "wallTime": 1796563246384,
            "collectionTime": 1.2,
            "resourceOverrides": [],
            "isMainFrame": frame == "frame@main",
        },
    }


def page(*inputs: Any) -> list[Any]:
    return ["HTML", {}, ["HEAD", {}], ["BODY", {}, "\n", ["FORM", {"method": "post"}, *inputs]]]


def password(value: str = "", *, target: bool = False, kind: str = "password") -> list[Any]:
    attrs: dict[str, str] = {"__playwright_value_": value, "id": "pw", "type": kind}
    if target:
        attrs["__playwright_target__"] = ""
    return ["INPUT", attrs]


def text_input(value: str = "", *, target: bool = False) -> list[Any]:
    attrs: dict[str, str] = {"__playwright_value_": value, "id": "q"}
    if target:
        attrs["__playwright_target__"] = ""
    return ["INPUT", attrs]


def fill(call_id: str, value: str, method: str = "fill", cls: str = "Frame") -> dict[str, Any]:
    key = "value" if method == "fill" else "text"
    params: dict[str, Any] = {"selector": "#x", "strict": True, key: value, "timeout": 30000}
    return {
        "type": "before",
        "callId": call_id,
        "startTime": 1405.5,
        "class": cls,
        "method": method,
        "params": params,
    }


def fill_log(call_id: str, value: str) -> dict[str, Any]:
    return {"type": "log", "callId": call_id, "time": 1525.7, "message": f'  fill("{value}")'}


def after(call_id: str) -> dict[str, Any]:
    return {"type": "after", "callId": call_id, "endTime": 1548.0}


def console(text: str) -> dict[str, Any]:
    return {
        "type": "console",
        "messageType": "log",
        "text": text,
        "args": [{"preview": text, "value": text}],
        "location": {"url": "http://127.0.0.1:8000/", "lineNumber": 6, "columnNumber": 82},
        "time": 1548.7,
        "pageId": "page@1",
    }


def trace_for(call_id: str, value: str, target: list[Any] | None) -> bytes:
    """A fill `call_id` of `value`, with `target` marked in its action snapshot (None: no
    snapshot at all, as with `snapshots=False`), then the value in a console message."""
    events = [CONTEXT_OPTIONS, fill(call_id, value), {"type": "input", "callId": call_id}]
    if target is not None:
        events.append(snapshot(call_id, "action", page(target)))
    events += [fill_log(call_id, value), after(call_id), console(f"pw is {value}")]
    return lines(*events)


# ------------------------------------------------------------------------------------------
# Rule 1: password inputs in snapshots, typing calls
# ------------------------------------------------------------------------------------------


def test_password_inputs_in_snapshots_are_masked_and_their_values_searched(
    tmp_path: Path,
) -> None:
    server = ["INPUT", {"__playwright_value_": SERVER, "type": "PassWord", "value": SERVER}]
    trace = lines(
        CONTEXT_OPTIONS,
        snapshot("c@1", "after", page(text_input("visible text"), server, password(CANARY))),
        console(f"typed {CANARY} and {SERVER}"),
    )
    body = f'<input type="PASSWORD" value="{SERVER}">'.encode()
    entries, report = scrub(tmp_path, [("trace.trace", trace), ("resources/a.html", body)])
    assert_gone(entries, CANARY, SERVER)
    html = events_of(entries["trace.trace"])[1]["snapshot"]["html"]
    form = html[3][3]
    assert form[2] == ["INPUT", {"__playwright_value_": "visible text", "id": "q"}]
    assert form[3][1] == {"__playwright_value_": REDACTED, "type": "PassWord", "value": REDACTED}
    assert form[4][1]["__playwright_value_"] == REDACTED
    assert events_of(entries["trace.trace"])[2]["text"] == f"typed {REDACTED} and {REDACTED}"
    assert entries["resources/a.html"] == f'<input type="PASSWORD" value="{REDACTED}">'.encode()
    assert report.masked == 3 + 3 * 2 + 1  # attributes, 2 in console text/preview/value, body


def test_fill_into_a_password_target_is_masked_with_its_log_and_searched(
    tmp_path: Path,
) -> None:
    trace = trace_for("c@12", CANARY, password(target=True))
    entries, _ = scrub(tmp_path, [("trace.trace", trace)])
    assert_gone(entries, CANARY)
    events = events_of(entries["trace.trace"])
    assert events[1]["params"] == {
        "selector": "#x",
        "strict": True,
        "value": REDACTED,
        "timeout": 30000,
    }
    assert events[4]["message"] == f'  fill("{REDACTED}")'
    assert events[6]["text"] == f"pw is {REDACTED}"


@pytest.mark.parametrize(
    ("cls", "method"),
    [("Frame", "type"), ("ElementHandle", "type"), ("Frame", "pressSequentially")],
)
def test_typing_into_a_password_target_is_masked(tmp_path: Path, cls: str, method: str) -> None:
    trace = lines(
        CONTEXT_OPTIONS,
        fill("c@14", "T", method, cls),
        snapshot("c@14", "action", page(password("T", target=True))),
        {"type": "log", "callId": "c@14", "time": 1576.4, "message": 'elementHandle.type("T")'},
        console("Typed T"),
    )
    entries, _ = scrub(tmp_path, [("trace.trace", trace)])
    events = events_of(entries["trace.trace"])
    assert events[1]["params"]["text"] == REDACTED
    assert events[3]["message"] == f'elementHandle.type("{REDACTED}")'
    # One character is masked where it stands, not searched for across the trace.
    assert events[4]["text"] == "Typed T"


def test_fill_into_a_proven_text_target_is_kept_byte_identical(tmp_path: Path) -> None:
    trace = trace_for("c@3", "shoes", text_input(target=True))
    entries, report = scrub(tmp_path, [("trace.trace", trace)])
    assert entries["trace.trace"] == trace
    assert report == ScrubReport(entries=1, masked=0)


def test_fill_without_snapshots_is_masked_but_not_searched(tmp_path: Path) -> None:
    """The conservative rule: no snapshot proves the target is not a password."""
    trace = trace_for("c@3", "shoes-or-password", None)
    entries, _ = scrub(tmp_path, [("trace.trace", trace)])
    events = events_of(entries["trace.trace"])
    assert events[1]["params"]["value"] == REDACTED
    assert events[3]["message"] == f'  fill("{REDACTED}")'
    assert events[5]["text"] == "pw is shoes-or-password"  # not proven secret: not searched


def test_fill_whose_snapshots_mark_no_target_is_masked(tmp_path: Path) -> None:
    trace = trace_for("c@3", "unproven", text_input())
    entries, _ = scrub(tmp_path, [("trace.trace", trace)])
    assert events_of(entries["trace.trace"])[1]["params"]["value"] == REDACTED


def test_fill_given_as_secret_without_snapshots_is_gone_everywhere(tmp_path: Path) -> None:
    trace = trace_for("c@3", CANARY, None)
    entries, _ = scrub(tmp_path, [("trace.trace", trace)], (CANARY,))
    assert_gone(entries, CANARY)


@pytest.mark.parametrize("method", ["keyboardType", "keyboardInsertText"])
def test_keyboard_typing_is_masked_even_with_a_text_target(tmp_path: Path, method: str) -> None:
    """A keyboard call targets whatever has focus; a marker it shows may be an earlier one."""
    keyboard = {
        "type": "before",
        "callId": "c@19",
        "class": "Page",
        "method": method,
        "params": {"text": "KbType-value"},
    }
    trace = lines(
        CONTEXT_OPTIONS, keyboard, snapshot("c@19", "after", page(text_input(target=True)))
    )
    entries, _ = scrub(tmp_path, [("trace.trace", trace)])
    assert events_of(entries["trace.trace"])[1]["params"] == {"text": REDACTED}


def test_old_traces_marking_the_target_with_the_call_id_are_understood(tmp_path: Path) -> None:
    target = ["INPUT", {"__playwright_target__": "c@7", "type": "password"}]
    trace = lines(CONTEXT_OPTIONS, fill("c@7", CANARY), snapshot("c@8", "before", page(target)))
    entries, _ = scrub(tmp_path, [("trace.trace", trace)])
    assert_gone(entries, CANARY)


def test_targets_are_resolved_through_back_references(tmp_path: Path) -> None:
    """The viewer numbers a snapshot's literal nodes in post-order (references skipped) and
    `[[n, m]]` is node m of the snapshot n back in the same frame."""
    first = ["HTML", {}, ["HEAD", {}], ["BODY", {}, "hi", password(target=True)]]
    plain = ["HTML", {}, ["HEAD", {}], ["BODY", {}, "hi", text_input(target=True)], ["DIV", {}]]
    # Post-order of `first`: HEAD 0, "hi" 1, INPUT 2, BODY 3, HTML 4; of `plain` DIV is 4. Any
    # other numbering (pre-order, texts not counted) misses `plain`'s target: no proof, masked.
    trace = lines(
        CONTEXT_OPTIONS,
        snapshot("c@1", "after", first),
        snapshot("c@1", "after", plain, frame="frame@other"),
        fill("c@2", "secret-through-ref"),
        snapshot("c@2", "action", ["HTML", {}, [[1, 0]], [[1, 3]]]),
        fill("c@3", "kept-through-ref"),
        snapshot("c@3", "action", ["HTML", {}, [[1, 0]], [[1, 3]]], frame="frame@other"),
        fill("c@4", "whole-document-ref"),
        snapshot("c@4", "action", [[2, 4]]),  # c@2's snapshot is one back, `first` two back
    )
    entries, _ = scrub(tmp_path, [("trace.trace", trace)])
    events = events_of(entries["trace.trace"])
    assert events[3]["params"]["value"] == REDACTED
    assert events[5]["params"]["value"] == "kept-through-ref"
    assert events[7]["params"]["value"] == REDACTED
    assert_gone(entries, "secret-through-ref", "whole-document-ref")


def test_iframe_targets_count_for_the_call(tmp_path: Path) -> None:
    trace = lines(
        CONTEXT_OPTIONS,
        fill("c@29", "Iframe-secret"),
        snapshot("c@29", "action", page()),
        snapshot("c@29", "action", page(password(target=True)), frame="frame@child"),
        console("Iframe-secret"),
    )
    entries, _ = scrub(tmp_path, [("trace.trace", trace)])
    assert_gone(entries, "Iframe-secret")


# ------------------------------------------------------------------------------------------
# Rule 2: credentials in context options and action parameters/results
# ------------------------------------------------------------------------------------------


def test_context_options_credentials_are_masked(tmp_path: Path) -> None:
    options = {
        **CONTEXT_OPTIONS,
        "options": {
            "baseURL": "http://bu:BaseUrl-secret@127.0.0.1:8000/",
            "httpCredentials": {"username": "hu", "password": "HttpCred-secret"},
            "proxy": {"server": "http://proxy:3128", "username": "pu", "password": "Proxy-pw"},
            "extraHTTPHeaders": {"Authorization": "Bearer t0k", "X-Other": "ok"},
            "viewport": {"width": 1280, "height": 720},
        },
    }
    trace = lines(options, console("BaseUrl-secret HttpCred-secret Proxy-pw"))
    entries, _ = scrub(tmp_path, [("trace.trace", trace)])
    assert_gone(entries, "BaseUrl-secret", "HttpCred-secret", "Proxy-pw", "Bearer t0k")
    first = events_of(entries["trace.trace"])[0]
    assert first["type"] == "context-options"
    assert first["options"] == {
        "baseURL": f"http://bu:{REDACTED}@127.0.0.1:8000/",
        "httpCredentials": {"username": "hu", "password": REDACTED},
        "proxy": {"server": "http://proxy:3128", "username": REDACTED, "password": REDACTED},
        "extraHTTPHeaders": {"Authorization": REDACTED, "X-Other": "ok"},
        "viewport": {"width": 1280, "height": 720},
    }


def test_header_and_cookie_parameters_and_results_are_masked(tmp_path: Path) -> None:
    headers = {
        "type": "before",
        "callId": "c@7",
        "class": "BrowserContext",
        "method": "setExtraHTTPHeaders",
        "params": {"headers": [{"name": "authorization", "value": "Bearer SetHdr-secret"}]},
    }
    cookies = {
        "type": "before",
        "callId": "c@9",
        "class": "BrowserContext",
        "method": "addCookies",
        "params": {"cookies": [{"name": "c", "value": "AddCookie-secret", "url": "http://h/"}]},
    }
    result = {
        "type": "after",
        "callId": "c@15",
        "endTime": 986.1,
        "result": {"cookies": [{"name": "s", "value": "Result-secret", "domain": "h"}]},
    }
    trace = lines(CONTEXT_OPTIONS, headers, cookies, result)
    entries, _ = scrub(tmp_path, [("trace.trace", trace)])
    assert_gone(entries, "SetHdr-secret", "AddCookie-secret", "Result-secret")
    events = events_of(entries["trace.trace"])
    assert events[2]["params"]["cookies"][0] == {"name": "c", "value": REDACTED, "url": "http://h/"}


# ------------------------------------------------------------------------------------------
# Rule 3: network headers and cookies
# ------------------------------------------------------------------------------------------


def resource_snapshot(request_headers: list[dict[str, str]], **extra: Any) -> dict[str, Any]:
    return {
        "type": "resource-snapshot",
        "snapshot": {
            "pageref": "page@1",
            "request": {
                "method": "GET",
                "url": "http://127.0.0.1:8000/again",
                "httpVersion": "http/1.0",
                "cookies": [{"name": "sid", "value": "Sess-secret-1"}],
                "headers": request_headers,
                "queryString": [],
                "headersSize": -1,
                "bodySize": 0,
            },
            "response": {
                "status": 200,
                "statusText": "OK",
                "httpVersion": "http/1.0",
                "cookies": [
                    {"name": "sid", "value": "Sess-secret-2", "path": "/", "httpOnly": True}
                ],
                "headers": [
                    {"name": "Content-Type", "value": "text/html"},
                    {"name": "SET-COOKIE", "value": "sid=Sess-secret-2; Path=/; HttpOnly"},
                ],
                "content": {"size": 33, "mimeType": "text/html", "_sha1": "3faa.html"},
                "redirectURL": "",
                "headersSize": -1,
                "bodySize": 33,
            },
            **extra,
        },
    }


def test_network_credentials_headers_and_cookies_are_masked(tmp_path: Path) -> None:
    request_headers = [
        {"name": "Accept", "value": "text/html"},
        {"name": "Authorization", "value": "Bearer Hdr-secret"},
        {"name": "cookie", "value": "sid=Sess-secret-1"},
        {"name": "Proxy-Authorization", "value": "Basic cHU6cHc="},
    ]
    untouched = resource_snapshot([{"name": "Accept", "value": "*/*"}])
    untouched["snapshot"]["request"]["cookies"] = []
    untouched["snapshot"]["response"] = {"status": 304, "headers": [], "cookies": []}
    network = lines(resource_snapshot(request_headers), untouched)
    entries, report = scrub(tmp_path, [("trace.network", network)])
    assert_gone(entries, "Hdr-secret", "Sess-secret-1", "Sess-secret-2", "cHU6cHc=")
    masked = events_of(entries["trace.network"])[0]
    request, response = masked["snapshot"]["request"], masked["snapshot"]["response"]
    assert [h["value"] for h in request["headers"]] == ["text/html", *[REDACTED] * 3]
    assert request["cookies"] == [{"name": "sid", "value": REDACTED}]
    assert response["headers"][1] == {"name": "SET-COOKIE", "value": REDACTED}
    assert response["cookies"][0]["value"] == REDACTED
    assert entries["trace.network"].splitlines()[1] == network.splitlines()[1]
    assert report.masked == 3 + 1 + 1 + 1


# ------------------------------------------------------------------------------------------
# Rule 4: known secrets in every form, in every text entry
# ------------------------------------------------------------------------------------------


def test_given_secrets_are_gone_in_every_form_and_entry(tmp_path: Path) -> None:
    post = {
        "mimeType": "application/x-www-form-urlencoded",
        "text": "",
        "params": [{"name": "user", "value": "alice"}, {"name": "pw", "value": CANARY}],
        "_file": "resources/556c.dat",
    }
    network = lines(resource_snapshot([], postData=post))
    form_body = f"user=alice&pw={quote_plus(CANARY, safe='*').replace('~', '%7E')}".encode()
    json_body = json.dumps({"pw": CANARY}).encode()  # ASCII-only escapes
    query = f"GET /?pw={quote(CANARY, safe='')}&next={quote(CANARY)}".encode()
    latin1 = "<p>mot de passe: Cx9-ASCII-only ü</p>".encode("latin-1")
    trace = lines(
        CONTEXT_OPTIONS,
        console(f"{CANARY} / {json.dumps(CANARY)}"),
        {"type": "event", "class": "Page", "method": "x", "params": {CANARY: "as a key"}},
    )
    stacks = json.dumps({"files": [f"/tmp/{CANARY}.py"], "stacks": []}).encode()
    entries, _ = scrub(
        tmp_path,
        [
            ("trace.trace", trace),
            ("trace.network", network),
            ("trace.stacks", stacks),
            ("resources/556c.dat", form_body),
            ("resources/a.json", json_body),
            ("resources/b.txt", query),
            ("resources/c.html", latin1),
        ],
        (CANARY, "Cx9-ASCII-only"),
    )
    assert_gone(entries, CANARY, "Cx9-ASCII-only")
    assert entries["resources/556c.dat"] == f"user=alice&pw={REDACTED}".encode()
    assert entries["resources/c.html"] == f"<p>mot de passe: {REDACTED} ü</p>".encode("latin-1")
    assert events_of(entries["trace.trace"])[2]["params"] == {REDACTED: "as a key"}
    for raw in entries["trace.trace"].splitlines():
        json.loads(raw)  # replaced inside the parsed strings: still JSON


def test_longest_secret_wins_and_markers_are_not_rewritten(tmp_path: Path) -> None:
    trace = lines(CONTEXT_OPTIONS, console("abcdef abcd RED"))
    entries, _ = scrub(tmp_path, [("trace.trace", trace)], ("abcd", "abcdef", "RED", ""))
    assert events_of(entries["trace.trace"])[1]["text"] == " ".join([REDACTED] * 3)


def test_images_are_copied_unchanged(tmp_path: Path) -> None:
    png = b"\x89PNG\r\n\x1a\n" + CANARY.encode() + b"\xff"
    name = "screencast/page@1-1796563246372.jpeg"
    entries, _ = scrub(tmp_path, [(name, JPEG), ("resources/i.png", png)], (CANARY,))
    assert entries == {name: JPEG, "resources/i.png": png}


def test_numbers_are_not_secrets_and_json_stays_valid(tmp_path: Path) -> None:
    trace = lines(CONTEXT_OPTIONS, {"type": "after", "callId": "c@1", "endTime": 1405.493})
    entries, report = scrub(tmp_path, [("trace.trace", trace)], ("1405",))
    assert entries["trace.trace"] == trace and report.masked == 0


def test_lone_surrogates_survive_a_rewrite(tmp_path: Path) -> None:
    raw = b'{"type":"console","text":"\\ud800 Cx9-secret"}\n'
    entries, _ = scrub(tmp_path, [("trace.trace", raw)], ("Cx9-secret",))
    assert entries["trace.trace"] == b'{"type":"console","text":"\\ud800 [REDACTED]"}\n'


# ------------------------------------------------------------------------------------------
# The zip: names, order, untouched lines, mode, failures
# ------------------------------------------------------------------------------------------


def test_names_order_and_unrelated_lines_are_kept(tmp_path: Path) -> None:
    odd = b'{"type": "event",  "time": 1.50, "x": "\\u00e9"}\n'  # not how we would write it
    trace = (
        line(CONTEXT_OPTIONS)
        + odd
        + line(fill("c@1", CANARY))
        + b"\n"
        + line(after("c@1"))
        + b'{"type":"log","callId":"c@1","message":"done"}'  # no final newline
    )
    entries = [
        ("trace.trace", trace),
        ("trace.network", b""),
        ("screencast/page@1-1.jpeg", JPEG),
        ("resources/z.html", b"<p>nothing</p>"),
        ("trace.stacks", b'{"files":[],"stacks":[]}'),
    ]
    source = make_zip(tmp_path / "source.zip", entries)
    before = source.read_bytes()
    report = scrub_trace(source, tmp_path / "out.zip", [])
    assert source.read_bytes() == before
    out = read_zip(tmp_path / "out.zip")
    assert [name for name, _ in out] == [name for name, _ in entries]
    with zipfile.ZipFile(tmp_path / "out.zip") as archive:
        assert {info.compress_type for info in archive.infolist()} == {zipfile.ZIP_DEFLATED}
    got = dict(out)["trace.trace"].split(b"\n")
    want = trace.split(b"\n")
    assert len(got) == len(want)
    assert [g == w for g, w in zip(got, want, strict=True)] == [True, True, False, True] + [
        True
    ] * 2
    assert dict(out)["trace.stacks"] == entries[4][1]
    assert report == ScrubReport(entries=5, masked=1)


def test_target_is_created_0600_whatever_the_umask(tmp_path: Path) -> None:
    source = make_zip(tmp_path / "source.zip", [("trace.trace", line(CONTEXT_OPTIONS))])
    old = os.umask(0o277)  # would leave 0400
    try:
        scrub_trace(source, tmp_path / "out.zip", [])
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "out.zip").stat().st_mode) == 0o600


def test_existing_target_is_refused_and_left_alone(tmp_path: Path) -> None:
    source = make_zip(tmp_path / "source.zip", [("trace.trace", line(CONTEXT_OPTIONS))])
    (tmp_path / "out.zip").write_bytes(b"theirs")
    with pytest.raises(BrowserMeshError) as caught:
        scrub_trace(source, tmp_path / "out.zip", [])
    assert caught.value.code is ErrorCode.INTERNAL_ERROR
    assert (tmp_path / "out.zip").read_bytes() == b"theirs"


def damaged_inputs(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    good = make_zip(tmp_path / "good.zip", [("trace.trace", trace_for("c@1", CANARY, None))])
    yield "not a zip", _write(tmp_path / "a.zip", f"PK {CANARY}".encode())
    yield "truncated", _write(tmp_path / "b.zip", good.read_bytes()[:-30])
    corrupt = bytearray(good.read_bytes())
    corrupt[40:60] = b"\x00" * 20  # inside the deflated data: a CRC or inflate error
    yield "corrupt data", _write(tmp_path / "c.zip", bytes(corrupt))
    bad_line = line(CONTEXT_OPTIONS) + f'{{"type":"log","message":"{CANARY}"'.encode() + b"\n"
    yield "trace line", make_zip(tmp_path / "d.zip", [("trace.trace", bad_line)])
    yield "network line", make_zip(tmp_path / "e.zip", [("trace.network", f"{CANARY}\n".encode())])
    not_utf8 = b'{"type":"log","message":"\xff' + CANARY.encode() + b'"}\n'
    yield "not UTF-8", make_zip(tmp_path / "f.zip", [("trace.trace", not_utf8)])
    yield "missing", tmp_path / "missing.zip"


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def test_damaged_input_is_a_browser_error_without_content(tmp_path: Path) -> None:
    for label, source in damaged_inputs(tmp_path):
        target = tmp_path / f"out-{label}.zip"
        with pytest.raises(BrowserMeshError) as caught:
            scrub_trace(source, target, [CANARY])
        error = caught.value
        assert error.code is ErrorCode.BROWSER_ERROR, label
        assert error.cause == "trace could not be read", label
        assert error.__cause__ is None and error.__context__ is None, label
        assert CANARY not in repr(error) and CANARY not in str(error.internal), label
        assert not target.exists(), label


def test_oversized_entries_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trace_scrub, "MAX_ENTRY_BYTES", 1024)
    source = make_zip(tmp_path / "bomb.zip", [("resources/zeros.dat", b"\0" * 1025)])
    with pytest.raises(BrowserMeshError) as caught:
        scrub_trace(source, tmp_path / "out.zip", [])
    assert caught.value.code is ErrorCode.BROWSER_ERROR
    assert not (tmp_path / "out.zip").exists()


def test_a_lying_size_header_is_still_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The declared size passes the check; reading stops at the bound anyway."""
    monkeypatch.setattr(trace_scrub, "MAX_ENTRY_BYTES", 1024)
    source = make_zip(tmp_path / "bomb.zip", [("resources/zeros.dat", b"\0" * 4096)])
    real_infolist = zipfile.ZipFile.infolist

    def lying(self: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
        infos = real_infolist(self)
        for info in infos:
            info.file_size = 10
        return infos

    monkeypatch.setattr(zipfile.ZipFile, "infolist", lying)
    with pytest.raises(BrowserMeshError):
        scrub_trace(source, tmp_path / "out.zip", [])


def test_a_failed_fills_error_quoting_the_value_is_masked(tmp_path: Path) -> None:
    failed = {
        "type": "after",
        "callId": "c@3",
        "endTime": 1548.0,
        "error": {"message": 'Timeout 700ms exceeded.\nCall log:\n  - fill("unproven")\n'},
    }
    trace = lines(CONTEXT_OPTIONS, fill("c@3", "unproven"), failed)
    entries, _ = scrub(tmp_path, [("trace.trace", trace)])
    error = events_of(entries["trace.trace"])[2]["error"]["message"]
    assert error == f'Timeout 700ms exceeded.\nCall log:\n  - fill("{REDACTED}")\n'


def _group(call_id: str, title: str) -> dict[str, Any]:
    return {"type": "before", "callId": call_id, "method": "tracingGroup", "title": title}


def test_groups_get_their_new_titles_in_order_and_unnamed_ones_are_skipped(
    tmp_path: Path,
) -> None:
    events = [
        {"type": "context-options", "version": 8},
        _group("g1", "browser_click ref=e1"),
        _group("g2", "a group of someone else"),
        _group("g3", "browser_snapshot"),
        _group("g4", "browser_snapshot"),
    ]
    source = make_zip(tmp_path / "source.zip", [("trace.trace", lines(*events))])
    titles = [
        ("browser_click ref=e1", "browser_click ref=e1 → ok"),
        ("browser_snapshot", "browser_snapshot → OPERATION_TIMEOUT"),
    ]
    scrub_trace(source, tmp_path / "out.zip", (), titles)
    written = [
        e.get("title") for e in events_of(dict(read_zip(tmp_path / "out.zip"))["trace.trace"])
    ]
    assert written == [
        None,
        "browser_click ref=e1 → ok",
        "a group of someone else",
        "browser_snapshot → OPERATION_TIMEOUT",
        "browser_snapshot",  # no title left for it: as written
    ]
