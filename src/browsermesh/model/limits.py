"""Bounds that more than one layer enforces, defined once (issue 18).

A bound that the configuration, the runtime and the error details all apply lives here, at the
bottom of the import graph (this module imports nothing), so every layer may import it.
"""

from __future__ import annotations

from typing import Final

__all__ = ["MAX_CANDIDATES", "MAX_TIMEOUT_MS"]

MAX_TIMEOUT_MS: Final = 300_000
"""The largest operation timeout in ms: a call's ``timeoutMs`` and ``BROWSERMESH_TIMEOUT_MS``
(contract §19.1); error details clamp ``timeoutMs`` to it."""

MAX_CANDIDATES: Final = 5
"""How many near-miss candidates a not-found error names (built by ``model.candidates``, kept
by the error-details allowlist)."""
