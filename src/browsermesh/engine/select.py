"""Selecting `<select>` options and reading back what is selected (issue 31 items 6 and 14).

`select_options` runs Playwright's `select_option` in the mode the client chose
(`model.options.OptionChoice`) and answers the element's selected options as page text,
`[{value, label}]`; `redact_selected` passes them through the page's password values like every
capture, and bounds them (`MAX_SELECTED_REPORTED` entries of `MAX_SELECTED_CHARS`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from browsermesh.engine.bounded import bounded
from browsermesh.engine.page_source import page_secrets
from browsermesh.errors import BrowserMeshError
from browsermesh.model.deadline import Deadline
from browsermesh.model.options import MAX_SELECTED_CHARS, MAX_SELECTED_REPORTED, OptionChoice
from browsermesh.model.text import fit_prefix, well_formed

if TYPE_CHECKING:
    from playwright.async_api import Page

    from browsermesh.redact import SecretValues

READ_RESERVE_MS = 250
"""What reading the selection and the page's secrets may take after the selection."""

# Runs in the page: the first entries of the element's selected options, and their count.
_READ_SELECTED = """(el, max) => {
  const all = Array.from(el.selectedOptions || []);
  return {count: all.length,
          items: all.slice(0, max).map(o => ({value: String(o.value), label: String(o.label)}))};
}"""


async def select_options(el: Any, choice: str | OptionChoice | None, timeout_ms: float) -> Any:
    """Select on a Locator or an ElementHandle; answer the selection read back
    (`{count, items: [{value, label}]}`), or, when the page cannot be read any more (a select
    that navigates on change), Playwright's own answer: the selected values, without labels."""
    if isinstance(choice, OptionChoice):
        args, kwargs = choice.playwright_args()
        values = await el.select_option(*args, **kwargs, timeout=timeout_ms)
    else:  # a browser_fill_form value: an option's value or label (Playwright's plain string)
        values = await el.select_option(choice or "", timeout=timeout_ms)
    try:
        read: dict[str, Any] = await bounded(
            el.evaluate(_READ_SELECTED, MAX_SELECTED_REPORTED), READ_RESERVE_MS
        )
        return read
    except Exception:
        listed = [{"value": str(v)} for v in values or ()]
        return {"count": len(listed), "items": listed[:MAX_SELECTED_REPORTED]}


def _shown(secrets: SecretValues, text: object) -> str:
    """Page text as reported: redacted first (a cut must not leave part of a password), then
    cut to `MAX_SELECTED_CHARS`."""
    return fit_prefix(
        secrets.text(well_formed(str(text))), MAX_SELECTED_CHARS, 4 * MAX_SELECTED_CHARS
    )


async def redact_selected(page: Page, raw: Any) -> dict[str, Any]:
    """The `selected` (and, when more than are listed, `selectedCount`) fields of the result,
    with the page's password values replaced; `{}` when the selection could not be read."""
    if not isinstance(raw, dict) or not isinstance(raw.get("items"), list):
        return {}
    try:
        secrets = await page_secrets(page, Deadline(READ_RESERVE_MS))
    except BrowserMeshError:  # the page cannot be read for its secrets: no text rather than leak
        return {"selected": [], "selectedCount": raw.get("count", 0)}
    items = [
        {key: _shown(secrets, item[key]) for key in ("value", "label") if key in item}
        for item in raw["items"]
        if isinstance(item, dict)
    ]
    out: dict[str, Any] = {"selected": items}
    count = raw.get("count")
    if isinstance(count, int) and count > len(items):
        out["selectedCount"] = count
    return out
