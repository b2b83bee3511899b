"""Recorded steps as pytest-playwright (sync API) statements (issue 20): the renderer behind
`model.test_export`.

Every piece of recorded text (URLs, locator values, names, typed values, file names and bytes)
enters the code only through `literal` (Python's `repr`), so no value can end a string, a line
or a comment early; identifiers come from `model.test_export`'s sanitized names. Locators keep
BrowserMesh's matching: an exact name goes through the module's `exact()` helper (whole name,
case-sensitive, a trailing `:` or `*` ignored, as `model.locators.exact_name_pattern`), a
non-exact one is Playwright's own case-insensitive substring match.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, assert_never

from browsermesh.model.action_kinds import ACTION_KINDS
from browsermesh.model.element_ops import ELEMENT_OPERATIONS, ElementOp
from browsermesh.model.matchers import (
    Condition,
    LoadCondition,
    LocatorCondition,
    TextCondition,
    UrlCondition,
    UrlMatcher,
)
from browsermesh.model.mouse import DRAG_STEPS, MouseGesture
from browsermesh.model.options import OptionChoice
from browsermesh.model.recording import (
    ActAndWait,
    Action,
    Drag,
    ExpectDialog,
    ExpectDownload,
    ExpectFileChooser,
    ExpectNavigation,
    ExpectPopup,
    ExpectResponse,
    FormFill,
    History,
    Mouse,
    Navigate,
    PageClosed,
    PageOpened,
    Scroll,
    Step,
    Upload,
    UploadFile,
    Value,
    Wait,
)
from browsermesh.model.strategies import Strategy, entry

__all__ = [
    "HELPERS",
    "Names",
    "act_and_wait_call",
    "literal",
    "locator_expr",
    "step_lines",
    "url_expr",
]

INDENT: Final = "    "

HELPERS: Final = '''

def secret(name: str) -> str:
    """A secret the recorded scenario typed, read from the environment variable `name`."""
    value = os.environ.get(name)
    if value is None:
        pytest.fail(
            f"set the environment variable {name}: the recorded scenario typed a secret there",
            pytrace=False,
        )
    return value


def exact(text: str) -> re.Pattern[str]:
    """A name matched as BrowserMesh matched it: whole, case-sensitive, whitespace collapsed,
    a trailing ':' or '*' ignored."""
    words = text.split()
    return re.compile(r"^\\s*" + r"\\s+".join(map(re.escape, words)) + r"[\\s:*]*$")


def url_exact(url: str) -> re.Pattern[str]:
    """A URL equal to `url`."""
    return re.compile("^" + re.escape(url) + "$")


def url_glob(pattern: str) -> re.Pattern[str]:
    """A BrowserMesh URL glob: ** any characters, * a run of characters without '/'."""
    parts = re.split(r"(\\*\\*|\\*)", pattern)
    body = "".join(
        ".*" if part == "**" else "[^/]*" if part == "*" else re.escape(part) for part in parts
    )
    return re.compile("^" + body + "$")


def fixture_file(tmp_path: Path, name: str, data: bytes) -> Path:
    """An upload's file, written into the test's temporary folder under its recorded name."""
    folder = tmp_path / "fixtures"
    folder.mkdir(exist_ok=True)
    safe = Path(name).name
    path = folder / (safe if safe not in ("", ".", "..") else "upload")
    path.write_bytes(data)
    return path
'''
"""The module-level helpers every export carries (they use only `os`, `re`, `Path`, `pytest`)."""

_HISTORY: Final = {"back": "go_back", "forward": "go_forward", "reload": "reload"}
_LOCATOR_STATES: Final = {
    "visible": "to_be_visible()",
    "hidden": "to_be_hidden()",
    "attached": "to_be_attached()",
    "detached": "to_be_attached(attached=False)",
    "enabled": "to_be_enabled()",
    "disabled": "to_be_disabled()",
}


def literal(value: str | bytes | int | bool | None) -> str:
    """A Python literal for `value` (repr: quotes, backslashes, newlines and control
    characters are all escaped, so the result is one token on one line)."""
    return repr(value)


class Names:
    """The variable names of the export's contexts and pages, and the base URL (the caller,
    `model.test_export`, fills them in)."""

    def __init__(self, base_url: str | None, contexts: Mapping[str, str]) -> None:
        self.base_url = base_url
        self.contexts = dict(contexts)  # session id → context variable
        self.pages: dict[tuple[str, str], str] = {}  # (session id, page id) → page variable
        self._taken: set[str] = set(self.contexts.values())
        self._stems: dict[str, str] = {
            sid: var.removesuffix("_context") for sid, var in contexts.items()
        }

    def new_page(self, session_id: str, page_id: str) -> str:
        """A fresh variable for `page_id` of `session_id`: `buyer_page`, `buyer_page_2`..."""
        stem = f"{self._stems[session_id]}_page"
        name, n = stem, 1
        while name in self._taken:
            n += 1
            name = f"{stem}_{n}"
        self._taken.add(name)
        self.pages[(session_id, page_id)] = name
        return name


def url_expr(url: str, base: str | None) -> str:
    """`url` as an expression: `BASE_URL + "/path"` when it is on the base origin."""
    if base is not None and url.startswith(base):
        rest = url[len(base) :]
        if rest == "":
            return "BASE_URL"
        if rest[0] in "/?#":
            return f"BASE_URL + {literal(rest)}"
    return literal(url)


def _matcher(matcher: UrlMatcher, base: str | None) -> str:
    """A URL pattern (`url_exact` / `url_glob` of the module) for waits and expectations."""
    helper = "url_exact" if matcher.kind == "exact" else "url_glob"
    return f"{helper}({url_expr(matcher.value, base)})"


def _name(value: str, exact: bool) -> str:
    return f"exact({literal(value)})" if exact else literal(value)


def _selector(root: str, sel: Mapping[str, Any]) -> str:
    """One wire-form selector (as recorded: already parsed) as the call of its strategy's
    Playwright method (`model.strategies`) under `root`."""
    strategy: Strategy = sel["strategy"]
    value = str(sel.get("value", ""))
    exact = sel.get("exact", True) is not False
    method = entry(strategy).playwright
    match strategy:
        case "role":
            name = sel.get("name")
            named = "" if name is None else f", name={_name(str(name), exact)}"
            return f"{root}.{method}({literal(value)}{named})"
        case "text" | "label" | "placeholder" | "alt" | "title":
            return f"{root}.{method}({_name(value, exact)})"
        case "testId" | "css":
            return f"{root}.{method}({literal(value)})"
        case _:
            assert_never(strategy)


def locator_expr(root: str, locator: Mapping[str, Any]) -> str:
    """A locator (BrowserMesh wire form: selector, optional `within`, optional iframe chain)
    as the Playwright expression under `root` (a page variable)."""
    frame = locator.get("frame")
    if isinstance(frame, Mapping) and frame.get("kind") == "iframe":
        for step in frame.get("chain") or ():
            root = f"{_selector(root, step)}.content_frame"
    within = locator.get("within")
    if isinstance(within, Mapping):
        root = _selector(root, within)
    return _selector(root, locator)


def _value(value: Value | None) -> str:
    if value is None:
        return literal("")
    if value.env is not None:
        return f"secret({literal(value.env)})"
    return literal(value.text)


def _files(files: tuple[UploadFile, ...]) -> str:
    paths = ", ".join(
        f"fixture_file(tmp_path, {literal(f.name)}, {literal(f.data)})" for f in files
    )
    return f"[{paths}]"


def _select(target: str, option: OptionChoice) -> str:
    """select_option in the mode the client chose: `value` as Playwright's plain argument (an
    option's value or label, as BrowserMesh matched it), `label=` and `index=` as keywords."""
    items = [literal(item) for item in option.items]
    given = f"[{', '.join(items)}]" if option.many else items[0]
    keyword = "" if option.mode == "value" else f"{option.mode}="
    return f"{target}.select_option({keyword}{given})"


