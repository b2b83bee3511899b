"""browser_fill_form in the runtime (issue 15): fields in order, stopping at the first failure.

The whole form runs as one job (one queue slot, one deadline). A failing field's own error
(its code, reason, candidates...) is returned with where it happened: `details.field` is
`fields[k]`, or `fields[k].<its field>` for an argument the element refused (a value that does
not fit its kind), and `details.filled` = k, the fields before it, which stay applied.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from browsermesh.engine.protocol import Engine, EnginePage
from browsermesh.errors import BrowserMeshError
from browsermesh.model.deadline import OperationContext
from browsermesh.model.forms import FormField


async def fill_fields(
    engine: Engine[Any, Any], page: EnginePage, fields: tuple[FormField, ...], ctx: OperationContext
) -> int:
    """Apply `fields` in order; how many were applied (all of them, or it raised)."""
    for k, field in enumerate(fields):
        try:
            await engine.fill_field(page, field.target, field.value, ctx)
        except BrowserMeshError as error:
            raise at_field(error, k) from None
    return len(fields)


def at_field(error: BrowserMeshError, k: int) -> BrowserMeshError:
    """`error` placed at field `k` (its own `field` path, if any, becomes relative to it)."""
    where = f"fields[{k}]"
    own = error.details.get("field")
    path = f"{where}.{own}" if isinstance(own, str) else where
    error.details = {**error.details, "field": path, "filled": k}
    if isinstance(own, str):
        error.internal = {**error.internal, "field": path}
    if error.bound is not None and own is not None:
        error.bound = dataclasses.replace(error.bound, name=path)
    return error
