"""Files in and out of a page (issue 14): file inputs, file choosers, downloads and PDFs.

File content always travels through the caller (bytes in, bytes out): nothing here reads or
writes a path the caller chose. Downloads are handed to the runtime as `EngineDownload`s, which
it saves into the session's artifact store.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from browsermesh.engine import elements
from browsermesh.engine.bounded import quietly
from browsermesh.engine.failures import operation_timeout, raw_cause, timed
from browsermesh.engine.refs import RefRegistry
from browsermesh.errors import Bound, BrowserMeshError, ErrorCode, invalid_argument
from browsermesh.model.deadline import OperationContext
from browsermesh.model.locators import Target

if TYPE_CHECKING:
    from playwright.async_api import Download, Page

CHOOSER_MS = 2_000
"""How long a click on a non-file-input target may take to open a file chooser."""

_FILE_INPUT = """e => {
  const input = e.tagName === 'INPUT' ? e : (e.control || null);
  return input && input.tagName === 'INPUT' && input.type === 'file'
    ? {file: true, multiple: input.multiple} : {file: false, multiple: false};
}"""


@dataclass(frozen=True, slots=True)
class FilePayload:
    """One file to set: its name, MIME type and bytes."""

    name: str
    mime_type: str
    data: bytes

    def playwright(self) -> dict[str, Any]:
        return {"name": self.name, "mimeType": self.mime_type, "buffer": self.data}


def _too_many(count: int) -> BrowserMeshError:
    return invalid_argument(
        "files", f"one file: the input takes one ({count} given; it has no multiple attribute)"
    )


def _not_file_input(ctx: OperationContext) -> BrowserMeshError:
    return operation_timeout(
        ctx.deadline.timeout_ms,
        "no file input and no file chooser",
        reason="not_file_input",
        operation="set files",
    )


async def set_files(
    page: Page,
    registry: RefRegistry,
    target: Target,
    files: list[FilePayload],
    ctx: OperationContext,
) -> str:
    """Set `files` on the target: a file input (or a label of one) directly, even when hidden;
    anything else (a styled "Choose file" button) is clicked and the file chooser it opens is
    answered. Returns how: `input` or `chooser`. An empty list clears the selection."""
    payloads = [f.playwright() for f in files]

    async def call(el: Any, timeout_ms: float) -> str:
        kind = await el.evaluate(_FILE_INPUT)
        if kind["file"]:
            if len(files) > 1 and not kind["multiple"]:
                raise _too_many(len(files))
            await el.set_input_files(payloads, timeout=timeout_ms)
            return "input"
        try:
            async with page.expect_file_chooser(timeout=min(timeout_ms, CHOOSER_MS)) as info:
                await el.click(timeout=timeout_ms)
            chooser = await info.value
        except BrowserMeshError:
            raise
        except Exception as exc:
            raise _not_file_input(ctx) from exc
        if len(files) > 1 and not chooser.is_multiple():
            raise _too_many(len(files))
        await chooser.set_files(payloads, timeout=timeout_ms)  # type: ignore[arg-type]
        return "chooser"

    result: str = await elements.on_target(page, registry, target, ctx, "set_files", call)
    return result


@dataclass(eq=False)
class EngineDownload:
    """A download a page started; the runtime saves it (the browser deletes its own copy when
    the context closes)."""

    download: Download

    @property
    def suggested_name(self) -> str:
        return str(self.download.suggested_filename)

    @property
    def url(self) -> str:
        return str(self.download.url)

    async def save(self, path: Path) -> str | None:
        """Copy the finished download to `path`; the failure text when it failed or was
        canceled (then nothing is written)."""
        failure = await self.download.failure()
        if failure is not None:
            return str(failure)
        try:
            await self.download.save_as(path)
        except Exception as exc:
            return raw_cause(exc)
        return None

    async def cancel(self) -> None:
        """Best effort: a download already finished, or whose context is gone, has nothing
        left to cancel."""
        await quietly(self.download.cancel())


MAX_PDF_PAGES = 200


async def pdf(page: Page, ctx: OperationContext) -> bytes:
    """The page printed to PDF (Chromium prints only when headless: a headed browser answers
    BROWSER_ERROR variant `headed`)."""
    try:
        data: bytes = await timed(page.pdf(print_background=True), ctx.deadline)
    except BrowserMeshError as error:
        if "headless" in (error.cause or "").lower():
            raise BrowserMeshError(
                ErrorCode.BROWSER_ERROR, variant="headed", cause=error.cause
            ) from None
        raise
    pages = data.count(b"/Type /Page") - data.count(b"/Type /Pages")
    if pages > MAX_PDF_PAGES:
        raise BrowserMeshError(
            ErrorCode.LIMIT_EXCEEDED, bound=Bound("pdfPages", "<=", MAX_PDF_PAGES)
        )
    return data
