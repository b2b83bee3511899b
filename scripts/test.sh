#!/usr/bin/env bash
# Set up (see setup.sh) and run every check: lint, format, types, the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$PWD/.venv/bin:$PATH"
echo "== ruff check" && ruff check src tests benchmarks
echo "== ruff format --check" && ruff format --check src tests benchmarks
echo "== mypy (strict)" && mypy
bash scripts/node-tools.sh  # Node 22 + MCP Inspector for tests/package (idempotent)
echo "== pytest" && python -m pytest "$@"
