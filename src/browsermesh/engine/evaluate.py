"""Caller JavaScript in the page's main world, converted to bounded JSON text in the page.

Why in the page: Playwright hands a result back as one protocol message and rebuilds it in Python
node by node on the event loop. `Array.from({length: 3e6}, ...)` took about 15 s of event-loop
time there, during which every other session stalled (issue 12). So the caller's expression is
evaluated by a wrapper that converts its value in the page and stops once the compact JSON passes
`MAX_JSON_BYTES`: at most about that much text crosses to Python, whatever the value.

The conversion is the one place that defines the JSON forms of JavaScript values (reference §10;
the forms for values the reference leaves open were decided in issue 12):

- ``undefined``, ``NaN``, ``±Infinity`` → ``null``; ``-0`` → ``0``;
- BigInt → ``"123n"``; Symbol → ``"Symbol(desc)"``; function or class → ``"[Function: name]"``;
- Date → ISO string (invalid Date → ``null``); RegExp → ``"/a+/g"``; Error → ``"TypeError: msg"``;
- Map → ``[[key, value], …]``; Set → ``[value, …]``; typed arrays, ArrayBuffer, DataView →
  arrays of numbers; NodeList, HTMLCollection, ``arguments`` → arrays;
- DOM element → ``"<tag#id.class>"``; other DOM nodes → their node name (``"#document"``);
- boxed primitives → the primitive; an object with ``toJSON`` → what it returns;
- any other object → its own enumerable string-keyed properties, or its ``[object Tag]`` string
  when it has none and is not a plain object (Promise, WeakMap, …);
- a container inside itself → ``"[Circular]"``; past `MAX_JSON_DEPTH` (64) levels → ``null``, and
  the result is marked truncated; a property or
  conversion that throws → ``null``; lone surrogates → U+FFFD (where the browser has
  ``toWellFormed``; Python replaces them otherwise).
"""

from __future__ import annotations

import asyncio
import re
from typing import TYPE_CHECKING, Any

from browsermesh.engine.failures import raw_cause, within
from browsermesh.errors import BrowserMeshError, ErrorCode
from browsermesh.model.deadline import OperationContext
from browsermesh.model.element_ops import OTHER_OPERATIONS
from browsermesh.model.jsonvalue import MAX_JSON_BYTES, MAX_JSON_DEPTH, bound_page_json

if TYPE_CHECKING:
    from playwright.async_api import Page

MAX_TEXT_CHARS = 8 * MAX_JSON_BYTES
"""The page's text is at most the budget plus one escaped piece; more means its builtins lie."""

# Playwright wraps `function …` expressions in parentheses before evaluating them (so a function
# declaration becomes an expression that is then called with `arg`); the wrapper does the same.
_FUNCTION_DECLARATION = re.compile(r"^(async)?\s*function(\s|\()")

