"""Files in and out of a page (issue 14): file inputs, file choosers, downloads and PDFs.

File content always travels through the caller (bytes in, bytes out): nothing here reads or
writes a path the caller chose. Downloads are handed to the runtime as `EngineDownload`s, which
it saves into the session's artifact store.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from browsermesh.engine import elements
from browsermesh.engine.bounded import quietly
from browsermesh.engine.failures import not_actionable, raw_cause, timed
from browsermesh.engine.refs import RefRegistry
from browsermesh.errors import Bound, BrowserMeshError, ErrorCode, invalid_argument
from browsermesh.model.deadline import OperationContext
from browsermesh.model.element_ops import OTHER_OPERATIONS
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


def _not_file_input() -> BrowserMeshError:
    """ELEMENT_NOT_ACTIONABLE `not_file_input`: no file input, and no file chooser opened."""
    return not_actionable(
        "not_file_input",
        "no file input and no file chooser",
        operation=OTHER_OPERATIONS["set_files"],
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
            raise _not_file_input() from exc
        if len(files) > 1 and not chooser.is_multiple():
            raise _too_many(len(files))
        await chooser.set_files(payloads, timeout=timeout_ms)  # type: ignore[arg-type]
        return "chooser"

    result: str = await elements.on_target(page, registry, target, ctx, "set_files", call)
    return result


DOWNLOAD_CHUNK_BYTES = 1_048_576
"""What one read of Playwright's artifact stream returns at most: a download saved by copy
writes at most this much past the bytes it was allowed."""
_IN_PROGRESS_SUFFIX = ".crdownload"  # Chromium's name for a download it is still writing


@dataclass(frozen=True, slots=True)
class SaveOutcome:
    """How a finished download was saved: its `size`; or `over` (larger than allowed, nothing
    kept); or the `failure` text (nothing kept)."""

    size: int = 0
    over: bool = False
    failure: str | None = None


@dataclass(eq=False)
class EngineDownload:
    """A download a page started; the runtime watches it while it streams, then saves it and
    deletes the browser's own copy (`discard`)."""

    download: Download

    @property
    def suggested_name(self) -> str:
        return str(self.download.suggested_filename)

    @property
    def url(self) -> str:
        return str(self.download.url)

    def _local_path(self) -> str | None:
        """Where the browser writes this download, when that is on this machine.

        Playwright 1.65 reports no progress before a download ends, and Chromium's CDP progress
        events come about every 500 ms (some 250 MB apart on loopback), too late for a quota. The
        artifact's `absolutePath` (Playwright's own initializer field, set when the download
        begins) names the file Chromium writes, first as ``<path>.crdownload`` and, once done,
        ``<path>``; its size is the bytes on disk right now. Over a remote connection the path
        is on the other machine: None."""
        impl: Any = getattr(self.download, "_impl_obj", self.download)
        try:
            artifact = impl._artifact
            if artifact._connection.is_remote():
                return None
            path = artifact._initializer["absolutePath"]
        except (AttributeError, KeyError, TypeError):
            return None
        return path if isinstance(path, str) and os.path.isabs(path) else None

    def written(self) -> int:
        """The bytes of the browser's copy on this machine so far (0 when none is seen: not
        begun yet, or a browser on another machine, whose disk is not ours)."""
        path = self._local_path()
        if path is None:
            return 0
        for candidate in (path + _IN_PROGRESS_SUFFIX, path):
            try:
                return os.stat(candidate).st_size
            except OSError:
                continue
        return 0

    async def finished(self) -> str | None:
        """Wait until the download ends: None when it completed, else the failure text."""
        try:
            failure = await self.download.failure()
        except Exception as exc:  # its page or context went away first
            return raw_cause(exc)
        return None if failure is None else str(failure)

    async def save(self, path: Path, max_bytes: int) -> SaveOutcome:
        """Put the finished download at `path` (created, mode 0600), at most `max_bytes`.

        The browser's copy on this file system is hard-linked (no second copy on disk; `discard`
        then removes the browser's name); otherwise it is streamed from Playwright in chunks, so
        at most `max_bytes` plus one chunk is ever written before an oversized one is dropped."""
        local = self._local_path()
        if local is not None:
            try:
                size = os.stat(local).st_size
            except OSError:
                size = -1
            if size > max_bytes:
                return SaveOutcome(over=True)
            if size >= 0:
                try:
                    os.link(local, path, follow_symlinks=False)
                    return SaveOutcome(size=size)
                except OSError:
                    pass  # another file system (EXDEV) or no hard links: copy it
        try:
            return await self._copy(path, max_bytes)
        except Exception as exc:
            with contextlib.suppress(OSError):
                os.unlink(path)
            return SaveOutcome(failure=raw_cause(exc))

    async def _copy(self, path: Path, max_bytes: int) -> SaveOutcome:
        impl: Any = getattr(self.download, "_impl_obj", self.download)
        # Download has no public stream in Python; its artifact's is the one save_as uses.
        stream = await impl._artifact.create_read_stream()
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0), 0o600)
        size = 0
        try:
            async for chunk in stream:
                size += len(chunk)
                if size > max_bytes:
                    break
                await asyncio.to_thread(_write_all, fd, chunk)
        finally:
            os.close(fd)
        if size > max_bytes:
            os.unlink(path)
            return SaveOutcome(over=True)
        return SaveOutcome(size=size)

    async def cancel(self) -> None:
        """Best effort: a download already finished, or whose context is gone, has nothing
        left to cancel."""
        await quietly(self.download.cancel())

    async def discard(self) -> None:
        """Delete the browser's copy now rather than when the context closes (best effort)."""
        await quietly(self.download.delete())


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


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
