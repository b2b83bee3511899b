#!/usr/bin/env bash
# Set up (see setup.sh) and run every check: lint, format, types, the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
# The video tests need ffmpeg (issue 35), the fleet tests redis-server (issue 37).
BROWSERMESH_VIDEO=1 BROWSERMESH_FLEET=1 bash scripts/setup.sh
export PATH="$PWD/.venv/bin:$PATH"
echo "== ruff check" && ruff check src tests benchmarks scripts
echo "== ruff format --check" && ruff format --check src tests benchmarks scripts
echo "== mypy (strict)" && mypy
bash scripts/node-tools.sh  # Node 22, MCP Inspector, conformance suite for tests/package (idempotent)
bash scripts/grid.sh >/dev/null  # Java, chromedriver, the Selenium Grid jar for tests/integration/test_grid.py (idempotent)
if [ "$#" -eq 0 ]; then
  # The whole suite: measure coverage (child servers included, see pyproject) and apply the gate.
  rm -f .coverage .coverage.*
  # Two workers (the machines have two cores; a browser test waits on Chromium much of its
  # time), each taking whole files, so a file's tests keep their order and module fixtures;
  # files marked `long` first (tests/support/long_first.py), then in collected order.
  echo "== pytest (with coverage, 2 workers)" && python -m pytest -n 2 --dist loadfile --no-loadscope-reorder --durations=30 --cov --cov-report=term --cov-report=json:.coverage.json.tmp
  python scripts/coverage_gate.py .coverage.json.tmp && rm -f .coverage.json.tmp
else
  echo "== pytest $*" && python -m pytest "$@"
fi