_WRAPPER = r"""async ([expression, arg, maxBytes, MAX_DEPTH]) => {
  let value = (0, eval)(expression);
  if (typeof value === 'function') value = value(arg);
  value = await value;

  const path = new Set();
  let text = '';
  let bytes = 0;
  let full = false;
  let deep = false;

  const utf8 = (s) => {
    let n = 0;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x80) n += 1;
      else if (c < 0x800) n += 2;
      else if (c >= 0xd800 && c < 0xdc00 && i + 1 < s.length) { n += 4; i++; }
      else n += 3;
    }
    return n;
  };
  const put = (piece) => {
    text += piece;
    bytes += utf8(piece);
    if (bytes > maxBytes) full = true;
  };
  const putString = (s) => {
    // Every character is at least one byte: what lies past the room can never be kept.
    const room = Math.max(maxBytes - bytes + 1, 0);
    if (s.length > room) s = s.slice(0, room);
    if (typeof s.toWellFormed === 'function') s = s.toWellFormed();
    put(JSON.stringify(s));
  };
  const tagOf = (v) => Object.prototype.toString.call(v);
  const read = (holder, key) => {
    try { return holder[key]; } catch (e) { return undefined; }
  };
  const node = (v) => {
    if (v.nodeType !== 1) return v.nodeType === 10 ? '#doctype' : String(v.nodeName).toLowerCase();
    let out = '<' + String(v.localName || v.nodeName).toLowerCase();
    if (v.id) out += '#' + v.id;
    if (v.classList) for (const c of v.classList) out += '.' + c;
    return out + '>';
  };
  const items = (list, depth) => {
    put('[');
    const n = list.length;
    for (let i = 0; i < n && !full; i++) {
      if (i) put(',');
      walk(read(list, i), depth + 1);
    }
    put(']');
  };
  const iterated = (iterator, depth, pairs) => {
    put('[');
    let first = true;
    for (const entry of iterator) {
      if (full) break;
      if (!first) put(',');
      first = false;
      if (pairs) {
        put('[');
        walk(entry[0], depth + 2);
        put(',');
        walk(entry[1], depth + 2);
        put(']');
      } else {
        walk(entry, depth + 1);
      }
    }
    put(']');
  };
  const properties = (v, depth, tag) => {
    const keys = Object.keys(v);
    if (keys.length === 0 && tag !== '[object Object]') return putString(tag);
    put('{');
    let first = true;
    for (const key of keys) {
      if (full) break;
      if (!first) put(',');
      first = false;
      putString(key);
      put(':');
      walk(read(v, key), depth + 1);
    }
    put('}');
  };
  const object = (v, depth) => {
    const tag = tagOf(v);
    if (tag === '[object Date]') {
      const time = Date.prototype.getTime.call(v);
      return Number.isNaN(time) ? put('null') : putString(Date.prototype.toISOString.call(v));
    }
    if (tag === '[object RegExp]' || tag === '[object Error]' || v instanceof Error) {
      return putString(String(v));
    }
    if (['[object Number]', '[object String]', '[object Boolean]', '[object BigInt]',
         '[object Symbol]'].includes(tag)) return walk(v.valueOf(), depth);
    if (typeof v.nodeType === 'number' && typeof v.nodeName === 'string') return putString(node(v));
    if (tag === '[object Map]') return iterated(Map.prototype.entries.call(v), depth, true);
    if (tag === '[object Set]') return iterated(Set.prototype.values.call(v), depth, false);
    if (tag === '[object ArrayBuffer]' || tag === '[object SharedArrayBuffer]') {
      return items(new Uint8Array(v), depth);
    }
    if (tag === '[object DataView]') {
      return items(new Uint8Array(v.buffer, v.byteOffset, v.byteLength), depth);
    }
    if (ArrayBuffer.isView(v) || Array.isArray(v) || tag === '[object NodeList]' ||
        tag === '[object HTMLCollection]' || tag === '[object Arguments]') {
      return items(v, depth);
    }
    if (typeof v.toJSON === 'function') return walk(v.toJSON(''), depth + 1);
    return properties(v, depth, tag);
  };
  const unsafe = (v, depth) => {
    if (depth > MAX_DEPTH) { deep = true; return put('null'); }
    switch (typeof v) {
      case 'undefined': return put('null');
      case 'boolean': return put(v ? 'true' : 'false');
      case 'number': return put(Number.isFinite(v) ? String(v) : 'null');
      case 'bigint': return putString(String(v) + 'n');
      case 'string': return putString(v);
      case 'symbol': return putString(v.toString());
      case 'function': return putString(v.name ? '[Function: ' + v.name + ']' : '[Function]');
    }
    if (v === null) return put('null');
    if (path.has(v)) return putString('[Circular]');
    path.add(v);
    try { object(v, depth); } finally { path.delete(v); }
  };
  // A value whose conversion throws (a throwing getter, a revoked proxy) becomes null, and
  // whatever it had written is taken back, so the text stays JSON.
  const walk = (v, depth) => {
    if (full) return;
    const mark = text.length;
    const markBytes = bytes;
    try {
      unsafe(v, depth);
    } catch (e) {
      text = text.slice(0, mark);
      bytes = markBytes;
      full = false;
      put('null');
    }
  };
  walk(value, 0);
  return [full, text, deep];
}"""


def _normalized(expression: str) -> str:
    """The expression as Playwright would evaluate it (function declarations parenthesized)."""
    stripped = expression.strip()
    return f"({stripped})" if _FUNCTION_DECLARATION.match(stripped) else stripped


def _failed(cause: BaseException | None = None) -> BrowserMeshError:
    return BrowserMeshError(
        ErrorCode.BROWSER_ERROR,
        details={"operation": OTHER_OPERATIONS["evaluate"], "reason": "other"},
        cause=raw_cause(cause) if cause is not None else None,
    )


def _bounded(raw: Any) -> tuple[Any, bool]:
    """(result, truncated) from the wrapper's `[cut, text, tooDeep]`; anything else, or text
    that is not JSON, means the page replaced builtins the conversion uses."""
    if not (
        isinstance(raw, list)
        and len(raw) == 3
        and isinstance(raw[0], bool)
        and isinstance(raw[1], str)
        and len(raw[1]) <= MAX_TEXT_CHARS
        and isinstance(raw[2], bool)
    ):
        raise _failed()
    try:
        return bound_page_json(raw[1], raw[0], raw[2])
    except (ValueError, RecursionError) as exc:
        raise _failed(exc) from None


async def evaluate_in_page(
    page: Page, expression: str, arg: Any, ctx: OperationContext
) -> tuple[Any, bool]:
    """Evaluate `expression` (called with `arg` when it is a function; promises awaited):
    `(result, truncated)` under reference §10's 65,536-byte bound."""
    call = page.evaluate(_WRAPPER, [_normalized(expression), arg, MAX_JSON_BYTES, MAX_JSON_DEPTH])
    try:
        # Past the deadline the evaluation (which cannot be aborted inside the page) is
        # abandoned: OPERATION_TIMEOUT.
        raw = await within(call, ctx.deadline)
    except BrowserMeshError:
        raise
    except Exception as exc:
        # The script's own exception, whatever its text (a page may throw "timeout"), is
        # never classified as anything but a failed evaluation.
        raise _failed(exc) from None
    # At most ~64 KB of JSON is left to parse and check; still, the event loop serves every
    # session, so it is done in a worker thread.
    return await asyncio.to_thread(_bounded, raw)
