"""Long soak run for BrowserMesh: memory, descriptors and tasks must stay flat.

Usage (from the repository root, with the project's virtual environment):

    .venv/bin/python scripts/soak.py --minutes 5

Starts the loopback fixture site and a real-Chromium runtime in this process, then repeats rounds
of `--workers` concurrent cycles (create → navigate → snapshot → click → close, through the
in-memory MCP client). After `--warmup-seconds` it takes a warm-up sample, samples again every
`--sample-every` seconds, and at the end compares the last sample with the warm-up one:

- server RSS (this process) and total Chromium RSS within `--max-growth` (default 10 %) plus
  `--slack-mb` (default 0; the short pytest version `tests/stress/test_soak.py` allows 15 MiB
  because half a minute cannot average out allocator and cache steps);
- open file descriptors and asyncio tasks back to the warm-up level (± 2);
- no live browser contexts and no extra Chromium processes.

Every sample is printed as one JSON line; `--json-out` also writes the full report. Exit status
0 when every check holds, 1 otherwise. Loopback only; at most `--workers` sessions at a time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(ROOT / "src"))

from tests.fixtures.site import FixtureSite  # noqa: E402
from tests.stress.soak import Limits, SoakReport, run_soak  # noqa: E402


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=5.0, help="soak duration (default 5)")
    parser.add_argument(
        "--warmup-seconds", type=float, default=30.0, help="warm-up before the first sample"
    )
    parser.add_argument("--workers", type=int, default=3, help="concurrent cycles per round")
    parser.add_argument("--sample-every", type=float, default=30.0, help="seconds between samples")
    parser.add_argument("--max-growth", type=float, default=0.10, help="allowed RSS growth ratio")
    parser.add_argument("--slack-mb", type=float, default=0.0, help="absolute RSS slack (MiB)")
    parser.add_argument("--json-out", type=Path, help="write the full report here")
    args = parser.parse_args(argv)
    if args.minutes <= 0 or args.workers < 1 or args.workers > 50:
        parser.error("--minutes must be > 0 and --workers 1..50")
    return args


async def _main(args: argparse.Namespace) -> SoakReport:
    with FixtureSite() as site, tempfile.TemporaryDirectory(prefix="bm-soak-") as tmp:
        return await run_soak(
            site,
            Path(tmp) / "data",
            warmup_s=args.warmup_seconds,
            duration_s=args.minutes * 60,
            workers=args.workers,
            sample_every_s=args.sample_every,
        )


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    report = asyncio.run(_main(args))
    limits = Limits(rss_ratio=args.max_growth, rss_slack_kib=int(args.slack_mb * 1024))
    problems = report.violations(limits)
    summary = {
        "cycles": report.cycles,
        "warm": asdict(report.warm) if report.warm else None,
        "end": asdict(report.end) if report.end else None,
        "problems": problems,
    }
    print(json.dumps(summary))
    if args.json_out:
        full = {**summary, "samples": [asdict(s) for s in report.samples]}
        args.json_out.write_text(json.dumps(full, indent=2) + "\n")
    print("SOAK PASS" if not problems else "SOAK FAIL", file=sys.stderr)
    return 0 if not problems else 1


if __name__ == "__main__":
    raise SystemExit(main())
