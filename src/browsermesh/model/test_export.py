"""One runnable pytest module from what sessions recorded (issue 20, `browser_test_export`).

`export_pytest` turns the recorded steps (`model.recording`) of one or more sessions into the
text of a self-contained pytest-playwright module (sync API): one browser context per session
with its context settings reproduced, pages opened as the scenario used them, every step of
every session in the order BrowserMesh accepted them (`seq`), the most common origin factored
out as `BASE_URL` (overridable from `BM_BASE_URL`), secrets read from `os.environ` by a helper
that fails the test naming the missing variable, uploads written from embedded bytes into the
test's `tmp_path`, storage states referenced by path (overridable from `BM_STATE_<LABEL>`),
never inlined. The statements come from `model.export_python`.

The output is bounded (`MAX_EXPORT_CHARS`): steps are added whole while they fit, and the first
one that does not ends the test with a comment saying how many were left out, never a half
statement. Pure: no I/O.
"""

from __future__ import annotations

import keyword
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, assert_never

from browsermesh.model.devices import emulated
from browsermesh.model.export_python import HELPERS, Names, literal, step_lines, url_expr
from browsermesh.model.network import origin_of
from browsermesh.model.recording import (
    MAX_RECORDED_STEPS,
    MAX_RECORDING_BYTES,
    Navigate,
    Step,
    secret_name,
    secrets_of,
)
from browsermesh.model.settings import CONTEXT_SETTINGS

__all__ = [
    "BASE_URL_ENV",
    "MAX_EXPORT_CHARS",
    "ExportedTest",
    "SessionExport",
    "export_pytest",
]

MAX_EXPORT_CHARS: Final = 500_000
"""The longest export (code points); the steps past it are left out, with a comment."""
BASE_URL_ENV: Final = "BM_BASE_URL"
TIMEOUT_ENV: Final = "BM_TIMEOUT_MS"
DEFAULT_TIMEOUT_MS: Final = 10_000
"""Every action's and assertion's timeout in the export (Playwright's own default is 30 s; a
broken flow should fail sooner); `BM_TIMEOUT_MS` overrides it."""
STATE_ENV_PREFIX: Final = "BM_STATE_"
TEST_NAME: Final = "test_recorded_scenario"
_INDENT: Final = "    "
_NOT_IDENT: Final = re.compile(r"[^a-z0-9]+")
_DEFAULT_TIMEOUT: Final = repr(str(DEFAULT_TIMEOUT_MS))


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionExport:
    """One session to export: its id, a label a person reads (its name or role; the id when it
    has none), its normalized context settings (the real ones: header values are read as
    secrets, never inlined), the path of the saved state it was created from, its steps, and
    whether its log was truncated."""

    session_id: str
    label: str
    settings: Mapping[str, Any] = field(default_factory=dict)
    storage_state_path: str | None = None
    steps: Sequence[Step] = ()
    truncated: bool = False


@dataclass(frozen=True, slots=True)
class ExportedTest:
    """The module's text; `truncated` when a session's log or the output bound cut steps;
    `steps` how many steps it replays, `secrets` the environment variables it reads."""

    text: str
    truncated: bool
    steps: int
    secrets: tuple[str, ...]


def _identifier(label: str, fallback: str) -> str:
    stem = _NOT_IDENT.sub("_", label.lower()).strip("_")[:32].strip("_")
    if not stem:
        stem = fallback
    if stem[0].isdigit() or keyword.iskeyword(stem):
        stem = f"s_{stem}"
    return stem


def header_secret(label: str, header: str) -> str:
    """The environment variable an extra HTTP header's value is read from at replay."""
    return secret_name(label, f"header {header}")


def _context_names(sessions: Sequence[SessionExport]) -> dict[str, str]:
    out: dict[str, str] = {}
    taken: set[str] = set()
    for n, session in enumerate(sessions, 1):
        stem = _identifier(session.label, f"session{n}")
        name, k = stem, 1
        while name in taken:
            k += 1
            name = f"{stem}_{k}"
        taken.add(name)
        out[session.session_id] = f"{name}_context"
    return out


def base_origin(steps: Sequence[Step]) -> str | None:
    """The origin most navigations went to (the first such one on a tie), or None."""
    counts = Counter(o for s in steps if isinstance(s, Navigate) if (o := origin_of(s.url)))
    if not counts:
        return None
    best = max(counts.values())
    return next(origin for origin, count in counts.items() if count == best)


@dataclass(slots=True)
class _ContextPlan:
    """How the export makes one session's context, from its settings (`_kwargs`)."""

    args: list[tuple[str, str]] = field(default_factory=list)
    """`new_context` keyword arguments `(name, expression)`, in the catalogue's order."""
    device: str | None = None
    """The device whose descriptor the arguments are spread over."""
    grants: list[tuple[str, str]] = field(default_factory=list)
    """`(permission, origin)` to grant once the context exists."""
    scripts: list[str] = field(default_factory=list)
    """The init scripts to add right after the context is made, in order (issue 36)."""
    skipped: list[str] = field(default_factory=list)
    """The settings not reproduced, then the parts of settings not reproduced."""


