"""Files in and out through the MCP client on real Chromium (issue 14): uploads verified by the
fixture server receiving the exact bytes, downloads read back through the protocol, PDFs, quotas,
isolation and clean-up."""

from __future__ import annotations

import base64
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from browsermesh.log import EventLog
from tests.fixtures.files_site import ATTACHMENT_BYTES, BLOB_CSV, EXPORT_CSV, REPORT_TXT, FilesSite
from tests.support.clients import ToolClient, open_page, tool_client
from tests.support.eventually import eventually
from tests.support.locators import css, role
from tests.support.runtimes import real_runtime

pytestmark = pytest.mark.anyio


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


async def picked(c: ToolClient, addr: dict[str, str]) -> str:
    return str((await c.ok("browser_visible_text", {**addr, "locator": css("#picked")}))["text"])


async def submit(c: ToolClient, addr: dict[str, str]) -> None:
    await c.ok(
        "browser_action_and_wait",
        {
            **addr,
            "action": {"kind": "click", "target": role("button", "Send")},
            "wait": {"kind": "navigation"},
        },
    )


async def completed(c: ToolClient, session_id: str, count: int) -> list[dict[str, Any]]:
    """The session's artifacts once `count` of them are completed (downloads finish after the
    click that started them answered)."""

    async def done() -> list[dict[str, Any]]:
        listed = await c.ok("browser_downloads", {"sessionId": session_id})
        finished = [a for a in listed["artifacts"] if a["state"] == "completed"]
        return finished if len(finished) >= count else []

    # Downloads complete in the background: poll their state.
    return await eventually(done, 20, f"{count} completed artifacts")


async def read_all(c: ToolClient, session_id: str, artifact_id: str, encoding: str) -> bytes:
    out = b""
    offset = 0
    while True:
        data = await c.ok(
            "browser_artifact_read",
            {"sessionId": session_id, "artifactId": artifact_id, "encoding": encoding,
             "offset": offset, "maxBytes": 1000},
        )  # fmt: skip
        chunk = (
            base64.b64decode(data["content"]) if encoding == "base64" else data["content"].encode()
        )
        out += chunk
        if not data["truncated"]:
            return out
        offset = data["nextOffset"]


async def test_upload_single_and_multiple_files_reach_the_server_exactly(
    client: ToolClient, files_site: FilesSite
) -> None:
    files_site.clear()
    addr = await open_page(client, files_site.url("/upload"))
    note = b"line 1\r\nline 2 \x00\xff"
    result = await client.ok(
        "browser_file_upload",
        {**addr, "locator": {"strategy": "label", "value": "Attachment"},
         "files": [{"name": "note.txt", "contentBase64": b64(note)}]},
    )  # fmt: skip
    assert result["via"] == "input"
    assert result["files"] == [{"name": "note.txt", "mimeType": "text/plain", "size": len(note)}]
    photos = [{"name": f"p{i}.png", "contentBase64": b64(bytes([i]) * (i + 1))} for i in range(3)]
    await client.ok("browser_file_upload", {**addr, "locator": css("#many"), "files": photos})
    assert "p0.png (1 B), p1.png (2 B), p2.png (3 B)" in await picked(client, addr)
    # files: [] clears a selection.
    await client.ok(
        "browser_file_upload",
        {**addr, "locator": css("#many"), "files": [{"name": "x.png", "contentBase64": b64(b"x")}]},
    )
    cleared = await client.ok("browser_file_upload", {**addr, "locator": css("#many"), "files": []})
    assert "files" not in cleared  # none left (an empty list is left out)
    count = await client.ok("browser_evaluate", {**addr, "expression": "many.files.length"})
    assert count["result"] == 0
    await client.ok("browser_file_upload", {**addr, "locator": css("#many"), "files": photos})
    await submit(client, addr)
    received = {(f.field, f.filename): f.data for f in files_site.received_files}
    assert received[("single", "note.txt")] == note
    assert [received[("many", f"p{i}.png")] for i in range(3)] == [
        b"\x00",
        b"\x01\x01",
        b"\x02" * 3,
    ]


