"""`browser_session_update` (issue 19): a live session's network policy changes.

What may change is `network` (allowOrigins, blockOrigins, offline, extraHeaders); each given
field replaces the current one (`model.network.merge_network`). The proxy may not: Playwright
fixes a context's proxy when Chromium creates the context, so `proxy` is refused with a rule
saying so. Only a session created with `contextSettings.network` (even `{}`) may be updated:
such a context runs without service workers from its start, so an origin list added later
cannot be bypassed by a worker registered earlier.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from browsermesh.errors import invalid_argument
from browsermesh.model.deadline import OperationContext
from browsermesh.model.network import merge_network
from browsermesh.runtime.core import RuntimeCore
from browsermesh.runtime.session import SessionRecord

PROXY_FIXED = (
    "fixed when the session is created (Chromium sets a context's proxy once): create a new "
    "session with contextSettings.proxy"
)
NEEDS_NETWORK = (
    "only for a session created with contextSettings.network (may be {}), which blocks "
    "service workers from its start"
)


class SessionNetwork:
    """Changing a live session's `network` settings (a service on the core)."""

    def __init__(self, core: RuntimeCore) -> None:
        self.core = core
        # The engine under the name its calls have always had here (call lines unchanged).
        self.engine = core.engine

    async def update_session(
        self, principal: str, session_id: object, changes: Mapping[str, Any]
    ) -> tuple[str, dict[str, Any]]:
        """Apply `changes` (`network`; `proxy` is refused) after the session's queued work:
        `(operationId, SessionView)`. Arguments are checked before the call is accepted."""
        self.core.check_running()
        if "proxy" in changes:
            raise invalid_argument("proxy", PROXY_FIXED)
        if "network" not in changes:
            raise invalid_argument("network", "required")
        raw = changes["network"]
        rec = self.core.accept(principal, session_id)
        current = rec.context_settings.get("network")
        if current is None:
            raise invalid_argument("network", NEEDS_NETWORK)
        merge_network(current, raw)  # every given field is checked before acceptance

        async def job(rec: SessionRecord, ctx: OperationContext) -> dict[str, Any]:
            # Merged again here: an update queued before this one may have changed others.
            merged = merge_network(rec.context_settings["network"], raw)
            assert rec.context is not None
            await self.engine.update_network(rec.context, merged, ctx)
            rec.context_settings = {**rec.context_settings, "network": merged}
            self.core.changed(rec, "state")
            return rec.view()

        return await self.core.run_session_op(principal, session_id, "browser_session_update", job)
