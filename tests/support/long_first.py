"""Files marked `long` (minutes each) run first, so two xdist workers finish together.

`scripts/test.sh` runs the suite on two workers taking whole files (`--dist loadfile`) in the
collection's order (`--no-loadscope-reorder`; xdist's own reorder puts files with many tests
first, which left a three-minute one-test file to run alone at the end). Moving the long files
to the front lets the many short files fill in beside them.
"""

from __future__ import annotations

import pytest


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Stable sort: items of `long` files first, each group in its collected order."""
    items.sort(key=lambda item: item.get_closest_marker("long") is None)