async def test_single_input_refuses_several_files_and_bad_base64_names_the_field(
    client: ToolClient, files_site: FilesSite
) -> None:
    addr = await open_page(client, files_site.url("/upload"))
    two = [
        {"name": "a.txt", "contentBase64": b64(b"a")},
        {"name": "b.txt", "contentBase64": b64(b"b")},
    ]
    err = await client.err("browser_file_upload", {**addr, "locator": css("#single"), "files": two})
    assert err["code"] == "INVALID_ARGUMENT" and err["details"]["field"] == "files"
    err = await client.err(
        "browser_file_upload",
        {**addr, "locator": css("#single"), "files": [{"name": "a", "contentBase64": "@@not"}]},
    )
    assert err["details"]["field"] == "files[0].contentBase64"
    err = await client.err(
        "browser_file_upload",
        {**addr, "locator": css("#single"), "files": [{"path": "/etc/passwd"}]},
    )
    assert err["details"]["field"] == "files[0].path"
    err = await client.err(
        "browser_file_upload",
        {**addr, "locator": css("#single"), "files": [{"artifactId": "a0zzz"}]},
    )
    assert err["details"]["field"] == "files[0].artifactId"


async def test_styled_button_and_file_chooser_are_answered(
    client: ToolClient, files_site: FilesSite
) -> None:
    files_site.clear()
    addr = await open_page(client, files_site.url("/styled-upload"))
    result = await client.ok(
        "browser_file_upload",
        {**addr, "locator": role("button", "Choose file"),
         "files": [{"name": "d.txt", "contentBase64": b64(b"doc!")}]},
    )  # fmt: skip
    assert result["via"] == "chooser"
    assert "d.txt (4 B)" in await picked(client, addr)
    await submit(client, addr)
    assert [(f.field, f.data) for f in files_site.received_files] == [("doc", b"doc!")]
    addr = await open_page(client, files_site.url("/chooser"))
    result = await client.ok(
        "browser_file_upload",
        {**addr, "locator": role("button", "Pick a file"),
         "files": [{"name": "c.bin", "contentBase64": b64(b"\x01\x02")}]},
    )  # fmt: skip
    assert result["via"] == "chooser" and "c.bin (2 B)" in await picked(client, addr)


async def test_not_a_file_input_says_so(client: ToolClient, files_site: FilesSite) -> None:
    addr = await open_page(client, files_site.url("/upload"))
    err = await client.err(
        "browser_file_upload",
        {**addr, "locator": css("#picked"),
         "files": [{"name": "a.txt", "contentBase64": b64(b"a")}], "timeoutMs": 5000},
    )  # fmt: skip
    assert err["details"]["reason"] == "not_file_input"
    # A label of a file input is the input, as a person points at it.
    via = await client.ok(
        "browser_file_upload",
        {**addr, "locator": {"strategy": "text", "value": "Attachment"},
         "files": [{"name": "a.txt", "contentBase64": b64(b"a")}]},
    )  # fmt: skip
    assert via["via"] == "input"
    assert "file chooser" in err["nextStep"]


async def test_downloads_become_artifacts_read_through_the_protocol(
    client: ToolClient, files_site: FilesSite
) -> None:
    addr = await open_page(client, files_site.url("/exports"))
    sid = addr["sessionId"]
    await client.ok("browser_click", {**addr, "locator": role("button", "Export CSV")})
    await client.ok("browser_click", {**addr, "locator": role("link", "Download report")})
    await client.ok("browser_click", {**addr, "locator": role("link", "Get attachment")})
    await client.ok("browser_click", {**addr, "locator": role("button", "Blob download")})
    done = await completed(client, sid, 4)
    by_name = {a["name"]: a for a in done}
    assert set(by_name) >= {"export.csv", "report.txt", "blob.csv"}
    traversal = [a for a in done if a["name"] not in ("export.csv", "report.txt", "blob.csv")]
    assert (
        len(traversal) == 1
        and "/" not in traversal[0]["name"]
        and ".." not in traversal[0]["name"][:2]
    )
    assert await read_all(client, sid, by_name["export.csv"]["artifactId"], "text") == EXPORT_CSV
    assert await read_all(client, sid, by_name["report.txt"]["artifactId"], "text") == REPORT_TXT
    assert await read_all(client, sid, by_name["blob.csv"]["artifactId"], "base64") == BLOB_CSV
    binary = await read_all(client, sid, traversal[0]["artifactId"], "base64")
    assert binary == ATTACHMENT_BYTES
    assert by_name["export.csv"]["pageId"] == addr["pageId"]
    network = await client.ok("browser_observe", {**addr, "source": "network"})
    exports = [e for e in network.get("events", []) if e.get("url", "").endswith("/export")]
    assert exports and exports[-1].get("status") == 200, network.get("events", [])
    assert by_name["export.csv"]["sourceUrl"].endswith("/export")
    session = await client.ok("browser_session_get", {"sessionId": sid})
    assert session["session"]["artifacts"]["count"] == 4
    # Round trip: the downloaded CSV is uploaded again from its artifact.
    files_site.clear()
    await client.ok("browser_navigate", {**addr, "url": files_site.url("/upload")})
    await client.ok(
        "browser_file_upload",
        {**addr, "locator": css("#single"),
         "files": [{"artifactId": by_name["export.csv"]["artifactId"]}]},
    )  # fmt: skip
    await submit(client, addr)
    assert [(f.filename, f.data) for f in files_site.received_files] == [("export.csv", EXPORT_CSV)]


