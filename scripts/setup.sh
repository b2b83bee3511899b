#!/usr/bin/env bash
# Set up a fresh clone: virtual environment, dependencies, and the browsers BrowserMesh finds.
# Idempotent; safe to run again. Prints progress on stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}

if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv" >&2
  "$PY" -m venv .venv
fi
echo "setup: installing browsermesh and its dependencies" >&2
.venv/bin/python -m pip install --quiet --upgrade pip >/dev/null 2>&1 || true
.venv/bin/python -m pip install --quiet -e '.[dev]' 2>&1 | grep -v "is ignored" >&2 || true
.venv/bin/python -c "import browsermesh, playwright, mcp" >/dev/null

# The browsers: the full Chromium (headed sessions) and, beside it, the headless shell (headless
# sessions prefer it: about half the CPU and memory per page). Playwright's download is tried
# first; where it is unreachable, Debian's chromium / chromium-headless-shell packages as root.
# Nothing runs when both are found already.
.venv/bin/python -c "
import sys
from browsermesh.install_browser import ensure_browsers
sys.exit(ensure_browsers())"
echo "setup: ready" >&2
