"""What one artifact is (issue 14): its record and client view, the quotas, its cleaned labels.

An `Artifact` is the in-memory record of one download or generated PDF: ids, the page and
principal it belongs to, its state and size, and the display name, MIME type and source URL it
shows. Those three come from the page (a suggested file name, a response header, a URL) and are
cleaned here when an artifact begins (`sanitize_name`, `clean_mime`, `clean_url`), so a record
only ever holds output-safe text. `ArtifactLimits` are the configured quotas the store enforces
(see `persistence.artifacts`, which keeps the records and the content on disk).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

from browsermesh.redact import cut_chars, sanitize_url

if TYPE_CHECKING:
    from browsermesh.config import Config

__all__ = [
    "DEFAULT_NAME",
    "KEPT_KINDS",
    "MIME_MAX_CHARS",
    "NAME_MAX_CHARS",
    "PART_SUFFIX",
    "SOURCE_URL_MAX_CHARS",
    "Artifact",
    "ArtifactKind",
    "ArtifactLimits",
    "ArtifactState",
    "clean_mime",
    "clean_url",
    "sanitize_name",
]

ArtifactKind = Literal["download", "pdf", "trace", "video"]
KEPT_KINDS: Final[frozenset[ArtifactKind]] = frozenset({"trace", "video"})
"""Kinds that outlive their session (issue 35): what a session did is read after it ended,
until its closed record is forgotten (reference §27.1)."""
ArtifactState = Literal["in_progress", "completed", "failed", "canceled"]

PART_SUFFIX: Final = ".part"
NAME_MAX_CHARS: Final = 128
DEFAULT_NAME: Final = "download"
SOURCE_URL_MAX_CHARS: Final = 2048
MIME_MAX_CHARS: Final = 128
_EXTENSION_MAX_CHARS: Final = 16  # the dot included; a longer "extension" is not kept on a cut

_DROPPED_CATEGORIES: Final = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
_LEADING_JUNK: Final = re.compile(r"^[.\s]+")


@dataclass(frozen=True, slots=True)
class ArtifactLimits:
    """The configured quotas (the store's `persistence.artifacts` says what each bounds)."""

    max_count: int = 100
    max_session_bytes: int = 104_857_600
    max_principal_bytes: int = 268_435_456
    max_total_bytes: int = 1_073_741_824

    @classmethod
    def from_config(cls, config: Config) -> ArtifactLimits:
        """The limits configured by the ``BROWSERMESH_MAX_ARTIFACT*`` variables."""
        return cls(
            max_count=config.max_artifacts,
            max_session_bytes=config.max_artifact_session_bytes,
            max_principal_bytes=config.max_artifact_principal_bytes,
            max_total_bytes=config.max_artifact_total_bytes,
        )


@dataclass(eq=False)
class Artifact:
    """One artifact's record. `path` is internal (never reported); `view()` is the public shape."""

    artifact_id: str
    session_id: str
    principal: str
    page_id: str | None
    kind: ArtifactKind
    name: str
    mime_type: str | None
    source_url: str | None
    state: ArtifactState
    size: int
    created_at: str
    path: Path = field(repr=False)

    @property
    def part_path(self) -> Path:
        """Where the content is written before `ArtifactStore.complete`."""
        return self.path.with_name(self.path.name + PART_SUFFIX)

    def view(self) -> dict[str, Any]:
        """The client shape: no path and no principal."""
        out: dict[str, Any] = {
            "artifactId": self.artifact_id,
            "kind": self.kind,
            "name": self.name,
        }
        if self.mime_type is not None:
            out["mimeType"] = self.mime_type
        out["size"] = self.size
        if self.source_url is not None:
            out["sourceUrl"] = self.source_url
        out["state"] = self.state
        if self.page_id is not None:
            out["pageId"] = self.page_id
        out["createdAt"] = self.created_at
        return out


# --- names --------------------------------------------------------------------------------------


def sanitize_name(raw: object) -> str:
    """A safe display name from a suggested file name (never used as a path here).

    The final component after both ``/`` and ``\\``; control, format, line/paragraph-separator
    characters and lone surrogates dropped; leading dots and whitespace and trailing whitespace
    stripped; at most 128 code points, keeping a short extension when cut; ``download`` when
    nothing is left.
    """
    if not isinstance(raw, str):
        return DEFAULT_NAME
    text = raw.replace("\\", "/").rsplit("/", 1)[-1]
    text = "".join(ch for ch in text if unicodedata.category(ch) not in _DROPPED_CATEGORIES)
    text = _LEADING_JUNK.sub("", text).rstrip()
    if len(text) > NAME_MAX_CHARS:
        stem, dot, ext = text.rpartition(".")
        extension = dot + ext
        if stem and dot and len(extension) <= _EXTENSION_MAX_CHARS:
            text = stem[: NAME_MAX_CHARS - len(extension)].rstrip() + extension
        else:
            text = text[:NAME_MAX_CHARS].rstrip()
    return text or DEFAULT_NAME


def clean_mime(raw: object) -> str | None:
    """A MIME type to show: control and format characters dropped, trimmed, at most 128 code
    points; None when not a string or nothing is left."""
    if not isinstance(raw, str):
        return None
    text = "".join(ch for ch in raw if unicodedata.category(ch) not in _DROPPED_CATEGORIES)
    text = text.strip()
    return cut_chars(text, MIME_MAX_CHARS) if text else None


def clean_url(raw: object) -> str | None:
    """A source URL to show, sanitized for output (reference §17.1) and bounded; None
    when not a string or empty."""
    if not isinstance(raw, str) or not raw:
        return None
    return sanitize_url(raw, max_chars=SOURCE_URL_MAX_CHARS)