def _act(
    target: str, op: ElementOp, value: Value | None, option: OptionChoice | None = None
) -> str:
    """The operation's `playwright_method`, with what its entry `records` (a form field's select
    option is recorded as its value)."""
    entry = ELEMENT_OPERATIONS[op]
    match entry.records:
        case "option" if option is not None:
            return _select(target, option)
        case "text" | "option":
            return f"{target}.{entry.playwright_method}({_value(value)})"
        case "target":
            return f"{target}.{entry.playwright_method}()"
        case _:
            assert_never(entry.records)


def _wait(page: str, condition: Condition, base: str | None) -> list[str]:
    if isinstance(condition, UrlCondition):
        matcher = condition.matcher
        if matcher.kind == "exact":
            return [f"expect({page}).to_have_url({url_expr(matcher.value, base)})"]
        return [f"expect({page}).to_have_url({_matcher(matcher, base)})"]
    if isinstance(condition, LoadCondition):
        return [f"{page}.wait_for_load_state({literal(condition.state)})"]
    if isinstance(condition, LocatorCondition):
        target = locator_expr(page, condition.locator.wire())
        return [f"expect({target}).{_LOCATOR_STATES[condition.state]}"]
    assert isinstance(condition, TextCondition)
    check = "to_contain_text" if condition.present else "not_to_contain_text"
    body = f'{page}.locator("body")'
    # A case-insensitive wait (the default) matches what CSS text-transform shows, too.
    case = "" if condition.exact else ", ignore_case=True"
    return [f"expect({body}).{check}({literal(condition.text)}, use_inner_text=True{case})"]