async def test_artifacts_are_private_files_and_die_with_their_session(
    tmp_path: Path, files_site: FilesSite
) -> None:
    async with (
        real_runtime(tmp_path, EventLog("silent"), max_artifact_session_bytes=1_048_576) as runtime,
        tool_client(runtime) as c,
    ):
        addr = await open_page(c, files_site.url("/exports"))
        other = await open_page(c, files_site.url("/exports"))
        sid = addr["sessionId"]
        await c.ok("browser_click", {**addr, "locator": role("link", "Download report")})
        (report,) = await completed(c, sid, 1)
        # Another session cannot see or read it.
        none = await c.ok("browser_downloads", {"sessionId": other["sessionId"]})
        assert "artifacts" not in none  # an empty list is left out
        err = await c.err(
            "browser_artifact_read",
            {"sessionId": other["sessionId"], "artifactId": report["artifactId"]},
        )
        assert err["code"] == "INVALID_ARGUMENT" and err["details"]["field"] == "artifactId"
        root = tmp_path / "data" / "artifacts"
        files = [p for p in root.rglob("*") if p.is_file()]
        dirs = [p for p in root.rglob("*") if p.is_dir()]
        assert files and all(stat.S_IMODE(os.stat(p).st_mode) == 0o600 for p in files)
        assert dirs and all(stat.S_IMODE(os.stat(p).st_mode) == 0o700 for p in dirs)
        # A download over the session quota is refused; the session still works.
        await c.ok(
            "browser_evaluate", {**addr, "expression": "location.href = '/files/large?mb=2'"}
        )

        async def refused() -> list[dict[str, Any]]:
            listed = (await c.ok("browser_downloads", {"sessionId": sid}))["artifacts"]
            return listed if any(a["state"] == "failed" for a in listed) else []

        listed = await eventually(refused, 30, "the download over the quota failed")
        states = sorted(a["state"] for a in listed)
        assert states == ["completed", "failed"], listed
        await c.ok("browser_get_url", addr)
        # PDF of a page.
        await c.ok("browser_navigate", {**addr, "url": files_site.url("/pdf-page")})
        printed = await c.ok("browser_pdf", addr)
        pdf = await read_all(c, sid, printed["artifact"]["artifactId"], "base64")
        assert pdf.startswith(b"%PDF-")
        await c.ok("browser_session_close", {"sessionId": sid})
        assert not [p for p in root.rglob("*") if p.is_file() and sid in str(p)]
        left = [p for p in root.rglob("*") if p.is_file()]
        assert left == []  # the other session had none


async def test_remote_client_over_http_uploads_and_reads_a_download(
    tmp_path: Path, files_site: FilesSite
) -> None:
    """No shared file system: bytes go up in the call and come back in results; another
    principal cannot read the artifact even with its id."""
    from tests.support.http_transport import TOKENS, connect, http_server

    files_site.clear()
    async with (
        http_server(tmp_path, tokens=True) as srv,
        connect(srv.url, "auto", TOKENS["alice"]) as alice,
        connect(srv.url, "legacy", TOKENS["bob"]) as bob,
    ):
        addr = await open_page(alice, files_site.url("/upload"))
        await alice.ok(
            "browser_file_upload",
            {**addr, "locator": css("#single"),
             "files": [{"name": "remote.txt", "contentBase64": b64(b"from afar")}]},
        )  # fmt: skip
        await submit(alice, addr)
        assert [(f.filename, f.data) for f in files_site.received_files] == [
            ("remote.txt", b"from afar")
        ]
        await alice.ok("browser_navigate", {**addr, "url": files_site.url("/exports")})
        await alice.ok("browser_click", {**addr, "locator": role("button", "Export CSV")})
        (export,) = await completed(alice, addr["sessionId"], 1)
        assert await read_all(alice, addr["sessionId"], export["artifactId"], "text") == EXPORT_CSV
        bob_s, _ = await bob.session()
        err = await bob.err(
            "browser_artifact_read", {"sessionId": bob_s, "artifactId": export["artifactId"]}
        )
        assert err["code"] == "INVALID_ARGUMENT"
        err = await bob.err(
            "browser_artifact_read",
            {"sessionId": addr["sessionId"], "artifactId": export["artifactId"]},
        )
        assert err["code"] == "SESSION_NOT_FOUND"


