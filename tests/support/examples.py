"""How many examples a Hypothesis property test runs.

The full counts are what CI runs (scripts/test.sh); they are the tests' choice, not a contract
requirement. BM_TEST_FEW_EXAMPLES=1 runs a tenth of them (at least 10; Hypothesis' own default
of 100 becomes 10 too, see conftest.py) for a quick local loop, e.g. with `-m "not chromium"`.
"""

from __future__ import annotations

import os

FEW = os.environ.get("BM_TEST_FEW_EXAMPLES") == "1"


def examples(n: int) -> int:
    """`n`, or a tenth of it (at least 10) with BM_TEST_FEW_EXAMPLES=1."""
    return max(10, n // 10) if FEW else n