def _network_args(network: object, label: str, plan: _ContextPlan) -> list[str]:
    """`network`'s arguments into `plan`; the parts the export cannot reproduce."""
    if not isinstance(network, Mapping):
        return []
    plan.args.append(("service_workers", literal("block")))
    if network.get("offline"):
        plan.args.append(("offline", "True"))
    headers = network.get("extraHeaders")
    if isinstance(headers, Mapping) and headers:
        pairs = ", ".join(
            f"{literal(str(name))}: secret({literal(header_secret(label, str(name)))})"
            for name in headers
        )
        plan.args.append(("extra_http_headers", f"{{{pairs}}}"))
    if network.get("allowOrigins") or network.get("blockOrigins"):
        return ["network origin lists"]
    return []


def _kwargs(settings: Mapping[str, Any], label: str) -> _ContextPlan:
    """What the export does with each of a session's settings, by its catalogue export form."""
    plan = _ContextPlan()
    partly: list[str] = []  # parts of a setting, named after the settings skipped whole
    for setting in CONTEXT_SETTINGS:
        given = setting.name in settings
        value = settings.get(setting.name)
        match setting.export:
            case "keyword":
                assert setting.keyword is not None  # test_context_settings_catalogue.py
                if given:
                    plan.args.append((setting.keyword, literal_json(value)))
                elif setting.default is not None and setting.name not in emulated(settings):
                    # Neither the caller nor a device gives it: the context's default, written.
                    plan.args.append((setting.keyword, literal_json(setting.default)))
            case "device":
                if given:
                    plan.device = str(value)
            case "permissions":
                for permission in value or ():
                    name = str(permission.get("permission", "geolocation"))
                    plan.grants.append((name, str(permission.get("origin", ""))))
            case "network":
                partly += _network_args(value, label, plan)
            case "init scripts":
                plan.scripts += [str(script) for script in value or ()]
            case "not reproduced":
                if given:
                    plan.skipped.append(setting.name)
            case _:
                assert_never(setting.export)
    plan.skipped += partly
    return plan


def literal_json(value: Any) -> str:
    """A JSON-shaped value (dicts, lists, strings, numbers, booleans) as a Python literal."""
    if isinstance(value, Mapping):
        inner = ", ".join(f"{literal(str(k))}: {literal_json(v)}" for k, v in value.items())
        return f"{{{inner}}}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(literal_json(v) for v in value) + "]"
    if isinstance(value, str | int | float | bool) or value is None:
        return repr(value)
    return literal(str(value))


def _context_lines(
    session: SessionExport, var: str, base: str | None, state_var: str | None
) -> list[str]:
    plan = _kwargs(session.settings, session.label)
    lines = [f"# session {literal(session.label)} ({literal(session.session_id)})"]
    if plan.skipped:
        lines.append(f"# not reproduced: {', '.join(plan.skipped)}")
    args = plan.args + ([("storage_state", state_var)] if state_var is not None else [])
    if plan.device is not None:
        options = var.removesuffix("_context") + "_options"
        spread = ", ".join(
            [f"**playwright.devices[{literal(plan.device)}]"]
            + [f"{literal(kw)}: {expr}" for kw, expr in args]
        )
        lines += [f"{options} = {{{spread}}}", f"{var} = browser.new_context(**{options})"]
    else:
        kwargs = ", ".join(f"{kw}={expr}" for kw, expr in args)
        lines.append(f"{var} = browser.new_context({kwargs})")
    lines += [f"{var}.add_init_script(script={literal(script)})" for script in plan.scripts]
    lines.append(f"{var}.set_default_timeout(TIMEOUT_MS)")
    for name, origin in plan.grants:
        lines.append(f"{var}.grant_permissions([{literal(name)}], origin={url_expr(origin, base)})")
    return lines


def _head(sessions: Sequence[SessionExport], base: str | None, states: dict[str, str]) -> list[str]:
    lines = [
        '"""A regression test recorded by BrowserMesh (browser_test_export).',
        "",
        "Run it with pytest and pytest-playwright (`pip install pytest-playwright`); set the",
        f"environment variables it names for secrets, {BASE_URL_ENV} to test another server,",
        f"{TIMEOUT_ENV} for another timeout per action and assertion (ms).",
        '"""',
    ]
    for session in sessions:
        if session.truncated:
            lines.append(
                f"# NOTE: the recording of session {literal(session.label)} reached its bound "
                f"({MAX_RECORDED_STEPS} steps / {MAX_RECORDING_BYTES} bytes) and stopped: "
                "its later steps are missing."
            )
    lines += [
        "",
        "from __future__ import annotations",
        "",
        "import os",
        "import re",
        "from pathlib import Path",
        "",
        "import pytest",
        "from playwright.sync_api import Browser, Playwright, expect",
        "",
        f"BASE_URL = os.environ.get({literal(BASE_URL_ENV)}, {literal(base or '')})",
        f"TIMEOUT_MS = int(os.environ.get({literal(TIMEOUT_ENV)}, {_DEFAULT_TIMEOUT}))",
    ]
    for session in sessions:
        if session.storage_state_path is not None:
            var = states[session.session_id]
            env = STATE_ENV_PREFIX + var.removesuffix("_STATE").upper()
            lines.append(
                f"{var} = os.environ.get({literal(env)}, {literal(session.storage_state_path)})"
            )
    lines += HELPERS.split("\n")
    return lines


