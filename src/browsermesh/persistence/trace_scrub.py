"""Removes secrets from a saved Playwright trace zip before it is kept (`scrub_trace`).

A trace (`context.tracing.stop(path=...)`, Playwright 1.65) is a zip of JSON-lines entries
(`*.trace`: the context options, the action log, console messages, DOM snapshots; `*.network`:
HAR-like `resource-snapshot` entries; `*.stacks`) and `resources/` / `screencast/` files (bodies,
JPEG frames). Password values show up in many of them; this module writes a copy without them:

1. Snapshots and typing calls (`*.trace`). In `frame-snapshot` events every INPUT whose `type`
   is `password` (any case) gets its `value` and `__playwright_value_` attributes replaced by
   `[REDACTED]`; their values become secrets. A typing call (`before` event of `fill`, `type` --
   also what `pressSequentially` sends -- `keyboardType`, `keyboardInsertText`) has its
   `params.value` / `params.text` masked, and the value where that call's `log` lines and
   `after` event (an error's call log) quote it, unless
   its target is *proven* not a password: Playwright 1.65 marks the element a call acts on with
   `__playwright_target__=""` in that call's own snapshots (older versions wrote the call id as
   the value); subtree back-references (`[[n, m]]`) are resolved the way the trace viewer does.
   The conservative rule: a typed value is kept only when a snapshot of the call shows its
   target and no target is a password input. Without snapshots (tracing started with
   `snapshots=False`), or for keyboard calls (they act on whatever holds focus, and a marker
   they show may be left over from an earlier call), the value is masked. Values typed into a
   proven password input become secrets; values masked only for lack of proof do not (a search
   term must not be blanked out of the whole trace).
2. Credentials in events (`context-options` and every other non-snapshot event of `*.trace`
   and `*.network`): `httpCredentials.password`, `proxy.username`/`password`, the values of
   `Authorization`, `Cookie`, `Set-Cookie` and `Proxy-Authorization` in any `headers` /
   `extraHTTPHeaders` (list of `{name, value}` or mapping), every `value` of a `cookies` list
   (HAR request/response cookies, `addCookies` parameters, `cookies()` results), and the
   password of a `url` / `baseURL` with user info. 1.65 writes only `baseURL`, `viewport`,
   `deviceScaleFactor`, `isMobile` and `userAgent` into `context-options`; the other fields are
   handled for traces of other versions. Credential passwords become secrets; header and cookie
   values do not (a cookie value such as `1` would wreck the trace).
3. Every known secret (the caller's, plus those found above when at least `MIN_FOUND_CHARS`
   long) is replaced in every entry, in its raw, JSON-escaped, URL-encoded (`quote`,
   `quote_plus`, the browser's form encoding -- `*` kept, `~` escaped, as in a real POST body --
   and `encodeURIComponent`) and HTML-escaped forms, longest first in one pass. In JSON-lines
   entries the replacement happens inside the parsed strings, so every line stays valid JSON;
   other entries are searched as UTF-8 text, or as bytes when they do not decode (a body in
   another encoding still shows an ASCII secret), except images (JPEG/PNG/GIF/WebP), which are
   copied unchanged. Not searched: base64, compressed or otherwise re-encoded forms, and
   numbers in JSON (a numeric secret equal to a timestamp is not a leak of it).

Lines are rewritten (`json.dumps(..., ensure_ascii=False, separators=(",", ":"))`) only when
something in them changed; every other byte of a line, and every entry name and position, is
kept. Anything unreadable (a damaged zip, an encrypted entry, a line that is not JSON, an entry
over `MAX_ENTRY_BYTES`) is `BrowserMeshError(BROWSER_ERROR)` with a fixed cause; no secret or
content ever reaches an exception or a log. Called from a worker thread; pure apart from the
file it creates.

Size: one pipeline over one file format. The passes depend on each other (the snapshot
analysis decides what the action log masks, and what both find feeds the replacement in every
other entry), so they are kept together rather than spread over modules sharing private shapes.
"""

from __future__ import annotations

