"""Files in and out of a session's pages (issue 14): uploads, the session's artifacts
(downloads and PDFs) listed and read through the protocol, and printing a page to PDF.

`FileTransfers` is a service on the `RuntimeCore`; the artifacts and the download saving live
in `SessionFiles` (runtime/files.py), which the core owns.
"""

from __future__ import annotations

import asyncio
from typing import Any

from browsermesh.errors import invalid_argument
from browsermesh.model.arguments import bounded_int
from browsermesh.model.deadline import OperationContext
from browsermesh.model.ids import short_id
from browsermesh.model.locators import parse_target
from browsermesh.model.recording import Upload
from browsermesh.persistence.artifacts import (
    READ_DEFAULT_BYTES,
    READ_MAX_BYTES,
)
from browsermesh.runtime.calls import PageCall
from browsermesh.runtime.core import RuntimeCore
from browsermesh.runtime.recording import Recorder, step_at, upload_files
from browsermesh.runtime.session import (
    PageRecord,
    SessionRecord,
)


class FileTransfers:
    """Uploads, downloads, artifacts and PDFs of a session."""

    def __init__(self, core: RuntimeCore, recorder: Recorder) -> None:
        self.core = core
        self.recorder = recorder
        # The engine under the name its calls have always had here (call lines unchanged).
        self.engine = core.engine

    async def file_upload(
        self,
        call: PageCall,
        args: dict[str, Any],
    ) -> tuple[str, dict[str, Any]]:
        """Set files on a file input, or answer the chooser a click on the target opens."""
        target = parse_target(args)
        rec = self.core.lookup(call.principal, call.session_id)
        payloads = self.core.files.payloads(rec.session_id, args.get("files"))

        async def job(
            rec: SessionRecord, page: PageRecord, ctx: OperationContext
        ) -> dict[str, Any]:
            replay = await self.recorder.replayable(rec, page.handle, target, ctx)
            via = await self.engine.set_files(page.handle, target, payloads, ctx)
            if replay is not None:
                upload = Upload(
                    **step_at(rec, page, ctx),
                    locator=replay.locator,
                    files=upload_files(payloads),
                    via="chooser" if via == "chooser" else "input",
                )
                self.recorder.record(rec, upload)
            files = [
                {"name": p.name, "mimeType": p.mime_type, "size": len(p.data)} for p in payloads
            ]
            return {"via": via, "files": files}

        return await self.core.run_page_op(call, "browser_file_upload", job)

    def downloads(
        self, principal: str, session_id: object, limit: object, offset: object
    ) -> tuple[str, dict[str, Any]]:
        """The session's artifacts, newest first, `limit` (1..100, default 20) from `offset`."""
        rec = self.core.lookup(principal, session_id)
        count = 20 if limit is None else bounded_int(limit, "limit", 1, 100)
        start = 0 if offset is None else bounded_int(offset, "offset", 0, 1_000_000)
        artifacts = self.core.files.store.list(rec.session_id)
        page = [a.view() for a in artifacts[start : start + count]]
        out: dict[str, Any] = {"artifacts": page, "total": len(artifacts)}
        if start + count < len(artifacts):
            out["nextOffset"] = start + count
        return short_id("o"), out

    async def artifact_read(
        self,
        principal: str,
        session_id: object,
        artifact_id: object,
        encoding: object,
        offset: object,
        max_bytes: object,
    ) -> tuple[str, dict[str, Any]]:
        """Bounded content of one artifact of this session: UTF-8 text or base64, from `offset`."""
        rec = self.core.lookup(principal, session_id)
        mode = "text" if encoding is None else encoding
        if mode not in ("text", "base64"):
            raise invalid_argument("encoding", "one of: text, base64")
        # offset <= the artifact's size is checked by the store's read
        start = 0 if offset is None else bounded_int(offset, "offset", 0, 2**53)
        size = (
            READ_DEFAULT_BYTES
            if max_bytes is None
            else bounded_int(max_bytes, "maxBytes", 1, READ_MAX_BYTES)
        )
        artifact = self.core.files.store.get(rec.session_id, artifact_id)
        read = await asyncio.to_thread(self.core.files.store.read, artifact, mode, start, size)
        return short_id("o"), read

    async def pdf(self, call: PageCall) -> tuple[str, dict[str, Any]]:
        """The page printed to PDF, kept as an artifact of the session."""

        async def job(
            rec: SessionRecord, page: PageRecord, ctx: OperationContext
        ) -> dict[str, Any]:
            data = await self.engine.pdf(page.handle, ctx)
            artifact = await asyncio.to_thread(
                self.core.files.store.put,
                rec.session_id,
                rec.principal,
                page.page_id,
                "pdf",
                "page.pdf",
                "application/pdf",
                data,
            )
            self.core.changed(rec, "artifacts")
            return {"artifact": artifact.view()}

        return await self.core.run_page_op(call, "browser_pdf", job)