def _around(head: str, action: str, after: list[str]) -> list[str]:
    return [head, INDENT + action, *after]


def act_and_wait_call(target: str, step: ActAndWait) -> str:
    """The action of a recorded action-and-wait on `target` (a locator expression): its kind's
    Playwright method (`model.action_kinds`), with the recorded `key` when the kind takes one."""
    method = ACTION_KINDS[step.op].playwright_method
    match step.op:
        case "click" | "hover":
            return f"{target}.{method}()"
        case "press":
            return f"{target}.{method}({literal(step.key or '')})"
        case _:
            assert_never(step.op)


def _act_and_wait(page: str, step: ActAndWait, names: Names) -> list[str]:
    action = act_and_wait_call(locator_expr(page, step.locator), step)
    expect = step.expect
    base = names.base_url
    if isinstance(expect, ExpectNavigation):
        url = "" if expect.matcher is None else f"url={_matcher(expect.matcher, base)}, "
        head = f"with {page}.expect_navigation({url}wait_until={literal(expect.load_state)}):"
        return _around(head, action, [])
    if isinstance(expect, ExpectResponse):
        head = f"with {page}.expect_response({_matcher(expect.matcher, base)}) as response_info:"
        after = []
        if expect.method is not None:
            after.append(f"assert response_info.value.request.method == {literal(expect.method)}")
        if expect.status is not None:
            after.append(f"assert response_info.value.status == {literal(expect.status)}")
        return _around(head, action, after)
    if isinstance(expect, ExpectPopup):
        popup = names.new_page(step.session_id, expect.page_id)
        return _around(
            f"with {page}.expect_popup() as popup_info:", action, [f"{popup} = popup_info.value"]
        )
    if isinstance(expect, ExpectDialog):
        if expect.accept:
            answer = "" if expect.prompt_text is None else _value(expect.prompt_text)
            handler = f"dialog.accept({answer})"
        else:
            handler = "dialog.dismiss()"
        return [
            f'with {page}.expect_event("dialog") as dialog_info:',
            f'{INDENT}{page}.once("dialog", lambda dialog: {handler})',
            INDENT + action,
            f"assert dialog_info.value.type == {literal(expect.dialog_type)}",
        ]
    if isinstance(expect, ExpectDownload):
        check = (
            f"assert download_info.value.suggested_filename == {literal(expect.suggested_filename)}"
        )
        return _around(f"with {page}.expect_download() as download_info:", action, [check])
    assert isinstance(expect, ExpectFileChooser)
    return _around(
        f"with {page}.expect_file_chooser() as chooser_info:",
        action,
        [f"chooser_info.value.set_files({_files(expect.files)})"],
    )


