#!/usr/bin/env bash
# Set up a fresh clone: virtual environment, dependencies, and a Chromium BrowserMesh can find.
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

# A Chromium: BrowserMesh finds Playwright's build or a system one by itself. Playwright's own
# download is tried first; where it is unreachable, fall back to the system package manager.
if ! .venv/bin/python -c "
import os, sys
from browsermesh.config import default_config, find_chromium
sys.exit(0 if find_chromium(default_config(), os.environ) else 1)"; then
  echo "setup: no Chromium found; trying 'playwright install chromium'" >&2
  if ! timeout 300 .venv/bin/python -m playwright install chromium >/dev/null 2>&1; then
    if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
      echo "setup: Playwright download unavailable; installing Debian's chromium" >&2
      export DEBIAN_FRONTEND=noninteractive
      apt-get update -qq >/dev/null
      apt-get install -y -qq chromium >/dev/null
    else
      echo "setup: could not install Chromium; install it and set BROWSERMESH_BROWSER_PATH" >&2
      exit 1
    fi
  fi
fi
echo "setup: ready" >&2
