"""Files in and out (issue 14): uploads, downloads and PDFs, with content in the protocol."""

from __future__ import annotations

from typing import Any

from browsermesh.mcp.registry import Hints, ToolCall, ToolSpec
from browsermesh.mcp.schemas import (
    LOCATOR,
    REF,
    Schema,
    array,
    enum,
    integer,
    obj,
    page_address,
    session_address,
    string,
)

_FILE: Schema = {"description": "{name,contentBase64}|{artifactId}|{path}"}  # fmt: skip
_OBJECT: Schema = {"type": "object"}


async def file_upload(call: ToolCall) -> dict[str, Any]:
    op_id, data = await call.runtime.file_upload(call.page(), call.args)
    return call.page_result(op_id, **data)


async def downloads(call: ToolCall) -> dict[str, Any]:
    op_id, data = call.runtime.downloads(
        call.principal, call.session_id(), call.args.get("limit"), call.args.get("offset")
    )
    return {"operationId": op_id, "sessionId": call.args["sessionId"], **data}


async def artifact_read(call: ToolCall) -> dict[str, Any]:
    op_id, data = await call.runtime.artifact_read(
        call.principal,
        call.session_id(),
        call.args.get("artifactId"),
        call.args.get("encoding"),
        call.args.get("offset"),
        call.args.get("maxBytes"),
    )
    return {"operationId": op_id, "sessionId": call.args["sessionId"], **data}


async def pdf(call: ToolCall) -> dict[str, Any]:
    op_id, data = await call.runtime.pdf(call.page())
    return call.page_result(op_id, **data)


def specs() -> list[ToolSpec]:
    return [
        ToolSpec(
            name="browser_file_upload",
            title="Upload files",
            description=(
                "Set a file input's files (or those of the chooser a button opens); files:[] "
                "clears."
            ),
            profile="files",
            hints=Hints(idempotent=True),
            input_schema=(
                page_address({"locator": LOCATOR, "ref": REF, "files": array(_FILE)}, ("files",))
            ),
            output_schema=_OBJECT,
            handler=file_upload,
        ),
        ToolSpec(
            name="browser_downloads",
            title="List downloads",
            description="Downloads and PDFs, newest first.",
            profile="files",
            hints=Hints(read_only=True, idempotent=True),
            input_schema=session_address({"limit": integer(1, 100), "offset": integer(0)}),
            output_schema=_OBJECT,
            handler=downloads,
        ),
        ToolSpec(
            name="browser_artifact_read",
            title="Read artifact",
            description="Artifact content, text or base64; more from nextOffset.",
            profile="files",
            hints=Hints(read_only=True, idempotent=True),
            input_schema=(
                obj(
                    {
                        "sessionId": string(),
                        "artifactId": string(),
                        "encoding": enum("text", "base64"),
                        "offset": integer(0),
                        "maxBytes": integer(1, 1_048_576),
                    },
                    ["sessionId", "artifactId"],
                )
            ),
            output_schema=_OBJECT,
            handler=artifact_read,
        ),
        ToolSpec(
            name="browser_pdf",
            title="Save page as PDF",
            description="Page to PDF (headless).",
            profile="files",
            hints=Hints(read_only=True),
            input_schema=page_address(),
            output_schema=_OBJECT,
            handler=pdf,
        ),
    ]
