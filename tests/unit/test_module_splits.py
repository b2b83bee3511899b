"""The one-job modules split off for issue 18: every public name stays importable from the
module it used to live in (the very same object), and each new module says at its top what it
is for."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "browsermesh"

# old module -> {name: the module it lives in now}
MOVED: dict[str, dict[str, str]] = {
    "browsermesh.model.observe": {
        "DEFAULT_LIMIT": "browsermesh.model.observe_limits",
        "MAX_DURATION_MS": "browsermesh.model.observe_limits",
        "MAX_EVENTS_PER_SECOND": "browsermesh.model.observe_limits",
        "MAX_SINCE_EVENT_ID_CHARS": "browsermesh.model.observe_limits",
        "RESPONSE_OVERHEAD_BYTES": "browsermesh.model.observe_limits",
        "ObserveLimits": "browsermesh.model.observe_limits",
        "EventRing": "browsermesh.model.observe_ring",
        "Kind": "browsermesh.model.observe_ring",
        "Ring": "browsermesh.model.observe_ring",
        "SOURCES": "browsermesh.model.observe_read",
        "SOURCE_KINDS": "browsermesh.model.observe_read",
        "Source": "browsermesh.model.observe_read",
    },
    "browsermesh.model.aria": {"render_aria": "browsermesh.model.aria_render"},
    "browsermesh.model.action_table": {
        "CHROME_MIN_ELEMENTS": "browsermesh.model.action_nodes",
        "REGION_MIN_ELEMENTS": "browsermesh.model.action_nodes",
        "qualifying_nodes": "browsermesh.model.action_nodes",
        "table_candidates": "browsermesh.model.action_nodes",
    },
    "browsermesh.model.paging": {
        "ARIA_ONLY_KEYS": "browsermesh.model.snapshot_options",
        "SNAPSHOT_OPTION_KEYS": "browsermesh.model.snapshot_options",
        "SnapshotFormat": "browsermesh.model.snapshot_options",
        "SnapshotOptions": "browsermesh.model.snapshot_options",
        "normalize_snapshot_options": "browsermesh.model.snapshot_options",
    },
    "browsermesh.persistence.states": {
        "DIR_MODE": "browsermesh.persistence.fileio",
        "FILE_MODE": "browsermesh.persistence.fileio",
        "SAFE_OPEN": "browsermesh.persistence.fileio",
        "write_exclusive": "browsermesh.persistence.fileio",
        "LOCAL_PRINCIPAL": "browsermesh.persistence.trust",
        "StorageAudit": "browsermesh.persistence.trust",
        "audit_data_dir": "browsermesh.persistence.trust",
        "distrust": "browsermesh.persistence.trust",
        "SAME_SITE_VALUES": "browsermesh.persistence.state_format",
        "STATE_ID_RE": "browsermesh.persistence.state_format",
        "count_state_origins": "browsermesh.persistence.state_format",
        "is_state_id": "browsermesh.persistence.state_format",
        "validate_state_id": "browsermesh.persistence.state_format",
        "validate_storage_state": "browsermesh.persistence.state_format",
    },
    "browsermesh.persistence.artifacts": {
        "DEFAULT_NAME": "browsermesh.persistence.artifact_record",
        "MIME_MAX_CHARS": "browsermesh.persistence.artifact_record",
        "NAME_MAX_CHARS": "browsermesh.persistence.artifact_record",
        "PART_SUFFIX": "browsermesh.persistence.artifact_record",
        "SOURCE_URL_MAX_CHARS": "browsermesh.persistence.artifact_record",
        "Artifact": "browsermesh.persistence.artifact_record",
        "ArtifactKind": "browsermesh.persistence.artifact_record",
        "ArtifactLimits": "browsermesh.persistence.artifact_record",
        "ArtifactState": "browsermesh.persistence.artifact_record",
        "sanitize_name": "browsermesh.persistence.artifact_record",
    },
    "browsermesh.engine.snapshot": {"page_secrets": "browsermesh.engine.page_source"},
}

NEW_MODULES = sorted(
    {home for names in MOVED.values() for home in names.values()} | {"browsermesh.engine.refs"}
)


@pytest.mark.parametrize("old", sorted(MOVED))
def test_moved_names_stay_importable_from_their_old_module(old: str) -> None:
    module = importlib.import_module(old)
    for name, home in MOVED[old].items():
        assert getattr(module, name) is getattr(importlib.import_module(home), name), name
        if hasattr(module, "__all__"):
            assert name in module.__all__, f"{old} does not export {name}"


@pytest.mark.parametrize("name", NEW_MODULES)
def test_new_modules_are_documented_and_export_what_they_define(name: str) -> None:
    path = SRC.joinpath(*name.split(".")[1:]).with_suffix(".py")
    tree = ast.parse(path.read_text())
    assert ast.get_docstring(tree), f"{path.name} has no docstring"
    module = importlib.import_module(name)
    for public in module.__all__:
        assert hasattr(module, public), f"{name}.__all__ names a missing {public}"
