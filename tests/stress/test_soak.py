"""A short soak (~35 s): repeated create → navigate → snapshot → click → close cycles must not
grow memory, file descriptors or asyncio tasks. The long version is `scripts/soak.py`.

Slack: both RSS figures may grow 10 % plus 15 MiB over the warm-up sample. The absolute part
covers noise that a half-minute run cannot average out: Python's allocator keeps freed arenas
(RSS never shrinks back exactly), and Chromium's browser process grows its shared caches
(fonts, shader/code caches, histograms) in steps of a few MiB before levelling off. A real leak
per cycle (a context, page, listener set or task per cycle) exceeds it within the run, and the
fd/task/process/context checks catch per-cycle handle leaks exactly.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.fixtures.site import FixtureSite
from tests.stress.soak import Limits, run_soak

pytestmark = pytest.mark.anyio

WARMUP_S = float(os.environ.get("BM_SOAK_WARMUP_S", "6"))
DURATION_S = float(os.environ.get("BM_SOAK_DURATION_S", "20"))


async def test_short_soak_keeps_resources_flat(tmp_path: Path, site: FixtureSite) -> None:
    report = await run_soak(
        site, tmp_path / "data", warmup_s=WARMUP_S, duration_s=DURATION_S, sample_every_s=8
    )
    assert report.warm is not None and report.end is not None
    print(f"soak cycles: {report.cycles}")
    assert report.cycles >= 15, report.cycles
    problems = report.violations(Limits(rss_ratio=0.10, rss_slack_kib=15 * 1024))
    assert not problems, problems
