"""Static prompt templates (reference §21.1): no model calls, no per-client state.

`diagnose_page` also takes an optional `sessionId` (issue 17): a page the caller already has
open is diagnosed in that session instead of a new one. The prompt only checks that the value
looks like an id; it never looks the session up, so it can tell nothing about anyone's sessions.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import mcp.types as types
from mcp import MCPError

from browsermesh.model.ids import ID_TEXT

INVALID_PARAMS = -32602
MAX_TASK_CHARS = 2000
MAX_ROLES_CHARS = 500
MAX_URL_CHARS = 2048
MAX_SYMPTOM_CHARS = 2000
MAX_SESSION_ID_CHARS = 128

PROMPTS = [
    types.Prompt(
        name="parallel_roles",
        title="Test as several roles at once",
        description="Carry out a task as several independent roles, one isolated session each.",
        arguments=[
            types.PromptArgument(
                name="task", description="What to do (1-2000 chars).", required=True
            ),
            types.PromptArgument(
                name="roles",
                description="Comma-separated roles, e.g. buyer, admin (1-500 chars).",
                required=True,
            ),
        ],
    ),
    types.Prompt(
        name="diagnose_page",
        title="Diagnose a failing page",
        description="Investigate an http(s) page with a clean session and its observations.",
        arguments=[
            types.PromptArgument(name="url", description="Absolute http(s) URL.", required=True),
            types.PromptArgument(
                name="symptom", description="What goes wrong (optional).", required=False
            ),
            types.PromptArgument(
                name="sessionId",
                description="Your session that already shows the page (optional).",
                required=False,
            ),
        ],
    ),
    types.Prompt(
        name="record_regression_test",
        title="Record a regression test",
        description=(
            "Run a scenario with the sessions it needs, then export it as a runnable "
            "pytest-playwright test (needs the testing tool profile)."
        ),
        arguments=[
            types.PromptArgument(
                name="scenario", description="What to test (1-2000 chars).", required=True
            ),
            types.PromptArgument(
                name="roles",
                description="Comma-separated roles, e.g. buyer, admin (optional; 1-500 chars).",
                required=False,
            ),
        ],
    ),
]
NAMES = frozenset(p.name for p in PROMPTS)


def _arg(args: dict[str, str], name: str, max_len: int, required: bool = True) -> str:
    value = args.get(name, "")
    if not isinstance(value, str) or (required and not value.strip()) or len(value) > max_len:
        raise MCPError(INVALID_PARAMS, f"Invalid prompt argument: {name}")
    return value


def _session_id(args: dict[str, str]) -> str | None:
    """The optional `sessionId`: absent or blank is None; anything but an id is refused."""
    value = _arg(args, "sessionId", MAX_SESSION_ID_CHARS, required=False).strip()
    if not value:
        return None
    if not ID_TEXT.fullmatch(value):
        raise MCPError(INVALID_PARAMS, "Invalid prompt argument: sessionId")
    return value


def split_roles(raw: str) -> list[str]:
    roles = [r.strip() for r in raw.split(",") if r.strip()]
    return roles or [raw.strip()]


def parallel_roles(task: str, roles_raw: str) -> str:
    roles = split_roles(roles_raw)
    count = "1 independent role" if len(roles) == 1 else f"{len(roles)} independent roles"
    listing = "\n".join(f"- {r}" for r in roles)
    return (
        f"Task: {task}\n\n"
        f"Carry it out as {count}:\n{listing}\n\n"
        "- Create one session per role with browser_session_create, named after the role "
        "(name and metadata role).\n"
        "- Keep each role on its own sessionId and pageId; there is no current session or tab.\n"
        "- Run the roles concurrently: sessions run in parallel, calls within one session run "
        "in order.\n"
        '- Read before acting: browser_snapshot first (format: "actions" for a quick list of '
        "controls with refs); prefer refs or role/label/testId locators over CSS.\n"
        "- Fill a form with one browser_fill_form; read each action's changes, and pass "
        'snapshot: "diff" on the action instead of taking a new snapshot.\n'
        "- Stuck where only a person can go on (a one-time code, a CAPTCHA, a consent "
        "screen)? browser_request_help asks one to take that session over in the live view; "
        "it answers after the hand-back.\n"
        "- Close every session with browser_session_close when done.\n"
        "- Report per-role observations and the differences between roles."
    )


def diagnose_page(url: str, symptom: str, session_id: str | None = None) -> str:
    where = "" if session_id is None else f" in your session {session_id}"
    lines = [f"Investigate {url}{where}."]
    if symptom.strip():
        lines.append(f"Symptom: {symptom.strip()}")
    lines.append("")
    if session_id is None:
        lines += [
            "- Create one clean session with browser_session_create.",
            "- browser_navigate to the URL, then browser_snapshot.",
        ]
    else:
        # What the page already recorded is the evidence: reuse it, do not start afresh.
        lines += [
            f"- Use session {session_id}; do not create a session. Find the page showing the "
            "URL with browser_page_list.",
            "- browser_snapshot that page; browser_navigate to the URL only if no page shows it.",
        ]
    lines += [
        "- Call browser_observe once per source: pageError, console, network (HTTP 5xx "
        "responses appear here) and requestFailed.",
        "- Use includeText=true only for console and pageError.",
        "- Check gap and droppedCount before concluding that something is absent.",
        "- Close the session with browser_session_close."
        if session_id is None
        else "- Leave the session open: it is yours and was open before.",
        "- Report the evidence, separating what you observed from what you infer.",
    ]
    return "\n".join(lines)


def record_regression_test(scenario: str, roles_raw: str) -> str:
    roles = split_roles(roles_raw) if roles_raw.strip() else []
    who = (
        "one session per role: " + ", ".join(roles) + " (name each after its role, metadata role)"
        if roles
        else "as many sessions as the scenario has independent users (one per role)"
    )
    return (
        f"Scenario to turn into a regression test: {scenario}\n\n"
        "- If browser_test_export is not in your tool list, stop and say that the server must "
        "run with the testing tool profile (--tools core,observability,persistence,files,"
        "testing).\n"
        f"- Create {who} with browser_session_create.\n"
        "- Every successful operation is recorded; failed ones are not. If you explore first, "
        "call browser_recording with action clear on each session before the scenario itself.\n"
        "- Prefer role, label and testId locators or refs from browser_snapshot; a ref is "
        "recorded as the locator that found its element.\n"
        "- Check each outcome with browser_wait (text present, URL matched, element visible): "
        "waits become the test's assertions. Use browser_action_and_wait for downloads, "
        "popups, dialogs and file choosers.\n"
        "- Fill passwords normally (they are recorded as environment variables); mark any "
        "other secret with secret:true on a browser_fill_form field.\n"
        "- When the scenario passes, call browser_test_export with every session id, save "
        "`code` as test_<scenario>.py, and list the environment variables in `secrets` the "
        "test needs.\n"
        "- Close every session with browser_session_close."
    )


def get_prompt(name: str, arguments: dict[str, str] | None) -> types.GetPromptResult:
    args = arguments or {}
    if name == "parallel_roles":
        text = parallel_roles(
            _arg(args, "task", MAX_TASK_CHARS), _arg(args, "roles", MAX_ROLES_CHARS)
        )
    elif name == "diagnose_page":
        url = _arg(args, "url", MAX_URL_CHARS)
        try:
            parts = urlsplit(url)
            valid = parts.scheme in ("http", "https") and bool(parts.hostname)
        except ValueError:
            valid = False
        if not valid:
            raise MCPError(INVALID_PARAMS, "Invalid prompt argument: url must be http(s)")
        symptom = _arg(args, "symptom", MAX_SYMPTOM_CHARS, required=False)
        text = diagnose_page(url, symptom, _session_id(args))
    elif name == "record_regression_test":
        text = record_regression_test(
            _arg(args, "scenario", MAX_TASK_CHARS),
            _arg(args, "roles", MAX_ROLES_CHARS, required=False),
        )
    else:
        raise MCPError(INVALID_PARAMS, "Unknown prompt")
    message = types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))
    return types.GetPromptResult(messages=[message])