async def test_action_and_wait_for_a_download_and_a_file_chooser(
    client: ToolClient, files_site: FilesSite
) -> None:
    addr = await open_page(client, files_site.url("/exports"))
    result = await client.ok(
        "browser_action_and_wait",
        {**addr, "action": {"kind": "click", "target": role("button", "Export CSV")},
         "wait": {"kind": "download"}},
    )  # fmt: skip
    artifact = result["event"]["artifact"]
    assert result["event"]["kind"] == "download" and artifact["state"] == "completed"
    assert await read_all(client, addr["sessionId"], artifact["artifactId"], "text") == EXPORT_CSV
    await client.ok("browser_navigate", {**addr, "url": files_site.url("/chooser")})
    result = await client.ok(
        "browser_action_and_wait",
        {**addr, "action": {"kind": "click", "target": role("button", "Pick a file")},
         "wait": {"kind": "fileChooser",
                  "files": [{"name": "c.bin", "contentBase64": b64(b"\x01\x02")}]}},
    )  # fmt: skip
    assert result["event"] == {"kind": "fileChooser", "files": 1}
    assert "c.bin (2 B)" in await picked(client, addr)
    err = await client.err(
        "browser_action_and_wait",
        {**addr, "action": {"kind": "click", "target": role("button", "Pick a file")},
         "wait": {"kind": "fileChooser", "files": [{"name": "x", "contentBase64": "!"}]}},
    )  # fmt: skip
    assert err["details"]["field"] == "wait.files[0].contentBase64"


async def test_upload_root_serves_files_inside_it_only(
    tmp_path: Path, files_site: FilesSite
) -> None:
    root = tmp_path / "uploads"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "inside.txt").write_bytes(b"inside")
    (tmp_path / "outside.txt").write_bytes(b"outside")
    (root / "link.txt").symlink_to(tmp_path / "outside.txt")
    os.link(tmp_path / "outside.txt", root / "hard.txt")  # issue 30: the same inode as outside
    async with (
        real_runtime(tmp_path, EventLog("silent"), upload_root=root) as runtime,
        tool_client(runtime) as c,
    ):
        files_site.clear()
        addr = await open_page(c, files_site.url("/upload"))
        bad_paths = (
            "../outside.txt",
            "link.txt",
            str(tmp_path / "outside.txt"),
            "sub",
            "hard.txt",
            "sub/../../outside.txt",
            "n" * 300,  # a component the OS refuses (ENAMETOOLONG), not an internal error
            "sub/" + "n" * 4000,
        )
        for bad in bad_paths:
            err = await c.err(
                "browser_file_upload",
                {**addr, "locator": css("#single"), "files": [{"path": bad}]},
            )
            assert err["code"] == "INVALID_ARGUMENT", (bad[:20], err)
            assert err["details"]["field"] == "files[0].path", bad[:20]
            assert str(tmp_path) not in str(err)
        await c.ok(
            "browser_file_upload",
            {**addr, "locator": css("#single"), "files": [{"path": "sub/inside.txt"}]},
        )
        await submit(c, addr)
        assert [(f.filename, f.data) for f in files_site.received_files] == [
            ("inside.txt", b"inside")
        ]
        info = await c.ok("browser_runtime_info")
        assert info["uploadRootEnabled"] is True and str(root) not in str(info)


async def test_start_up_removes_what_a_killed_server_left(tmp_path: Path) -> None:
    """No session survives a restart: half-written and complete files of an earlier process
    are gone before the first call, and nothing is listed."""
    leftover = tmp_path / "data" / "artifacts" / ("0" * 32)
    leftover.mkdir(parents=True)
    (leftover / "artifact_0123456789abcdef.part").write_bytes(b"half")
    (leftover / "artifact_fedcba9876543210").write_bytes(b"whole")
    async with real_runtime(tmp_path, EventLog("silent")):
        assert not [p for p in (tmp_path / "data" / "artifacts").rglob("*") if p.is_file()]
