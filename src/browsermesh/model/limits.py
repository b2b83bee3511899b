"""Bounds that more than one layer enforces, defined once (issue 18).

A bound that the configuration, the runtime and the error details all apply lives here, at the
bottom of the import graph (this module imports nothing), so every layer may import it.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "MAX_CANDIDATES",
    "MAX_FILL_CHARS",
    "MAX_KEY_CHARS",
    "MAX_OPTION_CHARS",
    "MAX_TIMEOUT_MS",
]

MAX_TIMEOUT_MS: Final = 300_000
"""The largest operation timeout in ms: a call's ``timeoutMs`` and ``BROWSERMESH_TIMEOUT_MS``
(reference §19.1); error details clamp ``timeoutMs`` to it."""

MAX_CANDIDATES: Final = 5
"""How many near-miss candidates a not-found error names (built by ``model.candidates``, kept
by the error-details allowlist)."""

MAX_FILL_CHARS: Final = 1_000_000
"""`browser_fill.value`: a long document; filling 1,000,000 characters takes about 0.4 s (also
a browser_fill_form field's value)."""
MAX_KEY_CHARS: Final = 64
"""`browser_press.key` and an action-and-wait's `action.key` (reference §4.6, §7.2)."""
MAX_OPTION_CHARS: Final = 4_096
"""`browser_select_option.value` (each item) and a form field's option."""
