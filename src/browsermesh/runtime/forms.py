"""browser_fill_form in the runtime (issue 15): fields in order, stopping at the first failure.

The whole form runs as one job (one queue slot, one deadline). A failing field's own error
(its code, reason, candidates...) is returned with where it happened: `details.field` is
`fields[k]`, or `fields[k].<its field>` for an argument the element refused (a value that does
not fit its kind), and `details.filled` = k, the fields before it, which stay applied.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from browsermesh.engine.protocol import Engine, EnginePage
from browsermesh.errors import BrowserMeshError
from browsermesh.model.deadline import OperationContext
from browsermesh.model.element_ops import ElementOp
from browsermesh.model.forms import FormField

T = TypeVar("T")


async def fill_fields(
    engine: Engine[Any, Any],
    page: EnginePage,
    fields: tuple[FormField, ...],
    ctx: OperationContext,
    before: Callable[[FormField], Awaitable[T]] | None = None,
) -> list[tuple[ElementOp, T | None]]:
    """Apply `fields` in order (all of them, or it raised): for each, the operation its
    element took and what `before` (the recording's describer, issue 20) said about the element
    just before."""
    done: list[tuple[ElementOp, T | None]] = []
    for k, field in enumerate(fields):
        try:
            seen = None if before is None else await before(field)
            done.append((await engine.fill_field(page, field.target, field.value, ctx), seen))
        except BrowserMeshError as error:
            raise at_field(error, k) from None
    return done


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