def _upload(page: str, step: Upload) -> list[str]:
    target = locator_expr(page, step.locator)
    if step.via == "chooser":
        return _around(
            f"with {page}.expect_file_chooser() as chooser_info:",
            f"{target}.click()",
            [f"chooser_info.value.set_files({_files(step.files)})"],
        )
    return [f"{target}.set_input_files({_files(step.files)})"]


def _px(value: float) -> str:
    """A coordinate as a Python number literal (whole pixels without `.0`)."""
    return repr(int(value)) if float(value).is_integer() else repr(float(value))


def _mouse(page: str, gesture: MouseGesture) -> list[str]:
    """page.mouse calls replaying a browser_mouse gesture (as engine.mouse performs it)."""
    m, at = f"{page}.mouse", f"{_px(gesture.x)}, {_px(gesture.y)}"
    button = "" if gesture.button == "left" else f", button={literal(gesture.button)}"
    only_button = button.removeprefix(", ")
    match gesture.action:
        case "move":
            return [f"{m}.move({at})"]
        case "click":
            return [f"{m}.click({at}{button})"]
        case "double_click":
            return [f"{m}.dblclick({at}{button})"]
        case "down" | "up":
            return [f"{m}.move({at})", f"{m}.{gesture.action}({only_button})"]
        case "drag":
            assert gesture.to is not None  # model.mouse requires toX/toY for drag
            to = f"{_px(gesture.to[0])}, {_px(gesture.to[1])}"
            return [
                f"{m}.move({at})",
                f"{m}.down({only_button})",
                f"{m}.move({to}, steps={DRAG_STEPS})",
                f"{m}.up({only_button})",
            ]
        case "wheel":
            return [f"{m}.move({at})", f"{m}.wheel(0, {literal(gesture.delta_y)})"]
        case _:
            assert_never(gesture.action)


_Render = Callable[[str, Any, Names], list[str]]
_SIMPLE: Final[dict[type[Step], _Render]] = {
    Navigate: lambda p, s, n: [f"{p}.goto({url_expr(s.url, n.base_url)})"],
    History: lambda p, s, n: [f"{p}.{_HISTORY[s.step]}()"],
    Action: lambda p, s, n: [_act(locator_expr(p, s.locator), s.op, s.value, s.option)],
    FormFill: lambda p, s, n: [_act(locator_expr(p, f.locator), f.op, f.value) for f in s.fields],
    Wait: lambda p, s, n: _wait(p, s.condition, n.base_url),
    Upload: lambda p, s, n: _upload(p, s),
    Scroll: lambda p, s, n: [f"{p}.mouse.wheel({literal(s.dx)}, {literal(s.dy)})"],
    Drag: lambda p, s, n: [f"{locator_expr(p, s.source)}.drag_to({locator_expr(p, s.target)})"],
    Mouse: lambda p, s, n: _mouse(p, s.gesture),
    ActAndWait: lambda p, s, n: _act_and_wait(p, s, n),
    PageClosed: lambda p, s, n: [f"{p}.close()"],
}


def step_lines(step: Step, names: Names) -> list[str]:
    """The statements (unindented) that replay `step`; a page seen for the first time is
    opened in its session's context first."""
    lines: list[str] = []
    page = names.pages.get((step.session_id, step.page_id))
    if page is None:
        page = names.new_page(step.session_id, step.page_id)
        lines.append(f"{page} = {names.contexts[step.session_id]}.new_page()")
        if isinstance(step, PageOpened):
            return lines
    if isinstance(step, PageOpened):
        return lines  # the page already exists (it was used before it was reported)
    return lines + _SIMPLE[type(step)](page, step, names)