def _tracing_lines(
    contexts: Sequence[str],
) -> tuple[list[str], list[str]]:
    """With tracing (issue 35): what starts each context's trace under pytest-playwright's own
    `--tracing` option (on, off, retain-on-failure) and what, after the steps (in a `finally`),
    saves it into `--output` as `<context>-trace.zip` (or drops it)."""
    start = [
        "# pytest-playwright's --tracing (on, off, retain-on-failure) and --output",
        'tracing = pytestconfig.getoption("--tracing")',
        'output = Path(pytestconfig.getoption("--output"))',
        'if tracing != "off":',
        *(
            f"{_INDENT}{var}.tracing.start(screenshots=True, snapshots=True, sources=True)"
            for var in contexts
        ),
        "failed = True",
        "try:",
    ]
    stop = [
        f"{_INDENT}failed = False",
        "finally:",
        f'{_INDENT}keep = tracing == "on" or (tracing == "retain-on-failure" and failed)',
        f"{_INDENT}if keep:",
        f"{_INDENT * 2}output.mkdir(parents=True, exist_ok=True)",
    ]
    for var in contexts:
        stop += [
            f"{_INDENT}if keep:",
            f'{_INDENT * 2}{var}.tracing.stop(path=output / "{var}-trace.zip")',
            f'{_INDENT}elif tracing != "off":',
            f"{_INDENT * 2}{var}.tracing.stop()",
        ]
    return start, stop


def export_pytest(
    sessions: Sequence[SessionExport],
    *,
    max_chars: int = MAX_EXPORT_CHARS,
    tracing: bool = False,
) -> ExportedTest:
    """The pytest module replaying `sessions` (see the module docstring). Every session gets
    its context even with no step; a step of another session is a ValueError. With `tracing`,
    each context is traced as pytest-playwright's `--tracing` says (`_tracing_lines`)."""
    contexts = _context_names(sessions)
    for session in sessions:
        if any(step.session_id != session.session_id for step in session.steps):
            raise ValueError("every step of a SessionExport belongs to its session")
    steps = sorted((s for session in sessions for s in session.steps), key=lambda s: s.seq)
    base = base_origin(steps)
    states = {
        s.session_id: contexts[s.session_id].removesuffix("_context").upper() + "_STATE"
        for s in sessions
        if s.storage_state_path is not None
    }
    names = Names(base, contexts)
    head = _head(sessions, base, states)
    params = "browser: Browser, playwright: Playwright, tmp_path: Path"
    if tracing:  # one parameter per line: the signature would pass 100 characters
        params = "\n" + "".join(
            f"{_INDENT}{p},\n" for p in (*params.split(", "), "pytestconfig: pytest.Config")
        )
    body = [
        "",
        f"def {TEST_NAME}({params}) -> None:",
        "expect.set_options(timeout=TIMEOUT_MS)",
    ]
    for session in sessions:
        var = contexts[session.session_id]
        body += _context_lines(session, var, base, states.get(session.session_id))
    closes = [f"{contexts[s.session_id]}.close()" for s in sessions]
    step_indent = ""
    foot = closes
    if tracing:
        start, stop = _tracing_lines([contexts[s.session_id] for s in sessions])
        body += start
        step_indent = _INDENT
        foot = stop + [_INDENT + line for line in closes]
    used = len("\n".join(head + body + foot)) + 200  # + the truncation comment
    rendered = 0
    truncated = any(s.truncated for s in sessions)
    secrets = {
        header_secret(s.label, str(name))
        for s in sessions
        for name in ((s.settings.get("network") or {}).get("extraHeaders") or {})
    }
    for step in steps:
        block = [step_indent + line for line in step_lines(step, names)]
        size = sum(len(_INDENT) + len(line) + 1 for line in block)
        if used + size > max_chars:
            body.append(
                f"{step_indent}# export truncated at {max_chars} characters: "
                f"{len(steps) - rendered} more steps are not shown"
            )
            truncated = True
            break
        body += block
        used += size
        rendered += 1
        secrets |= secrets_of(step)
    signature, statements = body[:2], body[2:] + foot
    text = "\n".join(head + signature + [_INDENT + line for line in statements]) + "\n"
    return ExportedTest(text, truncated, rendered, tuple(sorted(secrets)))
