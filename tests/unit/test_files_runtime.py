"""Upload payload rules and the headed-PDF error, without a browser (issue 14)."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from browsermesh.engine import files
from browsermesh.errors import BrowserMeshError, ErrorCode, error_payload
from browsermesh.log import EventLog
from browsermesh.model.deadline import Deadline, OperationContext
from browsermesh.persistence.artifacts import ArtifactStore
from browsermesh.runtime.files import MAX_UPLOAD_FILE_BYTES, MAX_UPLOAD_FILES, SessionFiles


def session_files(tmp_path: Path) -> SessionFiles:
    return SessionFiles(ArtifactStore(tmp_path / "artifacts"), EventLog("silent"), None)


def refusal(tmp_path: Path, raw: object) -> dict[str, Any]:
    with pytest.raises(BrowserMeshError) as caught:
        session_files(tmp_path).payloads("session_a", raw)
    assert caught.value.code is ErrorCode.INVALID_ARGUMENT
    details: dict[str, Any] = error_payload(caught.value)["error"]["details"]
    return details


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ("not a list", "files"),
        ([{"name": "a", "contentBase64": b64(b"a")}] * (MAX_UPLOAD_FILES + 1), "files"),
        ([{"contentBase64": b64(b"a")}], "files[0].name"),
        ([{"name": "a", "contentBase64": "a b"}], "files[0].contentBase64"),
        ([{"name": "a", "contentBase64": b64(b"a"), "artifactId": "x"}], "files[0]"),
        ([{"name": "a", "contentBase64": b64(b"a"), "extra": 1}], "files[0]"),
        ([{"name": "a", "contentBase64": b64(b"a"), "mimeType": "plain"}], "files[0].mimeType"),
        ([{"path": "a.txt"}], "files[0].path"),
        ([{"artifactId": "artifact_0000000000000000"}], "files[0].artifactId"),
        (
            [{"name": "big", "contentBase64": b64(b"x" * (MAX_UPLOAD_FILE_BYTES + 1))}],
            "files[0]",
        ),
    ],
)
def test_upload_refusals_name_the_field(tmp_path: Path, raw: object, field: str) -> None:
    details = refusal(tmp_path, raw)
    assert details["field"] == field and details["rule"]


def test_payloads_sanitize_names_and_guess_types(tmp_path: Path) -> None:
    (payload,) = session_files(tmp_path).payloads(
        "session_a", [{"name": "../../x/report.csv", "contentBase64": b64(b"a,b")}]
    )
    assert (payload.name, payload.mime_type, payload.data) == ("report.csv", "text/csv", b"a,b")


class HeadedPage:
    async def pdf(self, **_: Any) -> bytes:
        raise RuntimeError("Error: PDF generation is only supported for Headless Chrome")


async def _pdf() -> BrowserMeshError:
    ctx = OperationContext("operation_x", Deadline(1000))
    with pytest.raises(BrowserMeshError) as caught:
        await files.pdf(HeadedPage(), ctx)  # type: ignore[arg-type]
    return caught.value


@pytest.mark.anyio
async def test_pdf_in_headed_mode_is_a_clear_error() -> None:
    err = await _pdf()
    payload = error_payload(err)["error"]
    assert payload["code"] == "BROWSER_ERROR"
    assert "headless" in payload["message"] and "--headless" in payload["nextStep"]
