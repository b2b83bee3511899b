"""Issue 31's targets of the agent-task benchmark, checked per task and over all tasks.

On every task, read and act alike, against each peer client: BrowserMesh's calls <= the
peer's, its text bytes <= 0.5x the peer's, and its raw bytes (text blocks plus the compact
JSON of ``structuredContent``, what a client that forwards the structured part pays) <= 1.0x
the peer's. ``targets(rows)`` takes ``agent_tasks.summarize``'s rows; ``targets_section``
renders them as markdown.
"""

from __future__ import annotations

from typing import Any

from benchmarks.common import md_table

TEXT_TARGET = 0.5
RAW_TARGET = 1.0


def _verdict(mesh: dict[str, Any], peer: dict[str, Any], vs: dict[str, Any]) -> dict[str, Any]:
    text, raw = vs.get("bytes_ratio"), vs.get("raw_ratio")
    calls_ok = mesh["calls"] <= peer["calls"]
    text_ok = text is not None and text <= TEXT_TARGET
    raw_ok = raw is not None and raw <= RAW_TARGET
    verified = bool(mesh["verified"] and peer["verified"])
    return {
        "calls": [mesh["calls"], peer["calls"]],
        "calls_met": calls_ok,
        "text_ratio": text,
        "text_met": text_ok,
        "raw_ratio": raw,
        "raw_met": raw_ok,
        "verified": verified,
        "met": calls_ok and text_ok and raw_ok and verified,
    }


def targets(rows: list[dict[str, Any]], others: tuple[str, ...]) -> dict[str, Any]:
    """``{other: {task: verdict}}`` for every task row that both ways ran."""
    out: dict[str, Any] = {}
    for other in others:
        per: dict[str, Any] = {}
        for r in rows:
            mesh, peer, vs = r.get("browsermesh"), r.get(other), r.get(f"vs_{other}")
            if mesh and peer and vs and (mesh["calls"] or peer["calls"]):
                per[r["task"]] = _verdict(mesh, peer, vs)
        if per:
            tasks = [v for t, v in per.items() if t != "total"]
            per["all_tasks_met"] = bool(tasks) and all(v["met"] for v in tasks)
            out[other] = per
    return out


def _mark(ok: bool) -> str:
    return "met" if ok else "**not met**"


def _ratio(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}×"


def figures_table(rows: list[dict[str, Any]], ways: list[str]) -> str:
    """Per task: calls, text bytes and raw bytes of every way."""
    headers = ["task"]
    for w in ways:
        headers += [f"{w} calls", f"{w} text B", f"{w} raw B"]
    body = []
    for r in rows:
        if not any(r.get(w) for w in ways):
            continue
        line: list[object] = ["**total**" if r["task"] == "total" else r["title"]]
        for w in ways:
            d = r.get(w)
            line += (
                [d["calls"], f"{d['text_bytes']:,}", f"{d['raw_bytes']:,}"] if d else ["", "", ""]
            )
        body.append(line)
    return md_table(headers, body)


def targets_section(
    rows: list[dict[str, Any]], verdicts: dict[str, Any], labels: dict[str, str]
) -> list[str]:
    titles = {r["task"]: ("**total**" if r["task"] == "total" else r["title"]) for r in rows}
    lines = [
        "## Issue 31 targets, per task",
        "",
        f"BrowserMesh ≤ the peer's calls, ≤ {TEXT_TARGET}× its text bytes, ≤ {RAW_TARGET}× its "
        "raw bytes (text blocks + compact JSON of `structuredContent`; the peer sends no "
        "structured part, so its raw bytes are its text bytes), on every task; a task counts "
        "only when both ways were verified.",
        "",
    ]
    for other, per in verdicts.items():
        body = []
        for task, v in per.items():
            if task == "all_tasks_met":
                continue
            body.append(
                [
                    titles.get(task, task),
                    f"{v['calls'][0]} vs {v['calls'][1]}: {_mark(v['calls_met'])}",
                    f"{_ratio(v['text_ratio'])}: {_mark(v['text_met'])}",
                    f"{_ratio(v['raw_ratio'])}: {_mark(v['raw_met'])}",
                    "yes" if v["verified"] else "**no**",
                    _mark(v["met"]),
                ]
            )
        lines += [
            f"### against {labels[other]}",
            "",
            md_table(
                ["task", "calls BM vs peer", "text BM/peer", "raw BM/peer", "verified", "all"],
                body,
            ),
            "",
            f"Every task meets all three against {labels[other]}: "
            f"{'yes' if per['all_tasks_met'] else '**no**'}.",
            "",
        ]
    return lines
