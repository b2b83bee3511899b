"""browser_evaluate: the opt-in `eval` profile, the only tool that runs caller JavaScript."""

from __future__ import annotations

from typing import Any

from browsermesh.mcp.registry import Hints, ToolCall, ToolSpec
from browsermesh.mcp.schemas import BOOL, page_address, page_output, string


async def evaluate(call: ToolCall) -> dict[str, Any]:
    op_id, (result, truncated) = await call.runtime.evaluate(
        call.page(), call.args.get("expression"), call.args.get("arg")
    )
    return call.page_result(
        op_id,
        result=result,
        truncated=truncated,
    )


def specs() -> list[ToolSpec]:
    return [
        ToolSpec(
            name="browser_evaluate",
            title="Evaluate JavaScript in page",
            description=(
                "Runs arbitrary JavaScript in the page with the page's privileges and returns its "
                "JSON result (bounded); the only BrowserMesh tool that runs caller JavaScript. A "
                "function expression is called with arg; promises are awaited. Forms: "
                'undefined/NaN/Infinity -> null, BigInt -> "5n", Date -> ISO, Map -> [[k,v],...], '
                "Set -> [...], "
                'a cycle -> "[Circular]"; over 65,536 bytes: a JSON-prefix string, truncated=true.'
            ),
            profile="eval",
            hints=Hints(destructive=True, open_world=True),
            input_schema=(
                page_address(
                    {"expression": string(1, 10_000), "arg": {"description": "Any JSON value."}},
                    ("expression",),
                )
            ),
            output_schema=page_output({"result": {}, "truncated": BOOL}),
            handler=evaluate,
            verbatim=("result",),  # the page's JSON: its nulls and empty lists are data
        )
    ]
