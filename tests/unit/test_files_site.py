"""Smoke tests of the upload/download fixture site itself, over plain urllib (no browser)."""

from __future__ import annotations

import hashlib
import os
import urllib.error
import urllib.request
from email.message import Message

import pytest

from tests.fixtures.files_site import (
    ATTACHMENT_BYTES,
    EXPORT_CSV,
    REPORT_TXT,
    FilesSite,
    ReceivedFile,
    large_file_sha256,
)

_BOUNDARY = "----BrowserMeshSmoke7MA4YWxkTrZu0gW"


def _multipart(parts: list[tuple[str, str | None, str, bytes]]) -> bytes:
    """A multipart/form-data body of (field, filename or None, content type, data) parts."""
    chunks: list[bytes] = []
    for field, filename, content_type, data in parts:
        disposition = f'form-data; name="{field}"'
        if filename is not None:
            disposition += f'; filename="{filename}"'
        head = f"--{_BOUNDARY}\r\nContent-Disposition: {disposition}\r\n"
        if filename is not None:
            head += f"Content-Type: {content_type}\r\n"
        chunks.append(head.encode("utf-8") + b"\r\n" + data + b"\r\n")
    chunks.append(f"--{_BOUNDARY}--\r\n".encode())
    return b"".join(chunks)


def _post(url: str, body: bytes, content_type: str) -> tuple[int, Message, bytes]:
    request = urllib.request.Request(
        url, data=body, method="POST", headers={"Content-Type": content_type}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status, response.headers, response.read()


def _get(url: str) -> tuple[int, Message, bytes]:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.status, response.headers, response.read()


def test_multipart_upload_is_received_byte_exact(files_site: FilesSite) -> None:
    files_site.clear()
    binary = os.urandom(20_000) + b"\r\n--" + _BOUNDARY[:10].encode() + b"\r\n\r\n"
    text = "naïve line\r\nsecond\n".encode()
    body = _multipart(
        [
            ("single", "a.txt", "text/plain", text),
            ("note", None, "", b"hello"),
            ("many", "photo.png", "image/png", binary),
            ("many", "", "application/octet-stream", b""),  # an empty file input
        ]
    )
    status, _, page = _post(
        files_site.url("/upload"), body, f"multipart/form-data; boundary={_BOUNDARY}"
    )
    assert status == 200
    assert b"<title>Uploaded</title>" in page
    assert f"single: a.txt ({len(text)} bytes)".encode() in page
    assert f"many: photo.png ({len(binary)} bytes)".encode() in page
    assert files_site.received == [
        ReceivedFile("single", "a.txt", "text/plain", text),
        ReceivedFile("note", "", "text/plain", b"hello"),
        ReceivedFile("many", "photo.png", "image/png", binary),
    ]
    assert [f.filename for f in files_site.received_files] == ["a.txt", "photo.png"]
    files_site.clear()
    assert files_site.received == []


def test_upload_rejects_a_non_multipart_body(files_site: FilesSite) -> None:
    with pytest.raises(urllib.error.HTTPError) as caught:
        _post(files_site.url("/upload"), b"a=1", "application/x-www-form-urlencoded")
    assert caught.value.code == 415


def test_export_answers_a_csv_attachment(files_site: FilesSite) -> None:
    status, headers, body = _post(
        files_site.url("/export"), b"format=csv", "application/x-www-form-urlencoded"
    )
    assert status == 200
    assert headers["Content-Type"].startswith("text/csv")
    assert headers["Content-Disposition"] == 'attachment; filename="export.csv"'
    assert body == EXPORT_CSV


def test_report_and_attachment(files_site: FilesSite) -> None:
    status, headers, body = _get(files_site.url("/files/report.txt"))
    assert (status, body) == (200, REPORT_TXT)
    assert headers["Content-Type"].startswith("text/plain")
    assert headers["Content-Disposition"] is None

    status, headers, body = _get(files_site.url("/files/attachment"))
    assert (status, body) == (200, ATTACHMENT_BYTES)
    assert headers["Content-Disposition"] == 'attachment; filename="../../etc/passwd"'


def test_large_file_is_streamed_at_the_requested_size(files_site: FilesSite) -> None:
    status, headers, body = _get(files_site.url("/files/large?mb=1"))
    assert status == 200
    assert len(body) == 1024 * 1024
    assert headers["Content-Length"] == str(1024 * 1024)
    assert headers["Content-Type"] == "application/octet-stream"
    assert headers["Content-Disposition"].startswith("attachment")
    assert hashlib.sha256(body).hexdigest() == large_file_sha256(1)
    with pytest.raises(urllib.error.HTTPError) as caught:
        _get(files_site.url("/files/large?mb=x"))
    assert caught.value.code == 400


@pytest.mark.parametrize(
    ("path", "title", "needles"),
    [
        ("/upload", "Upload", ['id="single"', 'id="many"', 'enctype="multipart/form-data"']),
        ("/styled-upload", "Styled upload", ['id="choose"', 'id="hidden-input"']),
        ("/chooser", "Chooser", ["Pick a file", "createElement('input')"]),
        ("/exports", "Exports", ["Export CSV", "Download report", "Blob download", "Large file"]),
        ("/pdf-page", "Invoice 42", ["<h1>Invoice 42</h1>"]),
    ],
)
def test_pages_are_titled(files_site: FilesSite, path: str, title: str, needles: list[str]) -> None:
    status, headers, body = _get(files_site.url(path))
    page = body.decode("utf-8")
    assert status == 200
    assert headers["Cache-Control"] == "no-store"
    assert f"<title>{title}</title>" in page
    for needle in needles:
        assert needle in page


def test_unknown_path_and_wrong_method(files_site: FilesSite) -> None:
    with pytest.raises(urllib.error.HTTPError) as caught:
        _get(files_site.url("/nope"))
    assert caught.value.code == 404
    with pytest.raises(urllib.error.HTTPError) as caught:
        _get(files_site.url("/export"))
    assert caught.value.code == 405
