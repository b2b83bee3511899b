"""Render ARIA trees as Playwright-style ARIA snapshot YAML (reference §6.1, §6.4).

`render_aria` writes `browsermesh.model.aria.AriaNode` trees back in Playwright's exact style:
its ``yaml.ts`` quoting rules for keys and values (plain, single- or double-quoted), 2-space
indents, no line wrapping, plus double-quoted escapes for text YAML cannot hold raw, so the output
reads back verbatim with `browsermesh.model.aria.parse_aria`. Optionally appends BrowserMesh ref
tokens. Used by every ``format: "aria"`` snapshot that was parsed (refs, filters, secrets).

Pure model: no Playwright, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from browsermesh.model.aria import AriaNode

__all__ = ["render_aria"]

_JS_WS = "\t\n\x0b\x0c\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_JS_WS_CHARS = (
    "\t\n\x0b\x0c\r \u00a0\u1680"
    + "".join(chr(c) for c in range(0x2000, 0x200B))
    + "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_EDGE_WS_RE = re.compile(f"^[{_JS_WS}]|[{_JS_WS}]\\Z")
_CONTROL_RE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_COLON_RE = re.compile(f"[\n:](?:[{_JS_WS}]|\\Z)")
_HASH_RE = re.compile(f"[{_JS_WS}]#")
_INDICATOR_RE = re.compile("^[&*\\],?!>|@\"'#%]")
_FLOW_RE = re.compile("[{}`]")
_SPECIAL_FLOAT_RE = re.compile(r"[-+]?\.(?:inf|nan)\Z", re.IGNORECASE)
_JS_DECIMAL_RE = re.compile(
    r"[+-]?(?:Infinity|(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)"
)
_JS_NONDECIMAL_RE = re.compile(r"0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+")
_YAML_WORDS = frozenset({"y", "n", "yes", "no", "true", "false", "on", "off", "null", "~"})

# Characters Playwright may leave raw but ruamel cannot read back verbatim in that position.
_NON_PRINTABLE = "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ud800-\udfff\ufffe\uffff"
_UNSAFE_PLAIN_RE = re.compile(f"[\t\n\r\x85{_NON_PRINTABLE}]")
_UNSAFE_SINGLE_RE = re.compile(f"[\n\r\x85{_NON_PRINTABLE}]")
_DOUBLE_ESCAPE_RE = re.compile('[\\\\"\x00-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]')
_NAMED_ESCAPES = {
    "\\": "\\\\",
    '"': '\\"',
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
}


def _js_number_is_nan(text: str) -> bool:
    """``isNaN(Number(text))`` with JavaScript's string-to-number rules."""
    body = text.strip(_JS_WS_CHARS)
    if not body:
        return False  # Number("") === 0
    return not (_JS_DECIMAL_RE.fullmatch(body) or _JS_NONDECIMAL_RE.fullmatch(body))


def _needs_quotes(text: str) -> bool:
    """Playwright's ``yamlStringNeedsQuotes``."""
    return bool(
        not text
        or _EDGE_WS_RE.search(text)
        or _CONTROL_RE.search(text)
        or text.startswith("-")
        or _COLON_RE.search(text)
        or _HASH_RE.search(text)
        or "\n" in text
        or "\r" in text
        or _INDICATOR_RE.search(text)
        or _FLOW_RE.search(text)
        or text.startswith("[")
        or not _js_number_is_nan(text)
        or text.lower() in _YAML_WORDS
        or _SPECIAL_FLOAT_RE.match(text)
    )


def _escape_char(match: re.Match[str]) -> str:
    ch = match.group(0)
    named = _NAMED_ESCAPES.get(ch)
    if named is not None:
        return named
    code = ord(ch)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def _double_quoted(text: str) -> str:
    """Playwright's ``yamlEscapeValueIfNeeded`` quoting (plus ``\\u`` for non-printables)."""
    return '"' + _DOUBLE_ESCAPE_RE.sub(_escape_char, text) + '"'


def _escape_key(text: str) -> str:
    """Playwright's ``yamlEscapeKeyIfNeeded``, falling back to double quotes when needed."""
    if not _needs_quotes(text):
        return text if _UNSAFE_PLAIN_RE.search(text) is None else _double_quoted(text)
    if _UNSAFE_SINGLE_RE.search(text) is None:
        return "'" + text.replace("'", "''") + "'"
    return _double_quoted(text)


def _escape_value(text: str) -> str:
    """Playwright's ``yamlEscapeValueIfNeeded`` (always valid YAML)."""
    if not _needs_quotes(text) and _UNSAFE_PLAIN_RE.search(text) is None:
        return text
    return _double_quoted(text)


def render_aria(nodes: Iterable[AriaNode], ref_token: Callable[[AriaNode], str | None]) -> str:
    """Render nodes as Playwright-style ARIA YAML (no trailing newline; ``""`` for no nodes).

    ``ref_token(node)`` returns the ref token to show for a node (appended as ``[ref=<token>]``
    at the end of its key) or None. A node with a value and also properties or children renders
    the value as a leading ``- text:`` child, as Playwright does.
    """
    lines: list[str] = []
    stack: list[tuple[AriaNode, int]] = [(n, 0) for n in reversed(list(nodes))]
    while stack:
        node, depth = stack.pop()
        key = node.key
        token = ref_token(node)
        if token is not None:
            key += f" [ref={token}]"
        indent = "  " * depth
        line = indent + "- " + _escape_key(key)
        if not node.props and not node.children:
            lines.append(line if node.value is None else line + ": " + _escape_value(node.value))
            continue
        lines.append(line + ":")
        inner = indent + "  - "
        for prop_name, prop_value in node.props:
            lines.append(inner + _escape_key("/" + prop_name) + ": " + _escape_value(prop_value))
        if node.value is not None:
            lines.append(inner + "text: " + _escape_value(node.value))
        stack.extend((child, depth + 1) for child in reversed(node.children))
    return "\n".join(lines)
