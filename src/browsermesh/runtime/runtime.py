"""The multi-session runtime: registry, per-session queues, deadlines, limits, lifecycle.

Business rules live here; browser details live behind the `Engine` port. `Runtime` is the one
object the MCP layer talks to; its parts live in one module each: `core` (registry, queue
execution, events), `lifecycle` (sessions, states, pages, shutdown), `fork` (forks and batches
of sessions, on lifecycle), `actions` (what changes a page), `reads` (what reads one), `checks`
(argument checks), `network` (a live session's network policy).
"""

from __future__ import annotations

from browsermesh.persistence.states import LOCAL_PRINCIPAL as LOCAL_PRINCIPAL  # mcp imports it
from browsermesh.runtime.actions import PageActions
from browsermesh.runtime.checks import MAX_URL_CHARS as MAX_URL_CHARS
from browsermesh.runtime.checks import validate_http_url as validate_http_url
from browsermesh.runtime.checks import validate_timeout as validate_timeout
from browsermesh.runtime.export import TestExports
from browsermesh.runtime.fork import SessionForks
from browsermesh.runtime.network import SessionNetwork
from browsermesh.runtime.reads import PageReads

__all__ = ["LOCAL_PRINCIPAL", "MAX_URL_CHARS", "Runtime", "validate_http_url", "validate_timeout"]


class Runtime(SessionForks, SessionNetwork, PageActions, PageReads, TestExports):
    """Owns every session. One instance per server process (or per test)."""