import html
import json
import os
import re
import zipfile
import zlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final
from urllib.parse import quote, quote_plus, urlsplit, urlunsplit

from browsermesh.errors import BrowserMeshError, ErrorCode

__all__ = [
    "MAX_ENTRY_BYTES",
    "MIN_FOUND_CHARS",
    "REDACTED",
    "ScrubReport",
    "scrub_trace",
    "secret_forms",
]

REDACTED: Final = "[REDACTED]"
MAX_ENTRY_BYTES: Final = 256 * 1024 * 1024
"""An entry larger than this, uncompressed, is refused (a zip bomb must not fill the memory)."""
MIN_FOUND_CHARS: Final = 4
"""Found values shorter than this are masked where they stand but not searched for elsewhere:
one typed character replaced across the trace would destroy it and protect nothing."""

_JSON_LINES_SUFFIXES: Final = (".trace", ".network", ".stacks")
_TYPING_PARAMS: Final = {
    "fill": "value",
    "type": "text",  # Locator.press_sequentially and .type both send Frame/ElementHandle.type
    "pressSequentially": "text",
    "keyboardType": "text",
    "keyboardInsertText": "text",
}
_KEYBOARD_METHODS: Final = frozenset({"keyboardType", "keyboardInsertText"})
_SENSITIVE_HEADERS: Final = frozenset(
    {"authorization", "cookie", "proxy-authorization", "set-cookie"}
)
_VALUE_ATTRIBUTES: Final = ("value", "__playwright_value_")
_TARGET_ATTRIBUTE: Final = "__playwright_target__"
_SKIPPED_EVENTS: Final = frozenset({"frame-snapshot", "screencast-frame"})
_READ_ERRORS: Final = (
    OSError,
    EOFError,
    ValueError,  # json.JSONDecodeError, UnicodeDecodeError, bad zip headers
    RecursionError,  # absurdly deep JSON
    NotImplementedError,  # unsupported compression
    zipfile.BadZipFile,
    zlib.error,
)


@dataclass(frozen=True, slots=True)
class ScrubReport:
    """What `scrub_trace` wrote: the zip entries, and how many values/headers it replaced."""

    entries: int
    masked: int


def scrub_trace(
    source: Path,
    target: Path,
    secrets: Iterable[str],
    titles: Sequence[tuple[str, str]] = (),
) -> ScrubReport:
    """Write a copy of the trace zip `source` without secrets to `target` (created new, mode
    0600; `source` is not touched, the caller renames `target` into place). `secrets` are exact
    values known to be secret; the rules of the module docstring add the ones found in the
    trace. `titles` renames groups (`tracing.group`) as the zip is rewritten anyway: in order,
    the next group whose title is a pair's first gets its second (the runtime's call groups get
    their outcome; a group it does not name, or a mark that was never written, is skipped).
    Raises `BrowserMeshError(BROWSER_ERROR)` when the trace cannot be read, and
    `BrowserMeshError(INTERNAL_ERROR)` when `target` cannot be written (it is removed then)."""
    given = {value for value in secrets if value}
    with _open_zip(source) as archive:
        infos = archive.infolist()
        plans: dict[str, _TypingPlan] = {}
        found: set[str] = set()
        for info in infos:
            if info.filename.endswith(".trace"):
                plan = _analyse_trace(_read_entry(archive, info))
                plans[info.filename] = plan
                found |= plan.found
        searched = given | {value for value in found if len(value) >= MIN_FOUND_CHARS}
        redactor = _Redactor(searched) if searched else None
        fd = _create(target)
        try:
            masked = _write_scrubbed(fd, archive, infos, plans, redactor, _Retitler(titles))
        except BaseException:
            target.unlink(missing_ok=True)
            raise
    return ScrubReport(entries=len(infos), masked=masked)


# ------------------------------------------------------------------------------------------
# Reading and writing the zip
# ------------------------------------------------------------------------------------------


# Errors are raised after their `except` block has ended, so the original exception (whose
# text can quote trace content, e.g. `JSONDecodeError.doc`) is not even kept as `__context__`.


