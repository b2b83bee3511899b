"""Fail when line or branch coverage falls below the reference's gate (lines 90 %, branches 75 %).

Run after the test suite wrote a coverage.py JSON report; `scripts/test.sh` does this when it runs
the whole suite. Reads the report path from argv[1].
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

LINES_MIN = 90.0
BRANCHES_MIN = 75.0


def main(argv: list[str]) -> int:
    totals = json.loads(Path(argv[1]).read_text(encoding="utf-8"))["totals"]
    lines = float(totals["percent_statements_covered"])
    branches = float(totals["percent_branches_covered"])
    ok = lines >= LINES_MIN and branches >= BRANCHES_MIN
    print(
        f"coverage: lines {lines:.1f}% (gate {LINES_MIN:.0f}%), "
        f"branches {branches:.1f}% (gate {BRANCHES_MIN:.0f}%): {'ok' if ok else 'BELOW GATE'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
