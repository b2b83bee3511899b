"""Run every benchmark and write ``benchmarks/results/``: ``python -m benchmarks.run``.

``bash benchmarks/run.sh`` installs what the benchmarks need first (the peer, matplotlib, py-spy)
and then calls this. Extra arguments go to the multisession benchmark (see
``python -m benchmarks.multisession --help``), e.g. ``--repeat 1`` for a quicker run; its
``--binary`` (default both: ``chromium,headless-shell``; ``BENCH_BINARY``) is passed on to the
scale benchmark (``python -m benchmarks.scale``, 50 sessions in one server); then the capacity
benchmark with the headless shell (``python -m benchmarks.capacity``: 200 sessions in one server,
20 working at a time, and how many ``@playwright/mcp`` servers the same memory holds); then the
live view's cost (``python -m benchmarks.live_view``) and what a person holding one session costs
the others (``python -m benchmarks.takeover``). When a multisession
target is missed and py-spy is available, the BrowserMesh server is profiled under the same
workload (``python -m benchmarks.profile_mesh``), with the binary of the first missed target.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

from benchmarks import (
    agent_tasks,
    backends,
    capacity,
    grid,
    live_view,
    multisession,
    scale,
    snapshot_size,
    takeover,
)
from benchmarks.common import BINARIES, RESULTS, use_binary


def _py_spy() -> str | None:
    return shutil.which("py-spy") or (
        str(Path(sys.executable).with_name("py-spy"))
        if Path(sys.executable).with_name("py-spy").exists()
        else None
    )


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    started = time.monotonic()
    print("== snapshot sizes", file=sys.stderr, flush=True)
    code = snapshot_size.main()
    print("== agent tasks on the stock Django admin", file=sys.stderr, flush=True)
    code = agent_tasks.main([]) or code
    print("== backends (local vs browser-server pool)", file=sys.stderr, flush=True)
    code = backends.main() or code
    print("== backends (local vs Selenium Grid)", file=sys.stderr, flush=True)
    code = grid.main() or code
    print("== multisession", file=sys.stderr, flush=True)
    code = multisession.main(args) or code
    parsed = multisession.parse_args(args)
    out = parsed.out
    print("== scale (50 sessions in one server)", file=sys.stderr, flush=True)
    code = scale.main(["--binary", ",".join(parsed.binary), "--out", str(out)]) or code
    if os.path.exists(BINARIES["headless-shell"]):
        print(
            "== capacity (200 sessions in one server; @playwright/mcp servers in the same memory)",
            file=sys.stderr,
            flush=True,
        )
        code = capacity.main(["--binary", "headless-shell", "--out", str(out)]) or code
    else:
        print(f"== no capacity benchmark: no {BINARIES['headless-shell']}", file=sys.stderr)
    print("== live view cost (N = 8, nobody watching vs one viewer)", file=sys.stderr, flush=True)
    code = live_view.main(["--out", str(out)]) or code
    print(
        "== holding a session (N = 8, one extra session held from the view vs not)",
        file=sys.stderr,
        flush=True,
    )
    code = takeover.main(["--out", str(out)]) or code
    try:
        targets = json.loads((out / "multisession.json").read_text())["targets"]
    except (OSError, ValueError, KeyError):
        targets = []
    missed = [t for t in targets if t["met"] is False and t["target"].startswith("wall")]
    if missed and _py_spy() is not None and out == RESULTS:
        names = ", ".join(f"{t['target']} ({t.get('binary', '?')})" for t in missed)
        print(f"== profile (missed: {names})", file=sys.stderr, flush=True)
        from benchmarks import profile_mesh

        use_binary(missed[0].get("binary", "chromium"))
        profile_mesh.main([])
    elif missed:
        print("== no profile: py-spy is not installed (pip install py-spy)", file=sys.stderr)
    print(f"== done in {time.monotonic() - started:.0f} s", file=sys.stderr)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
