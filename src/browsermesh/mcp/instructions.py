"""Server `instructions` (§21.3): addressing guidance, bug-report guidance, footer."""

from __future__ import annotations

from browsermesh.config import Config

ADDRESSING = (
    "BrowserMesh gives you many isolated browser sessions that run in parallel. Every operation "
    "names a sessionId, and page operations also a pageId; there is no current session, page or "
    "tab. Use a separate session per user, account, role, auth state and parallel workflow: "
    "sessions never share cookies or storage."
)
BUG_REPORTS = (
    "Bug reports: search the project's existing issues first and do not file duplicates; ask the "
    "user before filing. Include reproduction steps, expected and actual behaviour, BrowserMesh "
    "version, OS, Python version and MCP client. Never include secrets, saved state, page "
    "contents or internal host names. Report the real issue reference back to the user."
)
FOOTER = "Set BROWSERMESH_AGENT_GUIDELINES=false to suppress these instructions."
INSTRUCTIONS = "\n\n".join((ADDRESSING, BUG_REPORTS, FOOTER))


def instructions_for(config: Config) -> str | None:
    return INSTRUCTIONS if config.agent_guidelines else None