def _unreadable() -> BrowserMeshError:
    return BrowserMeshError(ErrorCode.BROWSER_ERROR, cause="trace could not be read")


def _open_zip(source: Path) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(source)
    except _READ_ERRORS:
        pass
    raise _unreadable()


def _read_entry(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """The entry's bytes; refused when encrypted or over `MAX_ENTRY_BYTES` (the declared size
    is checked first, the actual one while reading, since a header can lie)."""
    if info.flag_bits & 0x1 or info.file_size > MAX_ENTRY_BYTES:
        raise _unreadable()
    data = None
    try:
        with archive.open(info) as stream:
            data = stream.read(MAX_ENTRY_BYTES + 1)
    except _READ_ERRORS:
        pass
    if data is None or len(data) > MAX_ENTRY_BYTES:
        raise _unreadable()
    return data


def _create(target: Path) -> int:
    """A new file at `target` with mode 0600 whatever the umask (never an existing file or a
    symlink: the caller renames it over the kept trace)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    flags |= getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(target, flags, 0o600)
    except OSError as exc:
        failure = _unwritable(exc)
    else:
        return fd
    raise failure


def _unwritable(exc: OSError) -> BrowserMeshError:
    return BrowserMeshError(
        ErrorCode.INTERNAL_ERROR, cause=f"scrubbed trace could not be written: {type(exc).__name__}"
    )


def _write_scrubbed(
    fd: int,
    archive: zipfile.ZipFile,
    infos: list[zipfile.ZipInfo],
    plans: dict[str, _TypingPlan],
    redactor: _Redactor | None,
    retitler: _Retitler,
) -> int:
    """Every entry of `archive`, scrubbed (and its groups retitled), in order, into the zip
    written to `fd` (closed here); returns the number of replacements."""
    masked = 0
    failure: BrowserMeshError | None = None
    try:
        with (
            os.fdopen(fd, "wb") as out,
            zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as scrubbed,
        ):
            os.fchmod(out.fileno(), 0o600)  # whatever the umask took away
            for info in infos:
                data = b"" if info.is_dir() else _read_entry(archive, info)
                data, count = _scrub_entry(info.filename, data, plans, redactor, retitler)
                masked += count
                entry = zipfile.ZipInfo(info.filename, date_time=info.date_time)
                entry.compress_type = zipfile.ZIP_DEFLATED
                scrubbed.writestr(entry, data)
            scrubbed.close()
            out.flush()
            os.fsync(out.fileno())  # the caller renames it into place next
    except OSError as exc:
        failure = _unwritable(exc)
    if failure is not None:
        raise failure
    return masked


def _scrub_entry(
    name: str,
    data: bytes,
    plans: dict[str, _TypingPlan],
    redactor: _Redactor | None,
    retitler: _Retitler,
) -> tuple[bytes, int]:
    if name.endswith(_JSON_LINES_SUFFIXES):
        if not name.endswith(".trace"):
            return _scrub_json_lines(data, None, redactor, None)
        return _scrub_json_lines(data, plans.get(name, _TypingPlan()), redactor, retitler)
    if redactor is None:
        return data, 0
    return redactor.entry(data)


# ------------------------------------------------------------------------------------------
# JSON lines
# ------------------------------------------------------------------------------------------


def _json_lines(data: bytes) -> Iterator[tuple[bytes, str, Any]]:
    """Each line of `data`, decoded and parsed (None for a blank line, which is kept)."""
    for line in data.split(b"\n"):
        if not line.strip():
            yield line, "", None
            continue
        yield line, *_parse_line(line)


def _parse_line(line: bytes) -> tuple[str, Any]:
    try:
        text = line.decode("utf-8")
        return text, json.loads(text)
    except _READ_ERRORS:
        pass
    raise _unreadable()


def _scrub_json_lines(
    data: bytes,
    plan: _TypingPlan | None,
    redactor: _Redactor | None,
    retitler: _Retitler | None,
) -> tuple[bytes, int]:
    """Structural masking (rules 1 and 2) and secret replacement (rule 3) line by line, and
    the groups' new titles; a line is re-serialized only when it changed."""
    out: list[bytes] = []
    masked = 0
    for line, text, event in _json_lines(data):
        if event is None:
            out.append(line)
            continue
        retitled = retitler is not None and retitler.apply(event)  # before a title is redacted
        count = _mask_event(event, plan)
        if redactor is not None and redactor.mentioned_in(text):
            count += redactor.walk(event)
        if count or retitled:
            masked += count
            dumped = json.dumps(event, ensure_ascii=False, separators=(",", ":"))
            ending = line[len(line.rstrip(b"\r")) :]
            # A lone surrogate (JSON.stringify escapes it) goes back out as the same escape.
            out.append(dumped.encode("utf-8", "backslashreplace") + ending)
        else:
            out.append(line)
    return b"\n".join(out), masked


class _Retitler:
    """Renames the trace's groups in order (`scrub_trace`'s `titles`)."""

    def __init__(self, titles: Sequence[tuple[str, str]]) -> None:
        self._titles = list(titles)
        self._next = 0

    def apply(self, event: Any) -> bool:
        """Retitle `event` if it opens the next named group; whether it did."""
        if self._next >= len(self._titles) or not isinstance(event, dict):
            return False
        if event.get("type") != "before" or event.get("method") != "tracingGroup":
            return False
        old, new = self._titles[self._next]
        if event.get("title") != old:
            return False
        event["title"] = new
        self._next += 1
        return True


def _mask_event(event: Any, plan: _TypingPlan | None) -> int:
    """Rules 1 and 2 on one parsed line, in place; returns the number of values replaced."""
    if not isinstance(event, dict):
        return 0
    kind = event.get("type")
    if kind == "frame-snapshot":
        snapshot = event.get("snapshot")
        if not isinstance(snapshot, dict):
            return 0
        return _mask_password_inputs(snapshot.get("html"))
    if kind in _SKIPPED_EVENTS:
        return 0
    masked = _mask_credentials(event, set())  # found already in the analysis
    if plan is not None:
        masked += plan.mask(event)
    return masked


def _is_element(node: Any) -> bool:
    return isinstance(node, list) and bool(node) and isinstance(node[0], str)


def _attributes(element: list[Any]) -> dict[str, Any]:
    attrs = element[1] if len(element) > 1 else None
    return attrs if isinstance(attrs, dict) else {}


def _is_password_input(element: list[Any]) -> bool:
    kind = _attributes(element).get("type")
    return (
        element[0].upper() == "INPUT"
        and isinstance(kind, str)
        and kind.strip().lower() == "password"
    )


def _elements(root: Any) -> Iterator[list[Any]]:
    """Every literal element of a snapshot tree (iterative: a DOM can be deep)."""
    stack = [root]
    while stack:
        node = stack.pop()
        if _is_element(node):
            yield node
            stack.extend(node[2:])


def _mask_password_inputs(root: Any) -> int:
    masked = 0
    for element in _elements(root):
        if not _is_password_input(element):
            continue
        attrs = _attributes(element)
        for name in _VALUE_ATTRIBUTES:
            value = attrs.get(name)
            if isinstance(value, str) and value and value != REDACTED:
                attrs[name] = REDACTED
                masked += 1
    return masked


def _mask_credentials(event: Any, found: set[str]) -> int:
    """Rule 2 anywhere in a (non-snapshot) event: headers, cookies, credentials, URL user
    info. Passwords go to `found`; header and cookie values do not."""
    masked = 0
    stack = [event]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
            continue
        if not isinstance(node, dict):
            continue
        for key, value in node.items():
            if key in ("headers", "extraHTTPHeaders"):
                masked += _mask_headers(value)
            elif key == "cookies" and isinstance(value, list):
                masked += _mask_fields(value, ("value",), None)
            elif key == "httpCredentials" and isinstance(value, dict):
                masked += _mask_fields([value], ("password",), found)
            elif key == "proxy" and isinstance(value, dict):
                masked += _mask_fields([value], ("password",), found)
                masked += _mask_fields([value], ("username",), None)
            elif key in ("url", "baseURL") and isinstance(value, str):
                clean = _without_url_password(value, found)
                if clean != value:
                    node[key] = clean
                    masked += 1
            if isinstance(value, dict | list):
                stack.append(value)
    return masked


def _mask_headers(headers: Any) -> int:
    masked = 0
    if isinstance(headers, dict):
        for name, value in headers.items():
            if str(name).lower() in _SENSITIVE_HEADERS and value not in ("", REDACTED):
                headers[name] = REDACTED
                masked += 1
    elif isinstance(headers, list):
        for header in headers:
            if (
                isinstance(header, dict)
                and str(header.get("name", "")).lower() in _SENSITIVE_HEADERS
                and header.get("value") not in (None, "", REDACTED)
            ):
                header["value"] = REDACTED
                masked += 1
    return masked


def _mask_fields(items: list[Any], names: tuple[str, ...], found: set[str] | None) -> int:
    masked = 0
    for item in items:
        if not isinstance(item, dict):
            continue
        for name in names:
            value = item.get(name)
            if isinstance(value, str) and value and value != REDACTED:
                if found is not None:
                    found.add(value)
                item[name] = REDACTED
                masked += 1
    return masked


def _without_url_password(url: str, found: set[str]) -> str:
    if "@" not in url:
        return url
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return url
    if not password:
        return url
    found.add(password)
    userinfo, _, host = parts.netloc.rpartition("@")
    user = userinfo.partition(":")[0]
    scheme, _, path, query, fragment = parts
    return urlunsplit((scheme, f"{user}:{REDACTED}@{host}", path, query, fragment))


# ------------------------------------------------------------------------------------------
# Analysis of a *.trace entry: snapshot targets, password values, typing calls
# ------------------------------------------------------------------------------------------

_Target = tuple[str, bool]
"""An element marked as an action's target: (`__playwright_target__` value, is a password
input)."""


@dataclass(slots=True)
class _TypingPlan:
    """What rule 1 masks in one `*.trace` entry: call id -> the typed value to hide, and the
    values found to be secret."""

    calls: dict[str, str] = field(default_factory=dict)
    found: set[str] = field(default_factory=set)

    def mask(self, event: dict[str, Any]) -> int:
        """Mask the planned call's typed value in its `before` event, and in its `log` lines
        and `after` event (an error's call log) where they quote it."""
        call_id = event.get("callId")
        if not isinstance(call_id, str) or call_id not in self.calls:
            return 0
        value = self.calls[call_id]
        kind = event.get("type")
        params = event.get("params")
        if kind == "before" and isinstance(params, dict):
            key = _TYPING_PARAMS.get(str(event.get("method")))
            if key is not None and params.get(key) == value:
                params[key] = REDACTED
                return 1
        elif kind in ("log", "after"):
            return _replace_quoted(event, value)
        return 0


def _replace_quoted(event: Any, value: str) -> int:
    """`fill("value")` / `elementHandle.type("value")` in every string of `event` become
    `[REDACTED]`; the bare value too when long enough not to hit ordinary words."""
    masked = 0
    stack = [event]
    while stack:
        node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, item in list(items):
            if isinstance(item, dict | list):
                stack.append(item)
            elif isinstance(item, str):
                clean = item.replace(f'"{value}"', f'"{REDACTED}"')
                if len(value) >= MIN_FOUND_CHARS:
                    clean = clean.replace(value, REDACTED)
                if clean != item:
                    node[key] = clean
                    masked += 1
    return masked


class _FrameHistory:
    """The snapshots of one frame seen so far, reduced to what back-references need: per
    snapshot its number of literal nodes and the targets inside each node that has any,
    numbered in the post-order of the viewer's `snapshotNodes` (references are not nodes)."""

    def __init__(self) -> None:
        self._snapshots: list[tuple[int, dict[int, tuple[_Target, ...]]]] = []

    def add(self, root: Any) -> tuple[_Target, ...]:
        """Record the snapshot tree `root`; returns the targets it shows (references
        resolved)."""
        index = len(self._snapshots)
        marks: dict[int, tuple[_Target, ...]] = {}
        count = 0
        shown: tuple[_Target, ...] = ()
        if _is_element(root):
            stack: list[tuple[Iterator[Any], list[_Target]]] = [(iter(root[2:]), _own(root))]
            while stack:
                children, collected = stack[-1]
                child: Any = next(children, _END)
                if child is _END:
                    stack.pop()
                    targets = tuple(collected)
                    if targets:
                        marks[count] = targets
                    count += 1
                    if stack:
                        stack[-1][1].extend(targets)
                    else:
                        shown = targets
                elif isinstance(child, str):
                    count += 1
                elif _is_element(child):
                    stack.append((iter(child[2:]), _own(child)))
                else:
                    collected.extend(self._lookup(child, index, count, marks))
        elif isinstance(root, str):
            count = 1
        else:
            shown = self._lookup(root, index, count, marks)
        self._snapshots.append((count, marks))
        return shown

    def _lookup(
        self, node: Any, index: int, count: int, marks: dict[int, tuple[_Target, ...]]
    ) -> tuple[_Target, ...]:
        """The targets inside the subtree a `[[back, position]]` reference points at."""
        if not (isinstance(node, list) and node and isinstance(node[0], list)):
            return ()
        ref = node[0]
        if len(ref) != 2 or not all(type(part) is int for part in ref):
            return ()
        source = index - ref[0]
        if 0 <= source < index:
            size, known = self._snapshots[source]
        elif source == index:  # a node earlier in this very snapshot
            size, known = count, marks
        else:
            return ()
        return known.get(ref[1], ()) if 0 <= ref[1] < size else ()


_END: Final = object()


def _own(element: list[Any]) -> list[_Target]:
    marker = _attributes(element).get(_TARGET_ATTRIBUTE)
    return [(marker, _is_password_input(element))] if isinstance(marker, str) else []


def _password_values(root: Any) -> Iterator[str]:
    for element in _elements(root):
        if _is_password_input(element):
            attrs = _attributes(element)
            for name in _VALUE_ATTRIBUTES:
                value = attrs.get(name)
                if isinstance(value, str) and value and value != REDACTED:
                    yield value


def _analyse_trace(data: bytes) -> _TypingPlan:
    """Pass one over a `*.trace` entry: which typing calls to mask (rule 1's conservative
    rule) and the secrets found (password input values, values typed into them, credential
    passwords)."""
    plan = _TypingPlan()
    frames: dict[str, _FrameHistory] = {}
    targets: dict[str, list[bool]] = {}  # call id -> is-password of each element it targeted
    typed: list[tuple[str, str, str]] = []  # (call id, method, value)
    for _, _, event in _json_lines(data):
        if not isinstance(event, dict):
            continue
        kind = event.get("type")
        if kind == "frame-snapshot":
            snapshot = event.get("snapshot")
            if not isinstance(snapshot, dict):
                continue
            root = snapshot.get("html")
            plan.found.update(_password_values(root))
            history = frames.setdefault(str(snapshot.get("frameId")), _FrameHistory())
            call_id = snapshot.get("callId")
            for marker, password in history.add(root):
                # 1.65 marks the target with "" in the call's own snapshots; older versions
                # wrote the call id itself.
                owner = marker or call_id
                if isinstance(owner, str):
                    targets.setdefault(owner, []).append(password)
        elif kind not in _SKIPPED_EVENTS:
            _mask_credentials(event, plan.found)  # on a throwaway parse: collects passwords
            if kind == "before":
                call = _typing_call(event)
                if call is not None:
                    typed.append(call)
    for call_id, method, value in typed:
        shown = targets.get(call_id, [])
        if any(shown):
            plan.found.add(value)
        if method in _KEYBOARD_METHODS or not shown or any(shown):
            plan.calls[call_id] = value
    return plan


def _typing_call(event: dict[str, Any]) -> tuple[str, str, str] | None:
    method = event.get("method")
    call_id = event.get("callId")
    params = event.get("params")
    if not (isinstance(method, str) and isinstance(call_id, str) and isinstance(params, dict)):
        return None
    key = _TYPING_PARAMS.get(method)
    value = params.get(key) if key is not None else None
    if not isinstance(value, str) or not value:
        return None
    return call_id, method, value


# ------------------------------------------------------------------------------------------
# Rule 3: known secrets in every form, everywhere
# ------------------------------------------------------------------------------------------

_IMAGE_MAGIC: Final = (b"\xff\xd8\xff", b"\x89PNG\r\n\x1a\n", b"GIF87a", b"GIF89a")


def secret_forms(secret: str) -> set[str]:
    """The ways `secret` is written into a trace (or a video's caption): raw, JSON-escaped (as
    JSON.stringify and as ASCII-only JSON), URL-encoded (path, query/form as Python and as a
    browser writes it, encodeURIComponent) and HTML-escaped."""
    return {
        secret,
        json.dumps(secret, ensure_ascii=False)[1:-1],
        json.dumps(secret)[1:-1],
        quote(secret),
        quote(secret, safe=""),
        quote_plus(secret),
        quote_plus(secret, safe="*").replace("~", "%7E"),  # application/x-www-form-urlencoded
        quote(secret, safe="!~*'()"),  # encodeURIComponent
        html.escape(secret),
        html.escape(secret, quote=False),
    }


def _alternation(values: Iterable[str]) -> str:
    # Longest first: at each position the longest secret wins over a prefix of it.
    return "|".join(re.escape(value) for value in sorted(set(values), key=lambda v: (-len(v), v)))


class _Redactor:
    """Replaces every form of the known secrets with `REDACTED` in one pass."""

    def __init__(self, secrets: Iterable[str]) -> None:
        forms: set[str] = set()
        for secret in secrets:
            forms |= secret_forms(secret)
        forms.discard("")
        self._pattern = re.compile(_alternation(forms))
        self._bytes = re.compile(_alternation(forms).encode("utf-8", "surrogatepass"))
        # How the forms look inside a raw JSON line (JSON.stringify or ASCII-only escaping).
        escaped = {json.dumps(f, ensure_ascii=only)[1:-1] for f in forms for only in (False, True)}
        self._mentioned = re.compile(_alternation(forms | escaped))

    def mentioned_in(self, line: str) -> bool:
        """Whether a raw JSON line may hold a secret (parsing it is needed to be sure)."""
        return self._mentioned.search(line) is not None

    def text(self, text: str) -> tuple[str, int]:
        return self._pattern.subn(REDACTED, text)

    def walk(self, value: Any) -> int:
        """Replace secrets inside every string (keys included) of a parsed JSON value, in
        place; returns the number of replacements."""
        masked = 0
        stack = [value]
        while stack:
            node = stack.pop()
            if isinstance(node, list):
                for i, item in enumerate(node):
                    if isinstance(item, str):
                        node[i], count = self._string(item)
                        masked += count
                    else:
                        stack.append(item)
            elif isinstance(node, dict):
                renamed: list[tuple[str, str]] = []
                for key, item in node.items():
                    if isinstance(item, str):
                        node[key], count = self._string(item)
                        masked += count
                    else:
                        stack.append(item)
                    new_key, count = self._string(key)
                    if count:
                        renamed.append((key, new_key))
                        masked += count
                for key, new_key in renamed:
                    node[new_key] = node.pop(key)
        return masked

    def _string(self, text: str) -> tuple[str, int]:
        return (text, 0) if text == REDACTED else self.text(text)

    def entry(self, data: bytes) -> tuple[bytes, int]:
        """A non-JSON entry: text when it decodes as UTF-8, images unchanged, other bytes
        searched as bytes (a body in another encoding still shows an ASCII secret)."""
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            if data.startswith(_IMAGE_MAGIC) or (data[:4] == b"RIFF" and data[8:12] == b"WEBP"):
                return data, 0
            return self._bytes.subn(REDACTED.encode(), data)
        clean, count = self.text(text)
        return (clean.encode("utf-8"), count) if count else (data, 0)
